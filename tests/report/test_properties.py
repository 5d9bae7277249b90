"""Any session, however odd, makes a page and spans: never a traceback (hypothesis)."""

from __future__ import annotations

import json
import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.model import Message, Session, SessionInfo
from mcpreel.otel.mapping import spans
from mcpreel.report import ReportLimits, collect, render

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                    st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=8)
methods = st.sampled_from(["tools/call", "initialize", "server/discover", "notifications/progress",
                           "notifications/cancelled", "sampling/createMessage", "resources/read", "prompts/get"])
ids = st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["1", "a"]), st.booleans(), st.just({"x": 1}))
params = st.one_of(values, st.fixed_dictionaries({"name": st.one_of(st.text(max_size=6), st.integers()),
                                                  "_meta": st.one_of(values, st.fixed_dictionaries(
                                                      {"traceparent": st.text(max_size=60), "progressToken": ids}))}))
request = st.builds(lambda m, i, p: {"jsonrpc": "2.0", "id": i, "method": m, "params": p}, methods, ids, params)
notification = st.builds(lambda m, p: {"jsonrpc": "2.0", "method": m, "params": p}, methods, params)
response = st.builds(lambda i, r, e: {"jsonrpc": "2.0", "id": i, **({"error": e} if e is not None else {"result": r})},
                     ids, values, st.one_of(st.none(), values, st.fixed_dictionaries({"code": values, "message": values})))
raw = st.one_of(request, notification, response, values, st.lists(st.one_of(request, response), max_size=3))
record = st.one_of(
    st.builds(lambda d, r, t: Message(d, r, t=t), st.sampled_from(["in", "out", None, "odd"]), raw,
              st.one_of(st.none(), st.integers(0, 2**45))),
    st.builds(lambda text: Message(None, None, kind="stderr", text=text), st.text(max_size=20)),
    st.builds(lambda text: Message("in", None, kind="invalid", text=text), st.text(max_size=20)),
    st.builds(lambda ctx: Message("out", None, kind="transport", ctx=ctx), st.dictionaries(st.text(max_size=6), values, max_size=3)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(record, max_size=25), st.integers(0, 5))
def test_any_session_makes_a_page_and_spans(records, detail):
    session = Session(SessionInfo(label="<odd>"), records)
    data = collect(session, ReportLimits(timeline=10, detail=detail, max_errors=3))
    html = render(data)
    block = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    doc = json.loads(block.group(1))
    assert len(doc["calls"]) == len(data.calls) and html.count("<script") == 2
    out = spans(session, include_content=True, ids=random.Random(1).getrandbits)
    assert bool(out) == bool(records)  # any record makes at least the session span
    roots = [s for s in out if s.kind == "internal"]
    assert all(s.parent_id is None for s in roots) and out[-len(roots):] == roots if out else True
    assert all(s.end_ns >= s.start_ns for s in out)
