"""``--tag KEY=VALUE``: one recording option, added once (the options record and ``default_addons``' header
fields) plus its flag, reaches the reel's meta line and the qai session file for every transport (stdio,
Streamable HTTP, legacy SSE) and every command-line front end (``record``, ``proxy start``); the cassette
flows, the pytest plugin and the demo have their own tests (tests/cassette/test_tags.py, tests/demo).

Also here: what the one entry point promised beside it — the stdio fast path stays when no addon needs
records (``--otlp-endpoint`` alone), and ``cli/record_http`` does not import ``cli/record_cmd``.
"""

from __future__ import annotations

import ast
import asyncio
import json
import queue
import shlex
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from mcpreel.errors import UsageError
from mcpreel.model import SessionInfo
from mcpreel.record import RecordOptions, StdioServer, parse_tags
from mcpreel.record.addons import default_addons
from mcpreel.record.pipeline import Pipeline
from mcpreel.redact import MARKER
from tests.record.http.helpers import ThreadServer, proxy, sdk_server
from tests.record.stdio.helpers import PY, RAW, record_argv

SRC = Path(__file__).resolve().parents[2] / "src" / "mcpreel"
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
TAGS = ["--tag", "team=qa", "--tag", "run=7", "--tag", "note=a=b"]
WANT = {"team": "qa", "run": "7", "note": "a=b"}


def header(reel: Path) -> dict[str, Any]:
    """The meta line of a reel (its session header)."""
    first = json.loads(reel.read_bytes().splitlines()[0])
    assert first["type"] == "meta"
    return first


def qai_tags(path: Path) -> Any:
    return json.loads(path.read_bytes())["metadata"]["tags"]


# -- the option --------------------------------------------------------------------------------------


def test_tags_are_key_value_words_in_order_the_last_value_winning() -> None:
    assert parse_tags(["a=1", "b=", "a=2", "c=x=y"]) == (("a", "2"), ("b", ""), ("c", "x=y"))
    for bad in ("novalue", "=v", " =v"):
        with pytest.raises(UsageError, match=r"--tag .*: give KEY=VALUE"):
            parse_tags([bad])


def test_tags_are_a_header_field_redacted_as_the_header_is() -> None:
    """The header fields come first in the pipeline: ``--redact`` sees a secret put into a tag."""
    secret = "sk-abcdefghijklmnopqrstuvwxyz0123"
    options = RecordOptions(StdioServer(("srv",)), Path("unused.jsonl"), tags=(("team", "qa"), ("key", secret)),
                            metadata={"by": "test"}, redact=True)
    addons = default_addons(options)
    info = SessionInfo(metadata={"tags": {"team": "old", "kept": "1"}})
    Pipeline(addons.chain).started(info)
    tags = info.metadata["tags"]
    assert info.metadata["by"] == "test"
    assert tags["team"] == "qa" and tags["kept"] == "1" and secret not in tags["key"] and MARKER in tags["key"]
    plain = default_addons(RecordOptions(StdioServer(("srv",)), Path("unused.jsonl")))
    untagged = SessionInfo()
    Pipeline(plain.chain).started(untagged)
    assert "tags" not in untagged.metadata  # no --tag: the header is as it was


def test_otlp_alone_keeps_the_stdio_fast_path_and_a_session_file_leaves_it(tmp_path: Path) -> None:
    """Issue 27: live export takes the spliced frames; only an addon that needs records makes the recorder
    parse every line on the forwarding path."""
    pytest.importorskip("opentelemetry.sdk")
    otlp = RecordOptions(StdioServer(("srv",)), tmp_path / "r.jsonl", otlp_endpoint="http://127.0.0.1:9/v1/traces",
                         tags=(("team", "qa"),))
    addons = default_addons(otlp)
    try:
        pipeline = Pipeline(addons.chain)
        assert not pipeline.sees_records and pipeline.sees_frames
    finally:
        addons.close()
    both = default_addons(RecordOptions(StdioServer(("srv",)), tmp_path / "r.jsonl", session_file=tmp_path / "s.json",
                                        otlp_endpoint="http://127.0.0.1:9/v1/traces"))
    try:
        assert Pipeline(both.chain).sees_records
    finally:
        both.close()


def test_live_export_maps_the_fast_paths_frames_to_spans() -> None:
    """What ``frames`` hands over (wire bytes, an invalid line's text) becomes spans on the exporter's thread."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace.export import SpanExportResult

    from mcpreel.otel.live import LiveExport

    class Exporter:
        def __init__(self) -> None:
            self.spans: list[Any] = []

        def export(self, spans: Any) -> Any:
            self.spans.extend(spans)
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            pass

    exporter = Exporter()
    live = LiveExport(None, exporter=exporter)
    live.started(SessionInfo(label="srv", transport="stdio", started=1_000))
    live.frames("in", [b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}', "not json"],
                1_001, 0)
    live.frames("out", [b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'], 1_005, 2)
    live.finished(0, "done")
    names = sorted(s.name for s in exporter.spans)
    assert "tools/call echo" in names and any(n.startswith("mcp session") for n in names), names
    call = next(s for s in exporter.spans if s.name == "tools/call echo")
    assert (call.end_time - call.start_time) == 4_000_000  # the frames' times, in ns


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at module level or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_record_http_and_record_cmd_do_not_import_each_other() -> None:
    assert "mcpreel.cli.record_http" in _imports(SRC / "cli" / "record_cmd.py")  # the command calls it
    assert not any(m.startswith("mcpreel.cli.record_cmd") for m in _imports(SRC / "cli" / "record_http.py"))
    for module in (SRC / "record").glob("*.py"):  # the library never reaches back into the command line
        assert not any(m == "mcpreel.cli" or m.startswith("mcpreel.cli.") for m in _imports(module)), module


# -- stdio, both front ends --------------------------------------------------------------------------


def test_record_writes_the_tags_into_the_reel_and_the_session_file_over_stdio(tmp_path: Path) -> None:
    out, qai = tmp_path / "r.jsonl", tmp_path / "s.json"
    proc = subprocess.run(record_argv(out, *TAGS, "--session-file", str(qai)) + [PY, RAW, "echo"], input=PING,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert header(out)["metadata"]["tags"] == WANT and qai_tags(qai) == WANT
    lines = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert [x["raw"]["method"] for x in lines if "raw" in x] == ["ping", "ping"]  # the session itself recorded


def test_proxy_start_writes_the_tags_over_stdio(tmp_path: Path) -> None:
    out, qai = tmp_path / "r.jsonl", tmp_path / "s.json"
    proc = subprocess.run([PY, "-m", "mcpreel", "proxy", "start", "-q", "--transport", "stdio", "--target-command",
                           shlex.join([PY, RAW, "echo"]), "--out", str(out), "--session-file", str(qai), *TAGS],
                          input=PING, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert header(out)["metadata"]["tags"] == WANT and qai_tags(qai) == WANT


def test_a_bad_tag_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    proc = subprocess.run(record_argv(out, "--tag", "oops") + [PY, RAW, "echo"], input="", capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.strip() == "error: --tag 'oops': give KEY=VALUE (a non-empty key, then =)"
    assert not out.exists()


# -- HTTP: the command line, with a real SDK client and server ------------------------------------------


async def _streamable(url: str, mode: str) -> str:
    from mcp import Client

    async with Client(url, mode=mode) as c:  # type: ignore[call-arg]
        r = await c.call_tool("echo", {"text": "tagged"})
    return str(r.content[0].text)  # type: ignore[union-attr]


async def _legacy_sse(url: str) -> str:
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    async with sse_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("echo", {"text": "tagged"})
    return str(r.content[0].text)  # type: ignore[union-attr]


def _cli_http(tmp_path: Path, verb: list[str], transport: str, target: str, drive: Any) -> tuple[Path, Path]:
    """Run ``verb`` (``record`` or ``proxy start``) in front of ``target``, drive a session through it, stop it
    with SIGINT; returns the reel and the session file."""
    out, qai = tmp_path / "r.jsonl", tmp_path / "s.json"
    target_flag = "--target-url" if verb[0] == "proxy" else "--target"
    proc = subprocess.Popen([PY, "-m", "mcpreel", *verb, "--transport", transport, target_flag, target,
                             "--listen", "127.0.0.1:0", "--out", str(out), "--session-file", str(qai), "--no-control",
                             *TAGS], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
    try:
        while "point your MCP client at" not in (line := lines.get(timeout=60)):
            pass
        url = line.split("point your MCP client at ", 1)[1].split()[0]
        assert asyncio.run(drive(url)) == "tagged"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    assert proc.returncode == 0
    return out, qai


@pytest.mark.e2e
@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_record_writes_the_tags_over_streamable_http(tmp_path: Path, era: str) -> None:
    with ThreadServer(sdk_server().streamable_http_app()) as srv:
        out, qai = _cli_http(tmp_path, ["record"], "streamable-http", srv.url("/mcp"),
                             lambda url: _streamable(url, era))
    assert header(out)["metadata"]["tags"] == WANT and qai_tags(qai) == WANT
    assert header(out)["metadata"]["listen"].startswith("http://127.0.0.1:")  # the recorder's own field kept
    assert b'"tagged"' in out.read_bytes()


@pytest.mark.e2e
def test_proxy_start_writes_the_tags_over_legacy_sse(tmp_path: Path) -> None:
    with ThreadServer(sdk_server().sse_app()) as srv:
        out, qai = _cli_http(tmp_path, ["proxy", "start"], "sse", srv.url("/sse"), _legacy_sse)
    assert header(out)["transport"] == "sse"
    assert header(out)["metadata"]["tags"] == WANT and qai_tags(qai) == WANT
    assert b'"tagged"' in out.read_bytes()


@pytest.mark.e2e
def test_the_library_entry_point_writes_the_tags_over_legacy_sse(tmp_path: Path) -> None:
    """The same option through :func:`mcpreel.record.record` itself, as the cassette flows and the demo call it."""
    qai = tmp_path / "lib.json"
    with ThreadServer(sdk_server().sse_app()) as srv:
        with proxy("sse", srv.url("/sse"), tmp_path, tags=(("team", "qa"),), session_file=qai, save_every=None) as run:
            assert asyncio.run(_legacy_sse(run.url)) == "tagged"
    assert run.out is not None and run.result is not None
    assert header(run.out)["metadata"]["tags"] == {"team": "qa"} and qai_tags(qai) == {"team": "qa"}
    assert run.result.session_file == qai and run.result.messages >= 4 and run.result.stats is not None
