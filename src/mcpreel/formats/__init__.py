"""Every session format, in one table: name -> reader and/or writer.

Each format is one module (``formats/<name>.py``) exposing ``NAME``, ``EXTENSIONS``, ``LOSSES`` (what a
write drops, for the one warning line a lossy conversion prints), ``KEEPS`` (the session features a write
keeps, from which :mod:`mcpreel.convert` names what one session loses) and ``read(source) -> Session``
and/or ``write(session, out)``. Readers and writers speak only to :mod:`mcpreel.model`, so N formats need N
modules, not N^2 converters. Content sniffing is its own step (:mod:`mcpreel.formats.sniff`), done
before a reader is chosen.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel.errors import UsageError
from mcpreel.formats._source import Source
from mcpreel.model import Session

__all__ = [
    "FORMATS",
    "FormatSpec",
    "Source",
    "canonical_name",
    "get_reader",
    "get_writer",
    "open_session",
    "reader_names",
    "writer_names",
]


@dataclass(frozen=True)
class FormatSpec:
    """One row of the table: where a format lives, and the keyword arguments it is called with."""

    name: str
    module: str
    reads: bool
    writes: bool
    kwargs: dict[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    description: str = ""

    def load(self) -> Any:
        return importlib.import_module(self.module)


#: The one table. Order is the order names are listed to users.
FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in [
        FormatSpec("reel", "mcpreel.formats.reel", True, True, aliases=("mcp-replay", "mcp-tape"),
                   extensions=(".jsonl",), description="mcpreel's native file (mcp-replay trace v1, extended)"),
        FormatSpec("jsonrpc", "mcpreel.formats.jsonrpc", True, True, extensions=(".jsonl", ".ndjson"),
                   description="bare JSON-RPC messages, JSONL or one JSON array"),
        FormatSpec("inspector", "mcpreel.formats.inspector", True, True,
                   aliases=("mcp-inspector", "inspector-protocol", "inspector-history"),
                   description="MCP Inspector export (v2 protocol/history export, or a messages array)"),
        FormatSpec("streamable-http", "mcpreel.formats.http_envelope", True, True, {"label": "streamable-http"},
                   description="HTTP transcript envelope, Streamable HTTP"),
        FormatSpec("http-sse", "mcpreel.formats.http_envelope", True, True, {"label": "http-sse"},
                   aliases=("sse-legacy",), description="HTTP transcript envelope, legacy HTTP+SSE"),
        FormatSpec("qai", "mcpreel.formats.qai", True, True, extensions=(".json",),
                   description="qai proxy session file"),
        FormatSpec("langchain", "mcpreel.formats.langchain", True, False, aliases=("langsmith",),
                   description="LangChain / LangSmith tool runs"),
        FormatSpec("mcp-recorder", "mcpreel.formats.mcp_recorder", True, True, aliases=("cassette",),
                   description="mcp-recorder cassette"),
        # the hub: other recorders' files (mcp-cassette-pypi also written), see ../shared/spec/08-other-recorders.md
        FormatSpec("mcpspy", "mcpreel.formats.mcpspy", True, False, extensions=(".jsonl",),
                   description="MCPSpy JSONL events (stdio, http, sse)"),
        FormatSpec("mcp-cassette-npm", "mcpreel.formats.mcp_cassette_npm", True, False,
                   aliases=("mcp-cassette-js",), extensions=(".cassette.jsonl",),
                   description="mcp-cassette (npm) JSONL cassette, v1 and v2"),
        FormatSpec("mcp-cassette-pypi", "mcpreel.formats.mcp_cassette_pypi", True, True,
                   aliases=("mcp-cassette-py",), extensions=(".mcp.json",),
                   description="mcp-cassette (PyPI) .mcp.json cassette, format 1 and 2"),
        FormatSpec("mcp-vcr", "mcpreel.formats.mcp_vcr", True, False, extensions=(".yaml", ".yml"),
                   description="MCP-VCR YAML transcript, schema v1"),
        FormatSpec("agent-vcr", "mcpreel.formats.agent_vcr", True, False, extensions=(".vcr",),
                   description="agent-vcr .vcr recording"),
        FormatSpec("mcpsnoop", "mcpreel.formats.mcpsnoop", True, False, extensions=(".jsonl",),
                   description="mcpsnoop session envelopes"),
        FormatSpec("inspector-network", "mcpreel.formats.inspector_network", True, False,
                   description="MCP Inspector v2 network export (credential headers redacted on read)"),
        FormatSpec("mcp-conformance", "mcpreel.formats.mcp_conformance", True, False,
                   aliases=("mcp-trace",), extensions=(".jsonl",),
                   description="mcp-conformance (mcp-trace-validator) wire trace"),
        FormatSpec("har", "mcpreel.formats.har", False, True, extensions=(".har",), description="HAR 1.2"),
        FormatSpec("assay-v2", "mcpreel.formats.trace_writers", False, True, {"trace_format": "assay-v2"},
                   extensions=(".trace.jsonl",), description="Assay V2 normalized tool-call trace"),
        FormatSpec("simple", "mcpreel.formats.trace_writers", False, True, {"trace_format": "simple"},
                   description="the simple tool_call/tool_result trace"),
    ]
}


def register(spec: FormatSpec) -> None:
    """Add a format to the table (used by the format modules that live in other layers)."""
    FORMATS[spec.name] = spec


def canonical_name(name: str) -> str:
    """A format name or alias -> its canonical name; an unknown name lists the known ones."""
    key = name.strip().lower()
    if key in FORMATS:
        return key
    for spec in FORMATS.values():
        if key in spec.aliases:
            return spec.name
    known = ", ".join(sorted(FORMATS))
    raise UsageError(f"unknown format {name!r} (known: {known})")


def reader_names() -> list[str]:
    return [s.name for s in FORMATS.values() if s.reads]


def writer_names() -> list[str]:
    return [s.name for s in FORMATS.values() if s.writes]


def get_reader(name: str) -> Callable[[Source], Session]:
    spec = FORMATS[canonical_name(name)]
    if not spec.reads:
        raise UsageError(f"format {spec.name!r} can be written but not read (readable: {', '.join(reader_names())})")
    mod = spec.load()
    kwargs = spec.kwargs
    return (lambda source: mod.read(source, **kwargs)) if kwargs else mod.read


def get_writer(name: str) -> Callable[..., None]:
    spec = FORMATS[canonical_name(name)]
    if not spec.writes:
        raise UsageError(f"format {spec.name!r} can be read but not written (writable: {', '.join(writer_names())})")
    mod = spec.load()
    kwargs = spec.kwargs
    return (lambda session, out, **kw: mod.write(session, out, **kwargs, **kw)) if kwargs else mod.write


def losses(name: str) -> str:
    """What writing ``name`` drops ('' when lossless)."""
    return getattr(FORMATS[canonical_name(name)].load(), "LOSSES", "")


def open_session(
    path: str | Path,
    format: str = "auto",
    *,
    strict: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[Session, Detection]:
    """Read any session file: sniff the format unless given, then run its reader."""
    from mcpreel.formats.sniff import Detection, detect

    source = Source(path, strict=strict, on_progress=on_progress)
    if format in (None, "", "auto"):
        detection = detect(source)
    else:
        detection = Detection(canonical_name(format), "given", obvious=True)
    session = get_reader(detection.format)(source)
    session.info.source_format = session.info.source_format or detection.format
    return session, detection


from mcpreel.formats.sniff import Detection  # noqa: E402  (re-exported; sniff needs the table above)
