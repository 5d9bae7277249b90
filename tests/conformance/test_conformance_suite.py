"""The official MCP conformance suite judges the recording proxy and the mock (issue 25).

One run per requirement set and server (module-scoped: the suite, the server, the proxy and the mock start
once each): the 2025-11-25 scenarios (suite 0.1.16) against server-everything and against the official
SDK's MCPServer, the 2026-07-28 requirements (suite 0.2.0-alpha.12) against the MCPServer. Through ``mcpreel record`` and against ``mcpreel
serve`` of that recording every scenario must get the verdict it gets directly, but for the exceptions
written down in :data:`tests.conformance.suite.EXCEPTIONS`, each with its reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.suite import ERAS, EXCEPTIONS, Judgement, judge, missing_peers, parse_summary

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module", params=sorted(ERAS))
def judged(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Judgement:
    """One run of the suite per requirement set and server (direct, recorded, served), for the module."""
    era = ERAS[request.param]
    why = missing_peers(era)
    if why is not None:
        pytest.skip(why)
    return judge(era, tmp_path_factory.mktemp(f"conformance-{era.name}-{era.server}"))


def _shown(differences: dict) -> str:
    return "; ".join(f"{name}: direct {a.describe() if a else 'absent'}, here {b.describe() if b else 'absent'}"
                     for name, (a, b) in differences.items())


def test_the_summary_is_read_line_by_line() -> None:
    text = ("=== Running scenario: x ===\n✓ ignored-before-summary: 1 passed, 0 failed\n=== SUMMARY ===\n"
            "✓ tools-list: 4 passed, 0 failed\n✗ server-stateless: 25 passed, 2 failed\n\nTotal: 29 passed, 2 failed\n"
            "Not scored for 2026-07-28: 1 scenario(s) run, 1 failing.\n  ✗ tasks-lifecycle (extension)\n")
    got = parse_summary(text)
    assert list(got) == ["tools-list", "server-stateless"]
    assert got["tools-list"].passed and (got["tools-list"].checks_passed, got["tools-list"].checks_failed) == (4, 0)
    assert not got["server-stateless"].passed and got["server-stateless"].checks_failed == 2
    with pytest.raises(ValueError, match="SUMMARY"):
        parse_summary("Error: fs.globSync is not a function\n")


def test_the_suite_ran_every_scenario_in_each_leg(judged: Judgement) -> None:
    direct = judged.scenarios()
    assert len(direct) >= 25, judged.outputs["direct"][-2000:]
    for leg in ("recorded", "served"):
        assert list(judged.runs[leg]) == direct, leg


@pytest.mark.parametrize("leg", ["recorded", "served"])
def test_each_scenario_gets_its_direct_verdict(judged: Judgement, leg: str) -> None:
    era = judged.era.key
    differences = judged.differences(leg)
    unexplained = {k: v for k, v in differences.items() if (era, k) not in EXCEPTIONS}
    assert not unexplained, f"{era} {leg}: {_shown(unexplained)}\nserve log:\n{judged.serve_log[-3000:]}"


@pytest.mark.parametrize("leg", ["recorded", "served"])
def test_each_written_exception_is_still_seen(judged: Judgement, leg: str) -> None:
    """An exception that no longer happens is taken out of the list (it would hide a regression)."""
    era = judged.era.key
    stale = [s for (e, s) in EXCEPTIONS if e == era and s not in judged.differences(leg)]
    assert not stale, f"{era} {leg}: excepted but same verdict as direct: {stale}"


def test_the_mock_answered_every_request_from_the_recording(judged: Judgement) -> None:
    assert judged.served_misses() == 0, judged.serve_log[-3000:]



def test_the_reel_becomes_the_validators_wire_trace_and_back(judged: Judgement, tmp_path: Path) -> None:
    """The recording the suite was judged through, written as an mcp-conformance (mcp-trace-validator) trace:
    every message, direction, order and HTTP status reads back (the validator itself is a Rust crate that is
    not installed here: the trace is checked against our reader of its format)."""
    from mcpreel._infra import jsonio
    from mcpreel.convert import convert
    from mcpreel.formats import open_session
    from mcpreel.model import Kind

    assert judged.reel is not None
    out = tmp_path / "trace.jsonl"
    result = convert(judged.reel, out, to="mcp-conformance")
    assert result.to == "mcp-conformance"
    original, _ = open_session(judged.reel, "reel")
    back, detection = open_session(out, "auto")
    assert detection.format == "mcp-conformance"

    def wire(session):
        return [(m.dir, m.raw) for m in session if m.kind == Kind.MESSAGE]

    def statuses(session):  # each HTTP answer's status, once per exchange, in order
        seen, out = set(), []
        for m in session:
            ctx = m.ctx or {}
            if m.dir == "out" and "exchange" in ctx and "status" in ctx and ctx["exchange"] not in seen:
                seen.add(ctx["exchange"])
                out.append(ctx["status"])
        return out

    original, back = original.materialize(), back.materialize()
    sent = wire(original)
    assert len(sent) > 50 and wire(back) == sent
    # the trace says each answer's status in an http event before its messages (read back, concurrent
    # exchanges cannot be told apart: the format has no exchange id, so the events themselves are compared)
    events = [jsonio.loads(line) for line in out.read_bytes().splitlines()]
    written = [e["status"] for e in events if e["kind"] == "http" and e["direction"] == "server-to-client"]
    assert written == statuses(original) and len(written) > 20
