"""One truth across verbs (issue 24): every verb counts a session the way the operations walk reads it.

The walk (:mod:`mcpreel.operations.walk`) is the one reading; this test states what each verb must
therefore show, on every fixture of ``../shared/fixtures`` (hub included) and ``tests/fixtures``, and on
sessions of every shape written as reels (:mod:`tests.operations.synthetic`: both eras, a task, a listen
stream, a multi-round-trip request, several client sessions in one file, a reused pending id, dropped calls,
merged files). Its figures are the one tally (:mod:`mcpreel.operations.tally`): ``inspect``, the report and
the corpus index must give the same counts from it, checked here as unit tests (they used to be checked on
real recordings, in 900 seconds); one end-to-end check records real peers (two SDK clients of both eras
through one HTTP proxy, :func:`tests.peers.operations_sessions.multi_session_http`). The rules, as the
figures are taken:

- **client sessions**: as the walk splits them (source file of a merged reel, ``Mcp-Session-Id``, each
  new ``initialize`` / ``server/discover``; a refused ``server/discover`` then ``initialize`` is one).
  ``inspect`` and the report say how many; the TUI's list too; the OTLP export gives each its own
  ``mcp.session.id`` (one value per client session, on the spans of that session's operations).
- **an operation is what a client set out to do**, counted once per method of its opening request: a
  task is ONE operation (``tools/call``): its ``tasks/get`` polls, ``tasks/result`` and
  ``tasks/cancel`` are not calls of their own; a multi-round-trip request is ONE operation whatever its
  rounds; a ``subscriptions/listen`` stream is one operation; a server's request that an operation
  caused (sampling, elicitation, roots during a call) is part of that operation, not an operation of
  its own; a server's request no client operation caused is an operation (its own method). A
  notification is never an operation; an answer no request waits for (an orphan) is not one either.
- **a failed operation**: its outcome (a task's: its result; a multi-round-trip's: its last round) is a
  JSON-RPC error or an ``isError`` result. A ``server/discover`` probe that the server refuses and the
  client follows with ``initialize`` is the era being negotiated, not a failed operation.
- **unanswered**: an operation whose outcome never came (whether or not its client then cancelled it).
  A listen stream the client ended with its cancel is *ended*, not unanswered.
- **latency** of an operation: from its opening request to the answer that carries its outcome (a task:
  the ``tasks/result`` answer; a multi-round-trip: the last round's answer); a listen stream has none;
  per method as (count, p50, p95, max), nearest-rank (:func:`mcpreel.inspection.percentile`).
- **import** follows the trace contract (``../shared/spec/01-normalized-trace.md`` and the README's
  "Import in the 2026 era"): one ``tool_call`` per ``tools/call`` JSON-RPC request the client sent (each
  round of a multi-round-trip request is its own), ``mcp_error`` for a JSON-RPC error answer,
  ``timeout/no_response`` for none; a file of several client sessions is imported (never refused for
  ids the sessions reuse); summed over the client sessions. A ``tools/call`` that reuses the id of one
  still waiting pairs first in, first out, as the walk pairs it; a call the proxy dropped is in the
  trace (its step marked ``dropped``), answered by the proxy's own answer or by none.
- **diff** of a file with itself finds 0 differences.

Where a verb disagrees, the assertion names the verb, the figure, what the verb says and what the walk
says. Nothing here is marked to fail: a disagreement is a defect to mend in the verb, not here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mcpreel.errors import FormatError, InputError
from mcpreel.formats import open_session
from mcpreel.inspection import percentile
from mcpreel.model import Session
from mcpreel.operations.tally import RecordCounts, SessionTally
from mcpreel.operations.walk import Operation, Walker
from tests.conftest import FIXTURES, ROOT
from tests.operations.synthetic import MERGED, write_reels
from tests.operations.test_tally import SESSIONS

#: every fixture file a reader might take (their PROVENANCE/README notes aside); unreadable ones skip
FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix != ".md") if FIXTURES.is_dir() else []
#: the project's own recordings (the scripts that made them and a JSON schema aside)
OWN_FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures").rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")
                      and not p.name.endswith(".schema.json"))
#: the sessions of every shape, written as reels (:mod:`tests.operations.synthetic`)
SYNTHETIC = (*SESSIONS, *MERGED)
FAILED = ("error", "isError")


# -- the figures a verb gives -------------------------------------------------------------------------

@dataclass
class Figures:
    """What one verb says of a session. ``None`` for a figure the verb does not give."""

    sessions: int | None = None
    operations: Counter[str] = field(default_factory=Counter)  # per method of the opening request
    failed: Counter[str] = field(default_factory=Counter)
    unanswered: Counter[str] = field(default_factory=Counter)
    latency: dict[str, tuple[int, int, int, int]] | None = field(default_factory=dict)  # count, p50, p95, max
    notes: list[str] = field(default_factory=list)  # what else the verb got wrong (said as is)

    def differences(self, truth: Figures) -> list[str]:
        out = list(self.notes)
        if self.sessions is not None and self.sessions != truth.sessions:
            out.append(f"client sessions {self.sessions} (walk: {truth.sessions})")
        for name in ("operations", "failed", "unanswered"):
            mine, theirs = getattr(self, name), getattr(truth, name)
            if mine != theirs:
                out.append(f"{name} {_counts_diff(mine, theirs)}")
        if self.latency is not None and self.latency != truth.latency:
            methods = sorted(set(self.latency) | set(truth.latency))
            diff = [f"{m} {self.latency.get(m)} (walk: {truth.latency.get(m)})"
                    for m in methods if self.latency.get(m) != truth.latency.get(m)]
            out.append("latency (n, p50, p95, max) " + "; ".join(diff))
        return out


def _counts_diff(mine: Counter[str], truth: Counter[str]) -> str:
    keys = sorted(set(mine) | set(truth))
    return ", ".join(f"{k} {mine.get(k, 0)} (walk: {truth.get(k, 0)})" for k in keys if mine.get(k, 0) != truth.get(k, 0))


def _stats(values: dict[str, list[int]]) -> dict[str, tuple[int, int, int, int]]:
    out = {}
    for method, lats in values.items():
        ordered = sorted(lats)
        out[method] = (len(ordered), percentile(ordered, 50), percentile(ordered, 95), ordered[-1])
    return out


# -- the truth: the walk ------------------------------------------------------------------------------

@dataclass
class Reading:
    sessions: int
    operations: list[Operation]


def read(session: Session) -> Reading:
    w = Walker()
    ops: list[Operation] = []
    for index, msg in enumerate(session):
        ops.extend(s.operation for s in w.feed(index, msg) if s.kind == "operation" and s.operation is not None)
    ops.extend(s.operation for s in w.finish() if s.kind == "operation" and s.operation is not None)
    return Reading(len(w.client_sessions()), sorted(ops, key=lambda o: o.n))


def _negotiation(op: Operation, ops: list[Operation]) -> bool:
    """A refused ``server/discover`` the client followed with ``initialize`` in the same session."""
    if op.method != "server/discover" or op.status()[0] != "error":
        return False
    return any(o.session == op.session and o.n > op.n and o.method == "initialize" for o in ops)


def truth(reading: Reading) -> Figures:
    f = Figures(reading.sessions)
    lat: dict[str, list[int]] = {}
    for op in reading.operations:
        m = op.method
        f.operations[m] += 1
        status = op.status()[0]
        if status in FAILED and not _negotiation(op, reading.operations):
            f.failed[m] += 1
        elif status in ("unanswered", "cancelled"):
            f.unanswered[m] += 1
        if op.latency_ms is not None:
            lat.setdefault(m, []).append(op.latency_ms)
    f.latency = _stats(lat)
    return f


# -- what each verb says --------------------------------------------------------------------------------

def inspect_figures(session: Session, reading: Reading) -> Figures:
    """``inspect --json`` (the library call behind it): the sessions of its header; per method the
    requests its rows show (a batch's members one by one), its unanswered rows, its error list and its
    latency table."""
    from mcpreel.inspection import analyze

    report = analyze(session, payloads=True)
    s = report.summary
    f = Figures(len(report.header.sessions or []) or 1)
    f.operations.update(s.methods)  # the summary's operations per method (``summary.methods`` in --json)
    for index in s.unanswered:
        f.unanswered[report.row(index).label] += 1
    # a dropped call nobody answered never reached the server: inspect shows it as dropped (its row, its
    # tool's ``dropped``), not in its list of unanswered requests; it is unanswered all the same
    answered = {row.corr for row in report.rows if row.corr is not None}
    for row in report.rows:
        if (row.dropped and row.kind == "message" and not row.is_response and row.id is not None
                and row.part_of is None and row.retry_of is None and row.index not in answered):
            f.unanswered[row.label] += 1
    for err in s.errors:
        if err.request is None and err.method is None:
            continue  # an error answer no request waits for: listed by inspect, but no operation failed
        f.failed[err.method or "(batch member)"] += 1
    f.latency = {m: (x.count, x.p50_ms, x.p95_ms, x.max_ms) for m, x in s.latency.items()}
    return f


def report_figures(session: Session, reading: Reading) -> Figures:
    """The report's data: the sessions it names, its calls (every one is kept for a small file), its
    latency table."""
    from mcpreel.report.data import collect

    data = collect(session)
    assert len(data.calls) == data.calls_total, "a fixture small enough to keep every call"
    f = Figures(data.sessions)
    for call in data.calls:
        m = call["method"]
        f.operations[m] += 1
        if call["status"] in FAILED:
            f.failed[m] += 1
        elif call["status"] in ("unanswered", "cancelled"):  # cancelled: unanswered, and its client gave up
            f.unanswered[m] += 1
    f.latency = {m: (x.count, x.p50_ms, x.p95_ms, x.max_ms) for m, x in data.latency.items()}
    return f


def otlp_figures(session: Session, reading: Reading) -> Figures:
    """The OTLP spans: an operation is a request span whose parent is not another request span (a
    server request an operation caused is a child span); one ``mcp.session.id`` value per client session.
    A span must have times, so where the recording has none for an answered operation the export makes
    them up: latency is then not compared."""
    from mcpreel.otel.mapping import spans

    every = spans(session)
    requests = [s for s in every if s.kind != "internal"]
    ids = {s.span_id for s in requests}
    values = {s.attributes.get("mcp.session.id") for s in requests}
    f = Figures(len(values) or 1)
    # which client session each span is of: its request's method, id, start and source file (a merged
    # file's reels may each open with ``initialize`` id 1 at the same instant), as the walk saw them
    where: dict[tuple[Any, Any, int, Any], int] = {}
    for op in reading.operations:
        for ex in (*op.exchanges, *op.children):
            if ex.t is not None:
                key = (ex.method, ex.id if isinstance(ex.id, str) else json.dumps(ex.id), ex.t * 1_000_000, ex.origin)
                where[key] = ex.session
    by_session: dict[int, set[Any]] = {}
    for span in requests:
        a = span.attributes
        session = where.get((a["mcp.method.name"], a.get("jsonrpc.request.id"), span.start_ns, a.get("mcpreel.session.file")))
        if session is not None:
            by_session.setdefault(session, set()).add(a.get("mcp.session.id"))
    mixed = {n: v for n, v in by_session.items() if len(v) != 1}
    if mixed:
        f.notes.append("mcp.session.id: " + "; ".join(f"client session {n} has {len(v)} values" for n, v in sorted(mixed.items())))
    shared = [v for v in values if sum(v in got for got in by_session.values()) > 1]
    if shared:
        f.notes.append(f"mcp.session.id: {len(shared)} value(s) on the spans of several client sessions")
    lat: dict[str, list[int]] = {}
    for span in requests:
        if span.parent_id in ids:
            continue
        m = span.attributes["mcp.method.name"]
        f.operations[m] += 1
        if span.attributes.get("mcpreel.unanswered"):
            f.unanswered[m] += 1
            continue
        if span.error is not None:
            f.failed[m] += 1
        if m == "subscriptions/listen":
            continue  # a span has a length, a listen stream no latency: how long the client listened
        lat.setdefault(m, []).append((span.end_ns - span.start_ns) // 1_000_000)
    f.latency = None if _untimed(reading) else _stats(lat)
    return f


def _untimed(reading: Reading) -> bool:
    return any(op.final is not None and op.latency_ms is None and op.kind != "listen" for op in reading.operations)


def tui_figures(session: Session, reading: Reading) -> Figures:
    """The TUI's list: its client sessions, its request rows with the status and latency they show."""
    from mcpreel.tui.entries import NO_ANSWER, Entries

    entries = Entries(session.info)
    entries.extend(session)
    entries.finish()
    entries.find_sessions()
    f = Figures(len(entries.sessions) or 1)
    lat: dict[str, list[int]] = {}
    for e in entries.rows:
        # a row that opens an operation (a poll, a retry round or a server request the call caused is part
        # of the operation its row names)
        if not e.is_request or (e.operation is not None and e.operation.opening.index != e.index):
            continue
        f.operations[e.label] += 1
        if e.failed:
            f.failed[e.label] += 1
        elif e.status == NO_ANSWER:
            f.unanswered[e.label] += 1
        if e.latency_ms is not None:
            lat.setdefault(e.label, []).append(e.latency_ms)
    f.latency = _stats(lat)
    return f


VERBS = {"inspect": inspect_figures, "report": report_figures, "otlp": otlp_figures, "tui": tui_figures}


# -- import, by the trace contract ----------------------------------------------------------------------

def import_truth(reading: Reading) -> dict[str, int]:
    """One tool_call per tools/call JSON-RPC request of a client (each round its own), summed over sessions."""
    calls = errors = silent = 0
    for op in reading.operations:
        if op.method != "tools/call" or op.dir != "in":
            continue
        for ex in op.exchanges:
            if ex.role not in ("call", "round"):
                continue
            calls += 1
            if ex.response is None and ex.id is not None:
                silent += 1
            elif ex.response is not None and "error" in ex.response:
                errors += 1
    return {"tool_calls": calls, "mcp_error": errors, "timeout/no_response": silent}


def import_figures(session: Session, out: Path) -> dict[str, int] | str:
    """The Assay V2 trace's tool_call events, by error; or why import refused the file."""
    from mcpreel.toolcalls.importer import write_trace

    try:
        write_trace(session, out)
    except InputError as exc:
        return f"refuses the file: {exc}"
    events = [json.loads(line) for line in out.read_text().splitlines()]
    calls = [e for e in events if e["type"] == "tool_call"]
    return {"tool_calls": len(calls), "mcp_error": sum(e["error"] == "mcp_error" for e in calls),
            "timeout/no_response": sum(e["error"] == "timeout/no_response" for e in calls)}


# -- the tests --------------------------------------------------------------------------------------------

def _open(path: Path) -> Session:
    try:
        session, _ = open_session(path)
        read(session)
    except FormatError as exc:
        pytest.skip(f"no reader takes this file: {exc}")
    return session


def _check_verb(session: Session, verb: str, where: str) -> None:
    reading = read(session)
    want = truth(reading)
    got = VERBS[verb](session, reading)
    differences = got.differences(want)
    assert not differences, f"{verb} disagrees with the walk on {where}: " + " | ".join(differences)


def _check_import(session: Session, tmp_path: Path, where: str) -> None:
    want = import_truth(read(session))
    got = import_figures(session, tmp_path / "trace.jsonl")
    assert got == want, f"import disagrees with the trace contract's count on {where}: {got} (walk: {want})"


def _check_diff(path: Path) -> None:
    from mcpreel.compare import diff_files

    result = diff_files(path, path)
    assert result.difference_count == 0, f"diff of {path.name} with itself: {result.summary()}"


def _fixture_id(p: Path) -> str:
    return str(p.relative_to(FIXTURES)) if p.is_relative_to(FIXTURES) else str(p.relative_to(ROOT))


#: every recording in the repository and beside it, then every synthetic reel (by name)
FILES = [*FIXTURE_FILES, *OWN_FIXTURES]
CASES = [*(pytest.param(p, id=_fixture_id(p)) for p in FILES), *(pytest.param(n, id=f"synthetic/{n}") for n in SYNTHETIC)]

@pytest.fixture(scope="module")
def reels(tmp_path_factory) -> dict[str, Path]:
    """The synthetic sessions as reels on disk, by name."""
    return write_reels(tmp_path_factory.mktemp("synthetic"))


@pytest.fixture(scope="module")
def corpus(reels, tmp_path_factory) -> Any:
    """One corpus index of every file above (``mcpreel index``), open read-only; the files' paths as it
    stored them, by their resolved path."""
    from mcpreel.corpus.db import connect
    from mcpreel.corpus.index import index_paths

    db = tmp_path_factory.mktemp("corpus") / "corpus.duckdb"
    stats = index_paths([*FILES, *reels.values()], db)
    assert stats.read == stats.found == len(FILES) + len(reels)
    con = connect(db, read_only=True)
    stored = {Path(p).resolve(): p for (p,) in con.execute("SELECT path FROM files").fetchall()}
    yield con, stored
    con.close()


def _case(case: Path | str, reels: dict[str, Path]) -> Path:
    return reels[case] if isinstance(case, str) else case


def corpus_figures(corpus: Any, path: Path) -> Figures:
    """The corpus index's rows of a file: its client sessions, and per method its operations' rows with their
    status (``dropped``: a dropped call nobody answered, unanswered) and latency."""
    con, stored = corpus
    key = stored[path.resolve()]
    (status, error, sessions) = con.execute("SELECT status, error, sessions FROM files WHERE path = ?", [key]).fetchone()
    assert status in ("ok", "in-progress"), f"the index could not read {path}: {error}"
    f = Figures(sessions)
    lat: dict[str, list[int]] = {}
    for method, op_status, failed, latency in con.execute(
            "SELECT method, status, failed, latency_ms FROM operations WHERE file = ? ORDER BY n", [key]).fetchall():
        f.operations[method] += 1
        if failed:
            f.failed[method] += 1
        elif op_status in ("unanswered", "cancelled", "dropped"):
            f.unanswered[method] += 1
        if latency is not None:
            lat.setdefault(method, []).append(latency)
    f.latency = _stats(lat)
    return f


@pytest.mark.parametrize(("case", "verb"), [pytest.param(*c.values, v, id=f"{c.id}-{v}") for v in VERBS for c in CASES])
def test_every_file_counts_the_same_in_every_verb(case, verb, reels):
    path = _case(case, reels)
    _check_verb(_open(path), verb, path.name)


@pytest.mark.parametrize("case", CASES)
def test_every_file_counts_the_same_in_the_corpus(case, reels, corpus):
    path = _case(case, reels)
    session = _open(path)
    want = truth(read(session))
    differences = corpus_figures(corpus, path).differences(want)
    assert not differences, f"the corpus disagrees with the walk on {path.name}: " + " | ".join(differences)


def _tools(tools: dict[str, Any], *, unanswered: bool = True) -> dict[str, tuple[Any, ...]]:
    return {name: (t.calls, t.errors, t.is_errors, t.unanswered if unanswered else None, t.dropped, t.p50_ms, t.p95_ms)
            for name, t in tools.items()}


_MESSAGE_COUNTS = ("records", "messages", "client_to_server", "server_to_client", "requests", "notifications",
                   "responses", "batches", "stderr", "invalid", "transport", "events", "modified", "dropped")


@pytest.mark.parametrize("case", CASES)
def test_inspect_the_report_and_the_corpus_show_the_one_tally(case, reels, corpus):
    """The equality of the tallies, file by file: one :class:`SessionTally` (and one :class:`RecordCounts`)
    fed by the walk, and what ``inspect``, the report and the corpus index say of the same file."""
    from mcpreel.inspection import analyze
    from mcpreel.report.data import collect

    path = _case(case, reels)
    session = _open(path)
    walker = Walker()
    lean, exact = SessionTally(), SessionTally(exact=True, dropped_unanswered=True)
    per_session: dict[int, SessionTally] = {}
    counts = RecordCounts()
    for index, msg in enumerate(session):
        steps = walker.feed(index, msg)
        counts.add(msg, steps)
        ops = [s.operation for s in steps if s.kind == "operation" and s.operation is not None]
        for op in ops:
            for tally in (lean, exact, per_session.setdefault(op.session, SessionTally(latencies=False))):
                tally.add(op)
    for step in walker.finish():
        if step.kind == "operation" and step.operation is not None:
            for tally in (lean, exact, per_session.setdefault(step.operation.session, SessionTally(latencies=False))):
                tally.add(step.operation)
    lean.finish()
    exact.finish()
    where = path.name

    report = analyze(session)
    s = report.summary
    assert (s.operations, s.tasks, s.polls, s.methods) == (lean.operations, lean.tasks, lean.polls, lean.methods), where
    assert _tools(s.tools) == _tools(lean.tools), where
    assert {m: (x.count, x.max_ms) for m, x in s.latency.items()} == {m: (x.count, x.max_ms) for m, x in exact.latency.items()}, where
    if report.exact_latency:
        assert s.latency == exact.latency, where
    assert [getattr(s, k) for k in _MESSAGE_COUNTS] == [getattr(counts, k) for k in _MESSAGE_COUNTS], where
    assert len(s.orphans) == counts.orphans, where

    data = collect(session, redact=False)
    assert data.calls_total == exact.operations, where
    c = data.counts
    assert (c["errors"], c["is_errors"], c["unanswered"], c["orphans"]) == (
        exact.errors + counts.orphan_errors, exact.is_errors, exact.unanswered, counts.orphans), where
    assert [c[k] for k in _MESSAGE_COUNTS] == [getattr(counts, k) for k in _MESSAGE_COUNTS], where
    assert _tools(data.tools) == _tools(exact.tools) and data.latency == exact.latency, where
    assert _tools(data.tools, unanswered=False) == _tools(s.tools, unanswered=False), where  # the one difference: see the tally
    assert data.tool_max == exact.tool_max, where

    con, stored = corpus
    rows = con.execute("SELECT session, operations, tool_calls, failed, unanswered, tasks, records, messages, requests, "
                       "notifications, responses, orphans FROM sessions WHERE file = ? ORDER BY session",
                       [stored[path.resolve()]]).fetchall()
    got = {r[0]: r[1:6] for r in rows if r[1]}
    assert got == {n: (t.operations, t.tool_calls, t.failed, t.unanswered, t.tasks) for n, t in per_session.items()}, where
    sums = [sum(r[i] for r in rows) for i in range(6, 12)]
    assert sums == [counts.records, counts.messages, counts.requests, counts.notifications, counts.responses,
                    counts.orphans], where


@pytest.mark.parametrize("case", CASES)
def test_every_file_imports_by_the_contract_count(case, reels, tmp_path):
    path = _case(case, reels)
    _check_import(_open(path), tmp_path, path.name)


@pytest.mark.parametrize("case", CASES)
def test_every_file_diffed_with_itself_has_no_difference(case, reels):
    path = _case(case, reels)
    _open(path)
    _check_diff(path)


# -- one end-to-end check: real peers, as their clients lived them -------------------------------------------

@pytest.fixture(scope="module")
def real_multi(tmp_path_factory) -> Any:
    """Two SDK clients (2026-07-28, then the handshake era) through one recording HTTP proxy."""
    from tests.peers.operations_sessions import multi_session_http

    return multi_session_http(tmp_path_factory.mktemp("real"))


@pytest.mark.e2e
def test_a_real_recording_counts_the_same_everywhere_as_its_clients_lived_it(real_multi, tmp_path):
    """Real peers, once: every verb counts the recording as the walk reads it, and the walk reads what the
    clients did (their own account, ``Recorded.seen``: two client sessions, each numbering from 1)."""
    from mcpreel.corpus.db import connect
    from mcpreel.corpus.index import index_paths

    session = open_session(real_multi.reel)[0]
    for verb in VERBS:
        _check_verb(session, verb, "the real two-client recording")
    _check_import(session, tmp_path, "the real two-client recording")
    _check_diff(real_multi.reel)
    db = tmp_path / "corpus.duckdb"
    index_paths([real_multi.reel], db)
    con = connect(db, read_only=True)
    try:
        stored = {Path(p).resolve(): p for (p,) in con.execute("SELECT path FROM files").fetchall()}
        differences = corpus_figures((con, stored), real_multi.reel).differences(truth(read(session)))
    finally:
        con.close()
    assert not differences, "the corpus disagrees with the walk on the real recording: " + " | ".join(differences)

    ops = read(session).operations
    assert read(session).sessions == real_multi.sessions == 2
    assert {o.session for o in ops} == {1, 2}
    for n in (1, 2):
        mine = [o for o in ops if o.session == n]
        assert mine[0].opening.id == 1, "each client numbers its requests from 1"
        assert Counter(o.target for o in mine if o.method == "tools/call") == {"touch": 1, "echo": 1, "fail": 1}
        assert all(o.status()[0] in ("ok", "isError") for o in mine)
    assert [o.method for o in ops if o.opening.id == 1] == ["server/discover", "initialize"]
