"""What mcpreel exposes by default (issue 28): every verb that writes something a person shares, run with
its default flags over recordings with planted secrets, and every output grepped for them.

The recordings are built as reels (so every place a secret can stand is filled, which no single real
session does): a stdio session whose server argv holds ``--token``, whose stderr prints an ``api_key=``,
whose tool call carries a ``password`` argument and whose result a ``sk-live-…`` key; and a
Streamable HTTP session whose URL holds ``?api_key=`` and whose every record's context holds
``Authorization``, ``Cookie`` and ``X-Api-Key`` headers (what ``record --keep-secrets`` or another
tool's file leaves). A second copy of each (``B``) has other body secrets, so ``diff`` has values to show.

The contract asserted here is the README's "What mcpreel exposes by default":

- shared views hold no planted secret: ``report``, ``diff`` (rows, ``--json``, ``--junit``, ``--sarif``,
  ``--html``), ``replay`` (rows, ``--output``, ``--junit``, ``--html``), ``inspect`` (default, ``-v``,
  ``--json``), ``check`` (table and ``--out``), the miss messages of ``serve`` (the client's error, its
  stderr, ``--report``), and the lines every verb prints;
- session files (``convert`` to every format, ``import``'s traces) are faithful copies of what the
  recording holds: bodies (arguments, results), the server's argv and its stderr stay as recorded
  (``mcpreel redact`` before sharing them), transport secrets (secret headers, secret URL parameters)
  never; they are written 0600.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.formats import FORMATS, writer_names
from mcpreel.model import Kind, Message, Session, SessionInfo
from tests import peers
from tests.check.servers import SeedServer, serve_app
from tests.formats.support import write

ARG = "Arg-Secret-PW-7731"
RESULT = "sk-live-" + "R" * 24
AUTH = "hdrauthtoken9f8e7d6c5b4a"
COOKIE = "cookie-secret-4411"
X_API_KEY = "xapikey-secret-5522"
URL_KEY = "url-api-key-6633"
ARGV = "argv-token-7744"
STDERR = "stderr-secret-8855"
#: the body secrets of the B copies
ARG_B = "Arg-Secret-PW-9999"
RESULT_B = "sk-live-" + "B" * 24

BODY = {"ARG": ARG, "RESULT": RESULT, "ARG_B": ARG_B, "RESULT_B": RESULT_B}
TRANSPORT = {"AUTH": AUTH, "COOKIE": COOKIE, "X_API_KEY": X_API_KEY, "URL_KEY": URL_KEY}
PROCESS = {"ARGV": ARGV, "STDERR": STDERR}
PLANTED = {**BODY, **TRANSPORT, **PROCESS}


def found(text: str, secrets: dict[str, str] = PLANTED) -> list[str]:
    """The names of the planted secrets ``text`` holds."""
    return [name for name, value in secrets.items() if value in text]


def _messages(http: bool, arg: str, result: str) -> list[Message]:
    def ctx() -> dict | None:
        if not http:
            return None
        return {"method": "POST", "path": f"/mcp?api_key={URL_KEY}", "status": 200,
                "headers": {"Authorization": f"Bearer {AUTH}", "Cookie": f"sid={COOKIE}", "X-Api-Key": X_API_KEY,
                            "Content-Type": "application/json"}}

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                "serverInfo": {"name": "s", "version": "1"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi", "password": arg}}}
    answer = {"jsonrpc": "2.0", "id": 2,
              "result": {"content": [{"type": "text", "text": f"your key is {result}"}], "isError": False}}
    out = [Message("in", init, t=1000, ctx=ctx()), Message("out", ok, t=1010, ctx=ctx()),
           Message("in", {"jsonrpc": "2.0", "method": "notifications/initialized"}, t=1020, ctx=ctx()),
           Message("in", call, t=1030, ctx=ctx()), Message("out", answer, t=1040, ctx=ctx())]
    if not http:
        out.insert(2, Message(None, None, t=1015, kind=Kind.STDERR, text=f"starting with api_key={STDERR}"))
    return out


@pytest.fixture(scope="module")
def reels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("planted")
    out = {}
    for name, http, arg, result in (("stdio", False, ARG, RESULT), ("stdio-b", False, ARG_B, RESULT_B),
                                    ("http", True, ARG, RESULT), ("http-b", True, ARG_B, RESULT_B)):
        info = (SessionInfo(transport="streamable-http", url=f"http://127.0.0.1:9/mcp?api_key={URL_KEY}", started=1000)
                if http else SessionInfo(transport="stdio", command=["python", "server.py", "--token", ARGV], started=1000))
        out[name] = write(Session(info, _messages(http, arg, result)), where / f"{name}.jsonl", "reel")
    text = out["stdio"].read_text() + out["http"].read_text()
    assert found(text, {k: PLANTED[k] for k in ("ARG", "RESULT", "AUTH", "COOKIE", "X_API_KEY", "URL_KEY",
                                                "ARGV", "STDERR")}) == [
        "ARG", "RESULT", "AUTH", "COOKIE", "X_API_KEY", "URL_KEY", "ARGV", "STDERR"]  # every secret is planted
    return out


def run(*args: str) -> tuple[int, str]:
    """A verb in this process, as a user runs it: its exit code, and all it printed (stdout and stderr)."""
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout + r.stderr


def _clean(*texts: str) -> None:
    joined = "\n".join(texts)
    assert found(joined) == [], joined[:3000]


# -- shared views: no planted secret ------------------------------------------------------------------
@pytest.mark.parametrize("which", ["stdio", "http"])
def test_report_shows_no_secret_and_says_it_is_redacted(reels, tmp_path: Path, which: str) -> None:
    page = tmp_path / "r.html"
    code, said = run("report", reels[which], "-o", page)
    assert code == 0
    html = page.read_text()
    _clean(said, html)
    assert "Secrets redacted" in html and "[REDACTED]" in html


@pytest.mark.parametrize("flags", [[], ["-v"], ["--json"], ["-v", "--json"], ["--summary"]])
@pytest.mark.parametrize("which", ["stdio", "http"])
def test_inspect_shows_no_secret(reels, which: str, flags: list[str]) -> None:
    code, said = run("inspect", reels[which], *flags)
    assert code == 0
    _clean(said)


@pytest.mark.parametrize("which", ["stdio", "http"])
def test_diff_shows_no_secret_in_any_of_its_outputs(reels, tmp_path: Path, which: str) -> None:
    outs = {k: tmp_path / f"d.{k}" for k in ("html", "xml", "sarif")}
    code, said = run("diff", reels[which], reels[f"{which}-b"], "--html", outs["html"], "--junit", outs["xml"],
                     "--sarif", outs["sarif"])
    assert code == 1  # they differ: the values were there to show
    code_json, said_json = run("diff", reels[which], reels[f"{which}-b"], "--json")
    assert code_json == 1
    _clean(said, said_json, *(p.read_text() for p in outs.values()))
    assert "$.params.arguments.password" in said and "Secrets redacted" in outs["html"].read_text()


@pytest.mark.e2e
def test_replay_shows_no_secret_in_any_of_its_outputs(reels, tmp_path: Path) -> None:
    """Against the official SDK server: its echo answers differ from the recorded ones, both are shown."""
    outs = {k: tmp_path / f"r.{k}" for k in ("html", "json", "xml")}
    p = subprocess.run([sys.executable, "-m", "mcpreel", "replay", str(reels["stdio"]), "--all",
                        "--target-command", f"{sys.executable} {peers.SDK_SERVER} stdio",
                        "--html", str(outs["html"]), "--output", str(outs["json"]), "--junit", str(outs["xml"])],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    _clean(p.stdout, p.stderr, *(o.read_text() for o in outs.values()))
    assert "your key is [REDACTED]" in outs["html"].read_text() and "Secrets redacted" in outs["html"].read_text()


def test_check_shows_no_secret_of_its_url(tmp_path: Path) -> None:
    out = tmp_path / "check.txt"
    with serve_app(SeedServer().app()) as base:
        code, said = run("check", f"{base}/ok/mcp?api_key={URL_KEY}", "--out", out)
    assert code == 0
    _clean(said, out.read_text())


@pytest.mark.e2e
@pytest.mark.parametrize("with_key", [True, False])
def test_a_serve_miss_shows_no_live_secret(reels, tmp_path: Path, with_key: bool) -> None:
    """A cassette redacted with keyed markers, served; a request with another password: the client's error,
    serve's stderr and --report say it differs (or that there is no key), never the live value."""
    key = tmp_path / "ci.key"
    key.write_text("a key of the project, 0123456789")
    key.chmod(0o600)
    cassette = tmp_path / "cassette.jsonl"
    code, _ = run("redact", reels["stdio"], cassette, "--redact-key", key)
    assert code == 0 and found(cassette.read_text(), BODY) == []
    report = tmp_path / "serve.report.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "MCPREEL_REDACT_KEY"}
    if with_key:
        env["MCPREEL_REDACT_KEY"] = str(key)
    live = "Other-Secret-PW-2"
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "hi", "password": live}}}]
    p = subprocess.run([sys.executable, "-m", "mcpreel", "serve", str(cassette), "--record-mode", "none",
                        "--report", str(report)], input="".join(json.dumps(x) + "\n" for x in lines),
                       capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    answers = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    miss = next(a for a in answers if a.get("id") == 2)
    assert miss["error"]["code"] == -32602
    everything = [p.stdout, p.stderr, report.read_text()]
    assert all(live not in text for text in everything), everything
    _clean(*everything)
    said = "differs from the recorded secret" if with_key else "not compared with the recorded secret"
    assert said in miss["error"]["message"] and said in report.read_text() and said in p.stderr


# -- session files: faithful bodies, never transport secrets --------------------------------------------
def _written_formats(which: str) -> list[str]:
    http_only = {"streamable-http", "http-sse"}
    return [f for f in writer_names() if which == "http" or f not in http_only]


@pytest.mark.parametrize("which", ["stdio", "http"])
def test_convert_keeps_bodies_and_drops_transport_secrets(reels, tmp_path: Path, which: str) -> None:
    formats = _written_formats(which)
    assert {"reel", "har", "qai", "jsonrpc", "assay-v2", "simple"} <= set(formats)
    for to in formats:
        out = tmp_path / f"out.{to}"
        code, said = run("convert", reels[which], out, "--to", to)
        assert code == 0, said
        text = out.read_text()
        _clean(said)
        assert found(text, TRANSPORT) == [], to  # never a header or URL secret
        shared = getattr(FORMATS[to].load(), "SHARED", False)  # a format for publishing (sts, atif): redacted
        assert found(text, {"ARG": ARG, "RESULT": RESULT}) == ([] if shared else ["ARG", "RESULT"]), to
        assert os.stat(out).st_mode & 0o777 == 0o600
    reel = (tmp_path / "out.reel").read_text()
    if which == "stdio":  # argv and stderr as recorded where the format holds them
        assert found(reel, PROCESS) == ["ARGV", "STDERR"]


@pytest.mark.parametrize("trace", ["assay-v2", "simple"])
@pytest.mark.parametrize("which", ["stdio", "http"])
def test_import_keeps_the_tool_calls_and_nothing_else(reels, tmp_path: Path, which: str, trace: str) -> None:
    out = tmp_path / "t.trace.jsonl"
    code, said = run("import", reels[which], "--trace-format", trace, "--out-trace", out)
    assert code == 0, said
    _clean(said)
    assert found(out.read_text()) == ["ARG", "RESULT"]  # the trace contract: arguments and results verbatim
    assert os.stat(out).st_mode & 0o777 == 0o600


# -- the opt-outs ----------------------------------------------------------------------------------------
def test_no_redact_shows_what_was_recorded_and_says_so(reels, tmp_path: Path) -> None:
    page, diff_page = tmp_path / "r.html", tmp_path / "d.html"
    assert run("report", reels["stdio"], "-o", page, "--no-redact")[0] == 0
    assert run("diff", reels["stdio"], reels["stdio-b"], "--html", diff_page, "--no-redact")[0] == 1
    for html in (page.read_text(), diff_page.read_text()):
        assert "Not redacted (--no-redact)" in html and RESULT in html
    assert ARGV in page.read_text() and STDERR in page.read_text()
    code, said = run("inspect", reels["stdio"], "-v", "--no-redact")
    assert code == 0 and found(said, {"ARG": ARG, "ARGV": ARGV, "STDERR": STDERR}) == ["ARG", "ARGV", "STDERR"]
    # --redact, the old flag, is still accepted and is the default
    assert run("report", reels["stdio"], "-o", page, "--redact")[0] == 0
    assert RESULT not in page.read_text() and "Secrets redacted" in page.read_text()


def test_merge_is_a_faithful_session_file(reels, tmp_path: Path) -> None:
    out = tmp_path / "merged.jsonl"
    code, said = run("merge", reels["stdio"], reels["http"], "-o", out)
    assert code == 0
    _clean(said)
    assert {"ARG", "RESULT"} <= set(found(out.read_text()))  # a session file: bodies as recorded
    assert os.stat(out).st_mode & 0o777 == 0o600
