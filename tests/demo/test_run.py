"""The demo library: a step that cannot run is kept as a problem, and the other steps go on."""

from __future__ import annotations

import pytest

from mcpreel.demo import run as demo_run
from mcpreel.errors import TransportError, UsageError


def test_a_failed_step_is_a_problem_and_the_rest_goes_on(tmp_path, monkeypatch):
    def broken(reel, said, tags=()):
        raise TransportError("the stdio run failed: no end within 20 s")

    monkeypatch.setattr(demo_run, "record_stdio_run", broken)
    steps: list[str] = []
    result = demo_run.run_demo(tmp_path / "out", on_step=steps.append)
    assert result.problems == ["stdio recording: TransportError: the stdio run failed: no end within 20 s"]
    assert not result.ok
    assert "reel" not in result.files and result.inspect_report is None
    # the Streamable HTTP run and the check still ran
    assert set(result.files) == {"envelope", "http-reel", "check-text", "check-json"}
    assert result.check_report is not None and not result.check_report.failed
    assert any(s.startswith("tools/call countdown -> 3 progress notifications") for s in steps)
    assert steps[0].startswith("1. stdio:")


def test_a_folder_that_cannot_be_made_is_a_usage_error(tmp_path):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(UsageError, match="cannot make the demo folder"):
        demo_run.run_demo(tmp_path / "a-file" / "out")
