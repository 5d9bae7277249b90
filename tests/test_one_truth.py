"""One truth across verbs (issue 24): every verb counts a session the way the operations walk reads it.

The walk (:mod:`mcpreel.operations.walk`) is the one reading; this test states what each verb must
therefore show, on every fixture of ``../shared/fixtures`` (hub included) and on real recordings of
tasks, listen streams, multi-round-trip requests and two client sessions through one HTTP proxy
(:mod:`tests.peers.operations_sessions`). The rules, as the figures are taken:

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
  ids the sessions reuse); summed over the client sessions.
- **diff** of a file with itself finds 0 differences.

Where a verb disagrees, the assertion names the verb, the figure, what the verb says and what the walk
says. Other engineers are moving the verbs onto the walk; until then parts of this test fail, and they
are meant to: nothing here is marked to pass.
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
from mcpreel.operations.walk import Operation, Walker
from tests.conftest import FIXTURES, needs_shared

#: every fixture file a reader might take (their PROVENANCE/README notes aside); unreadable ones skip
FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix != ".md") if FIXTURES.is_dir() else []
#: the real recordings of tests/peers/operations_sessions.py (the fixture ``operation_recordings``)
RECORDINGS = ("task", "listen", "listen-http", "legacy", "multi-http", "mrtr-auto", "mrtr-legacy")
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
    # which client session each span is of: its request's method, id and start, as the walk saw them
    where: dict[tuple[Any, Any, int], int] = {}
    for op in reading.operations:
        for ex in (*op.exchanges, *op.children):
            if ex.t is not None:
                where[(ex.method, ex.id if isinstance(ex.id, str) else json.dumps(ex.id), ex.t * 1_000_000)] = ex.session
    by_session: dict[int, set[Any]] = {}
    for span in requests:
        a = span.attributes
        session = where.get((a["mcp.method.name"], a.get("jsonrpc.request.id"), span.start_ns))
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
    return str(p.relative_to(FIXTURES))


@needs_shared
@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=_fixture_id)
def test_every_fixture_counts_the_same_in_every_verb(path, verb):
    _check_verb(_open(path), verb, _fixture_id(path))


@needs_shared
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=_fixture_id)
def test_every_fixture_imports_by_the_contract_count(path, tmp_path):
    _check_import(_open(path), tmp_path, _fixture_id(path))


@needs_shared
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=_fixture_id)
def test_every_fixture_diffed_with_itself_has_no_difference(path):
    _open(path)
    _check_diff(path)


#: the verbs whose figures are the one tally (:mod:`mcpreel.operations.tally`): ``tests/operations/test_tally.py``
#: checks them against it in memory (both eras, tasks, listen, several sessions, merged, reused id, dropped),
#: so the real recordings are read here by the verbs that count on their own (the OTLP mapping, the TUI)
TALLIED = ("inspect", "report")


@pytest.mark.e2e
@pytest.mark.parametrize("verb", [v for v in VERBS if v not in TALLIED])
@pytest.mark.parametrize("name", RECORDINGS)
def test_real_recordings_count_the_same_in_every_verb(operation_recordings, name, verb):
    rec = operation_recordings[name]
    _check_verb(open_session(rec.reel)[0], verb, f"the real {name} recording")


@pytest.mark.e2e
@pytest.mark.parametrize("name", RECORDINGS)
def test_real_recordings_import_by_the_contract_count(operation_recordings, name, tmp_path):
    _check_import(open_session(operation_recordings[name].reel)[0], tmp_path, f"the real {name} recording")


@pytest.mark.e2e
@pytest.mark.parametrize("name", RECORDINGS)
def test_real_recordings_diffed_with_themselves_have_no_difference(operation_recordings, name):
    _check_diff(operation_recordings[name].reel)


# -- the walk itself, against what the real clients did -----------------------------------------------------

def _ops(rec: Any) -> list[Operation]:
    return read(open_session(rec.reel)[0]).operations


@pytest.mark.e2e
def test_the_walk_reads_the_real_recordings_as_their_clients_lived_them(operation_recordings):
    """The truth above is only worth stating if the walk reads what the clients did: checked against the
    clients' own account (``Recorded.seen``), not against another verb."""
    recs = operation_recordings
    for name in RECORDINGS:
        assert read(open_session(recs[name].reel)[0]).sessions == recs[name].sessions, name

    task = recs["task"]
    (op,) = [o for o in _ops(task) if o.method == "tools/call"]
    assert op.kind == "task" and op.task_id == task.seen["task_id"] and op.complete
    assert op.polls == task.seen["polls"] and op.task_status == "completed" and op.status()[0] == "ok"
    assert [ex.role for ex in op.exchanges] == ["call"] + ["poll"] * task.seen["polls"] + ["result"]
    assert sum(1 for _, n in op.notes if n["method"] == "notifications/tasks/status") == \
        task.seen["notifications"].count("notifications/tasks/status")
    assert not [o for o in _ops(task) if o.method.startswith("tasks/")], "polls are not operations"

    for name in ("listen", "listen-http"):  # ended by notifications/cancelled (stdio), by closing the stream (HTTP)
        listen = recs[name]
        (stream,) = [o for o in _ops(listen) if o.kind == "listen"]
        assert stream.status()[0] == "ended" and stream.ended_by == "cancel" and stream.latency_ms is None, name
        notes = [n["method"] for _, n in stream.notes]
        assert notes[0] == "notifications/subscriptions/acknowledged", name
        assert notes.count("notifications/tools/list_changed") == len(listen.seen["events"]) == 1, name
        calls = Counter(o.target for o in _ops(listen) if o.method == "tools/call")
        assert calls == {"touch": 1, "echo": 1, "fail": 1}, name
        assert [o.target for o in _ops(listen) if o.status()[0] == "isError"] == ["fail"], name

    legacy = recs["legacy"]
    assert Counter(o.target for o in _ops(legacy) if o.method == "tools/call") == {"touch": 1, "echo": 1, "fail": 1}
    assert not [o for o in _ops(legacy) if o.kind != "request"]

    multi = recs["multi-http"]
    ops = _ops(multi)
    assert {o.session for o in ops} == {1, 2}
    for session in (1, 2):
        mine = [o for o in ops if o.session == session]
        assert mine[0].opening.id == 1, "each client numbers its requests from 1"
        assert Counter(o.target for o in mine if o.method == "tools/call") == {"touch": 1, "echo": 1, "fail": 1}
        assert all(o.status()[0] in ("ok", "isError") for o in mine)
    assert [o.method for o in ops if o.opening.id == 1] == ["server/discover", "initialize"]

    (greet,) = [o for o in _ops(recs["mrtr-auto"]) if o.target == "greet"]
    assert greet.kind == "multi-round-trip" and greet.rounds == 2 and greet.status()[0] == "ok"
    assert [ex.role for ex in greet.exchanges] == ["call", "round"]
    (greet,) = [o for o in _ops(recs["mrtr-legacy"]) if o.target == "greet"]
    assert greet.kind == "request" and greet.rounds == 1
    assert [c.method for c in greet.children] == ["elicitation/create"] and greet.children[0].response is not None
