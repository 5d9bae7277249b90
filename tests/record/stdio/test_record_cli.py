"""`mcpreel record -- CMD` as a client sees it: transparent bytes, a complete reel, the server's exit status."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time

import pytest

from tests.record.stdio.helpers import PY, RAW, messages, of_type, record_argv, reel_lines, run_record

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def wait_for(predicate, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_bytes_pass_unchanged_and_every_line_is_recorded_both_ways(tmp_path):
    out = tmp_path / "s.jsonl"
    wire = (PING + b'{ "jsonrpc" : "2.0", "id": 2, "method": "tools/list" }\r\n' + b"not json at all\n"
            + b'[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]\n'
            + "{\"jsonrpc\":\"2.0\",\"method\":\"é\"}\n".encode() + b'{"jsonrpc":"2.0","id":4,"method":"last"}')
    proc = run_record(out, [PY, RAW, "echo"], wire)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == wire  # nothing re-serialized, nothing of the proxy's own on stdout
    lines = reel_lines(out)
    assert lines[0]["type"] == "meta" and lines[0]["command"] == [PY, RAW, "echo"] and lines[0]["label"] == "raw_server"
    assert lines[-1]["type"] == "end" and lines[-1]["exitCode"] == 0
    for direction in ("in", "out"):
        recorded = [x for x in lines if x.get("dir") == direction]
        assert [x.get("type") for x in recorded] == [None, None, "invalid", None, None, None]
        assert recorded[1]["raw"] == {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        assert recorded[2]["text"] == "not json at all"
        assert len(recorded[3]["raw"]) == 2  # the batch, as it was
        assert recorded[5]["raw"]["method"] == "last"  # the last line had no newline: kept all the same
    body = lines[1:-1]
    assert [x["seq"] for x in body] == list(range(len(body)))
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600


def test_server_stderr_is_passed_on_and_recorded_and_garbage_is_kept(tmp_path):
    out = tmp_path / "s.jsonl"
    proc = run_record(out, [PY, RAW, "garbage"], PING)
    assert proc.returncode == 0
    assert proc.stdout == b"this is not json\n\xff\xfe bytes\n" + PING
    assert proc.stderr == b"starting up\nsecond stderr line\n"  # -q: only the server's own words
    lines = reel_lines(out)
    assert [x["text"] for x in of_type(lines, "stderr")] == ["starting up", "second stderr line"]
    assert [x["text"] for x in of_type(lines, "invalid")] == ["this is not json", "\\xff\\xfe bytes"]
    assert messages(lines, "out") == [json.loads(PING)]


@pytest.mark.parametrize(("server", "code"), [(["exit", "3"], 3), (["signal", str(int(signal.SIGKILL))], 137),
                                              (["signal", str(int(signal.SIGTERM))], 143)])
def test_the_proxy_exits_with_the_servers_status(tmp_path, server, code):
    out = tmp_path / "s.jsonl"
    proc = run_record(out, [PY, RAW, *server], PING)
    assert proc.returncode == code
    end = reel_lines(out)[-1]
    assert end["type"] == "end" and end["exitCode"] == code


def test_a_request_in_flight_when_the_server_dies_is_kept(tmp_path):
    out = tmp_path / "s.jsonl"
    proc = run_record(out, [PY, RAW, "crash"], PING)
    assert proc.returncode == 3
    lines = reel_lines(out)
    assert messages(lines, "in") == [json.loads(PING)]
    assert messages(lines, "out") == []
    assert [x["text"] for x in of_type(lines, "stderr")] == ["crash mid-call"]
    assert lines[-1]["reason"].startswith("server exited with code 3")


def test_a_command_that_cannot_start_exits_127_with_a_complete_reel(tmp_path):
    out = tmp_path / "s.jsonl"
    proc = subprocess.run([PY, "-m", "mcpreel", "record", "--out", str(out), "--", "no-such-mcp-server"],
                          capture_output=True, timeout=30)
    assert proc.returncode == 127
    assert proc.stdout == b""
    assert b"error: cannot start 'no-such-mcp-server': No such file or directory" in proc.stderr
    assert b"Traceback" not in proc.stderr
    lines = reel_lines(out)
    assert [x["type"] for x in lines] == ["meta", "end"]
    assert lines[-1]["exitCode"] == 127 and "No such file or directory" in lines[-1]["reason"]


def test_a_ten_megabyte_message_goes_through_whole(tmp_path):
    out = tmp_path / "s.jsonl"
    big = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"blob":"' + b"x" * (10 << 20) + b'"}}\n'
    proc = run_record(out, [PY, RAW, "echo"], big + PING, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == big + PING
    lines = reel_lines(out)
    assert [len(m["params"]["blob"]) for m in messages(lines, "in")[:1]] == [10 << 20]
    assert messages(lines, "out")[0]["params"]["blob"] == "x" * (10 << 20)
    assert len(messages(lines)) == 4


def test_sigterm_to_the_proxy_is_forwarded_and_the_file_is_complete(tmp_path):
    out = tmp_path / "s.jsonl"
    proc = subprocess.Popen(record_argv(out) + [PY, RAW, "sigterm"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(PING)
    proc.stdin.flush()
    assert proc.stdout.readline() == PING  # the server is up and answering
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 42  # the server's own answer to SIGTERM (its stdin still open: no EOF race)
    _, err = proc.communicate(timeout=30)
    assert b"got SIGTERM" in err
    lines = reel_lines(out)
    assert lines[-1]["type"] == "end" and lines[-1]["exitCode"] == 42
    assert "SIGTERM was forwarded" in lines[-1]["reason"]
    assert messages(lines) == [json.loads(PING)] * 2


def test_kill_9_of_the_proxy_loses_nothing_already_forwarded(tmp_path):
    out = tmp_path / "s.jsonl"
    pidfile = tmp_path / "server.pid"
    proc = subprocess.Popen(record_argv(out) + [PY, RAW, "pid", str(pidfile)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    received = []
    for i in range(50):
        msg = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i
        proc.stdin.write(msg)
        proc.stdin.flush()
        received.append(proc.stdout.readline())
    proc.kill()
    proc.wait(10)
    lines = reel_lines(out)  # every line whole: no torn record
    assert lines[-1].get("type") != "end"  # no end line: a session that did not end cleanly
    got = [json.loads(x) for x in received]
    assert messages(lines, "out") == got
    assert messages(lines, "in") == got
    # the server does not outlive the proxy (stdin EOF, and on Linux the parent-death signal)
    server_pid = int(pidfile.read_text())
    wait_for(lambda: not os.path.exists(f"/proc/{server_pid}") or
             open(f"/proc/{server_pid}/stat").read().split(") ")[1].startswith("Z"), what="the server to exit")


def test_a_client_that_disappears_ends_the_session(tmp_path):
    """The client dies: the proxy sees EOF, closes the server's stdin, the server exits, so does the proxy."""
    out = tmp_path / "s.jsonl"
    client = subprocess.Popen(
        [PY, "-c", "import sys,time; sys.stdout.write(sys.argv[1]); sys.stdout.flush(); time.sleep(60)", PING.decode()],
        stdout=subprocess.PIPE)
    proxy = subprocess.Popen(record_argv(out) + [PY, RAW, "echo"], stdin=client.stdout, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    client.stdout.close()
    assert proxy.stdout.readline() == PING
    client.kill()
    client.wait(10)
    proxy.stdout.close()  # nobody reads the answers any more either
    assert proxy.wait(30) == 0
    lines = reel_lines(out)
    assert lines[-1]["type"] == "end" and "closed its stdin" in lines[-1]["reason"]
    assert messages(lines) == [json.loads(PING)] * 2


def test_usage_errors_are_one_line_and_exit_2(tmp_path):
    base = [PY, "-m", "mcpreel", "record", "--out", str(tmp_path / "x.jsonl")]
    for args, text in [
        ([], b"no server command"),
        (["--listen", "127.0.0.1:9", "--", "cat"], b"--listen applies to HTTP transports only"),
        (["--allow-host", "dev.example", "--", "cat"], b"--allow-host applies to HTTP transports only"),
        (["--target-url", "http://127.0.0.1:9/mcp", "--", "cat"], b"--target-url is for --transport streamable-http"),
        (["--transport", "sse", "--", "cat"], b"records a server at a URL"),
        (["--transport", "sse"], b"needs --target-url URL"),
    ]:
        proc = subprocess.run(base + args, capture_output=True, timeout=30)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith(b"error: ") and text in proc.stderr and proc.stderr.count(b"\n") == 1
        assert proc.stdout == b""
    (tmp_path / "file").write_text("")
    unwritable = subprocess.run([PY, "-m", "mcpreel", "record", "--out", str(tmp_path / "file" / "x.jsonl"), "--",
                                 "cat"], capture_output=True, timeout=30)
    assert unwritable.returncode == 2 and b"cannot write the reel" in unwritable.stderr


def test_default_out_is_under_mcpreel_sessions_and_the_summary_goes_to_stderr(tmp_path):
    proc = subprocess.run([PY, "-m", "mcpreel", "record", "--", PY, RAW, "echo"], input=PING, capture_output=True,
                          cwd=tmp_path, timeout=30)
    assert proc.returncode == 0 and proc.stdout == PING
    files = list((tmp_path / "mcpreel-sessions").glob("raw_server-*Z.jsonl"))
    assert len(files) == 1
    assert f"-> {os.path.join('mcpreel-sessions', files[0].name)}".encode() in proc.stderr
    assert b"recorded 2 messages" in proc.stderr


def test_proxy_start_is_the_same_engine(tmp_path):
    out = tmp_path / "s.jsonl"
    proc = subprocess.run([PY, "-m", "mcpreel", "proxy", "start", "-q", "--transport", "stdio", "--target-command",
                           f"{PY} {RAW} exit 5", "--out", str(out)], capture_output=True, timeout=30)
    assert proc.returncode == 5
    lines = reel_lines(out)
    assert lines[0]["command"] == [PY, RAW, "exit", "5"] and lines[-1]["exitCode"] == 5
    missing = subprocess.run([PY, "-m", "mcpreel", "proxy", "start", "--transport", "stdio"], capture_output=True,
                             timeout=30)
    assert missing.returncode == 2 and b"give it after --target-command" in missing.stderr


def test_a_signal_while_the_pipes_drain_still_ends_the_file(tmp_path):
    """The server exited but a child of it holds its pipes: the proxy drains them (up to 2 s). A SIGTERM
    then (a client's shutdown) goes on to what is left of the server's group, and the file still ends."""
    out = tmp_path / "s.jsonl"
    proc = subprocess.Popen(record_argv(out) + [PY, RAW, "orphan"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(PING)
    proc.stdin.flush()
    assert proc.stdout.readline() == PING
    assert proc.stderr.readline() == b"leaving\n"
    time.sleep(0.3)  # the server is gone; its child still holds the pipes
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0  # the server's own exit code
    lines = reel_lines(out)
    assert lines[-1]["type"] == "end" and lines[-1]["exitCode"] == 0
    assert lines[-1]["reason"] == "server exited with code 0"  # the signal came after: not why it ended
    assert messages(lines) == [json.loads(PING)] * 2
