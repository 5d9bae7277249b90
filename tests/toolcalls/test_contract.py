"""Every rule of the import contract (spec 01): ids, correlation, ordering, final output, fields."""

from __future__ import annotations

import json

import pytest

from mcpreel.errors import InputError

from .helpers import call, err, ok, run_import, write_jsonl

START_FIELDS = ["type", "episode_id", "timestamp", "input", "meta"]
STEP_FIELDS = ["type", "episode_id", "step_id", "idx", "timestamp", "kind", "name", "content", "content_sha256", "truncations", "meta"]
CALL_FIELDS = ["type", "episode_id", "step_id", "timestamp", "tool_name", "call_index", "args", "args_sha256", "result",
               "result_sha256", "error", "truncations"]
END_FIELDS = ["type", "episode_id", "timestamp", "outcome", "final_output"]


def test_field_names_and_order_and_compact_json(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                           ok(1, {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}),
                                           call(2, "a", {"q": "é"}), ok(2)])
    events, _, _, raw = run_import(p)
    assert [list(e) for e in events] == [START_FIELDS, STEP_FIELDS, STEP_FIELDS, STEP_FIELDS, CALL_FIELDS, END_FIELDS]
    assert b" " not in raw.replace(b"<mcp:session>", b"")  # compact
    assert "é".encode() in raw  # UTF-8 unescaped
    start = events[0]
    assert start["meta"] == {"source": "mcp_import", "episode_id": "ep", "mcp": {"authorization_discovery": {
        "visible": False, "source_kind": "unknown", "resource_metadata_visible": False,
        "authorization_servers_visible": False, "scope_challenge_visible": False}}}
    assert list(start["meta"]) == ["source", "episode_id", "mcp"]
    assert start["input"] == {"prompt": "<mcp:session>"}
    listing, listed, step = events[1:4]
    assert (listing["name"], listing["content"], listing["meta"]) == ("tools/list", "{}", {})
    assert listed["name"] == "tools/list.result" and listed["meta"] == {}
    assert json.loads(listed["content"]) == {"tools": [{"name": "a", "description": None, "input_schema": {"type": "object"}, "tool_identity": None}]}
    assert listed["content"] == '{"tools":[{"name":"a","description":null,"input_schema":{"type":"object"},"tool_identity":null}]}'
    assert (step["step_id"], step["idx"], step["kind"], step["content"], step["meta"]) == ("step_002", 2, "tool", None, {"jsonrpc_id": "2"})
    assert step["content_sha256"] is None and step["truncations"] == []
    tc = events[4]
    assert (tc["step_id"], tc["tool_name"], tc["call_index"], tc["args"], tc["error"]) == ("step_002", "a", 0, {"q": "é"}, None)


def test_test_id_and_prompt_and_episode_id(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call(1), ok(1)])
    events, *_ = run_import(p, episode_id="run-7", test_id="T-1", prompt="find Alice")
    assert events[0]["meta"]["test_id"] == "T-1" and list(events[0]["meta"])[-1] == "test_id"
    assert events[0]["input"] == {"prompt": "find Alice"}
    assert {e["episode_id"] for e in events} == {"run-7"}


@pytest.mark.parametrize(("rid", "rendered"), [("abc", "abc"), (7, "7"), (0, "0"), (-3, "-3"), (2**70, str(2**70))])
def test_ids_strings_kept_numbers_rendered(tmp_path, rid, rendered):
    p = write_jsonl(tmp_path / "s.jsonl", [call(rid), ok(rid)])
    events, report, *_ = run_import(p)
    assert events[1]["meta"] == {"jsonrpc_id": rendered}
    assert events[2]["result"] is not None and report.unanswered == 0


@pytest.mark.parametrize("form", ["null", "missing"])
def test_null_and_missing_ids_do_not_correlate(tmp_path, form):
    req = call(None)
    if form == "missing":
        del req["id"]
    p = write_jsonl(tmp_path / "s.jsonl", [req, ok("null")])
    events, report, warnings, _ = run_import(p)
    step, tc = events[1], events[2]
    assert step["meta"] == {"jsonrpc_id": None}  # never the string "null"
    assert tc["type"] == "tool_call" and tc["result"] is None and tc["error"] is None
    assert report.orphans == 1 and any('"null"' in w for w in warnings)


@pytest.mark.parametrize(("rid", "kind"), [(True, "a boolean"), ({"a": 1}, "an object"), ([1], "an array")])
def test_bad_id_types_refused_naming_the_line(tmp_path, rid, kind):
    p = write_jsonl(tmp_path / "s.jsonl", [call(1), ok(1), call(rid)])
    with pytest.raises(InputError) as exc:
        run_import(p)
    assert str(exc.value).endswith(f"JSON-RPC id on source line 3 must not be {kind}")
    assert not list(tmp_path.glob("*.trace.jsonl*"))  # no output left behind


def test_bad_id_in_a_response_is_refused_too(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call(1), {"jsonrpc": "2.0", "id": False, "result": {}}])
    with pytest.raises(InputError, match="source line 2 must not be a boolean"):
        run_import(p)


def test_first_response_wins_later_ones_are_orphans(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call("a"), ok("a", {"n": 1}), ok("a", {"n": 2})])
    events, report, warnings, _ = run_import(p)
    calls = [e for e in events if e["type"] == "tool_call"]
    assert len(calls) == 1 and calls[0]["result"] == {"n": 1}
    assert report.orphans == 1 and len(warnings) == 1 and '"a"' in warnings[0] and "line 3" in warnings[0]
    assert events[-1]["final_output"] == '{"n":2}'  # orphans count for final_output


def test_duplicate_tools_call_ids_fail(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call("dup-1"), ok("dup-1"), call("dup-1"), ok("dup-1")])
    with pytest.raises(InputError) as exc:
        run_import(p)
    assert str(exc.value).endswith('duplicate tools/call request id "dup-1" at source line 3')


def test_number_and_string_ids_render_alike(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call(5), ok("5")])
    events, report, *_ = run_import(p)
    assert report.unanswered == 0 and events[2]["type"] == "tool_call" and events[2]["error"] is None


def test_error_response_is_mcp_error_and_iserror_is_success(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call(1), err(1), call(2), ok(2, {"content": [], "isError": True})])
    events, *_ = run_import(p)
    calls = [e for e in events if e["type"] == "tool_call"]
    assert calls[0]["result"] == {"error": {"code": -32602, "message": "bad"}} and calls[0]["error"] == "mcp_error"
    assert calls[1]["result"] == {"content": [], "isError": True} and calls[1]["error"] is None


def test_unanswered_calls_flushed_in_request_order_before_end(tmp_path):
    msgs = [{**call(i), "timestamp_ms": 100 + i} for i in (3, 1, 2)] + [{**ok(9), "timestamp_ms": 500}]
    p = write_jsonl(tmp_path / "s.jsonl", msgs)
    events, report, *_ = run_import(p)
    tail = events[-4:-1]
    assert [e["step_id"] for e in tail] == ["step_000", "step_001", "step_002"]
    assert all(e["error"] == "timeout/no_response" and e["result"] is None for e in tail)
    assert all(e["timestamp"] == 500 for e in tail)  # running max, never decreasing
    assert report.unanswered == 3
    assert events[-1]["type"] == "episode_end"


def test_timestamps_are_a_running_max_and_events_sorted_by_time(tmp_path):
    msgs = [
        {**call(1, "late"), "timestamp_ms": 300},
        {**call(2, "early"), "timestamp_ms": 100},
        {**ok(2), "timestamp_ms": 150},
        {**ok(1), "timestamp_ms": 320},
    ]
    p = write_jsonl(tmp_path / "s.jsonl", msgs)
    events, report, *_ = run_import(p)
    assert events[0]["timestamp"] == 100  # episode start = the smallest time present
    steps = [e["name"] for e in events if e["type"] == "step"]
    assert steps == ["early", "late"]
    ts = [e["timestamp"] for e in events]
    assert ts == sorted(ts)
    assert report.sorted_in_memory


def test_no_timestamps_gives_zero_not_the_clock(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call(1), ok(1)])
    events, *_ = run_import(p)
    assert {e["timestamp"] for e in events} == {0}


def test_untimed_prefix_takes_the_first_time(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call(1), ok(1), {**call(2), "timestamp_ms": 5000}, {**ok(2), "timestamp_ms": 5001}])
    events, *_ = run_import(p)
    assert [e["timestamp"] for e in events] == [5000, 5000, 5000, 5000, 5001, 5001]


def test_final_output_is_last_response_but_not_a_tools_list_result(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call(1), ok(1, {"x": 1}), {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                                           ok(2, {"tools": []})])
    events, *_ = run_import(p)
    assert events[-1]["final_output"] == '{"x":1}'


def test_final_output_counts_initialize_and_error_objects(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                                           err(1, -32000, "nope")])
    events, report, warnings, _ = run_import(p)
    assert events[-1]["final_output"] == '{"code":-32000,"message":"nope"}'
    assert report.orphans == 0  # it answered initialize
    assert any("no tool calls found" in w for w in warnings)


def test_final_output_null_without_responses(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [call(1)])
    events, *_ = run_import(p)
    assert events[-1]["final_output"] is None


def test_other_messages_produce_no_lines(tmp_path):
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, ok(1, {"protocolVersion": "x"}),
            {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, ok(2, {}),
            {"jsonrpc": "2.0", "id": 3, "method": "resources/list"}, ok(3, {"resources": []}),
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}]
    p = write_jsonl(tmp_path / "s.jsonl", msgs)
    events, report, warnings, _ = run_import(p)
    assert [e["type"] for e in events] == ["episode_start", "episode_end"]
    assert report.orphans == 0


def test_missing_name_and_arguments_warn_naming_the_line(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}, ok(1),
                                           {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}}, ok(2)])
    events, _, warnings, _ = run_import(p)
    steps = [e for e in events if e["type"] == "step"]
    assert steps[0]["name"] == "unknown_tool"
    calls = [e for e in events if e["type"] == "tool_call"]
    assert calls[0]["args"] is None and calls[1]["args"] is None
    assert any("line 1" in w and "params.name" in w for w in warnings)
    assert any("line 3" in w and "params.arguments" in w for w in warnings)


def test_batches_are_flattened(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps([call(1, "a"), call(2, "b")]) + "\n" + json.dumps([ok(2), ok(1)]) + "\n")
    events, report, *_ = run_import(p, fmt="jsonrpc")
    assert [e["tool_name"] for e in events if e["type"] == "tool_call"] == ["b", "a"]
    assert report.messages == 4


def test_correlation_respects_direction(tmp_path):
    """A server request and a client request may share an id: each answer binds its own request."""
    msgs = [call(1, "ask"), {"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {}},
            {"jsonrpc": "2.0", "id": 1, "result": {"role": "assistant", "content": {"type": "text", "text": "42"}}},
            ok(1, {"content": [{"type": "text", "text": "llm said 42"}]})]
    p = write_jsonl(tmp_path / "s.jsonl", msgs)
    events, report, *_ = run_import(p)
    calls = [e for e in events if e["type"] == "tool_call"]
    assert calls[0]["result"] == {"content": [{"type": "text", "text": "llm said 42"}]}
    assert report.orphans == 0


def test_deterministic_byte_identical(tmp_path):
    msgs = [call(i, f"t{i % 3}", {"i": i}) for i in range(20)] + [ok(i) for i in range(0, 20, 2)]
    p = write_jsonl(tmp_path / "s.jsonl", msgs)
    a = run_import(p)[3]
    b = run_import(p)[3]
    assert a == b


def test_simple_trace(tmp_path):
    p = write_jsonl(tmp_path / "s.jsonl", [{**call(1, "get", {"id": 1}), "timestamp_ms": 1766829600000},
                                           {**ok(1, {"name": "Alice"}), "timestamp_ms": 1766829601000},
                                           {**call(2, "bad"), "timestamp_ms": 1766829602000},
                                           {**err(2), "timestamp_ms": 1766829603000}, {**call(3, "never"), "timestamp_ms": 1766829604000}])
    events, *_ = run_import(p, trace_format="simple")
    assert events[0] == {"type": "tool_call", "id": "1", "tool": "get", "arguments": {"id": 1}, "timestamp": "2025-12-27T10:00:00.000Z"}
    assert events[1] == {"type": "tool_result", "id": "1", "result": {"name": "Alice"}, "timestamp": "2025-12-27T10:00:01.000Z"}
    assert events[3] == {"type": "tool_result", "id": "2", "error": {"code": -32602, "message": "bad"}, "timestamp": "2025-12-27T10:00:03.000Z"}
    assert [e["type"] for e in events] == ["tool_call", "tool_result", "tool_call", "tool_result", "tool_call"]


# -- duplicate detection keeps memory flat: every path that could miss a duplicate is exact ----------

@pytest.mark.parametrize(("ids", "line"), [
    ([1, 2, 3, 2], 7),  # a counter that goes back to an answered id
    ([1, 2, "2"], 5),  # a string with the text of an earlier integer id
    (["7", 7], 3),  # an integer with the text of an earlier string id
    (["a", "b", "a"], 5),
    ([5, 3, 9, 3], 7),  # non-monotonic integers
    ([-1, -1], 3),
])
def test_duplicates_found_on_every_path(tmp_path, ids, line):
    msgs = []
    for i in ids:
        msgs += [call(i), ok(i)]
    p = write_jsonl(tmp_path / "s.jsonl", msgs)
    with pytest.raises(InputError, match=f"duplicate tools/call request id .* at source line {line}$"):
        run_import(p)


@pytest.mark.parametrize("ids", [[5, 3, 9, 4], ["1", 2, "3"], ["²", "007", 7], [2**70, 1, "x" * 5000, "9" * 5000]])
def test_non_duplicates_that_break_the_counter_pattern_pass(tmp_path, ids):
    msgs = []
    for i in ids:
        msgs += [call(i), ok(i)]
    p = write_jsonl(tmp_path / "s.jsonl", msgs)
    events, report, *_ = run_import(p)
    assert report.tool_calls == len(ids) and report.unanswered == 0


def test_sorted_and_streaming_paths_give_the_same_trace(tmp_path):
    msgs = [{**call(i, f"t{i}"), "timestamp_ms": 1000 + 2 * i} for i in range(5)] + \
           [{**ok(i), "timestamp_ms": 1001 + 2 * i} for i in range(5)]
    a = write_jsonl(tmp_path / "a.jsonl", [msgs[i] for i in (0, 5, 1, 6, 2, 7, 3, 8, 4, 9)])  # in time order: streams
    b = write_jsonl(tmp_path / "b.jsonl", msgs)  # all requests, then all responses: out of time order
    c = write_jsonl(tmp_path / "c.jsonl", list(reversed(msgs)))
    ra, rb, rc = run_import(a), run_import(b), run_import(c)
    assert not ra[1].sorted_in_memory and rb[1].sorted_in_memory and rc[1].sorted_in_memory
    assert ra[0] == rb[0] == rc[0]
    assert [e["tool_name"] for e in ra[0] if e["type"] == "tool_call"] == [f"t{i}" for i in range(5)]


def test_long_untimed_prefix_then_times_redoes_with_the_start(tmp_path):
    n = 6000  # more untimed events than the buffer holds
    msgs = [m for i in range(n) for m in (call(i), ok(i))] + [{**call(n), "timestamp_ms": 777}, {**ok(n), "timestamp_ms": 778}]
    p = write_jsonl(tmp_path / "s.jsonl", msgs)
    events, report, *_ = run_import(p)
    assert events[0]["timestamp"] == 777 and events[1]["timestamp"] == 777 and events[-1]["timestamp"] == 778


def test_a_time_of_minus_one_ms_is_a_time_not_unknown(tmp_path):
    # 1969-12-31T23:59:59.999Z is -1 ms: it must not be taken for "episode start not known yet"
    p = tmp_path / "s.jsonl"
    t = "1969-12-31T23:59:59.999Z"
    p.write_text("".join(json.dumps(line) + "\n" for line in [
        {"v": 1, "type": "meta", "startedAt": t, "label": "x", "command": []},
        {"t": t, "dir": "in", "raw": call(1)}, {"t": t, "dir": "out", "raw": ok(1)},
        {"t": "1970-01-01T00:00:00.004Z", "dir": "in", "raw": call(2)}]))
    events, report, *_ = run_import(p)
    assert [e["timestamp"] for e in events] == [-1, -1, -1, 4, 4, 4]
    assert report.answered == 1 and report.unanswered == 1


def test_a_restarted_pass_says_each_warning_once(tmp_path):
    # line 3 is out of time order: the streaming pass is thrown away and the sorted pass runs
    p = write_jsonl(tmp_path / "s.jsonl", [{**ok(9), "timestamp_ms": 100},
                                           {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}, "timestamp_ms": 200},
                                           {"jsonrpc": "2.0", "id": 2, "method": "ping", "timestamp_ms": 50}])
    _, report, warnings, _ = run_import(p)
    assert report.sorted_in_memory
    assert warnings == report.warnings and len(warnings) == 2
    assert 'orphan response with JSON-RPC id "9" on source line 1' in warnings[0]
    assert "line 2: missing required field params.arguments" in warnings[1]


def test_no_false_orphan_warning_when_a_request_comes_later_in_the_file(tmp_path):
    # the answer is written first but happened later: once sorted, it answers the call
    p = write_jsonl(tmp_path / "s.jsonl", [{**ok(1), "timestamp_ms": 200}, {**call(1), "timestamp_ms": 100}])
    events, report, warnings, _ = run_import(p)
    assert warnings == [] and report.orphans == 0 and report.answered == 1
    assert events[2]["result"] == ok(1)["result"]


def test_fractional_ids_correlate_alike_in_every_encoding(tmp_path):
    # a server request with id 1.0 and the client's answer to it, then a client call with id 1.0
    msgs = [{"jsonrpc": "2.0", "id": 1.0, "method": "sampling/createMessage"}, {"jsonrpc": "2.0", "id": 1.0, "result": {}},
            call(1.0), ok(1.0)]
    jsonl, *_ = run_import(write_jsonl(tmp_path / "a.jsonl", msgs))
    (tmp_path / "b.json").write_text(json.dumps(msgs))
    array, _, warnings, _ = run_import(tmp_path / "b.json", fmt="inspector")
    assert jsonl == array and warnings == []
    assert jsonl[2]["result"] == ok(1.0)["result"] and jsonl[1]["meta"] == {"jsonrpc_id": "1.0"}


def test_a_merged_file_correlates_each_server_apart(tmp_path):
    # two servers' sessions, each numbering its own ids from 1: merged, the ids repeat across files
    from mcpreel.merge import merge

    def reel(name, tool, t0, answered):
        lines = [{"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": name, "command": [name]},
                 {"t": f"2026-01-01T00:00:0{t0}.000Z", "dir": "in", "raw": call(1, tool, {"s": name})}]
        if answered:
            lines.append({"t": f"2026-01-01T00:00:0{t0 + 2}.000Z", "dir": "out", "raw": ok(1, {"from": name})})
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        return tmp_path / f"{name}.jsonl"

    merged = tmp_path / "m.jsonl"
    merge([reel("a", "fs_read", 1, True), reel("b", "web_get", 2, False)], merged)
    events, report, warnings, _ = run_import(merged)
    calls = {e["tool_name"]: (e["result"], e["error"]) for e in events if e["type"] == "tool_call"}
    assert calls == {"fs_read": ({"from": "a"}, None), "web_get": (None, "timeout/no_response")}
    assert [e["meta"]["jsonrpc_id"] for e in events if e["type"] == "step"] == ["1", "1"]
    assert report.orphans == 0 and warnings == []
    # a simple trace names the JSON-RPC id, not the key the importer used to keep the servers apart
    simple, *_ = run_import(merged, trace_format="simple")
    assert [e["id"] for e in simple] == ["1", "1", "1"]


def test_a_merged_file_still_refuses_a_duplicate_within_one_server(tmp_path):
    """Server a's id 1 is used again once its first call was answered (a reuse while it is pending pairs
    first in, first out instead: below)."""
    meta = {"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "x", "command": []}
    lines = [meta] + [{"t": f"2026-01-01T00:00:0{i}.000Z", "dir": d, "raw": raw, "file": f}
                      for i, d, raw, f in ((1, "in", call(1), "a.jsonl"), (2, "in", call(1), "b.jsonl"),
                                           (3, "out", ok(1), "a.jsonl"), (4, "in", call(1), "a.jsonl"))]
    p = tmp_path / "m.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(InputError, match='duplicate tools/call request id "1" at source line 5'):
        run_import(p)


def _reel(path, rows):
    meta = {"v": 1, "type": "meta", "startedAt": "2026-01-01T00:00:00.000Z", "label": "x", "command": []}
    lines = [meta] + [{"t": f"2026-01-01T00:00:{i:02d}.000Z", "dir": d, "raw": raw, **marks}
                      for i, (d, raw, marks) in enumerate(rows)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_an_id_reused_while_the_first_call_waits_pairs_first_in_first_out(tmp_path):
    """The one pairing rule (docs/explanation/operations.md, "The reused-id rule"), as ``inspect`` pairs it:
    the first answer with the id to the first call still waiting, the next to the next."""
    p = _reel(tmp_path / "r.jsonl", [("in", call(1, "a"), {}), ("in", call(1, "b"), {}),
                                     ("out", ok(1, {"n": "first"}), {}), ("out", ok(1, {"n": "second"}), {})])
    events, report, warnings, _ = run_import(p)
    steps = {e["step_id"]: e["name"] for e in events if e["type"] == "step"}
    calls = [(steps[e["step_id"]], e["result"]) for e in events if e["type"] == "tool_call"]
    assert calls == [("a", {"n": "first"}), ("b", {"n": "second"})]
    assert (report.tool_calls, report.answered, report.orphans, warnings) == (2, 2, 0, [])


def test_a_dropped_call_is_in_the_trace_with_its_mark(tmp_path):
    """A call the proxy dropped never reached the server: it is in the trace as the client asked it, its step
    marked ``dropped``; only the proxy's own answer answers it (an error), else it is unanswered."""
    p = _reel(tmp_path / "d.jsonl", [
        ("in", call(5, "rm"), {"dropped": True}), ("out", {"jsonrpc": "2.0", "id": 5, "error": {"code": -32000, "message": "dropped"}},
                                                  {"injected": True}),
        ("in", call(6, "rm"), {"dropped": True}),
        ("in", call(7, "ls"), {}), ("out", ok(7), {})])
    events, report, warnings, _ = run_import(p)
    steps = [e for e in events if e["type"] == "step"]
    assert [(s["name"], s["meta"]) for s in steps] == [
        ("rm", {"jsonrpc_id": "5", "dropped": True}), ("rm", {"jsonrpc_id": "6", "dropped": True}), ("ls", {"jsonrpc_id": "7"})]
    errors = {e["step_id"]: e["error"] for e in events if e["type"] == "tool_call"}
    assert errors == {"step_000": "mcp_error", "step_001": "timeout/no_response", "step_002": None}
    assert (report.tool_calls, report.answered, report.unanswered, report.orphans, warnings) == (3, 2, 1, 0, [])
    simple, *_ = run_import(p, trace_format="simple")
    assert [e.get("dropped", False) for e in simple if e["type"] == "tool_call"] == [True, True, False]
