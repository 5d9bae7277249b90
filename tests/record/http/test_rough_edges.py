"""Issue 12, the rough edges a new user hit, each on a real recording (the HTTP proxy in front of the SDK
server or a scripted SSE target, the stdio recorder in front of a line server)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpreel._infra import jsonio
from mcpreel.formats import open_session
from mcpreel.operations.sessions import split_sessions

from .helpers import ThreadServer, proxy, sdk_server
from .scripted import ScriptedTarget
from .test_sdk_peers import streamable_session
from .test_transparency import raw_sse

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.filterwarnings("ignore:The sampling capability is deprecated")]


def mcpreel(*args: str | Path, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpreel", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=60, input=stdin.decode())


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    return proc.stderr


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Streamable HTTP session with SSE answers (progress and a sampling request before their
    responses), recorded with a label and the recorder's own --envelope (``s.envelope.json``)."""
    tmp = tmp_path_factory.mktemp("rough")

    async def session() -> None:
        with ThreadServer(sdk_server().streamable_http_app(json_response=False)) as srv:
            with proxy("streamable-http", srv.url("/mcp"), tmp, label="my-label") as run:
                await streamable_session(run.url, back_channel=True)

    anyio.run(session)
    return tmp


def test_inspector_names_the_responses_its_folding_moves(recorded: Path) -> None:
    proc = mcpreel("convert", "s.jsonl", "i.json", "--to", "inspector", cwd=recorded)
    assert proc.returncode == 0, proc.stderr
    warning = [line for line in proc.stderr.splitlines() if line.startswith("warning: writing inspector drops")]
    assert len(warning) == 1 and "the order of " in warning[0] and "responses (each is folded into its request's entry" in warning[0]
    # a session in which nothing came between a request and its response: nothing moved, nothing said
    (recorded / "plain.jsonl").write_text('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1,"result":{}}\n')
    proc = mcpreel("convert", "plain.jsonl", "p.json", "--to", "inspector", cwd=recorded)
    assert proc.returncode == 0 and "the order of" not in proc.stderr


@pytest.mark.parametrize("to", ["assay-v2", "simple"])
def test_trace_writers_report_the_records_they_wrote(recorded: Path, to: str) -> None:
    proc = mcpreel("convert", "s.jsonl", f"t.{to}.jsonl", "--to", to, cwd=recorded)
    assert proc.returncode == 0, proc.stderr
    lines = (recorded / f"t.{to}.jsonl").read_bytes().count(b"\n")
    assert lines > 5 and proc.stdout.rstrip().endswith(f"({to}): {lines} records")


def test_convert_to_the_envelope_writes_what_the_recorder_wrote(recorded: Path) -> None:
    proc = mcpreel("convert", "s.jsonl", "c.json", "--to", "streamable-http", cwd=recorded)
    assert proc.returncode == 0, proc.stderr
    converted = jsonio.loads((recorded / "c.json").read_bytes())
    assert set(converted["transport_context"]["headers"]) == {"MCP-Protocol-Version", "Mcp-Session-Id"}
    assert (recorded / "c.json").read_bytes() == (recorded / "s.envelope.json").read_bytes()


def test_qai_keeps_the_label_to_a_reel_and_back(recorded: Path) -> None:
    assert mcpreel("convert", "s.jsonl", "q.json", "--to", "qai", cwd=recorded).returncode == 0
    assert jsonio.loads((recorded / "q.json").read_bytes())["label"] == "my-label"
    assert mcpreel("convert", "q.json", "back.jsonl", "--to", "reel", cwd=recorded).returncode == 0
    session, _ = open_session(recorded / "back.jsonl")
    assert session.info.label == "my-label"


def test_a_session_without_times_starts_at_an_unknown_time_not_1970(recorded: Path) -> None:
    assert mcpreel("convert", "s.jsonl", "j.jsonl", "--to", "jsonrpc", cwd=recorded).returncode == 0
    assert mcpreel("convert", "j.jsonl", "jr.jsonl", "--to", "reel", cwd=recorded).returncode == 0
    for name in ("j.jsonl", "jr.jsonl"):
        out = mcpreel("inspect", name, cwd=recorded).stdout
        started = next(line for line in out.splitlines() if line.startswith("Started:"))
        assert started.split()[-1] == "unknown" and "1970" not in out, name
    assert jsonio.loads(mcpreel("inspect", "--json", "jr.jsonl", cwd=recorded).stdout)["session"]["started"] is None


def test_format_mismatches_say_what_the_content_looks_like_and_what_to_do(recorded: Path) -> None:
    assert mcpreel("convert", "s.jsonl", "q.json", "--to", "qai", cwd=recorded).returncode == 0
    line = one_error_line(mcpreel("inspect", "q.json", "--format", "reel", cwd=recorded))
    assert "the content looks like qai" in line and "read it as qai (--format/--from qai, or auto)" in line
    line = one_error_line(mcpreel("convert", "q.json", "x.jsonl", "--from", "reel", cwd=recorded))
    assert "the content looks like qai" in line and not (recorded / "x.jsonl").exists()
    for to, kind in (("assay-v2", "an assay-v2 trace"), ("simple", "a simple trace")):
        assert mcpreel("convert", "s.jsonl", f"t.{to}.jsonl", "--to", to, cwd=recorded).returncode == 0
        for verb in (("inspect", f"t.{to}.jsonl"), ("convert", f"t.{to}.jsonl", "y.json")):
            line = one_error_line(mcpreel(*verb, cwd=recorded))
            assert kind in line and "mcpreel writes tool-call traces but does not read them back" in line
            assert "convert the session file the trace was made from" in line


async def test_inspect_folds_sse_framing_events_unless_verbose(tmp_path: Path) -> None:
    with ThreadServer(ScriptedTarget()) as srv:
        with proxy("streamable-http", srv.url("/mcp"), tmp_path) as run:
            await raw_sse(run.url.replace("/mcp", "/sse"))
    rows = [line.strip() for line in mcpreel("inspect", "s.jsonl", cwd=tmp_path).stdout.splitlines() if line.startswith("  #")]
    assert not any("(transport) message" in r or "(transport) keep-alive" in r for r in rows), rows
    assert any("(+2 SSE framing events, -v shows them)" in r for r in rows), rows
    verbose = mcpreel("inspect", "-v", "s.jsonl", cwd=tmp_path).stdout
    assert "(transport) message" in verbose and "SSE framing" not in verbose
    doc = jsonio.loads(mcpreel("inspect", "--json", "s.jsonl", cwd=tmp_path).stdout)
    assert len(doc["rows"]) == doc["summary"]["records"]  # the JSON document keeps a row for every record


# -- record --out X, run again and again -----------------------------------------------------------

INIT = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
        '"clientInfo":{"name":"c","version":"1"}}}\n')


def _server() -> list[str]:
    from tests.record.stdio.helpers import PY, RAW

    return [PY, RAW, "echo"]


def test_record_out_run_again_appends_a_session_and_loses_none(tmp_path: Path) -> None:
    for n in range(3):
        call = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call' + str(n) + '"}}\n'
        proc = mcpreel("record", "-q", "--out", "x.jsonl", "--", *_server(), cwd=tmp_path, stdin=(INIT + call).encode())
        assert proc.returncode == 0, proc.stderr
    session, _ = open_session(tmp_path / "x.jsonl")
    records: list[Any] = session.materialize().messages
    assert [r.raw["params"]["name"] for r in records if r.dir == "in" and r.raw.get("method") == "tools/call"] == [
        "call0", "call1", "call2"]
    assert [r.seq for r in records] == list(range(len(records)))  # numbering counts on across the runs
    assert len(split_sessions(session)) == 3
    assert "3 client sessions" in mcpreel("inspect", "x.jsonl", cwd=tmp_path).stdout


def test_record_out_on_a_torn_reel_cuts_the_torn_line_and_appends(tmp_path: Path) -> None:
    call = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}\n'
    assert mcpreel("record", "-q", "--out", "x.jsonl", "--", *_server(), cwd=tmp_path, stdin=(INIT + call).encode()).returncode == 0
    with open(tmp_path / "x.jsonl", "ab") as fh:
        fh.write(b'{"t":"2026-01-01T00:00:00Z","dir":"in","raw":{"jsonrpc"')  # a recorder killed mid-write
    assert mcpreel("record", "-q", "--out", "x.jsonl", "--", *_server(), cwd=tmp_path, stdin=(INIT + call).encode()).returncode == 0
    assert mcpreel("inspect", "x.jsonl", cwd=tmp_path).returncode == 0
    session, _ = open_session(tmp_path / "x.jsonl")
    assert len(session.materialize().messages) == 8


def test_record_out_on_a_file_that_is_no_reel_is_refused_and_kept(tmp_path: Path) -> None:
    other = tmp_path / "notes.json"
    other.write_text('{"mine": true}\n')
    line = one_error_line(mcpreel("record", "-q", "--out", other, "--", *_server(), cwd=tmp_path, stdin=INIT.encode()))
    assert "exists and is not a reel" in line
    assert other.read_text() == '{"mine": true}\n'
