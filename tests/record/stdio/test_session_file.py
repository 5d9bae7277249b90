"""--session-file (a qai session file kept beside the reel) and --redact, through the command line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time

from mcpreel.formats import open_session
from tests.record.stdio.helpers import PY, RAW, record_argv, reel_lines, run_record

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
SECRET_CALL = (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"login",'
               b'"arguments":{"password":"hunter2"}}}\n')


def test_session_file_is_saved_at_exit_and_reads_back_like_the_reel(tmp_path):
    out, qai = tmp_path / "s.jsonl", tmp_path / "s.json"
    proc = run_record(out, [PY, RAW, "garbage"], PING + SECRET_CALL, "--session-file", str(qai))
    assert proc.returncode == 0
    doc = json.loads(qai.read_bytes())
    assert doc["transport"] == "stdio" and doc["ended_at"] is not None
    assert doc["server_command"].endswith("raw_server.py garbage")
    assert [(m["direction"], m["method"], m["jsonrpc_id"]) for m in doc["messages"]] == [
        ("client_to_server", "ping", 1), ("client_to_server", "tools/call", 2),
        ("server_to_client", "ping", 1), ("server_to_client", "tools/call", 2)]
    assert stat.S_IMODE(os.stat(qai).st_mode) == 0o600
    # the same session, message for message, as the reel says
    from_qai = [(m.dir, m.raw) for m in open_session(qai)[0]]
    from_reel = [(m.dir, m.raw) for m in open_session(out)[0] if m.raw is not None]
    assert from_qai == from_reel
    assert doc["id"] == reel_lines(out)[0]["session"]


def test_session_file_is_saved_while_the_session_runs(tmp_path):
    out, qai = tmp_path / "s.jsonl", tmp_path / "s.json"
    proc = subprocess.Popen(record_argv(out, "--session-file", str(qai), "--save-every", "0.1") + [PY, RAW, "echo"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(PING)
        proc.stdin.flush()
        assert proc.stdout.readline() == PING
        deadline = time.monotonic() + 20
        doc = None
        while time.monotonic() < deadline:
            if qai.exists():
                doc = json.loads(qai.read_bytes())  # replaced atomically: never half written
                if len(doc["messages"]) == 2:
                    break
            time.sleep(0.05)
        assert doc is not None and len(doc["messages"]) == 2
        assert doc["ended_at"] is None  # still running
    finally:
        proc.stdin.close()
        proc.wait(20)
    assert json.loads(qai.read_bytes())["ended_at"] is not None


def test_a_server_that_cannot_start_still_leaves_a_complete_session_file_saying_why(tmp_path):
    out, qai = tmp_path / "s.jsonl", tmp_path / "s.json"
    proc = run_record(out, ["/nonexistent/mcp-server"], b"", "--session-file", str(qai))
    assert proc.returncode == 127
    doc = json.loads(qai.read_bytes())
    assert doc["messages"] == [] and doc["ended_at"] is not None
    assert "No such file or directory" in doc["metadata"]["error"]
    assert doc["exit_code"] == 127 and "cannot start" in doc["end_reason"]


def test_redact_changes_the_record_never_the_wire(tmp_path):
    out, qai = tmp_path / "s.jsonl", tmp_path / "s.json"
    proc = run_record(out, [PY, RAW, "echo", "--api-key=sk-abcdefghijklmnopqrstuvwxyz"], SECRET_CALL,
                      "--redact", "--session-file", str(qai))
    assert proc.returncode == 0
    assert proc.stdout == SECRET_CALL  # forwarded as it came
    for path in (out, qai):
        text = path.read_text()
        assert "hunter2" not in text and "sk-abcdefghijklmnopqrstuvwxyz" not in text
        assert "[REDACTED]" in text
    assert reel_lines(out)[0]["command"][-1] == "--api-key=[REDACTED]"


def test_the_qai_surface_start_inspect_export(tmp_path):
    """Seed 003's three commands, one after the other, as a qai user types them."""
    qai = tmp_path / "session.json"
    start = subprocess.run(
        [PY, "-m", "mcpreel", "proxy", "start", "--transport", "stdio", "--target-command", f"{PY} {RAW} answer",
         "--session-file", str(qai), "--out", str(tmp_path / "session.jsonl")],
        input=PING + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n' + SECRET_CALL,
        capture_output=True, timeout=30)
    assert start.returncode == 0, start.stderr
    assert b"mcpreel: recording" in start.stderr  # what the proxy says goes to stderr, never stdout
    assert start.stdout == (b'{"jsonrpc": "2.0", "id": 1, "result": {"method": "ping"}}\n'
                            b'{"jsonrpc": "2.0", "id": 2, "result": {"method": "tools/call"}}\n')

    inspect = subprocess.run([PY, "-m", "mcpreel", "proxy", "inspect", "--session-file", str(qai)],
                             capture_output=True, timeout=30, text=True)
    assert inspect.returncode == 0, inspect.stderr
    assert "Transport:      stdio" in inspect.stdout and "Messages:       5" in inspect.stdout
    assert "#000 > ping id=1" in inspect.stdout and "notifications/initialized" in inspect.stdout
    verbose = subprocess.run([PY, "-m", "mcpreel", "proxy", "inspect", "--session-file", str(qai), "-v"],
                             capture_output=True, timeout=30, text=True)
    # -v shows the payloads, their secrets redacted by default as every shared view's (issue 28)
    assert '"password": "[REDACTED]"' in verbose.stdout and "hunter2" not in verbose.stdout

    for fmt, name in (("json", "export.json"), ("har", "export.har"), ("reel", "export.jsonl")):
        export = subprocess.run([PY, "-m", "mcpreel", "proxy", "export", "--session-file", str(qai), "--output",
                                 str(tmp_path / name), "--output-format", fmt], capture_output=True, timeout=30)
        assert export.returncode == 0, export.stderr
        if fmt != "har":  # HAR is written, not read
            assert len([m for m in open_session(tmp_path / name)[0] if m.raw is not None]) == 5
    assert json.loads((tmp_path / "export.json").read_bytes())["messages"][0]["method"] == "ping"
    assert json.loads((tmp_path / "export.har").read_bytes())["log"]["entries"]
    bad = subprocess.run([PY, "-m", "mcpreel", "proxy", "export", "--session-file", str(qai), "--output",
                          str(tmp_path / "x"), "--output-format", "nope"], capture_output=True, timeout=30)
    assert bad.returncode == 2 and b"unknown format 'nope'" in bad.stderr


def test_a_session_file_that_cannot_be_written_is_a_usage_error_before_the_server_starts(tmp_path):
    (tmp_path / "afile").write_text("")
    out = tmp_path / "s.jsonl"
    proc = run_record(out, [PY, RAW, "exit", "5"], b"", "--session-file", str(tmp_path / "afile" / "s.json"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count(b"\n") == 1 and proc.stderr.startswith(b"error: ")
    assert b"cannot write the session file" in proc.stderr and b"Traceback" not in proc.stderr
    assert not out.exists()  # nothing recorded, nothing started


def test_a_session_file_lost_during_the_run_is_warned_and_not_claimed(tmp_path):
    """The folder was fine at the start; at the end the file cannot be put there: a warning, the reel
    stays complete, the closing line does not name a file it did not write, the exit code stays the server's."""
    out, qai = tmp_path / "s.jsonl", tmp_path / "s.json"
    proc = subprocess.Popen([PY, "-m", "mcpreel", "record", "--out", str(out), "--session-file", str(qai),
                             "--save-every", "0", "--", PY, RAW, "echo"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(PING)
    proc.stdin.flush()
    assert proc.stdout.readline() == PING
    qai.mkdir()  # now nothing can be renamed onto it
    proc.stdin.close()
    assert proc.wait(20) == 0
    err = proc.stderr.read().decode()
    assert f"warning: {qai}: session file not saved" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"mcpreel: recorded 2 messages -> {out}; server exited with code 0"), err
    assert reel_lines(out)[-1]["type"] == "end"
