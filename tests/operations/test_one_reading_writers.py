"""Every writer that pairs, and ``serve`` in both of its index modes, pair as ``inspect`` does (issue 37).

The one reading (:mod:`mcpreel.operations.walk`) pairs a request with its answer within its client
session, and a reused pending id first in, first out. These tests hold the HAR, qai, Inspector and
mcp-recorder writers and the mock's on-disk and in-memory indexes to it, on the issue's two repros:

- a merged file (two recordings that both ask ``tools/call`` id 1, with crossed timings);
- a reused pending id (a second ``tools/call`` id 1 while the first waits);

and on a multi-session file (two HTTP sessions that both use id 1, interleaved), in both protocol eras.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.formats import open_session
from mcpreel.inspection import analyze
from mcpreel.mock.compact import load_compact
from mcpreel.mock.engine import Mock, MockOptions
from mcpreel.operations.cassette import build

ERAS = ("legacy", "modern")
WRITERS = ("har", "qai", "inspector", "mcp-recorder")
_EXT = {"har": ".har", "qai": ".qai.json", "inspector": ".inspector.json", "mcp-recorder": ".cassette.json"}
_BASE = 1_800_000_000_000  # epoch ms
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "modern-client", "version": "2"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def _iso(ms: int) -> str:
    from mcpreel._infra.timeutil import iso_from_ms

    return iso_from_ms(ms)


def _call(i: int, who: str, era: str) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "echo", "arguments": {"who": who}}
    if era == "modern":
        params["_meta"] = dict(META)
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


def _answer(i: int, who: str, era: str) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": who}]}
    if era == "modern":
        result["resultType"] = "complete"
    return {"jsonrpc": "2.0", "id": i, "result": result}


def _handshake(era: str) -> list[tuple[str, dict[str, Any]]]:
    if era == "legacy":
        return [("in", {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "c", "version": "1"}}}),
                ("out", {"jsonrpc": "2.0", "id": 0, "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"}}}),
                ("in", {"jsonrpc": "2.0", "method": "notifications/initialized"})]
    return [("in", {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": dict(META)}}),
            ("out", {"jsonrpc": "2.0", "id": 0, "result": {
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}})]


def _reel(path: Path, records: list[tuple[int, str, dict[str, Any], dict[str, Any] | None]], **meta: Any) -> Path:
    """A reel of (ms after the base, direction, payload, ctx) records."""
    lines: list[dict[str, Any]] = [{"v": 1, "type": "meta", "startedAt": _iso(_BASE), "label": path.stem,
                                    "command": [], **meta}]
    for ms, d, raw, ctx in records:
        line: dict[str, Any] = {"t": _iso(_BASE + ms), "dir": d, "raw": raw}
        if ctx is not None:
            line["ctx"] = ctx
        lines.append(line)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


def _one_source(path: Path, era: str, who: str, asked: int, answered: int) -> Path:
    """A recording whose client asks ``tools/call`` id 1 at ``asked`` s, answered at ``answered`` s."""
    records = [(ms * 10, d, raw, None) for ms, (d, raw) in enumerate(_handshake(era))]
    records += [(asked * 1000, "in", _call(1, who, era), None), (answered * 1000, "out", _answer(1, who, era), None)]
    return _reel(path, records)


def merged_file(tmp_path: Path, era: str) -> Path:
    """The issue's first repro: a asks at 0 s (answered at 30 s), b at 10 s (answered at 20 s), merged."""
    a = _one_source(tmp_path / "a.jsonl", era, "a", 0, 30)
    b = _one_source(tmp_path / "b.jsonl", era, "b", 10, 20)
    out = tmp_path / "m.jsonl"
    result = CliRunner().invoke(cli, ["merge", str(a), str(b), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def reused_id_file(tmp_path: Path, era: str, name: str = "reused.jsonl") -> Path:
    """The issue's second repro: a second ``tools/call`` reuses id 1 while the first waits; the answers
    come in order (first A at 30 s, then B at 40 s)."""
    records = [(ms * 10, d, raw, None) for ms, (d, raw) in enumerate(_handshake(era))]
    records += [(1000, "in", _call(1, "A", era), None), (2000, "in", _call(1, "B", era), None),
                (30000, "out", _answer(1, "A", era), None), (40000, "out", _answer(1, "B", era), None)]
    return _reel(tmp_path / name, records)


def multi_session_file(tmp_path: Path, era: str) -> Path:
    """Two HTTP sessions in one recording, both asking ``tools/call`` id 1, interleaved: session s1 asks
    at 1 s (answered at 30 s), session s2 at 2 s (answered at 20 s)."""
    records: list[tuple[int, str, dict[str, Any], dict[str, Any] | None]] = []
    for sid in ("s1", "s2"):
        ctx = {"headers": {"mcp-session-id": sid}}
        records += [(ms * 10 + (500 if sid == "s2" else 0), d, raw, ctx) for ms, (d, raw) in enumerate(_handshake(era))]
    c1, c2 = {"headers": {"mcp-session-id": "s1"}}, {"headers": {"mcp-session-id": "s2"}}
    records += [(1000, "in", _call(1, "s1", era), c1), (2000, "in", _call(1, "s2", era), c2),
                (20000, "out", _answer(1, "s2", era), c2), (30000, "out", _answer(1, "s1", era), c1)]
    return _reel(tmp_path / "multi.jsonl", records, transport="streamable-http", url="http://127.0.0.1:9/mcp")


# -- what inspect pairs ----------------------------------------------------------------------------------

def _who(raw: Any) -> str | None:
    """Whose a tools/call or its answer is: the ``who`` argument, or the answer's text."""
    if not isinstance(raw, dict):
        return None
    params = raw.get("params")
    if isinstance(params, dict) and params.get("name") == "echo":
        return params["arguments"]["who"]
    result = raw.get("result")
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        return result["content"][0]["text"]
    return None


def inspect_pairs(path: Path) -> list[tuple[str, str, int]]:
    """(whose request, whose answer, latency ms) of every answered tools/call, as ``inspect`` pairs them."""
    report = analyze(open_session(path)[0], payloads=True)
    rows = list(report.rows)
    out = []
    for row in rows:
        if row.label == "(response)" and row.corr is not None and rows[row.corr].label == "tools/call":
            out.append((_who(rows[row.corr].payload), _who(row.payload), row.latency_ms))
    return sorted(out)


def _convert(path: Path, fmt: str) -> Any:
    out = path.with_name(path.stem + _EXT[fmt])
    result = CliRunner().invoke(cli, ["convert", str(path), str(out), "--to", fmt])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def writer_pairs(path: Path, fmt: str) -> list[tuple[str, str, int]]:
    """(whose request, whose answer, latency ms) of every answered tools/call in the file ``fmt`` writes."""
    doc = _convert(path, fmt)
    out = []
    if fmt == "har":
        for entry in doc["log"]["entries"]:
            request = json.loads(entry["request"]["postData"]["text"]) if "postData" in entry["request"] else None
            text = entry["response"]["content"].get("text")
            if not isinstance(request, dict) or request.get("method") != "tools/call" or not text:
                continue
            answer = _sse_or_json(text)
            out.append((_who(request), _who(answer), entry["time"]))
    elif fmt == "qai":
        by_proxy = {m["proxy_id"]: m for m in doc["messages"]}
        for m in doc["messages"]:
            if m["correlated_id"] is not None:
                request = by_proxy[m["correlated_id"]]
                if request["method"] == "tools/call":
                    t0, t1 = _ms(request["timestamp"]), _ms(m["timestamp"])
                    out.append((_who(request["payload"]), _who(m["payload"]), t1 - t0))
    elif fmt == "inspector":
        for entry in doc:
            if entry["message"].get("method") == "tools/call" and "response" in entry:
                out.append((_who(entry["message"]), _who(entry["response"]), entry["duration"]))
    else:
        for it in doc["interactions"]:
            if it["type"] == "jsonrpc_request" and it["request"].get("method") == "tools/call" and it["response"]:
                out.append((_who(it["request"]), _who(it["response"]), it["latency_ms"]))
    return sorted(out)


def _sse_or_json(text: str) -> Any:
    if text.lstrip().startswith("{"):
        return json.loads(text)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[0])


def _ms(stamp: str) -> int:
    from mcpreel._infra.timeutil import ms_from_any

    ms = ms_from_any(stamp)
    assert ms is not None
    return ms


# -- the repros -------------------------------------------------------------------------------------------

REPROS = [
    # a merged file: each answer to its own request
    pytest.param(merged_file, [("a", "a", 30000), ("b", "b", 10000)], id="merged"),
    # a reused pending id: first answer to first request
    pytest.param(reused_id_file, [("A", "A", 29000), ("B", "B", 38000)], id="reused-pending-id"),
    # a multi-session file: each answer in its own session
    pytest.param(multi_session_file, [("s1", "s1", 29000), ("s2", "s2", 18000)], id="multi-session"),
]


@pytest.mark.parametrize("fmt", WRITERS)
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("repro", "pairs"), REPROS)
def test_each_repro_is_written_with_each_answer_paired_as_inspect_pairs_it(tmp_path, repro, pairs, era, fmt):
    """``inspect`` pairs each answer with its own request, and every writer writes the same pairs."""
    path = repro(tmp_path, era)
    want = inspect_pairs(path)
    assert want == pairs
    assert writer_pairs(path, fmt) == want


# -- serve, from the on-disk index and from memory ---------------------------------------------------------

def _served(mock: Mock, messages: list[Any]) -> list[Any]:
    """Send ``messages`` through one connection, each awaited; what the mock answered, in order."""
    out: list[Any] = []

    async def go() -> None:
        conn = mock.connection()
        conn.client_gone()
        for message in messages:
            waiting = conn.receive(message, out.append)
            if waiting is not None:
                await waiting

    asyncio.run(go())
    return out


def _client_asks(era: str) -> list[Any]:
    asks = [raw for d, raw in _handshake(era) if d == "in"]
    return [*asks, _call(1, "A", era), _call(1, "B", era)]


@pytest.mark.parametrize("era", ERAS)
def test_serve_answers_a_reused_pending_id_first_to_first_from_disk_and_from_memory(tmp_path, era):
    path = reused_id_file(tmp_path, era)
    options = MockOptions(match="method-params", repeat=True, answer_timeout=0.01)
    compact = load_compact(path, open_session(path)[0], "method-params")
    assert compact is not None, "a one-session reel is served from the on-disk index"
    try:
        from_disk = _served(Mock(compact, options), _client_asks(era))
    finally:
        compact.close()
    in_memory = _served(Mock(build(open_session(path)[0]), options), _client_asks(era))
    for got in (from_disk, in_memory):
        answers = [_who(m) for m in got if isinstance(m, dict) and "result" in m and _who(m) is not None]
        assert answers == ["A", "B"]
    assert from_disk == in_memory


@pytest.mark.parametrize("era", ERAS)
def test_serve_answers_each_client_of_a_merged_file_from_its_own_recording(tmp_path, era):
    path = merged_file(tmp_path, era)
    assert load_compact(path, open_session(path)[0], "method-params") is None  # several sessions: from memory
    from mcpreel.operations.sessions import split_sessions

    session = open_session(path)[0]
    parts = split_sessions(session)
    assert len(parts) == 2
    for part, who in zip(parts, ("a", "b"), strict=True):
        mock = Mock(build(part.as_session(session.info)), MockOptions(answer_timeout=0.01))
        asks = [raw for d, raw in _handshake(era) if d == "in"] + [_call(1, who, era)]
        answers = [_who(m) for m in _served(mock, asks) if isinstance(m, dict) and "result" in m]
        assert who in answers


def _serve_cli(path: Path, era: str, *extra: str) -> list[str | None]:
    """``mcpreel serve PATH`` over stdio as a child process: the client's asks in, whose answers out."""
    import subprocess
    import sys

    lines = b"".join(orjson.dumps(m) + b"\n" for m in _client_asks(era))
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "serve", str(path), *extra], input=lines,
                          capture_output=True, timeout=120)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return [_who(m) for m in answers if isinstance(m, dict) and "result" in m and _who(m) is not None]


@pytest.mark.parametrize("era", ERAS)
def test_serve_cli_from_the_index_and_with_on_miss_forward_answers_first_to_first(tmp_path, era):
    """The CLI's two ways to load (``--on-miss forward`` keeps the recording in memory, the default reads
    it through the on-disk index): a flag about misses never changes what a hit returns."""
    import shlex
    import sys

    path = reused_id_file(tmp_path, era)
    never = shlex.join([sys.executable, "-c", "import sys; sys.exit(3)"])  # no miss: never started
    assert _serve_cli(path, era) == ["A", "B"]
    assert _serve_cli(path, era, "--on-miss", "forward", "--target-command", never) == ["A", "B"]


# -- the lean walk pairs as the full one -------------------------------------------------------------------

def _pairs(session: Any, pairing_only: bool) -> list[tuple[str, int, int | None]]:
    from mcpreel.operations.walk import Walker

    w = Walker(pairing_only=pairing_only)
    out = []
    for index, msg in enumerate(session):
        for step in w.feed(index, msg):
            if step.kind in ("request", "response", "orphan", "notification", "other"):
                out.append((step.kind, step.index, step.exchange.index if step.exchange is not None else None))
    for step in w.finish():
        if step.kind in ("unanswered", "ended") and step.exchange is not None:
            out.append(("unanswered", step.index, step.exchange.index))
    return out


def test_the_lean_walk_pairs_every_fixture_as_the_full_walk(fixtures_dir):
    """``Walker(pairing_only=True)`` (the writers' and the on-disk index's) pairs exactly as the walk
    ``inspect`` reads: the same steps, each answer to the same request, over every fixture."""
    from mcpreel.errors import McpreelError

    checked = 0
    for path in sorted(p for p in fixtures_dir.rglob("*") if p.is_file() and p.suffix != ".md"):
        try:
            session = open_session(path)[0].materialize()
        except McpreelError:
            continue
        full, lean = _pairs(session, False), _pairs(session, True)
        assert [s for s in full if s[0] != "unanswered"] == [s for s in lean if s[0] != "unanswered"], path
        assert sorted(s for s in full if s[0] == "unanswered") == sorted(s for s in lean if s[0] == "unanswered"), path
        checked += 1
    assert checked > 40
