"""Noise, learned not guessed: merging samples (stable vs varying paths, flaky vs changed), masks derived
from what varied, the noise file's round trip and its errors, and the exit codes of the verdicts."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.compare.jsondiff import Difference
from mcpreel.compare.normalize import MASK
from mcpreel.errors import InputError
from mcpreel.replay.noise import (
    BASELINE,
    TARGET,
    LearnedNoise,
    NoiseEntry,
    SampleBook,
    derive_mask,
    load_noise,
    noise_document,
    parse_noise,
    server_name_of,
)
from mcpreel.replay.results import ReplayReport, RequestResult

TEXT = "$.result.content[0].text"


def _result(index: int, diffs: list[tuple[str, Any, Any]] | None = None, *, status: str | None = None,
            tool: str = "now", session: int | None = None) -> RequestResult:
    diff = [Difference(p, "changed", a, b) for p, a, b in diffs or []]
    r = RequestResult(index, "tools/call", tool, status or ("changed" if diff else "same"),
                      {"jsonrpc": "2.0", "id": index, "method": "tools/call"}, diff=diff, session=session)
    if r.status == "error":
        r.error = "no response within 1 s"
    return r


def _book(runs: dict[str, list[Any]], *, learn: bool = False) -> SampleBook:
    """A book of the earlier runs: per side, each run a result (a run of one request) or a list of results."""
    book = SampleBook(learn=learn)
    for side in (TARGET, BASELINE):
        for run in runs.get(side, []):
            book.started(side)
            for r in run if isinstance(run, list) else [run]:
                book.add(side, r)
    return book


def test_a_path_that_varies_between_target_runs_is_flaky_never_changed() -> None:
    book = _book({TARGET: [_result(3, [(TEXT, "t0", "t1")]), _result(3, [(TEXT, "t0", "t2")])]})
    final = _result(3, [(TEXT, "t0", "t3")])
    book.settle(final)
    assert final.status == "flaky"
    assert final.noise == [{"path": TEXT, "varied": 3, "samples": 3}]


def test_a_path_stable_in_every_target_run_and_different_from_the_recording_is_changed() -> None:
    book = _book({TARGET: [_result(3, [(TEXT, "5", "6")]), _result(3, [(TEXT, "5", "6")])]})
    final = _result(3, [(TEXT, "5", "6")])
    book.settle(final)
    assert final.status == "changed" and [d.path for d in final.diff] == [TEXT] and final.noise == []


def test_a_changed_path_next_to_a_varying_one_is_changed_and_only_the_change_is_listed() -> None:
    stamp = "$.result.structuredContent.at"
    book = _book({TARGET: [_result(4, [(TEXT, "5", "6"), (stamp, "a", "b")]),
                           _result(4, [(TEXT, "5", "6"), (stamp, "a", "c")])]})
    final = _result(4, [(TEXT, "5", "6"), (stamp, "a", "d")])
    book.settle(final)
    assert final.status == "changed"
    assert [d.path for d in final.diff] == [TEXT] and [n["path"] for n in final.noise] == [stamp]


def test_a_value_the_same_in_every_sample_is_same_and_an_early_run_that_varied_makes_it_flaky() -> None:
    book = _book({TARGET: [[_result(1), _result(2, [(TEXT, "a", "b")])]]})
    same, flaky = _result(1), _result(2)
    book.settle(same)
    book.settle(flaky)
    assert same.status == "same" and flaky.status == "flaky"
    assert flaky.noise == [{"path": TEXT, "varied": 1, "samples": 2}]


def test_the_recording_is_one_baseline_sample_so_a_baseline_that_differs_from_it_is_noise() -> None:
    # the baseline server answers "b" where the recording holds "a": the old release varies by itself
    book = _book({BASELINE: [_result(2, [(TEXT, "a", "b")])]})
    final = _result(2, [(TEXT, "a", "b")])
    book.settle(final)
    assert final.status == "flaky"


def test_against_a_stable_baseline_a_stable_difference_is_changed() -> None:
    book = _book({TARGET: [_result(2, [(TEXT, "a", "z")])], BASELINE: [_result(2), _result(2)]})
    final = _result(2, [(TEXT, "a", "z")])
    book.settle(final)
    assert final.status == "changed" and book.runs == {TARGET: 2, BASELINE: 2}


def test_noise_seen_only_on_the_baseline_leaves_a_target_that_answered_as_recorded_same() -> None:
    book = _book({BASELINE: [_result(2, [(TEXT, "a", "b")])]})
    final = _result(2)
    book.settle(final)
    assert final.status == "same" and final.noise == []


def test_no_answer_in_some_runs_is_flaky_and_in_every_run_an_error() -> None:
    book = _book({TARGET: [[_result(5, status="error"), _result(6, status="error")]]})
    answered, unanswered = _result(5), _result(6, status="error")
    book.settle(answered)
    book.settle(unanswered)
    assert answered.status == "flaky" and any("no answer in 1 of 2 runs" in n for n in answered.notes)
    assert unanswered.status == "error"


def test_samples_are_aligned_by_session_and_number() -> None:
    book = _book({TARGET: [[_result(3, [(TEXT, "a", "b")], session=1), _result(3, [(TEXT, "a", "c")], session=2)]]})
    one, two = _result(3, [(TEXT, "a", "b")], session=1), _result(3, [(TEXT, "a", "b")], session=2)
    book.settle(one)
    book.settle(two)
    assert one.status == "changed" and two.status == "flaky"


def test_unrecorded_results_are_left_as_they_are() -> None:
    book = _book({TARGET: [_result(1, status="unrecorded")]})
    final = _result(1, status="unrecorded")
    book.settle(final)
    assert final.status == "unrecorded"


def test_learning_names_each_varying_path_with_how_often_a_mask_and_a_redacted_example() -> None:
    def now(i: int) -> str:
        return f"It is 2026-11-28T12:00:0{i}+00:00 here"

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    secret = "$.result.content[0].text.token"
    book = _book({TARGET: [[_result(1, [(TEXT, now(0), now(1))]), _result(2, [(secret, token, token[:-1] + "Z")], tool="login")],
                           [_result(1, [(TEXT, now(0), now(2))]), _result(2, [(secret, token, token[:-1] + "Y")], tool="login")]]},
                 learn=True)
    book.settle(_result(1, [(TEXT, now(0), now(3))]))
    book.settle(_result(2, [(secret, token, token[:-1] + "X")], tool="login"))
    learned = book.learned("clock")
    by_tool = {e.tool: e for e in learned.entries}
    clock = by_tool["now"]
    assert (clock.server, clock.method, clock.path, clock.varied, clock.samples) == ("clock", "tools/call", TEXT, 3, 3)
    assert clock.looks == "a timestamp" and clock.mask is not None
    assert re.sub(clock.mask, MASK, now(5)) == re.sub(clock.mask, MASK, now(7)) == f"It is {MASK} here"
    assert "ghp_" not in str(by_tool["login"].example)  # the example is redacted


@pytest.mark.parametrize(("values", "masked"), [
    (["It is 2026-11-28T12:00:01Z now", "It is 2026-11-28T13:10:41Z now"], f"It is {MASK} now"),
    (["made <T object at 0x7f12ab34cd56> for you", "made <T object at 0x7f99aa00bb11> for you"],
     f"made <T object at {MASK}> for you"),
    (["served by worker-17 in 3ms", "served by worker-4 in 12ms"], None),  # two places: not one token each
    (["job 12345 queued", "job 98 queued"], f"job {MASK} queued"),
    (["node k8s-a1b2c3 ready", "node k8s-ffe09d ready"], f"node {MASK} ready"),
])
def test_a_mask_is_derived_where_only_part_of_a_text_varies(values: list[str], masked: str | None) -> None:
    mask, looks = derive_mask(values, TEXT, "tools/call", "t")
    if masked is None:
        assert mask is None or len({re.sub(mask, MASK, v) for v in values}) == 1
        return
    assert mask is not None and looks
    assert {re.sub(mask, MASK, v) for v in values} == {masked}


def test_a_value_that_varies_whole_or_is_not_text_gets_no_mask() -> None:
    assert derive_mask(["apple pie", "cherry tart"]) == (None, None)
    assert derive_mask([3, 4]) == (None, None)
    assert derive_mask(["same", "same"]) == (None, None)


def test_a_derived_mask_keeps_a_change_outside_the_varying_part_visible() -> None:
    mask, _ = derive_mask(["job 12345 queued", "job 98 queued"])
    assert mask is not None
    assert re.sub(mask, MASK, "job 7 queued") != re.sub(mask, MASK, "job 7 failed")


def test_the_noise_file_round_trips_into_rules_for_the_recordings_server(tmp_path) -> None:
    learned = LearnedNoise("clock", {TARGET: 3, BASELINE: 0}, [
        NoiseEntry(TEXT, "tools/call", "now", "clock", r"\d{4}-\d{2}-\d{2}T[\d:]+Z", 3, 3, "a timestamp", "x"),
        NoiseEntry("$.result.content[0].text", "tools/call", "pick", "clock", None, 3, 3),
        NoiseEntry("$..requestId", None, None, "other-server", None, 2, 2),
    ])
    doc = noise_document(learned, recording="r.jsonl")
    assert doc["learned"] == {"server": "clock", "recording": "r.jsonl", "samples": {"target": 3, "baseline": 1}}
    path = tmp_path / "noise.json"
    path.write_text(__import__("json").dumps(doc))
    noise = load_noise(path)
    assert noise.entries == tuple(learned.entries) and noise.servers() == ["clock", "other-server"]
    rules = noise.rules_for("clock")
    assert len(rules) == 2 and len(noise.rules_for(None)) == 3 and len(noise.rules_for("nobody")) == 0
    view = {"result": {"content": [{"text": "at 2026-01-01T00:00:00Z"}]}}
    assert rules.apply(view, "tools/call", "now") == {"result": {"content": [{"text": f"at {MASK}"}]}}
    assert rules.apply(view, "tools/call", "pick") == {"result": {"content": [{}]}}
    assert rules.apply(view, "tools/call", "other") == view


@pytest.mark.parametrize(("text", "says"), [
    ("not json", "not a noise file"),
    ("[]", "a noise file is an object"),
    ('{"kind": "rules", "noise": []}', "is not 'mcpreel noise'"),
    ('{"version": 2, "noise": []}', "version 2"),
    ('{"noise": {}}', "noise is a list"),
    ('{"noise": [3]}', "entry 1: an entry is an object"),
    ('{"noise": [{"tool": "x"}]}', "entry 1: an entry needs a path"),
    ('{"noise": [{"path": "$.a", "colour": "red"}]}', "entry 1: unknown member"),
    ('{"noise": [{"path": "$.a"}, {"path": "$.a", "mask": "("}]}', "entry 2: mask '(' is not a regular expression"),
    ('{"noise": [{"path": "$.a", "mask": "x*"}]}', "matches the empty string"),
    ('{"noise": [{"path": "$[[["}]}', "entry 1: path"),
    ('{"noise": [{"path": "$.a", "varied": -1}]}', "varied is a count"),
    ('{"noise": [{"path": 7}]}', "path is a string"),
])
def test_a_bad_noise_file_is_one_line_naming_the_file_and_entry(tmp_path, text: str, says: str) -> None:
    path = tmp_path / "noise.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_noise(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and says in message and "\n" not in message, message


def test_a_missing_noise_file_is_one_line(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot read the noise file"):
        load_noise(tmp_path / "nope.json")


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["path", "mask", "tool", "method", "server", "varied", "samples", "noise",
                                          "version", "kind", "x"]) | st.text(max_size=5), inner, max_size=5),
                     max_leaves=20)
_entries = st.dictionaries(st.sampled_from(["path", "mask", "tool", "method", "server", "varied", "looks"]),
                           st.text(max_size=12) | st.integers(-2, 5) | st.none(), max_size=5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=_json | st.fixed_dictionaries({"noise": st.lists(_entries | _json, max_size=4)}))
def test_a_random_noise_document_is_read_or_refused_in_one_line_never_a_traceback(doc: Any) -> None:
    try:
        noise = parse_noise(doc, source="n.json")
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("n.json: ")
        return
    for server in [None, *noise.servers()]:
        noise.rules_for(server).apply({"result": {"a": "b"}}, "tools/call", "x")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200))
def test_random_bytes_as_a_noise_file_never_give_a_traceback(tmp_path, data: bytes) -> None:
    path = tmp_path / "n.json"
    path.write_bytes(data)
    try:
        load_noise(path)
    except InputError as exc:
        assert "\n" not in str(exc)


def test_the_server_is_named_by_its_initialize_answer_or_a_2026_answers_meta() -> None:
    class Msg:
        def __init__(self, member: dict) -> None:
            self.member = member

        def members(self) -> list[dict]:
            return [self.member]

    legacy = [Msg({"jsonrpc": "2.0", "id": 1, "method": "initialize"}),
              Msg({"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": {"name": "time"}}})]
    modern = [Msg({"jsonrpc": "2.0", "id": 1, "result": {
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "git", "version": "1"}}}})]
    assert server_name_of(legacy) == "time" and server_name_of(modern) == "git" and server_name_of([]) is None


def _report(*statuses: str, methods: tuple[str, ...] = ()) -> ReplayReport:
    report = ReplayReport("s.jsonl", "server", "stdio")
    for i, status in enumerate(statuses):
        method = methods[i] if i < len(methods) else "tools/call"
        report.results.append(RequestResult(i + 1, method, None, status, {}))
    return report


def test_exit_codes_fail_only_on_changed_and_error_flaky_when_asked() -> None:
    assert _report("same", "flaky").exit_code == 0
    assert _report("same", "flaky").exit_for(fail_on_flaky=True) == 1
    assert _report("same", "changed").exit_code == 1 and _report("error").exit_code == 1
    assert "1 flaky" in _report("same", "flaky").summary()


def test_a_recording_that_answered_nothing_beyond_the_handshake_exits_2_with_a_line_saying_so() -> None:
    report = _report("same", "unrecorded", "unrecorded", methods=("initialize",))
    assert report.nothing_answered and report.exit_code == 2
    assert "nothing was judged: the recording holds no answer" in report.summary()
    assert _report().exit_code == 2 and "nothing was replayed" in _report().summary()
    assert _report("same", "same", "unrecorded", methods=("initialize",)).exit_code == 0


def test_noise_learned_from_two_recordings_merges_by_place() -> None:
    one = LearnedNoise("clock", {TARGET: 3}, [NoiseEntry(TEXT, "tools/call", "now", "clock", "x+", 3, 3, "a", "e1")])
    two = LearnedNoise("clock", {TARGET: 2}, [NoiseEntry(TEXT, "tools/call", "now", "clock", "x+", 2, 2, "a", "e2"),
                                              NoiseEntry(TEXT, "tools/call", "pick", "clock", None, 1, 2)])
    merged = one.merged(two)
    by_tool = {e.tool: e for e in merged.entries}
    assert (by_tool["now"].varied, by_tool["now"].samples, by_tool["now"].mask) == (5, 5, "x+")
    assert by_tool["pick"].varied == 1 and merged.samples == {TARGET: 3} and merged.server == "clock"


def test_two_baselines_or_learning_over_many_files_are_one_line_usage_errors(tmp_path) -> None:
    from tests.replay.e2e_helpers import mcpreel

    reel = tmp_path / "a.jsonl"
    reel.write_text('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n')
    two = mcpreel("replay", str(reel), "--target-command", "x", "--baseline-command", "y", "--baseline-url", "http://h/")
    assert two.returncode == 2 and two.stderr.strip() == \
        'error: give one baseline: --baseline-command "CMD" or --baseline-url URL', two.stderr
    many = mcpreel("replay", str(reel), str(reel), "--target-command", "x", "--learn-noise", str(tmp_path / "n.json"))
    assert many.returncode == 2 and "--learn-noise learns from one recording" in many.stderr, many.stderr
    zero = mcpreel("replay", str(reel), "--target-command", "x", "--repeat", "0")
    assert zero.returncode == 2 and "--repeat" in zero.stderr


def test_a_stable_difference_that_only_a_time_of_day_explains_is_flaky_not_changed() -> None:
    # server-everything's "created at 2:22:32 PM": three fast runs read the clock in the same second, so the
    # value is stable within the target and still differs from the recording; the suggested mask absorbs it
    from mcpreel.compare.rules import suggest

    was, now = "Resource 1: created at 2:22:32 PM", "Resource 1: created at 2:22:34 PM"
    book = _book({TARGET: [_result(3, [(TEXT, was, now)]), _result(3, [(TEXT, was, now)])]})
    final = _result(3, [(TEXT, was, now)])
    final.suggestions = [r for d in final.diff if (r := suggest(d, "tools/call", "now")) is not None]
    book.settle(final)
    assert final.status == "flaky" and [n["path"] for n in final.noise] == [TEXT]
    # the same shape with a real change beside the time stays a change
    real = _result(3, [(TEXT, was, now.replace("Resource 1", "Resource 2"))])
    real.suggestions = [r for d in real.diff if (r := suggest(d, "tools/call", "now")) is not None]
    book = _book({TARGET: [_result(3, [(TEXT, was, real.diff[0].new)])] * 2})
    book.settle(real)
    assert real.status == "changed"
