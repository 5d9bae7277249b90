"""Content sniffing tells every format apart on every hub file (table-driven), and a reader forced onto a file
of another format refuses it: one line naming the file, exit code 2, never a session read as garbage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpreel.cli import cli
from mcpreel.errors import InputError
from mcpreel.formats import FORMATS, Source, get_reader, open_session

from ...conftest import needs_shared
from ..support import FIXTURES, fixture
from .samples import write_inspector_network, write_mcpsnoop

HUB = FIXTURES / "hub"

#: every session file in the hub folder -> the format sniffing must name
EXPECTED = {
    "agent-vcr/examples__recordings__calculator-errors.vcr": "agent-vcr",
    "agent-vcr/examples__recordings__calculator-v1.vcr": "agent-vcr",
    "mcp-cassette-npm/tests__fixtures__stdio-tape.jsonl": "mcp-cassette-npm",
    "mcp-cassette-npm/tests__fixtures__tiny-server.golden.cassette.jsonl": "mcp-cassette-npm",
    "mcp-cassette-pypi/examples__cassettes__echo_and_add.mcp.json": "mcp-cassette-pypi",
    "mcp-cassette-pypi/examples__cassettes__http_echo_and_add.mcp.json": "mcp-cassette-pypi",
    "mcp-cassette-pypi/examples__cassettes__sampling.mcp.json": "mcp-cassette-pypi",
    "mcp-cassette-pypi/examples__cassettes__tools.mcp.json": "mcp-cassette-pypi",
    "mcp-conformance-tomtom215/corpus__draft__captured__reference-host-2026-07-28-http.jsonl": "mcp-conformance",
    "mcp-conformance-tomtom215/corpus__draft__captured__reference-host-2026-07-28-stdio.jsonl": "mcp-conformance",
    "mcp-conformance-tomtom215/corpus__draft__good__stateless-session.jsonl": "mcp-conformance",
    "mcp-conformance-tomtom215/corpus__good__http-session.jsonl": "mcp-conformance",
    "mcp-conformance-tomtom215/corpus__good__stdio-feature-session.jsonl": "mcp-conformance",
    "mcp-vcr/fixtures__jsonrpc_error_response.yaml": "mcp-vcr",
    "mcp-vcr/fixtures__with_notifications.yaml": "mcp-vcr",
    "mcp-vcr/mcp_vcr__community__filesystem__initialize_and_tools_list.yaml": "mcp-vcr",
    "mcp-vcr/mcp_vcr__community__filesystem__tool_call_read_file.yaml": "mcp-vcr",
    "mcp-vcr/mcp_vcr__community__time__tool_call_get_current_time.yaml": "mcp-vcr",
    "mcpspy/tests__expected_output_stdio.jsonl": "mcpspy",
    **{f"assay/crates__assay-core__tests__fixtures__mcp-era-parity-v0__vectors__{v}.json": "streamable-http"
       for v in ("legacy-missing-result-type", "modern-complete", "modern-input-required", "traceparent-present",
                 "unknown-era")},
}
NEW_READERS = ["mcpspy", "mcp-cassette-npm", "mcp-cassette-pypi", "mcp-vcr", "agent-vcr", "mcpsnoop",
               "inspector-network", "mcp-conformance"]


def _files(tmp: Path) -> dict[Path, str]:
    files = {fixture(f"hub/{rel}"): fmt for rel, fmt in EXPECTED.items()}
    files[write_mcpsnoop(tmp / "snoop.jsonl")] = "mcpsnoop"
    files[write_inspector_network(tmp / "net.json")] = "inspector-network"
    return files


@needs_shared
def test_the_table_covers_every_hub_session_file():
    on_disk = {str(p.relative_to(HUB)) for p in HUB.rglob("*") if p.is_file() and p.suffix != ".md"}
    not_sessions = {p for p in on_disk if p.endswith(("__MANIFEST.json", "transcript-schema-v1.json"))}
    assert on_disk - not_sessions == set(EXPECTED)


def test_sniffing_names_every_format(tmp_path):
    for path, fmt in _files(tmp_path).items():
        _, detection = open_session(path)
        assert detection.format == fmt, path.name
        assert detection.obvious, path.name


def test_every_new_format_is_in_the_table_with_a_reader():
    for name in NEW_READERS:
        assert FORMATS[name].reads and FORMATS[name].description


def test_a_new_reader_refuses_every_other_formats_file(tmp_path):
    """Each new reader, forced onto every file of another format, refuses it with one line naming the file."""
    checked = 0
    for path, fmt in _files(tmp_path).items():
        for reader in NEW_READERS:
            if reader == fmt:
                continue
            with pytest.raises(InputError) as err:
                get_reader(reader)(Source(path)).materialize()
            line = str(err.value)
            assert line.startswith(str(path)) and "\n" not in line, (reader, path.name, line)
            checked += 1
    files = _files(tmp_path)
    assert checked == len(files) * len(NEW_READERS) - sum(1 for fmt in files.values() if fmt in NEW_READERS)


@pytest.mark.parametrize(("rel", "forced"), [
    ("mcpspy/tests__expected_output_stdio.jsonl", "mcp-vcr"),
    ("mcp-vcr/fixtures__with_notifications.yaml", "mcpspy"),
    ("agent-vcr/examples__recordings__calculator-v1.vcr", "mcp-cassette-pypi"),
    ("mcp-cassette-pypi/examples__cassettes__tools.mcp.json", "agent-vcr"),
    ("mcp-conformance-tomtom215/corpus__good__http-session.jsonl", "mcpsnoop"),
    ("mcp-cassette-npm/tests__fixtures__stdio-tape.jsonl", "mcp-conformance"),
])
def test_a_wrong_forced_format_exits_2_with_one_line(rel, forced):
    path = fixture(f"hub/{rel}")
    for command in (["inspect", str(path), "--format", forced], ["convert", str(path), "/dev/null", "--from", forced]):
        r = CliRunner().invoke(cli, command, catch_exceptions=False)
        assert r.exit_code == 2, (command, r.output)
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and str(path) in lines[0], lines
        assert "Traceback" not in r.output


def test_convert_help_lists_every_format():
    r = CliRunner().invoke(cli, ["convert", "--help"])
    assert r.exit_code == 0
    text = re.sub(r"-\s+", "-", " ".join(r.output.split()))  # click wraps lines after a hyphen
    for name in FORMATS:
        assert name in text, name


def test_the_docs_list_every_format():
    from tests.docs.pages import topic

    readme = topic("formats")  # the Formats page, and `mcpreel help formats`
    for name in FORMATS:
        assert f"`{name}`" in readme, name


@pytest.mark.parametrize(("rel", "forced", "needle"), [
    ("mcpspy/tests__expected_output_stdio.jsonl", "jsonrpc", "line 1 is not a JSON-RPC message but MCPSpy event"),
    ("mcp-conformance-tomtom215/corpus__good__stdio-feature-session.jsonl", "jsonrpc", "(read it as mcp-conformance)"),
    ("mcp-cassette-npm/tests__fixtures__stdio-tape.jsonl", "jsonrpc", "(read it as mcp-cassette-npm)"),
    ("mcp-cassette-pypi/examples__cassettes__tools.mcp.json", "inspector", "not an MCP Inspector export but mcp-cassette"),
    ("agent-vcr/examples__recordings__calculator-v1.vcr", "inspector", "(read it as agent-vcr)"),
])
def test_the_bare_message_readers_refuse_other_recorders_files(rel, forced, needle):
    with pytest.raises(InputError) as err:
        get_reader(forced)(Source(fixture(f"hub/{rel}"))).materialize()
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_the_inspector_reader_refuses_a_network_export(tmp_path):
    with pytest.raises(InputError, match="read it as inspector-network"):
        get_reader("inspector")(Source(write_inspector_network(tmp_path / "n.json")))
    with pytest.raises(InputError, match="read it as mcpsnoop"):
        get_reader("jsonrpc")(Source(write_mcpsnoop(tmp_path / "s.jsonl"))).materialize()
