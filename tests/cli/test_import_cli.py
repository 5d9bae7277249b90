"""``mcpreel import`` and ``mcpreel trace import-mcp`` as a user runs them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

from click.testing import CliRunner

from mcpreel.cli import cli


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_import_default_output_and_summary_line(fixtures_dir, tmp_path):
    src = tmp_path / "session.json"
    src.write_bytes((fixtures_dir / "assay-docs" / "edge_case.json").read_bytes())
    r = run("import", str(src))
    assert r.exit_code == 0, r.output
    out = tmp_path / "session.trace.jsonl"
    assert out.exists() and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert r.stdout.strip() == f"imported 7 messages: 3 tool calls, 1 unanswered, 1 orphans -> {out}"
    assert 'orphan response with JSON-RPC id "3"' in r.stderr
    assert "read as jsonrpc" in r.stderr  # a bare array: the choice is said
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert events[0]["episode_id"] == "session"


def test_import_options(fixtures_dir, tmp_path):
    out = tmp_path / "o.jsonl"
    r = run("import", str(fixtures_dir / "assay-docs" / "import-formats@HEAD__05.json"), "--format", "sse-legacy",
            "--out-trace", str(out), "--episode-id", "E", "--test-id", "T", "--prompt", "P")
    assert r.exit_code == 0, r.output
    start = json.loads(out.read_text().splitlines()[0])
    assert (start["episode_id"], start["meta"]["test_id"], start["input"]["prompt"]) == ("E", "T", "P")


def test_trace_import_mcp_is_the_same_engine(fixtures_dir, tmp_path):
    src = fixtures_dir / "assay-docs" / "import-formats@HEAD__01.json"
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run("import", str(src), "--out-trace", str(a), "--episode-id", "x").exit_code == 0
    r = run("trace", "import-mcp", "--input", str(src), "--out-trace", str(b), "--episode-id", "x", "--format", "streamable-http")
    assert r.exit_code == 0, r.output
    assert a.read_bytes() == b.read_bytes()


def test_bad_input_one_line_exit_2_nothing_left(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{}}}\n{oops\n')
    out = tmp_path / "bad.trace.jsonl"
    r = run("import", str(src))
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [f"error: {src}: invalid JSON on line 2: Expecting property name enclosed in double quotes (column 2)"]
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_no_tool_calls_still_writes_and_warns(tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_text('{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    r = run("import", str(src))
    assert r.exit_code == 0 and "no tool calls found" in r.stderr
    assert (tmp_path / "s.trace.jsonl").exists()


def test_console_script_no_traceback(tmp_path):
    src = tmp_path / "x.json"
    src.write_text('{"transport":"streamable-http","entries":[{"request":{"jsonrpc":"2.0","id":[1],"method":"tools/call"}}]}')
    exe = os.path.join(os.path.dirname(sys.executable), "mcpreel")
    p = subprocess.run([exe, "import", str(src)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f"error: {src}: JSON-RPC id on source line 1 must not be an array\n"


def _big_transcript(path, mb: int = 9):
    line = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "t", "arguments": {"pad": "x" * 200}}})
    with open(path, "w") as fh:
        i = 0
        while fh.tell() < mb << 20:
            fh.write(line.replace('"id": 0', f'"id": {i}') + "\n")
            fh.write(json.dumps({"jsonrpc": "2.0", "id": i, "result": {}}) + "\n")
            i += 1


def test_progress_bar_on_a_terminal_only(tmp_path):
    import pty

    src = tmp_path / "big.jsonl"
    _big_transcript(src)
    exe = os.path.join(os.path.dirname(sys.executable), "mcpreel")
    # stderr on a pseudo-terminal: rich draws the bar there
    leader, follower = pty.openpty()
    p = subprocess.run([exe, "import", str(src)], stdout=subprocess.PIPE, stderr=follower, timeout=120)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert p.returncode == 0 and b"imported" in p.stdout
    assert b"importing big.jsonl" in seen
    # piped: no bar, nothing on stderr at all
    p = subprocess.run([exe, "import", str(src)], capture_output=True, timeout=120)
    assert p.returncode == 0 and p.stderr == b""


def test_agent_files_are_said_to_hold_no_mcp_traffic(fixtures_dir, tmp_path):
    src = fixtures_dir / "mcp-replay-v1" / "knowledge-mcp-global-api-aws-2026-08-19T21-18-31-987Z.agent.jsonl"
    r = run("import", str(src), "--out-trace", str(tmp_path / "a.jsonl"))
    assert r.exit_code == 0
    assert "holds no MCP messages" in r.stderr and "no tool calls found" in r.stderr
    assert r.stdout.startswith("imported 0 messages")


def test_an_output_that_cannot_be_written_is_one_line_exit_2(fixtures_dir, tmp_path):
    src = fixtures_dir / "assay-docs" / "import-formats@HEAD__06.jsonl"
    (tmp_path / "afile").write_text("")
    for out, says in ((tmp_path / "afile" / "t.jsonl", "is not a folder"),
                      (tmp_path / "afile" / "deeper" / "t.jsonl", "Not a directory")):
        r = run("import", str(src), "--out-trace", str(out))
        assert r.exit_code == 2 and "Traceback" not in r.output
        assert r.stderr.strip().splitlines() == [r.stderr.strip()]  # one line
        assert r.stderr.startswith(f"error: {out}: cannot write: ") and says in r.stderr
    if os.geteuid() != 0:  # root writes anywhere: only a user can meet a read-only folder
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        r = run("import", str(src), "--out-trace", str(ro / "t.jsonl"))
        assert r.exit_code == 2 and "Permission denied" in r.stderr


def test_the_trace_never_overwrites_its_own_session(tmp_path):
    src = tmp_path / "s.jsonl"
    body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{}}}\n'
    src.write_text(body)
    r = run("import", str(src), "--out-trace", str(src))
    assert r.exit_code == 2 and "would overwrite the session" in r.stderr
    assert src.read_text() == body
