"""The format table is the one source: names, aliases, modules and the output names that choose a format."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcpreel.formats as formats
from mcpreel.convert import choose_output_format
from mcpreel.formats import FORMATS, canonical_name, format_for_name
from mcpreel.model import Session, SessionInfo

FORMATS_DIR = Path(formats.__file__).parent


def test_every_name_and_alias_resolves_to_its_row():
    seen: dict[str, str] = {}
    for spec in FORMATS.values():
        for name in (spec.name, *spec.aliases):
            assert name not in seen, f"{name!r} names both {seen[name]} and {spec.name}"
            seen[name] = spec.name
            assert canonical_name(name) == spec.name
            assert canonical_name(name.upper()) == spec.name


def test_every_ending_chooses_its_row_and_no_two_rows_share_one():
    claimed: dict[tuple[str, str | None], str] = {}
    for spec in FORMATS.values():
        for suffix in spec.suffixes():
            key = (suffix.text, suffix.transport)
            assert key not in claimed, f"{suffix.text} claimed by {claimed[key]} and {spec.name}"
            claimed[key] = spec.name
            assert spec.writes, f"{spec.name} cannot be written but names an output ending"
            assert format_for_name(f"out{suffix.text}", suffix.transport).format == spec.name  # type: ignore[union-attr]


def test_every_module_with_a_reader_or_writer_is_in_the_table():
    rows: dict[str, list[str]] = {}
    for spec in FORMATS.values():
        rows.setdefault(spec.module, []).append(spec.name)
    for path in sorted(FORMATS_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        module = f"mcpreel.formats.{path.stem}"
        if not functions & {"read", "write"}:
            continue
        assert module in rows, f"{module} has a read/write but no row in FORMATS"
        for name in rows[module]:
            spec = FORMATS[name]
            assert spec.reads == ("read" in functions) and spec.writes == ("write" in functions), name
            if spec.writes:
                mod = spec.load()
                assert hasattr(mod, "LOSSES") or hasattr(mod, "KEEPS"), f"{module} writes but says nothing it keeps"


def test_the_table_has_no_second_source():
    assert not hasattr(formats, "register") and not hasattr(formats, "losses")
    for spec in FORMATS.values():
        mod = spec.load()
        for dup in ("EXTENSIONS", "ALIASES", "NAMES"):
            assert not hasattr(mod, dup), f"{spec.module}.{dup} duplicates the table"


_ENVELOPE = "an HTTP transcript envelope, named by the file"
_JSON = ("the extension .json: qai, the JSON format that keeps a whole session "
         "(--to inspector, streamable-http or http-sse for the others)")


# today's output names, with the words users see (``convert`` prints the reason of a guess)
@pytest.mark.parametrize(("name", "transport", "fmt", "reason", "obvious"), [
    ("x.jsonl", None, "reel", "the extension .jsonl (mcpreel's own reel)", True),
    ("x.reel.jsonl", None, "reel", "the file name ends in .reel.jsonl", True),
    ("x.mcp.jsonl", None, "reel", "the file name ends in .mcp.jsonl", True),
    ("x.trace.jsonl", None, "assay-v2", "the file name ends in .trace.jsonl", True),
    ("a/B.Trace.JSONL", None, "assay-v2", "the file name ends in .trace.jsonl", True),
    ("x.simple.jsonl", None, "simple", "the file name ends in .simple.jsonl", True),
    ("x.qai.json", None, "qai", "the file name ends in .qai.json", True),
    ("x.inspector.json", None, "inspector", "the file name ends in .inspector.json", True),
    ("x.jsonrpc.jsonl", None, "jsonrpc", "the file name ends in .jsonrpc.jsonl", True),
    ("x.jsonrpc.json", None, "jsonrpc", "the file name ends in .jsonrpc.json", True),
    ("x.ndjson", None, "jsonrpc", "the extension .ndjson", True),
    ("x.har", None, "har", "the extension .har", True),
    ("x.HAR", "stdio", "har", "the extension .har", True),
    ("x.streamable-http.json", "sse", "streamable-http", "the file name ends in .streamable-http.json", True),
    ("x.http-sse.json", None, "http-sse", "the file name ends in .http-sse.json", True),
    ("x.envelope", None, "streamable-http", _ENVELOPE, True),
    ("x.http", "streamable-http", "streamable-http", _ENVELOPE, True),
    ("x.envelope.json", "stdio", "streamable-http", _ENVELOPE, True),
    ("x.http.json", None, "streamable-http", _ENVELOPE, True),
    ("x.envelope", "sse", "http-sse", _ENVELOPE, True),
    ("x.http.json", "sse", "http-sse", _ENVELOPE, True),
    ("x.json", None, "qai", _JSON, False),
    ("x.sse.json", "sse", "qai", _JSON, False),
    ("x.http.jsonl", None, "reel", "the extension .jsonl (mcpreel's own reel)", True),
    (".qai.json", None, "qai", "the file name ends in .qai.json", True),
])
def test_output_name_choice(name, transport, fmt, reason, obvious):
    session = None if transport is None else Session(SessionInfo(transport=transport), [])
    choice = choose_output_format(name, session)
    assert (choice.format, choice.reason, choice.obvious) == (fmt, reason, obvious)


@pytest.mark.parametrize("name", ["x.bin", "x", ".jsonl", ".har"])
def test_a_name_that_names_no_format(name):
    assert format_for_name(name) is None
