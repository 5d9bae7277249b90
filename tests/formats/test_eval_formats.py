"""The evaluation formats mcpreel writes (issue 38): the Hub's Session Traces Format (``sts``) and Harbor's
ATIF (``atif``). Each writer is held to its format's own definition (ATIF: the JSON schema of Harbor's
reference models, ``tests/fixtures/eval/atif.schema.json``, plus the rules those models check in code; STS:
the required members the Hub's page documents), keeps every tool call and result of random sessions of both
eras (a property test), and writes real recordings of tasks, listen streams and multi-round-trip requests
as one step/call each."""

from __future__ import annotations

import json
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.convert import convert, write_session
from mcpreel.formats import atif, open_session, sts
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.operations.facts import META_PROTOCOL_VERSION
from mcpreel.redact import Redactor

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
ATIF_SCHEMA = json.loads((FIXTURES / "atif.schema.json").read_text())


# -- the formats' own definitions ---------------------------------------------------------------------


def check_atif(doc: dict[str, Any]) -> None:
    """ATIF as Harbor's reference models accept it: the schema, then what the models check in code."""
    jsonschema.validate(doc, ATIF_SCHEMA)
    assert doc["schema_version"] == atif.SCHEMA_VERSION
    assert isinstance(doc["session_id"], str) and doc["session_id"]  # required up to v1.6
    assert [s["step_id"] for s in doc["steps"]] == list(range(1, len(doc["steps"]) + 1))
    for step in doc["steps"]:
        if "timestamp" in step:
            datetime.fromisoformat(step["timestamp"].replace("Z", "+00:00"))
        if step["source"] != "agent":
            assert not {"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"} & set(step)
        calls = {c["tool_call_id"] for c in step.get("tool_calls") or ()}
        for result in (step.get("observation") or {}).get("results", ()):
            assert result.get("source_call_id") is None or result["source_call_id"] in calls


STS_ROLES = {"user", "assistant", "system", "tool"}


def check_sts(lines: list[dict[str, Any]]) -> None:
    """STS as the Hub's page documents it: a session header, then message envelopes."""
    head, *messages = lines
    assert head["type"] == "session" and isinstance(head["harness"], str) and isinstance(head["id"], str)
    assert head["harness"] == sts.HARNESS
    assert "name" not in head or isinstance(head["name"], str)
    called: set[str] = set()
    for line in messages:
        assert line["type"] == "message" and set(line) == {"type", "message"}
        m = line["message"]
        assert m["role"] in STS_ROLES and isinstance(m["content"], str)
        assert set(m) <= {"role", "content", "reasoningContent", "toolCalls", "toolCallId", "timestamp", "model"}
        if "timestamp" in m:
            assert isinstance(m["timestamp"], int)
        for call in m.get("toolCalls", ()):
            assert m["role"] == "assistant"
            assert isinstance(call["id"], str) and isinstance(call["function"]["name"], str)
            assert isinstance(json.loads(call["function"]["arguments"]), dict)  # a JSON *string*
            called.add(call["id"])
        if "toolCallId" in m:
            assert m["role"] == "tool" and m["toolCallId"] in called


def write(fmt: str, session: Session, **options: Any) -> Any:
    """What ``convert`` writes (``write_session``: the redaction a shared format gets), parsed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        write_session(session, out, fmt, writer_options=options)
        data = out.read_bytes()
    if fmt == "sts":
        return [json.loads(line) for line in data.splitlines()]
    return json.loads(data)


# -- random sessions of both eras ---------------------------------------------------------------------

texts = st.text(max_size=10)
json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), texts),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                           max_leaves=6)
outcomes = st.one_of(
    st.builds(lambda t: {"result": {"content": [{"type": "text", "text": t}]}}, texts),
    st.builds(lambda t: {"result": {"content": [{"type": "text", "text": t}], "isError": True}}, texts),
    st.builds(lambda v: {"result": {"content": [], "structuredContent": {"v": v}}}, json_values),
    st.builds(lambda c, m: {"error": {"code": c, "message": m}}, st.integers(-32700, -32000), texts),
    st.just(None),  # never answered
)
calls = st.lists(st.tuples(st.sampled_from(["echo", "add", "search"]),
                           st.dictionaries(st.text(max_size=6), json_values, max_size=3), outcomes), max_size=6)


def random_session(era: str, plan: list[tuple[str, dict[str, Any], dict[str, Any] | None]]) -> Session:
    t = 1_700_000_000_000
    msgs: list[Message] = []

    def send(d: str, raw: dict[str, Any]) -> None:
        nonlocal t
        t += 3
        msgs.append(Message(d, {"jsonrpc": "2.0", **raw}, t))

    meta: dict[str, Any] = {}
    if era == "legacy":
        send("in", {"id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                                                                 "clientInfo": {"name": "prop", "version": "1"}}})
        send("out", {"id": 0, "result": {"protocolVersion": "2025-11-25", "serverInfo": {"name": "srv"}}})
        send("in", {"method": "notifications/initialized"})
    else:
        meta = {"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}
        send("in", {"id": 0, "method": "server/discover", "params": dict(meta)})
        send("out", {"id": 0, "result": {"supportedVersions": ["2026-07-28"]}})
    for i, (tool, args, outcome) in enumerate(plan, start=1):
        send("in", {"id": i, "method": "tools/call", "params": {"name": tool, "arguments": args, **meta}})
        if outcome is not None:
            send("out", {"id": i, **outcome})
    return Session(SessionInfo(id=f"prop-{era}", transport="stdio"), msgs)


def expected_calls(session: Session) -> list[tuple[str, Any, dict[str, Any] | None]]:
    """Every tools/call of the session with its answer, redacted as the writers redact (by default)."""
    red = Redactor()
    answers = {m.raw["id"]: red.value(m.raw) for m in session if m.dir == "out" and "id" in m.raw}
    return [(m.raw["params"]["name"], red.value(m.raw["params"]["arguments"]), answers.get(m.raw["id"]))
            for m in session if m.raw.get("method") == "tools/call"]


def answer_words(answer: dict[str, Any] | None) -> list[str]:
    """What a result's text must show: its text blocks, or the error's message (and code)."""
    if answer is None:
        return ["[unanswered]"]
    if "error" in answer:
        return [f"[error {answer['error']['code']}]", answer["error"]["message"]]
    result = answer["result"]
    words = [b["text"] for b in result["content"]]
    if result.get("isError"):
        words.append("[isError]")
    if "structuredContent" in result and not result["content"]:
        words.append(json.dumps(result["structuredContent"], separators=(",", ":"), ensure_ascii=False))
    return words


@pytest.mark.parametrize("era", ["legacy", "modern"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(plan=calls)
def test_every_tool_call_and_result_survives_sts_and_atif(era, plan):
    session = random_session(era, plan)
    expected = expected_calls(session)

    lines = write("sts", session)
    check_sts(lines)
    messages = [line["message"] for line in lines[1:]]
    sts_calls = [m for m in messages if m.get("toolCalls")]
    assert len(sts_calls) == len(expected)
    for m, (tool, args, answer) in zip(sts_calls, expected, strict=True):
        (call,) = m["toolCalls"]
        assert call["function"]["name"] == tool and json.loads(call["function"]["arguments"]) == args
        (result,) = [r for r in messages if r.get("toolCallId") == call["id"]]
        for word in answer_words(answer):
            assert word in result["content"]

    doc = write("atif", session)
    check_atif(doc)
    steps = [s for s in doc["steps"] if s.get("tool_calls")]
    assert len(steps) == len(expected)
    for step, (tool, args, answer) in zip(steps, expected, strict=True):
        (call,) = step["tool_calls"]
        assert call["function_name"] == tool and call["arguments"] == args
        (result,) = step["observation"]["results"]
        assert result["source_call_id"] == call["tool_call_id"]
        for word in answer_words(answer):
            assert word in result["content"]
        if answer is None:
            assert "answer" not in step["extra"]["mcp"] and step["extra"]["mcp"]["status"] == "unanswered"
        else:
            answer = {k: v for k, v in answer.items() if k != "jsonrpc"}
            assert {k: v for k, v in step["extra"]["mcp"]["answer"].items() if k != "jsonrpc"} == answer


# -- what is shared is redacted ------------------------------------------------------------------------


SECRET = "sk-live-abcdefghijklmnopqrstuvwx1234567890"


def secret_session() -> Session:
    msgs = [Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "login", "arguments": {"api_key": SECRET, "user": "ada"}}}, 1),
            Message("out", {"jsonrpc": "2.0", "id": 1,
                            "result": {"content": [{"type": "text", "text": f"Authorization: Bearer {SECRET}"}]}}, 2)]
    return Session(SessionInfo(id="s", command=["server", "--token", SECRET]), msgs)


@pytest.mark.parametrize("fmt", ["sts", "atif"])
def test_shared_formats_are_redacted_by_default(fmt):
    shown = json.dumps(write(fmt, secret_session()))
    assert SECRET not in shown and "REDACTED" in shown and "ada" in shown
    assert SECRET in json.dumps(write(fmt, secret_session(), redact=False))  # a library caller may opt out


# -- real recordings: tools, tasks, listen streams, multi-round-trip requests ---------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_recorded_sessions_convert_valid(recordings, tmp_path, era):
    path = recordings[era]
    seen = recordings["seen"][era]
    out_sts, out_atif = tmp_path / "s.sts.jsonl", tmp_path / "s.atif.json"
    assert convert(path, out_sts).to == "sts"  # the names choose the formats
    assert convert(path, out_atif).to == "atif"
    assert oct(out_sts.stat().st_mode & 0o777) == "0o600"
    lines = [json.loads(x) for x in out_sts.read_text().splitlines()]
    check_sts(lines)
    doc = json.loads(out_atif.read_text())
    check_atif(doc)
    tools = sorted({c["function"]["name"] for line in lines[1:] for c in line["message"].get("toolCalls", ())})
    assert tools == sorted({"echo", "slow", "ask", "fail"})
    assert sorted(d["function"]["name"] for d in doc["agent"]["tool_definitions"]) == seen["tools"]
    assert lines[0]["mcpreel"]["tools"] == seen["tools"]
    by_tool = {s["tool_calls"][0]["function_name"]: s for s in doc["steps"] if s.get("tool_calls")}
    fail = by_tool["fail"]
    assert fail["observation"]["results"][0]["content"].startswith("[isError]")
    assert fail["extra"]["mcp"]["status"] == "isError"
    assert by_tool["slow"]["extra"]["mcp"]["notifications"] == ["notifications/progress"] * 3
    if era == "legacy":  # sampling works in the handshake era: the server's request nested under the call
        assert by_tool["ask"]["extra"]["mcp"]["server_requests"] == ["sampling/createMessage"]
    prompt = [s for s in doc["steps"] if s["message"] == "prompts/get no-such-prompt"]
    assert prompt and prompt[0]["observation"]["results"][0]["content"].startswith("[error ")
    assert doc["agent"]["extra"]["server"]["name"] == "report-peer"


@pytest.fixture(scope="module")
def operation_reels(tmp_path_factory, everything_js):
    from tests.peers.operations_sessions import listen_session, mrtr_session, task_session

    out = tmp_path_factory.mktemp("eval-ops")
    return {"task": task_session(out / "task.jsonl"), "listen": listen_session(out / "listen.jsonl"),
            "mrtr": mrtr_session(out / "mrtr.jsonl")}


def test_tasks_listen_streams_and_rounds_are_one_step_each(operation_reels):
    task = write("atif", open_session(operation_reels["task"].reel)[0])
    check_atif(task)
    (step,) = [s for s in task["steps"] if s["extra"]["mcp"]["kind"] == "task"]
    mcp = step["extra"]["mcp"]
    assert step["tool_calls"] and mcp["polls"] >= 1 and mcp["task_statuses"][-1] == "completed"
    assert not step["observation"]["results"][0]["content"].startswith("[")  # the task's result, not a poll
    assert not [s for s in task["steps"] if s["message"].startswith("tasks/")]  # polls are no steps of their own

    listen = write("atif", open_session(operation_reels["listen"].reel)[0])
    check_atif(listen)
    (stream,) = [s for s in listen["steps"] if s["extra"]["mcp"]["kind"] == "listen"]
    assert stream["message"] == "subscriptions/listen" and stream["extra"]["mcp"]["notifications"]

    mrtr = write("atif", open_session(operation_reels["mrtr"].reel)[0])
    check_atif(mrtr)
    (rounds,) = [s for s in mrtr["steps"] if s["extra"]["mcp"]["kind"] == "multi-round-trip"]
    assert rounds["extra"]["mcp"]["rounds"] >= 2 and rounds["tool_calls"]
    for reel in operation_reels.values():
        check_sts(write("sts", open_session(reel.reel)[0]))


def test_an_empty_session_is_still_a_valid_trajectory():
    doc = write("atif", Session(SessionInfo(), []))
    check_atif(doc)
    assert doc["steps"][0]["source"] == "system"
    lines = write("sts", Session(SessionInfo(), []))
    check_sts(lines)
    assert len(lines) == 1


def test_convert_names_what_sts_cannot_hold(recordings, tmp_path):
    result = convert(recordings["legacy"], tmp_path / "x.sts.jsonl")
    line = result.lost_line() or ""
    assert "notifications of operations" in line and "written as system messages" in line
