"""Converting hub files: the one lossy-warning line names exactly what this session lost (and a reel loses
nothing, not even the source recorder's own members, which come back from the reel)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.convert import convert

from ..support import fixture, read_as
from .samples import write_mcpsnoop

HEADER = "the session header (id, command or URL, start and end)"
DIRECTIONS = "directions (guessed again from the methods when read)"


@pytest.mark.parametrize(("rel", "to", "lost"), [
    ("mcp-conformance-tomtom215/corpus__good__http-session.jsonl", "jsonrpc",
     [DIRECTIONS, "transport context (5 messages)", "1 transport-only event"]),
    ("mcpspy/tests__expected_output_stdio.jsonl", "jsonrpc",
     [HEADER, "message times (27 messages)", DIRECTIONS,
      "the source recorder's own members of 27 records (kept only by a reel)"]),
    ("mcpspy/tests__expected_output_stdio.jsonl", "qai",
     ["the source recorder's own members of 27 records (kept only by a reel)"]),
    ("mcp-cassette-pypi/examples__cassettes__http_echo_and_add.mcp.json", "inspector",
     [HEADER, "transport context (7 messages)"]),
    ("mcp-cassette-pypi/examples__cassettes__sampling.mcp.json", "jsonrpc",
     [HEADER, "message times (7 messages)", DIRECTIONS,
      "the source recorder's own members of 1 record (kept only by a reel)"]),  # the redacted sampling request
    ("mcp-vcr/fixtures__with_notifications.yaml", "qai", []),
    ("agent-vcr/examples__recordings__calculator-v1.vcr", "reel", []),
    ("mcpspy/tests__expected_output_stdio.jsonl", "reel", []),
])
def test_the_warning_names_what_was_lost(rel, to, lost, tmp_path):
    result = convert(fixture(f"hub/{rel}"), tmp_path / f"out.{to}", to=to)
    assert result.lost == lost


def test_mcpsnoop_to_inspector_names_stderr_and_invalid_frames(tmp_path):
    src = write_mcpsnoop(tmp_path / "snoop.jsonl")
    result = convert(src, tmp_path / "out.json", to="inspector")
    assert result.lost == [HEADER, "transport context (4 messages)", "1 stderr line", "1 invalid frame",
                           "the source recorder's own members of 1 record (kept only by a reel)"]


def test_the_reel_keeps_the_recorders_own_members(tmp_path):
    out = tmp_path / "spy.jsonl"
    convert(fixture("hub/mcpspy/tests__expected_output_stdio.jsonl"), out, to="reel")
    back = read_as(out, "reel")
    first = back.messages[0]
    assert first.extra["mcpspy"]["stdio_transport"] == {"from_pid": 54777, "from_comm": "python",
                                                        "to_pid": 54778, "to_comm": "python"}


def test_cli_prints_the_one_warning_line(tmp_path):
    r = CliRunner().invoke(cli, ["convert", str(fixture("hub/mcpspy/tests__expected_output_stdio.jsonl")),
                                 str(tmp_path / "x.ndjson")], catch_exceptions=False)
    assert r.exit_code == 0
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert warnings == ["warning: writing jsonrpc drops " + ", ".join(
        [HEADER, "message times (27 messages)", DIRECTIONS,
         "the source recorder's own members of 27 records (kept only by a reel)"])]
