"""Record modes, the plan each makes of a cassette on disk, the report, and `serve --record-mode` as a user meets it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.cassette.mode import RecordMode
from mcpreel.cassette.report import RunReport, read_report
from mcpreel.cassette.run import Recording, _judge, check_target, plan
from mcpreel.cassette.server import CassetteSetup, cassette_server
from mcpreel.errors import InputError, TransportError, UsageError

from .helpers import SDK_SERVER, deny_create, deny_replace

MCPREEL = [sys.executable, "-m", "mcpreel"]
META = {"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "x", "command": []}


def _line(direction: str, raw: dict) -> dict:
    return {"t": "2026-01-01T00:00:00.100Z", "dir": direction, "raw": raw}


def write_reel(path: Path, *lines: dict) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in (META, *lines)))
    return path


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INIT_OK = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                 "serverInfo": {"name": "s", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}
CALL_OK = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}]}}


@pytest.fixture
def cassette(tmp_path) -> Path:
    return write_reel(tmp_path / "c.jsonl", _line("in", INIT), _line("out", INIT_OK), _line("in", CALL),
                      _line("out", CALL_OK))


# -- the enum ---------------------------------------------------------------------------------------

def test_record_modes_parse_and_a_bad_one_lists_the_valid_values():
    assert [RecordMode.parse(v) for v in ("once", "new_episodes", "none", "all")] == list(RecordMode)
    assert RecordMode.parse("New-Episodes") is RecordMode.NEW_EPISODES and RecordMode.parse(" ALL ") is RecordMode.ALL
    assert RecordMode.parse(RecordMode.NONE) is RecordMode.NONE and str(RecordMode.ONCE) == "once"
    for bad in ("replay", "", None, 3):
        with pytest.raises(UsageError) as info:
            RecordMode.parse(bad)  # type: ignore[arg-type]
        assert str(info.value) == f"unknown record mode {bad!r} (valid: once, new_episodes, none, all)"


# -- the plan ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,exists,record,on_miss", [
    ("once", True, False, "fail"), ("once", False, True, "fail"),
    ("new_episodes", True, False, "forward"), ("new_episodes", False, True, "forward"),
    ("none", True, False, "fail"),
    ("all", True, True, "fail"), ("all", False, True, "fail"),
])
def test_each_mode_plans_record_or_replay(cassette, tmp_path, mode, exists, record, on_miss):
    path = cassette if exists else tmp_path / "sub" / "new.jsonl"
    p = plan(path, mode)
    assert (p.record, p.on_miss, p.exists, p.action) == (record, on_miss, exists, "record" if record else "replay")
    assert p.format == ("reel" if exists else None)
    assert str(p.mode) in p.describe() and str(path) in p.describe()


def test_none_refuses_a_missing_cassette_and_a_folder_is_no_cassette(tmp_path):
    with pytest.raises(InputError) as info:
        plan(tmp_path / "gone.jsonl", "none")
    assert str(info.value) == f"{tmp_path / 'gone.jsonl'}: no such cassette (record mode none replays only: record it with once or all)"
    with pytest.raises(UsageError, match="is a folder"):
        plan(tmp_path, "once")


@pytest.mark.parametrize("mode", list(RecordMode))
@pytest.mark.parametrize("content", [b"", b"garbage\n", b'{"v":1,"type":"meta"}\n{"t":1,"dir":"in","raw":\n'])
def test_a_corrupt_cassette_fails_every_mode_naming_the_file_and_is_not_touched(tmp_path, mode, content):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        plan(path, mode)
    assert str(info.value).startswith(f"{path}: ")
    assert path.read_bytes() == content


def test_a_bad_line_deep_in_a_long_cassette_is_found_before_anything_runs(cassette):
    good = cassette.read_text()
    cassette.write_text(good * 50 + '{"t":"2026-01-01T00:00:00Z","dir":"in","raw":[1,\n')
    with pytest.raises(InputError, match=r"line 251"):
        plan(cassette, "once")


def test_formats_that_cannot_take_what_a_mode_writes_are_refused(fixtures_dir):
    recorder = fixtures_dir / "hub" / "agent-vcr" / "examples__recordings__calculator-v1.vcr"  # a read-only format
    qai = fixtures_dir / "qai" / "qai_session_minimal.json"
    assert plan(recorder, "none").format == "agent-vcr"  # replaying another tool's file is fine
    with pytest.raises(UsageError, match="new_episodes adds answers to the cassette, and agent-vcr files cannot be written"):
        plan(recorder, "new_episodes")
    with pytest.raises(UsageError, match="a qai file, and record mode all would replace it with a reel"):
        plan(qai, "all")
    assert plan(qai, "new_episodes").on_miss == "forward"


def test_the_real_server_is_reached_the_way_the_client_reaches_the_cassette(cassette, tmp_path):
    replay, missing = plan(cassette, "none"), plan(tmp_path / "m.jsonl", "once")
    check_target(replay, "stdio", None, None)  # replay only: no real server needed
    check_target(missing, "stdio", "python server.py", None)
    check_target(missing, "sse", None, "http://127.0.0.1:1/sse")
    cases = [
        (missing, "stdio", None, None, "is missing, and record mode once then asks the real server: give its command"),
        (missing, "streamable-http", None, None, "give its URL (--target-url)"),
        (plan(cassette, "new_episodes"), "stdio", None, None, "may lack a request"),
        (plan(cassette, "all"), "stdio", None, None, "is to be recorded again"),
        (replay, "stdio", None, "http://x/mcp", "served over stdio reaches its real server over stdio too"),
        (replay, "streamable-http", "cmd", None, "served over streamable-http reaches its real server over HTTP too"),
        (replay, "stdio", "cmd", "http://x/mcp", "not both"),
        (replay, "websocket", None, None, "unknown transport 'websocket'"),
    ]
    for p, transport, command, url, words in cases:
        with pytest.raises(UsageError, match=words.replace("(", r"\(").replace(")", r"\)")):
            check_target(p, transport, command, url)


def test_a_stdio_cassette_server_is_an_argv_for_the_client(cassette, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    with cassette_server(cassette, "new_episodes", command=["python", "my server.py"], env={"TOKEN": "t"},
                         setup=CassetteSetup(match="method_params"), cwd=tmp_path) as server:
        argv = server.argv
        assert argv[:6] == [sys.executable, "-m", "mcpreel", "serve", str(cassette), "--record-mode"]
        assert argv[argv.index("--record-mode") + 1] == "new_episodes"
        assert argv[argv.index("--target-command") + 1] == "python 'my server.py'"
        assert argv[argv.index("--match") + 1] == "method-params"  # mcp-recorder's spelling is taken too
        assert (server.command, server.args, server.action) == (sys.executable, argv[1:], "replay")
        # SDK clients pass a pared-down env: the server gets the test's whole environment, plus the marker's,
        # plus the key the answers new_episodes adds are redacted with (issue 28)
        assert server.env == {**os.environ, "PYTHONPATH": "/somewhere", "TOKEN": "t"}
        assert "--redact" in argv and server.env["MCPREEL_REDACT_KEY"] == os.environ["MCPREEL_REDACT_KEY"]
        params = server.stdio_parameters()
        assert (params.command, params.args, params.cwd) == (sys.executable, argv[1:], str(tmp_path))
        params = server.stdio_parameters(env={"EXTRA": "1", "TOKEN": "u"}, cwd=tmp_path / "sub")
        assert params.env == {**server.env, "EXTRA": "1", "TOKEN": "u"} and params.cwd == str(tmp_path / "sub")
        report = Path(argv[argv.index("--report") + 1])
        assert report.parent.is_dir() and (report.parent.stat().st_mode & 0o777) == 0o700
    assert not report.parent.exists() and server.events() == [] and server.problems() == []  # never launched
    with pytest.raises(UsageError, match="unknown match mode 'fuzzy'"):
        cassette_server(cassette, "none", setup=CassetteSetup(match="fuzzy"))
    with pytest.raises(UsageError, match="unknown transport 'ws'"):
        cassette_server(cassette, "none", transport="ws")
    with pytest.raises(TransportError, match="cannot start the cassette server: No such file or directory"):
        cassette_server(cassette, "none", transport="streamable-http", cwd=tmp_path / "nowhere")


# -- judging a recording -------------------------------------------------------------------------------

def test_a_recording_is_kept_only_when_clean_and_the_client_said_something(tmp_path):
    target = tmp_path / "c.jsonl"
    full = write_reel(tmp_path / "full", _line("in", INIT), _line("out", INIT_OK))
    assert _judge(full, target, True, "done") == Recording(target, True, True, 2, "done")
    assert _judge(full, target, False, "server exited").saved is False
    silent = write_reel(tmp_path / "silent", _line("out", {"jsonrpc": "2.0", "method": "notifications/x"}))
    verdict = _judge(silent, target, True, "stopped")
    assert (verdict.saved, verdict.clean, verdict.reason) == (False, True, "the client sent nothing; stopped")
    gone = write_reel(tmp_path / "gone", _line("in", INIT), {"t": "2026-01-01T00:00:00.200Z", "dir": "out",
                      "type": "transport", "ctx": {"status": 502, "proxy": "unreachable", "error": "refused"}})
    verdict = _judge(gone, target, True, "stopped")
    assert (verdict.saved, verdict.clean) == (False, False) and "could not be reached: refused" in verdict.reason
    broken = tmp_path / "broken"
    broken.write_text("{nope\n")
    assert _judge(broken, target, True, "x").reason.startswith("the recording cannot be read back")
    assert "left as it was" in verdict.describe()


# -- the report ----------------------------------------------------------------------------------------

def test_the_report_is_private_appended_and_read_while_written(tmp_path):
    path = tmp_path / "r" / "report.jsonl"
    for n in range(2):
        out = RunReport(path)
        out.write("miss", method="tools/call", message=f"m{n}")
        out.close()
        out.close()
    assert (path.stat().st_mode & 0o777) == 0o600
    with open(path, "ab") as fh:
        fh.write(b'{"event":"sav')  # a line still being written
    assert [(e["event"], e["message"]) for e in read_report(path)] == [("miss", "m0"), ("miss", "m1")]
    assert read_report(tmp_path / "none.jsonl") == []
    RunReport(None).write("ignored")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_reading_any_bytes_as_a_report_gives_events_or_nothing(data):
    import tempfile

    with tempfile.NamedTemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        events = read_report(fh.name)
    assert all(isinstance(e, dict) for e in events)
    assert len(events) <= data.count(b"\n")


# -- the command line --------------------------------------------------------------------------------

def _serve(*args: str, input: list[dict] | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    text = "".join(json.dumps(m) + "\n" for m in input or [])
    return subprocess.run([*MCPREEL, "serve", *args], input=text, capture_output=True, text=True, timeout=timeout)


def test_serve_none_answers_hits_and_exits_1_on_a_miss(cassette, tmp_path):
    report = tmp_path / "report.jsonl"
    before = cassette.read_bytes()
    miss = {**CALL, "id": 3, "params": {"name": "echo", "arguments": {"text": "bye"}}}
    r = _serve(str(cassette), "--record-mode", "none", "--report", str(report), input=[INIT, CALL, miss])
    assert r.returncode == 1, r.stderr
    answers = [json.loads(line) for line in r.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3] and answers[1]["result"] == CALL_OK["result"]
    assert answers[2]["error"]["code"] == -32602 and "closest is request #2" in answers[2]["error"]["message"]
    lines = r.stderr.strip().splitlines()
    assert lines[0] == f"mcpreel: record mode none: replaying {cassette}; requests it lacks fail"
    assert lines[-1] == f"error: 1 requests could not be answered from {cassette} (record mode none)"
    events = read_report(report)
    assert [e["event"] for e in events] == ["plan", "ready", "miss", "done"]
    assert '$.params.arguments.text: "hi" -> "bye"' in events[2]["message"]
    assert cassette.read_bytes() == before


def test_serve_once_replays_a_real_fixture_without_writing_it(fixtures_dir):
    path = fixtures_dir / "mcp-replay-v1" / "readme-minimal.jsonl"
    before = path.read_bytes()
    r = _serve(str(path), "--record-mode", "once", input=[INIT])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}  # the recorded answer
    assert "served 1 requests: 1 answered from the cassette, 0 missed, 0 forwarded" in r.stderr
    assert path.read_bytes() == before


def test_serve_once_records_a_missing_cassette_from_a_stdio_server(tmp_path):
    # the "real server": answers initialize, then the client leaves
    server = [sys.executable, "-c", "import json,sys\n"
              "for line in sys.stdin:\n"
              "    m = json.loads(line)\n"
              "    if 'id' in m: print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': {}}), flush=True)\n"]
    cassette = tmp_path / "deep" / "new.jsonl"
    r = _serve(str(cassette), "--record-mode", "once", "--target-command", shlex.join(server),
               input=[INIT, {**CALL, "id": 2}])
    assert r.returncode == 0, r.stderr
    assert [json.loads(line)["id"] for line in r.stdout.splitlines()] == [1, 2]
    assert "mcpreel: record mode once: " in r.stderr and "recorded 4 messages -> " in r.stderr
    assert (cassette.stat().st_mode & 0o777) == 0o600 and sorted(p.name for p in cassette.parent.iterdir()) == ["new.jsonl"]
    assert plan(cassette, "once").record is False


def test_serve_record_mode_words_that_do_not_fit(cassette, tmp_path):
    cases = [
        (["--record-mode", "sometimes"], "unknown record mode 'sometimes' (valid: once, new_episodes, none, all)"),
        (["--record-mode", "none", "--on-miss", "error"], "--record-mode decides what a miss does"),
        (["--record-mode", "none", "--format", "reel"], "drop --format"),
        (["--report", str(tmp_path / "r")], "--report goes with --record-mode"),
        (["--record-mode", "all"], "is to be recorded again, and record mode all then asks the real server"),
    ]
    for args, words in cases:
        r = _serve(str(cassette), *args)
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text("{\n")
    r = _serve(str(corrupt), "--record-mode", "all", "--target-command", "true")
    assert r.returncode == 2 and r.stderr.startswith(f"error: {corrupt}: ") and len(r.stderr.splitlines()) == 1
    assert corrupt.read_text() == "{\n"


def test_serve_all_keeps_the_cassette_when_the_server_dies_before_the_client_is_done(cassette):
    before = cassette.read_bytes()
    crash = shlex.join([sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(1)"])
    proc = subprocess.Popen([*MCPREEL, "serve", str(cassette), "--record-mode", "all", "--target-command", crash],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write(json.dumps(INIT) + "\n")
        proc.stdin.flush()  # and the client stays: the server leaves on its own
        assert proc.wait(timeout=30) == 2
        err = proc.stderr.read()
    finally:
        proc.kill()
        proc.communicate()
    assert err.strip().splitlines()[-1] == (
        "error: recording not saved (server exited with code 1 before the client ended the session): "
        f"{cassette} was left as it was")
    assert cassette.read_bytes() == before and sorted(p.name for p in cassette.parent.iterdir()) == ["c.jsonl"]


def test_serve_all_whose_cassette_cannot_be_replaced_exits_2_in_one_line_and_reports_it(cassette, tmp_path,
                                                                                         monkeypatch):
    before = cassette.read_bytes()
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    deny_replace(hooks, monkeypatch, cassette.name)
    report = tmp_path / "report.jsonl"
    r = _serve(str(cassette), "--record-mode", "all", "--report", str(report),
               "--target-command", shlex.join(SDK_SERVER + ["stdio"]), input=[INIT])
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        f"error: {cassette}: the recording could not be saved: Permission denied; the cassette was left as it was")
    events = read_report(report)
    assert [e["event"] for e in events] == ["plan", "ready", "error"]
    assert events[-1]["message"] == r.stderr.strip().splitlines()[-1].removeprefix("error: ")
    assert cassette.read_bytes() == before and sorted(p.name for p in cassette.parent.iterdir()) == [
        "c.jsonl", "hooks", "report.jsonl"]


def test_serve_once_into_a_read_only_folder_exits_2_in_one_line_and_reports_it(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    deny_create(hooks, monkeypatch, folder)
    cassette, report = folder / "c.jsonl", tmp_path / "report.jsonl"
    r = _serve(str(cassette), "--record-mode", "once", "--report", str(report),
               "--target-command", shlex.join(SDK_SERVER + ["stdio"]), input=[INIT])
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    line = f"{cassette}: cannot record here: Permission denied ({folder}); nothing was recorded"
    assert r.stderr.strip().splitlines() == [f"error: {line}"]
    events = read_report(report)
    assert [e["event"] for e in events] == ["plan", "error"] and events[-1]["message"] == line
    assert list(folder.iterdir()) == []


def test_serve_redact_writes_the_recording_redacted_and_only_goes_with_a_record_mode(tmp_path, cassette):
    secret = "sk-" + "s" * 24
    call = {**CALL, "params": {"name": "echo", "arguments": {"text": f"key {secret}"}}}
    recorded = tmp_path / "new" / "c.jsonl"
    r = _serve(str(recorded), "--record-mode", "once", "--redact", "--target-command",
               shlex.join(SDK_SERVER + ["stdio"]), input=[INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                                          call])
    assert r.returncode == 0, r.stderr
    text = recorded.read_text()  # the request at least (the server may go before it answers: stdin closed)
    assert secret not in text and "[REDACTED:sk-key:" in text and (recorded.stat().st_mode & 0o777) == 0o600
    assert sorted(p.name for p in recorded.parent.iterdir()) == ["c.jsonl"]  # no temporary file left
    r = _serve(str(cassette), "--redact")
    assert r.returncode == 2 and r.stderr.strip() == (
        "error: --redact goes with --record-mode (it redacts what is written to the cassette)")
