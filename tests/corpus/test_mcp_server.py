"""``mcpreel mcp-server``: the corpus as an MCP server, driven by the official SDK's client in both protocol
eras over stdio and Streamable HTTP, passed by ``mcpreel check`` in both eras, and judged by the conformance
suite (one run, 2026-07-28) on the scenarios any well-behaved tools-only server passes.

The corpus is built here: three reels written by the test (two servers' sessions; one tool whose
description changed; a failed call carrying a secret) indexed with ``mcpreel index``, and one fleet replay
run appended to ``replays`` as ``replay --db`` does.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import date
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.corpus.mcp_server import SDK_MISSING, CorpusServerOptions, CorpusTools, check_index
from mcpreel.corpus.replays import append_rows
from mcpreel.errors import InputError, UsageError
from tests.replay.e2e_helpers import Background, mcpreel

pytestmark = pytest.mark.timeout(300)

SECRET = "sk-live-abcdefghijklmnopqrstuvwx1234"
TOOLS = {"describe_corpus", "find_sessions", "show_operation", "query_corpus", "replay_runs", "replay_results",
         "tool_definitions"}


def _reel(path: Path, *, day: str, client: str, server: str, description: str, fail: bool) -> Path:
    """A reel: the handshake, tools/list (``forecast`` with ``description``), two calls; the second one an
    ``isError`` result quoting a secret when ``fail``."""
    lines = [{"v": 1, "type": "meta", "startedAt": f"{day}T10:00:00.000Z", "label": path.stem, "command": ["srv"],
              "transport": "stdio"}]
    ms = 1

    def msg(d: str, raw: dict[str, Any]) -> None:
        nonlocal ms
        lines.append({"t": f"{day}T10:00:00.{ms:03d}Z", "dir": d, "raw": raw})
        ms += 2

    msg("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": client, "version": "1.0"}}})
    msg("out", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                       "serverInfo": {"name": server, "version": "2.0"}}})
    msg("in", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    msg("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    msg("out", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "forecast", "description": description, "inputSchema": {"type": "object"}}]}})
    msg("in", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "forecast",
                                                                           "arguments": {"city": "Oslo"}}})
    msg("out", {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "sunny"}]}})
    msg("in", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "forecast", "arguments": {"city": "Bergen", "api_key": SECRET}}})
    if fail:
        msg("out", {"jsonrpc": "2.0", "id": 3, "result": {
            "isError": True, "content": [{"type": "text", "text": f"bad key {SECRET}"}]}})
    else:
        msg("out", {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "rain"}]}})
    lines.append({"t": f"{day}T10:00:00.{ms:03d}Z", "type": "end", "exitCode": 0, "durationMs": ms})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The index (built by ``mcpreel index``) and the files in it."""
    root = tmp_path_factory.mktemp("corpus-mcp")
    sessions = root / "sessions"
    old = _reel(sessions / "old.reel.jsonl", day="2026-11-20", client="claude-code", server="weather",
                description="Forecast for a city", fail=False)
    new = _reel(sessions / "new.reel.jsonl", day="2026-11-25", client="cursor", server="weather",
                description="Forecast for a city (needs api_key)", fail=True)
    other = _reel(sessions / "other.reel.jsonl", day="2026-11-24", client="codex", server="maps",
                  description="Forecast on a map", fail=False)
    db = root / "corpus.duckdb"
    done = mcpreel("index", str(sessions), "--db", str(db), "--jobs", "1", timeout=120)
    assert done.returncode == 0, done.stderr
    # one fleet replay run, as `mcpreel replay --db` appends it
    run_ms = 1_764_100_000_000
    row = ("run-1", run_ms, "python new_server.py", "recording", str(new), 1)
    append_rows(db, [(*row, 1, "tools/call", "forecast", "same", "[]", 3.0, 4.0, None, date(2025, 11, 25)),
                     (*row, 2, "tools/call", "forecast", "changed", '["result.content[0].text"]', 3.0, 5.0, None,
                      date(2025, 11, 25))])
    return {"db": db, "old": old, "new": new, "other": other}


def _line_of(path: Path, line: int) -> dict[str, Any]:
    """The record at ``line`` (1-based) of a reel."""
    return json.loads(path.read_text(encoding="utf-8").splitlines()[line - 1])


def _open(where: str) -> tuple[Path, int]:
    file, _, line = where.rpartition(":")
    return Path(file), int(line)


# -- the tools, as a client sees them (shared by every transport and era) --------------------------------------


async def _exercise(client: Any, corpus: dict[str, Any]) -> None:
    """Every tool once, through the SDK client: what it answers, where it says to look, what it refuses."""
    listed = (await client.list_tools()).tools
    assert {t.name for t in listed} == TOOLS
    for t in listed:
        assert t.annotations.read_only_hint is True and t.annotations.destructive_hint is False, t.name
        assert t.output_schema and t.output_schema.get("type") == "object", t.name
        assert t.description and len(t.description) > 60, t.name

    got = await client.call_tool("find_sessions", {"failed": True})
    assert not got.is_error
    (session,) = got.structured_content["sessions"]
    assert json.loads(got.content[0].text) == got.structured_content  # the same JSON, as text
    file, line = _open(session["open"])
    assert file == corpus["new"] and session["client"] == "cursor" and session["server"] == "weather"
    failing = _line_of(file, line)["raw"]
    assert failing["method"] == "tools/call" and failing["id"] == 3  # the line of the failed call
    op_id = session["operation"]

    got = await client.call_tool("find_sessions", {"server_name": "WEA*", "until": "2026-11-22"})
    assert [s["client"] for s in got.structured_content["sessions"]] == ["claude-code"]
    got = await client.call_tool("find_sessions", {"since": "2026-11-21", "limit": 1})
    assert got.structured_content["count"] == 1 and got.structured_content["more"] is True
    assert got.structured_content["sessions"][0]["client"] == "cursor"  # newest first

    got = await client.call_tool("show_operation", {"id": op_id})
    assert not got.is_error, got.content[0].text
    shown = got.structured_content
    assert shown["redacted"] is True and SECRET not in got.content[0].text
    assert [m["role"] for m in shown["messages"]] == ["call", "answer"]
    assert _open(shown["open"]) == (corpus["new"], line)
    answer = shown["messages"][1]
    assert _line_of(*_open(answer["open"]))["raw"]["id"] == 3 and answer["message"]["result"]["isError"] is True

    got = await client.call_tool("query_corpus", {"sql": "SELECT id, file, request_line, tool FROM operations "
                                                         "WHERE tool = 'forecast' ORDER BY id", "max_rows": 2})
    q = got.structured_content
    assert q["columns"] == ["id", "file", "request_line", "tool"] and q["row_count"] == 2 and q["more"] is True
    for row in q["rows"]:
        assert row["open"] == f"{row['file']}:{row['request_line']}"
        assert _line_of(*_open(row["open"]))["raw"]["params"]["name"] == "forecast"
    for refused, why in (("SELECT * FROM read_text('/etc/passwd')", "outside the index"),
                         ("DELETE FROM operations", "read-only"),
                         ("SELECT nothing FROM nowhere", "query failed")):
        got = await client.call_tool("query_corpus", {"sql": refused})
        assert got.is_error and why in json.loads(got.content[0].text)["error"], got.content[0].text

    got = await client.call_tool("tool_definitions", {"name": "forecast", "server_name": "weather"})
    defs = got.structured_content
    assert defs["changed"] is True and [d["description"] for d in defs["definitions"]] == [
        "Forecast for a city", "Forecast for a city (needs api_key)"]  # in the order first seen
    first = _line_of(*_open(defs["definitions"][0]["open"]))
    assert first["raw"]["result"]["tools"][0]["description"] == "Forecast for a city"  # the tools/list answer
    got = await client.call_tool("tool_definitions", {"name": "fore"})
    assert got.structured_content["count"] == 0 and got.structured_content["similar"] == ["forecast"]

    got = await client.call_tool("replay_runs", {})
    (run,) = got.structured_content["runs"]
    assert (run["run_id"], run["requests"], run["same"], run["changed"], run["sessions"]) == ("run-1", 2, 1, 1, 1)
    got = await client.call_tool("replay_results", {"verdict": "changed"})
    (req,) = got.structured_content["requests"]
    assert req["paths"] == ["result.content[0].text"] and _open(req["open"])[0] == corpus["new"]
    got = await client.call_tool("replay_results", {"run_id": "no-such-run"})
    assert got.is_error and "no replay run" in got.content[0].text

    got = await client.call_tool("describe_corpus", {})
    tables = {t["name"]: t for t in got.structured_content["tables"]}
    assert set(tables) == {"files", "sessions", "operations", "tools", "replays"}
    assert tables["sessions"]["rows"] == 3 and tables["replays"]["rows"] == 2
    assert any(c["name"] == "request_line" for c in tables["operations"]["columns"])


def _server_argv(db: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "mcpreel", "mcp-server", "--db", str(db), *more]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_the_sdk_client_drives_it_over_stdio(corpus, era):
    from mcp import Client, StdioServerParameters

    argv = _server_argv(corpus["db"])
    where = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with Client(where, **({} if era == "auto" else {"mode": era})) as client:
        assert client.protocol_version == ("2026-07-28" if era == "auto" else "2025-11-25")
        assert client.server_info is not None and client.server_info.name == "mcpreel-corpus"
        await _exercise(client, corpus)


@pytest.fixture(scope="module")
def http_url(corpus):
    """The server on Streamable HTTP, on a port it picks (the URL is read from what it says when ready)."""
    server = Background(_server_argv(corpus["db"], "--listen", "127.0.0.1:0"), ready="corpus server", timeout=90)
    try:
        said = server.stderr_lines[-1]
        yield said[said.index("http://"):].split()[0]
    finally:
        server.stop()


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_the_sdk_client_drives_it_over_streamable_http(corpus, http_url, era):
    from mcp import Client

    async with Client(http_url, **({} if era == "auto" else {"mode": era})) as client:
        assert client.protocol_version == ("2026-07-28" if era == "auto" else "2025-11-25")
        await _exercise(client, corpus)


def test_the_http_listener_refuses_foreign_origins_and_rebound_hosts(http_url):
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=30) as http:
        assert http.post(http_url, json=body, headers={**headers, "Origin": "http://evil.example"}).status_code == 403
        assert http.post(http_url, json=body, headers={**headers, "Host": "evil.example"}).status_code == 421
        assert http.post(http_url, json=body, headers={**headers, "Origin": "http://localhost:3000"}).status_code \
            not in (403, 421)


def test_check_passes_it_in_both_eras(http_url):
    """``mcpreel check`` (the strict-sse profile, both eras): every tool is read-only, so each is called with
    arguments made from its schema, and every answer -- failures included -- is JSON text."""
    from mcpreel.check import PASS, CheckOptions, run_check

    report = run_check(http_url, options=CheckOptions(timeout=60))
    assert report.exit_code == 0, [(r.id, r.status, r.summary) for r in report.results if r.status != PASS]
    assert report.eras[0] == "modern era (stateless, 2026-07-28): server/discover answered"
    assert report.eras[1].startswith("legacy era (handshake): initialize answered 20")  # strict-sse asks 2024-11-05
    calls = {r.id: r.status for r in report.results if r.id.startswith("tools-call:")}
    assert calls == {f"tools-call:{name}": PASS for name in TOOLS}


def test_check_passes_it_over_stdio_in_the_2026_era(corpus):
    from mcpreel.check import PASS, CheckOptions, run_check

    report = run_check(command=_server_argv(corpus["db"]), options=CheckOptions(profile="mcp", era="modern",
                                                                               timeout=60))
    s = {r.id: r.status for r in report.results}
    assert report.exit_code == 0 and s["discover"] == PASS and s["stdout-clean"] == PASS
    assert report.protocol_version == "2026-07-28"


# the scenarios of the 2026-07-28 requirements that ask nothing of the suite's own fixture tools, resources
# and prompts (test_image_content, ...): the protocol itself, and what the SDK's MCPServer passes
WELL_BEHAVED = ("tools-list", "resources-list", "prompts-list", "server-sse-multiple-streams",
                "dns-rebinding-protection", "caching", "sep-2164-resource-not-found",
                "input-required-result-unsupported-methods", "input-required-result-missing-input-response",
                "input-required-result-ignore-extra-params", "input-required-result-validate-input")


def test_the_conformance_suite_gives_it_a_well_behaved_servers_verdicts(http_url):
    """One run of the suite (2026-07-28 requirements; the 2025-11-25 scenarios are the same protocol in the
    handshake era, which the SDK client and the check already drive)."""
    from tests.conformance.suite import ERAS, missing_peers, parse_summary, run_suite

    era = ERAS["2026-07-28 sdk"]
    why = missing_peers(era)
    if why is not None:
        pytest.skip(why)
    verdicts = parse_summary(run_suite(era, http_url))
    failed = {name: verdicts[name].describe() for name in WELL_BEHAVED if not verdicts[name].passed}
    assert not failed, failed
    # server-stateless: the SDK's MCPServer itself fails 2 of its checks (docs/explanation/conformance.md)
    assert verdicts["server-stateless"].checks_failed <= 2


# -- the tools' work without a client ---------------------------------------------------------------------------


def test_unredacted_only_when_the_person_says_so(corpus):
    tools = CorpusTools(CorpusServerOptions(db=corpus["db"], redact=False))
    op_id = tools.find_sessions(failed=True)["sessions"][0]["operation"]
    assert SECRET in json.dumps(tools.show_operation(op_id))
    cut = CorpusTools(CorpusServerOptions(db=corpus["db"], max_message_chars=40)).show_operation(op_id)
    assert all(m["cut"] and m["message"] is None and len(m["excerpt"]) == 40 for m in cut["messages"])


def test_a_long_query_is_stopped_and_rows_are_capped(corpus):
    tools = CorpusTools(CorpusServerOptions(db=corpus["db"], query_timeout_s=0.5, max_rows=3))
    with pytest.raises(UsageError, match="ran longer than 0.5 s"):
        tools.query("SELECT sum(a.range * b.range) FROM range(1000000000) a, range(1000000000) b")
    got = tools.query("SELECT * FROM range(10)", max_rows=1000)  # the server's cap wins
    assert got["row_count"] == 3 and got["more"] is True and got["max_rows"] == 3
    with pytest.raises(UsageError, match="verdict 'odd'"):
        tools.replay_results(verdict="odd")


def test_without_the_sdk_it_says_what_to_install(corpus, monkeypatch):
    for name in [n for n in sys.modules if n == "mcp" or n.startswith("mcp.")] + ["mcp"]:
        monkeypatch.setitem(sys.modules, name, None)  # `import mcp.server` fails as if it were not installed
    monkeypatch.delitem(sys.modules, "mcpreel.corpus.mcp_tools", raising=False)
    r = CliRunner().invoke(cli, ["mcp-server", "--db", str(corpus["db"])])
    assert r.exit_code == 2 and r.output.strip() == f"error: {SDK_MISSING}", r.output
    assert "pip install" in SDK_MISSING


def test_no_index_is_one_line_and_exit_2(tmp_path):
    with pytest.raises(InputError, match="run `mcpreel index` first"):
        check_index(CorpusServerOptions(db=tmp_path / "none.duckdb"))
    r = CliRunner().invoke(cli, ["mcp-server", "--db", str(tmp_path / "none.duckdb")])
    assert r.exit_code == 2 and "run `mcpreel index` first" in r.output and "Traceback" not in r.output
