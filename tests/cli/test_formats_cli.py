"""The commands as a user meets them: convert, inspect, merge, redact (output, warnings, errors, exit codes)."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from tests.conftest import FIXTURES, needs_shared

FASTMCP = FIXTURES / "qai" / "qai_session_fastmcp.json"


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@needs_shared
def test_convert_lossless_says_nothing_but_what_it_did(tmp_path):
    out = tmp_path / "s.jsonl"
    r = run("convert", FASTMCP, out)
    assert r.exit_code == 0, r.output
    assert r.stdout == f"converted {FASTMCP} (qai) -> {out} (reel): 19 records\n"
    assert r.stderr == ""
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


@needs_shared
def test_convert_lossy_prints_one_warning_line(tmp_path):
    r = run("convert", FASTMCP, tmp_path / "s.ndjson")
    assert r.exit_code == 0
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: writing jsonrpc drops ")
    assert "message times (19 messages)" in lines[0] and "the originals of 1 edited message" in lines[0]


@needs_shared
def test_convert_says_which_format_it_chose_when_not_obvious(tmp_path):
    r = run("convert", FIXTURES / "mcp-replay-v1" / "readme-minimal.jsonl", tmp_path / "s.json")
    assert r.exit_code == 0
    assert "written as qai: the extension .json" in r.stderr


@needs_shared
def test_convert_says_what_the_reader_noticed(tmp_path):
    agent = FIXTURES / "mcp-replay-v1" / "mcp-deepwiki-com-2026-08-20T17-10-35-825Z.agent.jsonl"
    r = run("convert", agent, tmp_path / "a.jsonl")
    assert r.exit_code == 0
    assert f"{agent}: kind 'llm': this file holds no MCP messages" in r.stderr


@needs_shared
def test_convert_to_a_trace(tmp_path):
    out = tmp_path / "x.trace.jsonl"
    r = run("convert", FIXTURES / "assay-docs" / "edge_case.json", out)
    assert r.exit_code == 0
    assert "orphan response" in r.stderr and "writing assay-v2 drops everything but tool semantics" in r.stderr
    assert json.loads(out.read_text().splitlines()[0])["type"] == "episode_start"


@pytest.mark.parametrize(("args", "needle"), [
    (["convert", "{bad}", "{out}"], "{bad}: qai message 1: direction must be"),
    pytest.param(["convert", str(FASTMCP), "{out}", "--to", "streamable-http"], "a stdio session has no HTTP exchanges",
                 marks=needs_shared),
    pytest.param(["convert", str(FASTMCP), "{out}", "--to", "langchain"], "can be read but not written",
                 marks=needs_shared),
    (["convert", "{missing}", "{out}"], "{missing}: cannot read"),
    (["inspect", "{bad}"], "{bad}: qai message 1: direction must be"),
    (["merge", str(FASTMCP), "-o", "{out}"], "merge needs at least two session files"),
    (["redact", str(FASTMCP), "{out}", "--rules", "{bad}"], "{bad}: unknown member 'messages'"),
])
def test_errors_are_one_line_and_exit_2(tmp_path, args, needle):
    bad = tmp_path / "bad.json"
    bad.write_text('{"started_at": null, "messages": [{"direction": "up", "payload": {}}]}')
    out = tmp_path / "out.json"
    subst = {"{bad}": str(bad), "{out}": str(out), "{missing}": str(tmp_path / "nope.json")}
    argv = [subst.get(a, a) for a in args]
    r = run(*argv)
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    for k, v in subst.items():
        needle = needle.replace(k, v)
    assert needle in lines[0]
    assert not out.exists()


def test_unknown_format_name_is_a_usage_error(tmp_path):
    r = run("convert", FASTMCP, tmp_path / "o.json", "--to", "yaml")
    assert r.exit_code == 2 and "unknown format 'yaml'" in r.stderr


@needs_shared
def test_inspect_plain_when_piped():
    r = run("inspect", FASTMCP)
    assert r.exit_code == 0
    out = r.stdout
    assert out.startswith("Session:        f4aedaa9-836c-4cac-b6b8-f7925b8cd8be\nTransport:      stdio\n")
    assert "  #000 > initialize id=0\n  #001 < (response) id=0 corr=#000 379ms\n" in out
    assert "  #005 > tools/call id=2 safe_echo [MODIFIED]\n" in out
    assert "  #016 < (response) id=5 corr=#015 14ms [ERROR -32602 Invalid request parameters]\n" in out
    assert "\x1b[" not in out


@needs_shared
def test_inspect_collects_garbage_less_often_while_it_runs_and_restores_the_collector(monkeypatch):
    import gc

    from mcpreel.cli import inspect_cmd

    seen = []
    real = inspect_cmd.output.byte_progress
    monkeypatch.setattr(inspect_cmd.output, "byte_progress",
                        lambda *a, **k: (seen.append((gc.get_threshold()[0], gc.get_freeze_count())), real(*a, **k))[1])
    before = (gc.get_threshold(), gc.get_freeze_count())
    for args in ((), ("-v",), ("--json",), ("--summary",)):
        assert run("inspect", FASTMCP, *args).exit_code == 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    assert len(seen) == 4 and all(young == inspect_cmd.output.GC_YOUNG and frozen > 0 for young, frozen in seen)


@needs_shared
def test_inspect_verbose_json_and_summary():
    v = run("inspect", FASTMCP, "-v").stdout
    assert '"message": "MODIFIED"' in v and "original (before the edit):" in v and '"message": "original"' in v
    doc = json.loads(run("inspect", FASTMCP, "--json").stdout)
    assert len(doc["rows"]) == 19 and "payload" not in doc["rows"][0]
    assert doc["summary"]["tools"]["safe_echo"]["calls"] == 1
    doc = json.loads(run("inspect", FASTMCP, "--json", "-v").stdout)
    assert doc["rows"][5]["original"]["params"]["arguments"] == {"message": "original"}
    s = run("inspect", FASTMCP, "--summary").stdout
    assert "#000" not in s and "Summary: 19 messages" in s


@needs_shared
def test_merge_and_redact(tmp_path):
    out = tmp_path / "m.jsonl"
    r = run("merge", FIXTURES / "mcp-replay-v1" / "readme-minimal.jsonl", FIXTURES / "qai" / "qai_session_minimal.json",
            "-o", out)
    assert r.exit_code == 0, r.output
    assert r.stdout == (f"merged 2 files (readme-minimal.jsonl (reel), qai_session_minimal.json (qai)) -> {out} (reel): "
                        "7 records\n")
    rules = tmp_path / "rules.json"
    rules.write_text('{"paths": ["$.params.arguments.message"]}')
    red = tmp_path / "r.json"
    r = run("redact", FIXTURES / "qai" / "qai_session_minimal.json", red, "--rules", rules, "--plain")
    assert r.exit_code == 0
    assert r.stdout == f"redacted 1 value (1 path $.params.arguments.message) -> {red} (qai)\n"
    assert json.loads(red.read_text())["messages"][3]["payload"]["params"]["arguments"]["message"] == "[REDACTED]"


@needs_shared
def test_the_installed_command_runs_and_pipes(tmp_path):
    """The real entry point, piped through a pipe as a user would: plain text, exit codes kept."""
    exe = shutil.which("mcpreel", path=str(Path(sys.executable).parent))
    assert exe is not None
    p = subprocess.run([exe, "inspect", str(FASTMCP)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "#018 < (response) id=str-6 corr=#017 1ms" in p.stdout and p.stderr == ""
    p = subprocess.run([exe, "convert", str(tmp_path / "none.json"), str(tmp_path / "o.jsonl")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("error: ") and "Traceback" not in p.stderr


@pytest.mark.parametrize(("text", "rule"), [
    ('{"messages": [{"direction": "client_to_server", "payload": null}], "started_at": null}',
     "qai message 1: payload must be a JSON-RPC object, found null"),
    ('{"interactions": [7]}', "interaction 1 must be a JSON object, found a number"),
    ('{"runs": [{"name": "t", "inputs": ["x"]}]}', "run 1: inputs must be an object, found an array"),
    ('{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00Z","label":"x","command":[]}\n'
     '{"t":"2026-01-01T00:00:01Z","dir":"in","raw":true}\n', "source line 2 must be a JSON-RPC object or batch array, found a boolean"),
])
def test_errors_name_json_types_in_json_words(tmp_path, text, rule):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    r = run("import", str(bad), "--out-trace", str(tmp_path / "t.jsonl"))
    assert r.exit_code == 2 and r.stderr == f"error: {bad}: {rule}\n"
    assert not (tmp_path / "t.jsonl").exists()


@needs_shared
def test_the_batch_verbs_collect_garbage_less_often_and_restore_the_collector(monkeypatch, tmp_path):
    import gc

    from mcpreel.cli import output

    seen = []
    real = output.byte_progress
    monkeypatch.setattr(output, "byte_progress",
                        lambda *a, **k: (seen.append((gc.get_threshold()[0], gc.get_freeze_count())), real(*a, **k))[1])
    before = (gc.get_threshold(), gc.get_freeze_count())
    runs = [("convert", FASTMCP, str(tmp_path / "a.reel.jsonl")), ("import", FASTMCP, "--out-trace", str(tmp_path / "t.jsonl")),
            ("merge", FASTMCP, FIXTURES / "qai" / "qai_session_minimal.json", "-o", str(tmp_path / "m.reel.jsonl")), ("diff", FASTMCP, FASTMCP),
            ("redact", FASTMCP, str(tmp_path / "r.reel.jsonl"), "--plain")]
    for args in runs:
        assert run(*args).exit_code == 0, args
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    assert len(seen) == len(runs) and all(young == output.GC_YOUNG and frozen > 0 for young, frozen in seen)
