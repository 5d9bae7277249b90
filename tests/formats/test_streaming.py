"""Issue 13: the pieces that keep inspect and the one-document writers in flat memory give the same
answers as holding everything (row spool, latency sketch, streamed JSON documents)."""

from __future__ import annotations

import io
import json
import math
import random
from typing import Any

import pytest

from mcpreel._infra import jsonio
from mcpreel._infra.jsonstream import marker, write_document
from mcpreel.inspection import EXACT_LATENCIES, SKETCH_ERROR, LatencySketch, Row, RowSpool, analyze, percentile
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.render import inspect as render


def _session(pairs: int, *, unanswered: tuple[int, ...] = (), latency=lambda i: i % 7) -> Session:
    msgs = []
    t = 0
    for i in range(pairs):
        msgs.append(Message("in", {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                   "params": {"name": f"t{i % 3}", "arguments": {"q": i}}}, t))
        if i not in unanswered:
            msgs.append(Message("out", {"jsonrpc": "2.0", "id": i, "result": {"content": []}}, t + latency(i)))
        t += 10
    msgs.append(Message("out", {"jsonrpc": "2.0", "id": "stray", "result": {}}, t))
    return Session(SessionInfo(transport="stdio", command=["srv"]), msgs)


@pytest.mark.parametrize("verbose", [False, True])
def test_spooled_rows_print_and_encode_as_the_rows_in_memory(verbose: bool) -> None:
    session = _session(5000, unanswered=(3, 4000))
    held = analyze(session, payloads=verbose)
    spooled = analyze(session, payloads=verbose, rows="spool")
    assert list(render.plain_lines(spooled, verbose=verbose)) == list(render.plain_lines(held, verbose=verbose))
    out = io.BytesIO()
    render.write_json(spooled, out, verbose=verbose)
    assert out.getvalue().decode() == render.to_json(held, verbose=verbose)
    assert [r.index for r in spooled.rows if r.unanswered] == [3 * 2, 4000 * 2 - 1]  # request 3 lost no row before it; 4000: one
    summary = analyze(session, rows="none")
    assert list(summary.rows) == [] and summary.summary == held.summary
    assert list(render.plain_lines(summary, rows=False)) == list(render.plain_lines(held, rows=False))


def test_sketch_is_exact_while_small() -> None:
    values = [random.Random(1).randrange(0, 5000) for _ in range(3000)]
    sketch = LatencySketch()
    for v in values:
        sketch.add(v)
    ordered = sorted(values)
    assert sketch.exact
    for p in (0, 1, 50, 95, 99, 100):
        assert sketch.percentile(p) == percentile(ordered, p)
    assert sketch.max == ordered[-1]


def test_sketch_past_the_exact_limit_is_within_its_stated_error_in_bounded_memory() -> None:
    rng = random.Random(7)
    values = [int(rng.lognormvariate(6, 1.5)) for _ in range(200_000)]
    sketch = LatencySketch()
    for v in values:
        sketch.add(v)
    ordered = sorted(values)
    assert not sketch.exact
    assert len(sketch.counts) < 2 * EXACT_LATENCIES
    for p in (50, 90, 95, 99):
        exact = percentile(ordered, p)
        assert exact * (1 - SKETCH_ERROR) - 1 <= sketch.percentile(p) <= exact
    assert sketch.max == ordered[-1]
    assert sketch.n == len(values)


def test_inspect_states_the_error_when_latencies_are_bucketed() -> None:
    session = _session(EXACT_LATENCIES + 200, latency=lambda i: 100 + i * 3)
    report = analyze(session, rows="none")
    assert not report.exact_latency
    lines = list(render.plain_lines(report, rows=False))
    assert any(line.startswith("Latency per method (p50 and p95 at most 1% below") for line in lines)
    out = io.BytesIO()
    render.write_json(report, out, rows=False)
    assert json.loads(out.getvalue())["summary"]["latency_error"] == SKETCH_ERROR
    exact = analyze(_session(50), rows="none")
    assert exact.exact_latency and "latency_error" not in exact.summary_dict()
    assert "Latency per method:" in list(render.plain_lines(exact, rows=False))
    big = report.summary.latency["tools/call"]
    values = sorted(100 + i * 3 for i in range(EXACT_LATENCIES + 200))
    assert math.isclose(big.p50_ms, percentile(values, 50), rel_tol=SKETCH_ERROR)


@pytest.mark.parametrize("indent", [True, False])
def test_a_streamed_document_is_the_bytes_of_the_whole_one(indent: bool) -> None:
    items = [{"a": i, "b": [1, {"c": "é"}], "d": {}} for i in range(1500)]
    for arrays in ([], items, [[]], [1, 2]):
        doc = {"log": {"version": "1.2", "entries": arrays, "tail": {"x": [1, 2], "y": []}}, "z": None}
        key = marker()
        streamed = {"log": {"version": "1.2", "entries": key, "tail": {"x": [1, 2], "y": []}}, "z": None}
        out = io.BytesIO()
        write_document(out, streamed, {key: iter(arrays)}, indent=indent)
        whole = jsonio.dumps_indented(doc) if indent else jsonio.dumps(doc)
        assert out.getvalue() == whole
    top = marker()
    out = io.BytesIO()
    write_document(out, top, {top: iter(items)}, indent=indent)
    assert out.getvalue() == (jsonio.dumps_indented(items) if indent else jsonio.dumps(items))


def test_sorted_spool_merges_its_runs_into_a_stable_sort() -> None:
    from mcpreel._infra.jsonstream import SortedSpool

    rng = random.Random(3)
    items = [(rng.randrange(50), f"item {i}".encode()) for i in range(5000)]
    spool = SortedSpool(limit=4096)  # dozens of runs on disk
    for key, item in items:
        spool.add(key, item)
    assert list(spool) == [item for _, item in sorted(items, key=lambda x: x[0])]
    assert list(spool) == list(spool)  # read again: the same
    spool.close()


def test_sorted_spool_in_order_runs_then_a_late_smaller_key() -> None:
    """Keys that come in order are read back run after run (no sort, no merge); one smaller key after
    runs were spilled unsorted still lands in its place, ties in the order they came."""
    from mcpreel._infra.jsonstream import Encoded, SortedSpool

    items = [(i // 3, f"item {i}".encode()) for i in range(3000)]
    for late in ([], [(5, b"late 5"), (5, b"late 5 again"), (0, b"late 0")]):
        spool = SortedSpool(limit=4096)
        for key, item in items + late:
            spool.add(key, item)
        got = list(spool)
        assert got == [item for _, item in sorted(items + late, key=lambda x: x[0])]
        assert all(type(item) is Encoded for item in got)
        spool.close()


def test_har_of_a_stdio_session_is_the_same_whether_its_entries_spill_to_disk_or_not(monkeypatch) -> None:
    from mcpreel._infra import jsonstream
    from mcpreel.formats import har

    msgs = [
        Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}}, 1000),
        Message("in", [{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 3, "method": "ping"}], 1001),
        Message("out", {"jsonrpc": "2.0", "id": 2, "result": {}}, 1002),
        Message("in", {"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
        Message("out", {"jsonrpc": "2.0", "id": 99, "result": {}}, 900),  # an orphan, earlier than all
        Message("out", {"jsonrpc": "2.0", "id": 3, "result": {}}, 1005),
        Message(None, None, 1006, kind="stderr", text="warn"),
        Message("in", {"jsonrpc": "2.0", "id": 4, "method": "ping"}, 1007),  # never answered
        Message("out", {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": True}}, 1500),
    ]
    msgs += [Message("in" if i % 2 == 0 else "out", {"jsonrpc": "2.0", "id": 100 + i // 2,
                                                     **({"method": "ping"} if i % 2 == 0 else {"result": {}})},
                     2000 - i) for i in range(400)]  # times running backwards
    session = Session(SessionInfo(transport="stdio", command=["srv"], started=500), msgs)
    whole = io.BytesIO()
    har.write(session, whole)
    monkeypatch.setattr(jsonstream.SortedSpool.__init__, "__defaults__", (512,))
    spilled = io.BytesIO()
    har.write(session, spilled)
    assert spilled.getvalue() == whole.getvalue()
    entries = json.loads(whole.getvalue())["log"]["entries"]
    starts = [e["startedDateTime"] for e in entries]
    assert starts == sorted(starts) and len(entries) == 2 + 1 + 1 + 1 + 200
    assert [e["_mcp"].get("unanswered") for e in entries].count(True) == 1


def test_item_spool_keeps_order_with_items_held_open_and_settled_early_late_or_never() -> None:
    from mcpreel._infra.jsonstream import ItemSpool

    spool = ItemSpool(jsonio.dumps)
    spool._BATCH = 4  # type: ignore[misc]  # several batches in the file
    early = {"n": 0}
    at_early = spool.hold(early)
    spool.append(jsonio.dumps({"n": 1}))
    early["answer"] = True
    spool.settle(at_early)  # its batch still in memory: encoded there, forgotten
    late = {"n": 2}
    at_late = spool.hold(late)
    never = {"n": 3}
    spool.hold(never)
    for i in range(4, 12):
        spool.append(jsonio.dumps({"n": i}))
    late["answer"] = True  # its batch is in the file by now: encoded when read back
    spool.settle(at_late)
    never["late"] = 1
    expected = [{"n": 0, "answer": True}, {"n": 1}, {"n": 2, "answer": True}, {"n": 3, "late": 1},
                *({"n": i} for i in range(4, 12))]
    assert [json.loads(x) for x in spool] == expected
    assert [json.loads(x) for x in spool] == expected  # read again: the same
    assert set(spool._held) == {2, 3}  # only what was still open when its batch left memory
    spool.close()


@pytest.mark.parametrize("indent", [True, False])
def test_item_spool_joined_runs_write_the_bytes_of_its_items_one_by_one(indent: bool) -> None:
    """A spool's batches given as runs joined by the array's separator (a batch's held items encoded
    there, one never settled too): the document is the same bytes as with the items one by one, and
    memory-sized batches of big runs change nothing."""
    from mcpreel._infra.jsonstream import ItemSpool

    items = [{"n": i, "nested": {"x": [i, "é"]}} for i in range(23)]
    spool = ItemSpool(jsonio.dumps_indented if indent else jsonio.dumps)
    spool._BATCH = 5  # type: ignore[misc]  # several batches, the last one short
    held = {}
    for item in items:
        if item["n"] % 3 == 0:
            held[item["n"]] = spool.hold(item)
        else:
            spool.append(jsonio.dumps_indented(item) if indent else jsonio.dumps(item))
    for n, at in held.items():
        if n != 21:  # 21 is never settled: encoded as it is read
            spool.settle(at)
    doc = {"a": 1, "items": marker()}
    out = io.BytesIO()
    write_document(out, doc, {doc["items"]: spool.joined(b",\n" if indent else b",")}, indent=indent)
    whole = {"a": 1, "items": items}
    assert out.getvalue() == (jsonio.dumps_indented(whole) if indent else jsonio.dumps(whole))
    spool.close()


def test_merge_and_redact_report_the_bytes_they_read_for_a_progress_bar(tmp_path) -> None:
    from mcpreel.formats import get_writer
    from mcpreel.merge import merge
    from mcpreel.redact.files import redact_file

    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.reel.jsonl"
        with open(path, "wb") as fh:
            get_writer("reel")(_session(300), fh)
        paths.append(path)
    seen: list[int] = []
    merge(paths, tmp_path / "m.reel.jsonl", on_progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == sum(p.stat().st_size for p in paths)
    seen.clear()
    redact_file(paths[0], tmp_path / "r.reel.jsonl", on_progress=seen.append)
    assert seen and seen[-1] == paths[0].stat().st_size


def test_the_streaming_verbs_are_quiet_on_stderr_when_it_is_not_a_terminal(tmp_path) -> None:
    from click.testing import CliRunner

    from mcpreel.cli import cli
    from mcpreel.formats import get_writer

    src = tmp_path / "s.reel.jsonl"
    with open(src, "wb") as fh:
        get_writer("reel")(_session(200), fh)
    (tmp_path / "c.reel.jsonl").write_bytes(src.read_bytes())
    from mcpreel.redact.keys import load_or_create_key

    load_or_create_key(cwd=tmp_path)  # the project's redaction key exists: redact says nothing of making one
    runner = CliRunner(env={"MCPREEL_REDACT_KEY": str(tmp_path / ".mcpreel" / "redact.key")})
    for args in (["inspect", "--summary", str(src)], ["redact", str(src), str(tmp_path / "r.reel.jsonl")],
                 ["merge", str(src), str(tmp_path / "c.reel.jsonl"), "-o", str(tmp_path / "m.reel.jsonl")],
                 ["convert", str(src), str(tmp_path / "o.har")]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert result.stderr == ""


def test_qai_fast_ids_and_times_are_the_standard_librarys() -> None:
    import uuid
    from datetime import UTC, datetime

    from mcpreel.formats import qai

    rng = random.Random(2)
    for i in range(5000):
        name = f"{rng.random()}/{i}" + ("é" if i % 7 == 0 else "")
        assert qai._uuid5(name) == str(uuid.uuid5(qai._NS, name))
        ms = rng.randrange(-10**12, 4 * 10**12) if i % 3 else rng.randrange(0, 10**6) * 1000
        secs, rem = divmod(ms, 1000)
        assert qai.iso_micro(ms) == datetime.fromtimestamp(secs, tz=UTC).replace(microsecond=rem * 1000).isoformat()


def test_encode_run_and_run_spool_write_what_encoding_the_whole_document_writes() -> None:
    """A run encoded by one orjson call (nested to its depth) is the items as the whole document holds
    them; a run orjson refuses (an integer beyond 64 bits) falls back item by item. A RunSpool spliced
    by write_document gives the document's bytes, over several runs, for no item, and refuses a depth
    it was not encoded for."""
    from mcpreel._infra.jsonstream import RunSpool, encode_run

    items: list[Any] = [{"a": [1, {}], "b": "x\u00e9"}, {"c": []}, 5, "q", [], {"d": {"e": [None, 1.5]}}]
    for depth in (2, 4, 6, 8):
        pad = b"\n" + b" " * depth
        for run in (items, items + [2**70]):
            assert encode_run(run, depth) == (b"," + pad).join(jsonio.dumps_indented(i).replace(b"\n", pad) for i in run)
    for count in (0, 1, 7, 40):
        values = [{"n": i, "v": items[i % len(items)]} for i in range(count)] + ([{"big": 2**70}] if count == 7 else [])
        doc = {"head": {"x": 1}, "messages": values}
        spool = RunSpool(depth=4)
        spool._RUN = 3  # type: ignore[misc]  # several runs in the file
        for value in values:
            spool.append(value)
        top = marker()
        out = io.BytesIO()
        write_document(out, {"head": {"x": 1}, "messages": top}, {top: spool})
        assert out.getvalue() == jsonio.dumps_indented(doc)
        assert len(spool) == len(values)
        with pytest.raises(ValueError, match="4 spaces deep"):
            write_document(io.BytesIO(), {"a": {"messages": top}}, {top: spool})
        with pytest.raises(ValueError, match="encoded indented"):
            write_document(io.BytesIO(), {"messages": top}, {top: spool}, indent=False)
        spool.close()


def test_a_spooled_row_gets_its_late_marks_as_a_row_and_as_values():
    # SSE framing folded into a row already on disk, and the unanswered mark known only at the end,
    # are applied when the rows are read back: as Row objects (the table) and as member tuples (--json)
    spool = RowSpool()
    rows = [Row(i, "message", "in", "ping", id=i) for i in range(RowSpool._BATCH + 10)]
    for row in rows:
        spool.append(row)
    rows[1].sse_events = 2
    spool.changed(rows[1], 1)  # on disk already: its count is kept aside
    spool.unanswered = frozenset({1, RowSpool._BATCH + 5})
    back = list(spool)
    assert [(r.index, r.sse_events, r.unanswered) for r in back if r.sse_events or r.unanswered] == [
        (1, 2, True), (RowSpool._BATCH + 5, 0, True)]
    assert [Row(*values) for values in spool.values()] == back
    spool.close()


def test_an_item_spool_of_big_items_keeps_about_a_megabyte_in_memory() -> None:
    # runs of entries are big items: 1024 of them in memory held 52 MB (the envelope at 1M messages)
    from mcpreel._infra.jsonstream import ItemSpool

    spool = ItemSpool()
    items = [bytes([65 + i % 26]) * 300_000 for i in range(40)]
    for item in items:
        spool.append(item)
        assert sum(len(b) for b in spool._batch if b is not None) < (1 << 20) + 300_000
    assert [bytes(b) for b in spool] == items
    spool.close()
