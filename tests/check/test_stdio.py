"""``mcpreel check --command``: stdio servers the tests write, with switchable defects; what cannot be
reached says why."""

from __future__ import annotations

import shlex
import sys
import time

import pytest

from mcpreel.check import FAIL, PASS, SKIP, WARN, CheckOptions, Unreachable, run_check
from tests.check.servers import STDIO_SERVER


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("stdio") / "server.py"
    path.write_text(STDIO_SERVER)
    return path


def command(script, *defects: str) -> str:
    return shlex.join([sys.executable, str(script), *defects])


def check(script, *defects: str, **kw):
    kw.setdefault("calls", {"echo": {"text": "hi"}})
    kw.setdefault("no_call", True)
    kw.setdefault("timeout", 5)
    return run_check(command=command(script, *defects), options=CheckOptions(**kw))


def test_a_correct_stdio_server_passes_and_http_checks_say_they_were_skipped(script):
    report = check(script)
    s = {r.id: r.status for r in report.results}
    assert report.transport == "stdio"
    http_checks = ("http-post", "sse-content-type", "sse-framing", "session-id", "origin", "protocol-version-header")
    for http_only in http_checks:
        assert s[http_only] == SKIP
        assert report.get(http_only).summary == "HTTP-only check: not run over stdio"
    for ok in ("initialize", "version-negotiation", "tools-list", "tool-schemas", "tools-call:echo", "notifications",
               "jsonrpc-ids", "unknown-method", "parse-error", "stdout-clean"):
        assert s[ok] == PASS, (ok, report.get(ok).summary)
    assert report.exit_code == 0


def test_noise_on_stdout(script):
    r = check(script, "noisy_stdout").get("stdout-clean")
    assert r.status == FAIL and "server starting" in r.summary
    assert "stderr" in r.fix


def test_crash_on_malformed_json(script):
    r = check(script, "crash_on_bad_json").get("parse-error")
    assert r.status == FAIL
    assert r.summary == "a malformed line ended the server: the server exited with code 1"


def test_notifications_answered_and_bad_ids(script):
    assert check(script, "answer_notifications").get("notifications").status == FAIL
    r = check(script, "bad_ids").get("jsonrpc-ids")
    assert r.status == FAIL and "(int), got '1' (str)" in r.summary


def test_a_tool_that_never_answers_is_a_warning_after_the_timeout(script):
    start = time.monotonic()
    report = check(script, calls={"slow": {}}, timeout=0.5)
    r = report.get("tools-call:slow")
    assert r.status == WARN and r.summary == "no answer within 0.5 s"
    assert time.monotonic() - start < 10


def test_command_not_found():
    with pytest.raises(Unreachable, match="cannot start 'no-such-mcp-server-7'"):
        run_check(command="no-such-mcp-server-7 --stdio")


def test_server_exits_before_answering(script):
    with pytest.raises(Unreachable) as info:
        check(script, "exit_at_once")
    said = "exited with code 3: fatal: missing config file /etc/nowhere.toml before answering initialize"
    assert said in str(info.value)


class _BrokenStdin:
    """A stdin pipe whose reader is gone: what a write meets when the server died first."""

    def write(self, data: bytes) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_pipe_broken_by_a_dying_server_still_says_how_it_ended():
    from mcpreel.check.probe import StdioProbe

    code = "import sys, time; print('fatal: no config', file=sys.stderr, flush=True); time.sleep(0.2); sys.exit(3)"
    with StdioProbe([sys.executable, "-c", code], timeout=5) as probe:
        probe.proc.stdin = _BrokenStdin()  # the write fails while the server is still on its way out
        ex = probe.request("initialize", {})
    assert ex.error == "the server exited with code 3: fatal: no config"


def test_server_that_says_nothing(script):
    with pytest.raises(Unreachable, match="no answer to initialize within 0.5 s"):
        check(script, "mute", timeout=0.5)
