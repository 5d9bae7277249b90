"""Issue 34, judged by meaning: lists by key, refusals then and now, the server's identity as a note,
rules scoped to a method and tool, masks on part of a text, and the rule replay suggests."""

from __future__ import annotations

import asyncio
import re

from mcpreel.compare.normalize import IgnorePath
from mcpreel.compare.rules import CompareRule, CompareRules
from mcpreel.operations.cassette import Turn
from mcpreel.render.replay import junit_case, result_lines
from mcpreel.replay.judge import _judge
from mcpreel.replay.results import ReplayOptions, RequestResult, _Refusal

from .helpers import INIT, INIT_OK, call, err, handshake, note, replay_against_mock, req, res, session, text

TOOLS = [{"name": "add", "description": "adds", "inputSchema": {"type": "object"}},
         {"name": "echo", "description": "echoes", "inputSchema": {"type": "object"}},
         {"name": "gone", "description": "soon gone", "inputSchema": {"type": "object"}}]


def _listing(method: str, member: str, items: list) -> tuple:
    return ("in", req(2, method)), ("out", res(2, {member: items}))


def _replay(recorded, served, options: ReplayOptions | None = None):
    report, _ = asyncio.run(replay_against_mock(recorded, served, options=options))
    return report


def test_a_reordered_list_is_the_same_in_every_list_result():
    for method, member, key in [("tools/list", "tools", "name"), ("prompts/list", "prompts", "name"),
                                ("resources/list", "resources", "uri"),
                                ("resources/templates/list", "resourceTemplates", "uriTemplate")]:
        items = [{key: f"x://{i}", "description": f"item {i}"} for i in range(4)]
        recorded = session(*handshake(), *_listing(method, member, items))
        served = session(*handshake(), *_listing(method, member, list(reversed(items))))
        report = _replay(recorded, served)
        assert [r.status for r in report.results] == ["same", "same"], (method, report.results[1].diff)


def test_a_list_names_what_was_added_removed_and_changed_by_key():
    new = [dict(TOOLS[1]), {**TOOLS[0], "description": "adds two numbers"},
           {"name": "get-annotated-message", "description": "new", "inputSchema": {"type": "object"}}]
    report = _replay(session(*handshake(), *_listing("tools/list", "tools", TOOLS)),
                     session(*handshake(), *_listing("tools/list", "tools", new)))
    listed = report.results[1]
    assert listed.status == "changed"
    assert [(d.path, d.kind) for d in listed.diff] == [
        ("$.result.tools[name=add].description", "changed"),
        ("$.result.tools[name=gone]", "removed"),
        ("$.result.tools[name=get-annotated-message]", "added"),
    ]
    assert listed.diff[0].describe() == '$.result.tools[name=add].description: "adds" -> "adds two numbers"'


def test_a_list_item_path_can_be_ignored_by_key_or_by_wildcard():
    new = [{**TOOLS[0], "description": "adds two numbers"}, TOOLS[1], {**TOOLS[2], "description": "still here"}]
    recorded = session(*handshake(), *_listing("tools/list", "tools", TOOLS))
    served = session(*handshake(), *_listing("tools/list", "tools", new))
    keyed = _replay(recorded, served, ReplayOptions(timeout=2, ignore_paths=[
        IgnorePath("$.result.tools[name=add].description")]))
    assert [d.path for d in keyed.results[1].diff] == ["$.result.tools[name=gone].description"]
    wild = _replay(recorded, served, ReplayOptions(timeout=2, ignore_paths=[IgnorePath("$.result.tools[*].description")]))
    assert wild.results[1].status == "same"
    quoted = _replay(recorded, served, ReplayOptions(timeout=2, ignore_paths=[
        IgnorePath('$.result.tools[name="add"].description'), IgnorePath("$..tools[name=gone]")]))
    assert quoted.results[1].status == "same"


def _discover(id_=1):
    return req(id_, "server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})


def test_a_refused_probe_is_refused_then_and_now_whatever_its_code():
    """The Python SDK 1.x refuses server/discover with -32602, later ones with -32601: no difference."""
    def probe_then_handshake(code: int, message: str):
        return session(("in", _discover()), ("out", err(1, code, message)),
                       ("in", {**INIT, "id": 2}), ("out", {**INIT_OK, "id": 2}), ("in", note("notifications/initialized")),
                       ("in", call(3, "echo", {})), ("out", res(3, text("x"))))

    recorded = probe_then_handshake(-32602, "Invalid request parameters")
    served = probe_then_handshake(-32601, "Method not found")
    report = _replay(recorded, served)
    assert [r.status for r in report.results] == ["same", "same", "same"]
    assert report.exit_code == 0
    probe = report.results[0]
    assert probe.notes == ["refused then and now (JSON-RPC error -32602 -> JSON-RPC error -32601): a refused "
                           "server/discover is plumbing, not a difference"]
    assert any(n.startswith("#1 server/discover: refused then and now") for n in report.notes)
    assert probe.to_json()["notes"] == probe.notes


def test_an_error_code_that_changed_on_a_tool_call_is_still_a_change():
    recorded = session(*handshake(), ("in", call(2, "boom", {})), ("out", err(2, -32602, "bad")))
    served = session(*handshake(), ("in", call(2, "boom", {})), ("out", err(2, -32601, "gone")))
    boom = _replay(recorded, served).results[1]
    assert boom.status == "changed" and "$.error.code" in {d.path for d in boom.diff}


def _turn(method: str, response: dict, rid=1) -> Turn:
    request = req(rid, method)
    return Turn(request, request, 0, response=response)


def _judged(turn: Turn, answer, error=None) -> RequestResult:
    result = RequestResult(1, turn.method, None, "error", turn.request)
    _judge(result, turn, answer, error, ReplayOptions())
    return result


def test_an_http_refusal_now_of_a_probe_refused_then_is_the_same():
    recorded = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request: Server not initialized"}}
    refusal = _Refusal('HTTP 400: {"jsonrpc":"2.0","error":{"code":-32000}}', 400)
    probe = _judged(_turn("server/discover", recorded), None, refusal)
    assert probe.status == "same" and "(JSON-RPC error -32000 -> HTTP 400)" in probe.notes[0]
    # a request of any method the transport refused then (an error tied to no id) and refuses now
    assert _judged(_turn("tools/call", recorded), None, _Refusal("HTTP 404", 404)).status == "same"
    # not a refusal: a timeout, a 5xx, or an answer where a refusal was recorded
    assert _judged(_turn("server/discover", recorded), None, "no response within 2 s").status == "error"
    assert _judged(_turn("server/discover", recorded), None, _Refusal("HTTP 502", 502)).status == "error"
    answered = _judged(_turn("server/discover", recorded), res(1, {"supportedVersions": ["2026-07-28"]}))
    assert answered.status == "changed" and not answered.notes
    # a tools/call refused with its own id then is behaviour: an HTTP refusal now is no answer
    own = _judged(_turn("tools/call", err(1, -32602, "bad")), None, _Refusal("HTTP 400", 400))
    assert own.status == "error"


def test_the_servers_identity_is_a_note_never_a_difference():
    served_init = {**INIT_OK, "result": {**INIT_OK["result"], "serverInfo": {"name": "s", "version": "2.0.0"}}}
    recorded = session(*handshake(), ("in", call(2, "echo", {})), ("out", res(2, text("x"))))
    served = session(("in", INIT), ("out", served_init), ("in", note("notifications/initialized")),
                     ("in", call(2, "echo", {})), ("out", res(2, text("x"))))
    report = _replay(recorded, served)
    assert [r.status for r in report.results] == ["same", "same"] and report.exit_code == 0
    assert report.results[0].notes == ["the server names itself s 2.0.0 (recorded: s 1); its identity is "
                                       "information, not a difference"]
    assert "#1 initialize: the server names itself s 2.0.0 (recorded: s 1)" in report.notes[-1]
    # what else the answer says still counts
    served_caps = {**INIT_OK, "result": {**served_init["result"], "capabilities": {"tools": {}, "prompts": {}}}}
    served = session(("in", INIT), ("out", served_caps), ("in", note("notifications/initialized")),
                     ("in", call(2, "echo", {})), ("out", res(2, text("x"))))
    init = _replay(recorded, served).results[0]
    assert init.status == "changed" and [d.path for d in init.diff] == ["$.result.capabilities.prompts"]


def _clock(at: str, name: str = "now", extra: str = "") -> dict:
    return res(2, text(f'{{"datetime": "{at}", "zone": "UTC"{extra}}}'))


def test_rules_are_scoped_by_method_and_tool_and_mask_part_of_a_text():
    recorded = session(*handshake(), ("in", call(2, "now", {})), ("out", _clock("2026-01-01T10:00:00Z")),
                       ("in", call(3, "log", {})), ("out", res(3, text("commit <Commit at 0x7f10aa> by ann at 10:00"))))
    served = session(*handshake(), ("in", call(2, "now", {})), ("out", _clock("2026-03-04T11:12:13Z")),
                     ("in", call(3, "log", {})), ("out", res(3, text("commit <Commit at 0x7f99bb> by bob at 10:00"))))
    base = _replay(recorded, served)
    assert [r.status for r in base.results] == ["same", "changed", "changed"]
    rules = CompareRules([
        CompareRule("$..datetime", method="tools/call", tool="now", mask=r"\d{4}-\d{2}-\d{2}T[\d:]+Z"),
        CompareRule("$.result.content[0].text", method="tools/call", tool="lo*", mask=r"0x[0-9a-f]+"),
    ])
    report = _replay(recorded, served, ReplayOptions(timeout=2, rules=rules))
    assert [r.status for r in report.results] == ["same", "same", "changed"]
    # the mask hides the address only: the author's change still shows, as masked text
    (log_diff,) = report.results[2].diff
    assert (log_diff.recorded, log_diff.new) == ("commit <Commit at <masked>> by ann at 10:00",
                                                 "commit <Commit at <masked>> by bob at 10:00")
    # scoped: the same rules for another tool do nothing
    other = CompareRules([CompareRule("$..datetime", tool="later", mask=r".+")])
    assert _replay(recorded, served, ReplayOptions(timeout=2, rules=other)).results[1].status == "changed"
    # without a mask the whole value goes, on every tool when no tool is named
    whole = CompareRules([CompareRule("$..datetime"), CompareRule("$.result.content", method="tools/call", tool="log")])
    assert [r.status for r in _replay(recorded, served, ReplayOptions(timeout=2, rules=whole)).results] == ["same"] * 3


def test_a_volatile_difference_suggests_the_rule_that_absorbs_it():
    recorded = session(*handshake(), ("in", call(2, "now", {})), ("out", _clock("2026-01-01T10:00:00.120Z")),
                       ("in", call(3, "id", {})), ("out", res(3, text("made 123e4567-e89b-12d3-a456-426614174000"))),
                       ("in", call(4, "sum", {})), ("out", res(4, text("3"))))
    served = session(*handshake(), ("in", call(2, "now", {})), ("out", _clock("2026-01-02T09:59:58.999Z")),
                     ("in", call(3, "id", {})), ("out", res(3, text("made 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d"))),
                     ("in", call(4, "sum", {})), ("out", res(4, text("4"))))
    report = _replay(recorded, served)
    now, ident, total = report.results[1:]
    (clock,) = now.suggestions
    assert (clock.method, clock.tool, clock.path, clock.origin) == ("tools/call", "now",
                                                                     "$.result.content[0].text.datetime", "a timestamp")
    (uuid,) = ident.suggestions
    assert uuid.origin == "a UUID" and uuid.path == "$.result.content[0].text"
    assert total.suggestions == []  # 3 -> 4 is a change, not noise
    lines = "\n".join(result_lines(now))
    assert "looks volatile (a timestamp); to leave it out, add to a --compare-rules file under rules:" in lines
    assert '- {"method": "tools/call", "tool": "now", "path": "$.result.content[0].text.datetime", "mask": ' in lines
    assert now.to_json()["suggested_rules"] == [clock.to_entry()]
    assert "looks volatile (a timestamp)" in (junit_case(now, "s").details or "")
    # the suggested rules, applied, leave only the real change
    again = _replay(recorded, served, ReplayOptions(timeout=2, rules=CompareRules([clock, uuid])))
    assert [r.status for r in again.results] == ["same", "same", "same", "changed"]


def test_a_mask_reaches_json_inside_a_resource_text():
    def read(at: str) -> dict:
        return res(2, {"contents": [{"uri": "demo://r/1", "mimeType": "application/json",
                                     "text": f'{{"createdAt": "{at}", "n": 1}}'}]})

    recorded = session(*handshake(), ("in", req(2, "resources/read", {"uri": "demo://r/1"})), ("out", read("2026-01-01T00:00:00Z")))
    served = session(*handshake(), ("in", req(2, "resources/read", {"uri": "demo://r/1"})), ("out", read("2026-05-05T05:05:05Z")))
    base = _replay(recorded, served).results[1]
    assert [d.path for d in base.diff] == ["$.result.contents[uri=demo://r/1].text.createdAt"]  # keyed by uri
    rules = CompareRules([CompareRule("$..createdAt", method="resources/read", tool="demo://r/*")])
    assert _replay(recorded, served, ReplayOptions(timeout=2, rules=rules)).results[1].status == "same"
    assert re.search("a timestamp", base.suggestions[0].origin)


def test_a_recorded_refused_probe_is_left_out_when_the_handshake_is_said_in_the_2026_era():
    """--era modern: mcpreel's own server/discover opens the session; the recording's refused probe is part of
    the handshake translated, not a request to judge (the live server now answers it)."""
    recorded = session(("in", _discover()), ("out", err(1, -32601, "Method not found")),
                       ("in", {**INIT, "id": 2}), ("out", {**INIT_OK, "id": 2}), ("in", note("notifications/initialized")),
                       ("in", call(3, "echo", {})), ("out", res(3, text("x"))))
    served = session(*handshake(), ("in", call(3, "echo", {})), ("out", res(3, text("x"))))
    report = _replay(recorded, served, ReplayOptions(timeout=2, era="modern"))
    assert [(r.method, r.status) for r in report.results] == [("tools/call", "same")]
    assert report.handshake is not None and "server/discover" in report.handshake


def test_the_servers_identity_in_a_2026_discover_result_is_a_note_too():
    key = "io.modelcontextprotocol/serverInfo"

    def discovered(version: str) -> dict:
        return res(1, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                       "_meta": {key: {"name": "srv", "version": version}}})

    probe = _judged(_turn("server/discover", discovered("1.0")), discovered("1.1"))
    assert probe.status == "same" and probe.notes == [
        "the server names itself srv 1.1 (recorded: srv 1.0); its identity is information, not a difference"]
    assert _judged(_turn("server/discover", discovered("1.0")), discovered("1.0")).notes == []


def test_a_tool_that_spells_out_the_specs_defaults_is_the_same_tool():
    from mcpreel.compare.normalize import comparable

    recorded = {"result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}}
    now = {"result": {"tools": [{"name": "a", "inputSchema": {"type": "object"},
                                 "execution": {"taskSupport": "forbidden"},
                                 "annotations": {"destructiveHint": True}}]}}
    assert comparable(recorded) == comparable(now)
    changed = {"result": {"tools": [{"name": "a", "inputSchema": {"type": "object"},
                                     "execution": {"taskSupport": "optional"}}]}}
    assert comparable(recorded) != comparable(changed)
