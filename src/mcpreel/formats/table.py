"""The format table itself: every format's name, module, aliases, output endings and sniffing hooks.

It lives apart from :mod:`mcpreel.formats` (which adds :func:`~mcpreel.formats.open_session` on top)
so that the sniffer can ask each reader through the table: the sniffer imports this module, the table
names reader modules as strings (loaded on first use), and no reader is imported by the sniffer or by
the table. See :mod:`mcpreel.formats` for what a row says.
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
    "NameMatch",
    "Suffix",
    "canonical_name",
    "format_for_name",
    "get_reader",
    "get_writer",
    "reader_names",
    "sniffers",
    "writer_names",
]


@dataclass(frozen=True)
class Suffix:
    """A file-name ending that chooses a format for an output file, with the words that say so."""

    text: str  # ".qai.json" (compound: the name ends in it) or ".har" (the name's extension)
    reason: str = ""  # default: "the file name ends in <text>" (compound) or "the extension <text>"
    obvious: bool = True  # False: a guess among formats sharing the ending, worth a note to the user
    transport: str | None = None  # only for a session on this transport ("sse"); None: any session

    @property
    def compound(self) -> bool:
        """Whether the ending spans more than the extension (``.qai.json``), which is matched against the name's end."""
        return self.text.count(".") > 1

    def words(self) -> str:
        """The reason shown when this ending chose the output format."""
        if self.reason:
            return self.reason
        return f"the file name ends in {self.text}" if self.compound else f"the extension {self.text}"

    def matches(self, name: str, transport: str | None) -> bool:
        """Whether lower-cased file name ``name`` of a session on ``transport`` ends in this suffix."""
        if self.transport is not None and self.transport != transport:
            return False
        return name.endswith(self.text) if self.compound else Path(name).suffix == self.text


@dataclass(frozen=True)
class FormatSpec:
    """One row of the table: where a format lives, its names, its output endings (see the module doc)."""

    name: str
    module: str
    reads: bool
    writes: bool
    kwargs: dict[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    extensions: tuple[str | Suffix, ...] = ()
    description: str = ""
    #: another recorder's format the sniffer tells by content: the name of the reader module's predicate
    #: on a file's first record (a line format) or on its parsed document, and the words that say why
    #: (sniffing asks each reader through this table, so the sniffer imports no reader)
    sniff_line: str = ""
    sniff_document: str = ""
    sniff_reason: str = ""

    def load(self) -> Any:
        """The format's module, imported on first use (most runs touch one or two formats)."""
        return importlib.import_module(self.module)

    def suffixes(self) -> list[Suffix]:
        """The output endings as :class:`Suffix` records (plain strings take the default words)."""
        return [e if isinstance(e, Suffix) else Suffix(e) for e in self.extensions]


@dataclass(frozen=True)
class NameMatch:
    """The format an output file's name chooses, and the words that say why."""

    format: str
    reason: str
    obvious: bool = True


_ENVELOPE = "an HTTP transcript envelope, named by the file"
#: the endings of an HTTP envelope: the session's transport picks the flavour (legacy SSE or Streamable)
_ENVELOPE_ENDINGS = (".envelope", ".http", ".envelope.json", ".http.json")


#: The one table. Order is the order names are listed to users.
FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in [
        FormatSpec("reel", "mcpreel.formats.reel", True, True, aliases=("mcp-replay", "mcp-tape"),
                   extensions=(".reel.jsonl", ".mcp.jsonl",
                               Suffix(".jsonl", "the extension .jsonl (mcpreel's own reel)")),
                   description="mcpreel's native file (mcp-replay trace v1, extended)"),
        FormatSpec("jsonrpc", "mcpreel.formats.jsonrpc", True, True,
                   extensions=(".jsonrpc.jsonl", ".jsonrpc.json", ".ndjson"),
                   description="bare JSON-RPC messages, JSONL or one JSON array"),
        FormatSpec("inspector", "mcpreel.formats.inspector", True, True,
                   aliases=("mcp-inspector", "inspector-protocol", "inspector-history"),
                   extensions=(".inspector.json",),
                   description="MCP Inspector export (v2 protocol/history export, or a messages array)"),
        FormatSpec("streamable-http", "mcpreel.formats.http_envelope", True, True, {"label": "streamable-http"},
                   extensions=(".streamable-http.json", *(Suffix(e, _ENVELOPE) for e in _ENVELOPE_ENDINGS)),
                   description="HTTP transcript envelope, Streamable HTTP"),
        FormatSpec("http-sse", "mcpreel.formats.http_envelope", True, True, {"label": "http-sse"},
                   aliases=("sse-legacy",),
                   extensions=(".http-sse.json", *(Suffix(e, _ENVELOPE, transport="sse") for e in _ENVELOPE_ENDINGS)),
                   description="HTTP transcript envelope, legacy HTTP+SSE"),
        FormatSpec("qai", "mcpreel.formats.qai", True, True,
                   extensions=(".qai.json",
                               Suffix(".json", "the extension .json: qai, the JSON format that keeps a whole session "
                                      "(--to inspector, streamable-http or http-sse for the others)", obvious=False)),
                   description="qai proxy session file"),
        FormatSpec("langchain", "mcpreel.formats.langchain", True, False, aliases=("langsmith",),
                   description="LangChain / LangSmith tool runs"),
        FormatSpec("mcp-recorder", "mcpreel.formats.mcp_recorder", True, True, aliases=("cassette",),
                   description="mcp-recorder cassette"),
        # the hub: other recorders' files (mcp-cassette-pypi also written), see ../shared/spec/08-other-recorders.md
        FormatSpec("mcpspy", "mcpreel.formats.mcpspy", True, False,
                   description="MCPSpy JSONL events (stdio, http, sse)", sniff_line="looks_like_mcpspy",
                   sniff_reason="MCPSpy event (transport_type, type request/response/notification)"),
        FormatSpec("mcp-cassette-npm", "mcpreel.formats.mcp_cassette_npm", True, False,
                   aliases=("mcp-cassette-js",),
                   description="mcp-cassette (npm) JSONL cassette, v1 and v2", sniff_line="looks_like_header",
                   sniff_reason="mcp-cassette (npm) header line (type header, cassetteVersion)"),
        FormatSpec("mcp-cassette-pypi", "mcpreel.formats.mcp_cassette_pypi", True, True,
                   aliases=("mcp-cassette-py",), extensions=(".mcp.json",),
                   description="mcp-cassette (PyPI) .mcp.json cassette, format 1 and 2",
                   sniff_document="looks_like_cassette",
                   sniff_reason="mcp-cassette (PyPI) cassette (format_version, messages with sender)"),
        FormatSpec("mcp-vcr", "mcpreel.formats.mcp_vcr", True, False,
                   description="MCP-VCR YAML transcript, schema v1", sniff_document="looks_like_transcript",
                   sniff_reason="MCP-VCR transcript (meta, messages) written as JSON"),
        FormatSpec("agent-vcr", "mcpreel.formats.agent_vcr", True, False,
                   description="agent-vcr .vcr recording", sniff_document="looks_like_vcr",
                   sniff_reason="agent-vcr recording (format_version, session.interactions)"),
        FormatSpec("mcpsnoop", "mcpreel.formats.mcpsnoop", True, False,
                   description="mcpsnoop session envelopes", sniff_line="looks_like_envelope",
                   sniff_reason="mcpsnoop envelope (session_id, direction c2s/s2c/stderr/meta)"),
        FormatSpec("inspector-network", "mcpreel.formats.inspector_network", True, False,
                   description="MCP Inspector v2 network export (credential headers redacted on read)",
                   sniff_document="looks_like_network_export",
                   sniff_reason="MCP Inspector network export (url, requestHeaders)"),
        FormatSpec("mcp-conformance", "mcpreel.formats.mcp_conformance", True, True,
                   aliases=("mcp-trace",),
                   description="mcp-conformance (mcp-trace-validator) wire trace",
                   sniff_line="looks_like_trace_event",
                   sniff_reason="mcp-conformance trace event (seq, direction, kind)"),
        FormatSpec("otlp", "mcpreel.formats.otlp", True, False, aliases=("otlp-json",),
                   description="OTLP JSON spans of MCP requests (GenAI MCP or OpenInference conventions; lossy)",
                   sniff_line="looks_like_otlp", sniff_document="looks_like_otlp",
                   sniff_reason="OTLP JSON (an ExportTraceServiceRequest with resourceSpans)"),
        FormatSpec("glassport", "mcpreel.formats.glassport", True, False,
                   description="glassport session JSONL (stdio tap frame log)", sniff_line="looks_like_glassport",
                   sniff_reason="glassport session log (glassport header, or frames with seq, ts, dir c2s/s2c)"),
        FormatSpec("har", "mcpreel.formats.har", False, True, extensions=(".har",), description="HAR 1.2"),
        FormatSpec("sts", "mcpreel.formats.sts", False, True, aliases=("session-traces", "hf-traces"),
                   extensions=(".sts.jsonl",),
                   description="Hugging Face Hub Session Traces Format (tool calls and results; redacted)"),
        FormatSpec("atif", "mcpreel.formats.atif", False, True, aliases=("harbor",),
                   extensions=(".atif.json", ".trajectory.json"),
                   description="Harbor's Agent Trajectory Interchange Format v1.5 (a step per operation; redacted)"),
        FormatSpec("assay-v2", "mcpreel.formats.toolcall_traces", False, True, {"trace_format": "assay-v2"},
                   extensions=(".trace.jsonl",), description="Assay V2 normalized tool-call trace"),
        FormatSpec("simple", "mcpreel.formats.toolcall_traces", False, True, {"trace_format": "simple"},
                   extensions=(".simple.jsonl",), description="the simple tool_call/tool_result trace"),
    ]
}


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


def sniffers(kind: str) -> list[tuple[FormatSpec, Callable[[Any], bool]]]:
    """The formats told by content on a first record (``kind="line"``) or a parsed document
    (``"document"``), in table order, each with its reader's predicate (importing the readers asked)."""
    found = []
    for spec in FORMATS.values():
        name = spec.sniff_line if kind == "line" else spec.sniff_document
        if name:
            found.append((spec, getattr(spec.load(), name)))
    return found


def reader_names() -> list[str]:
    """The formats that can be read, in the table's order (for help and error messages)."""
    return [s.name for s in FORMATS.values() if s.reads]


def writer_names() -> list[str]:
    """The formats that can be written, in the table's order (for help and error messages)."""
    return [s.name for s in FORMATS.values() if s.writes]


def get_reader(name: str) -> Callable[[Source], Session]:
    """The reader of a format name or alias; a write-only format is refused with the readable ones listed."""
    spec = FORMATS[canonical_name(name)]
    if not spec.reads:
        raise UsageError(f"format {spec.name!r} can be written but not read (readable: {', '.join(reader_names())})")
    mod = spec.load()
    kwargs = spec.kwargs
    return (lambda source: mod.read(source, **kwargs)) if kwargs else mod.read


def get_writer(name: str) -> Callable[..., None]:
    """The writer of a format name or alias; a read-only format is refused with the writable ones listed."""
    spec = FORMATS[canonical_name(name)]
    if not spec.writes:
        raise UsageError(f"format {spec.name!r} can be read but not written (writable: {', '.join(writer_names())})")
    mod = spec.load()
    kwargs = spec.kwargs
    return (lambda session, out, **kw: mod.write(session, out, **kwargs, **kw)) if kwargs else mod.write


def format_for_name(path: str | Path, transport: str | None = None) -> NameMatch | None:
    """The format an output file's name chooses (for a session on ``transport``), or None.

    The longest ending that matches wins, so ``x.trace.jsonl`` is a trace and ``x.jsonl`` a reel; at the
    same length an ending meant for the session's transport wins over one for any session.
    """
    name = Path(path).name.lower()
    best: tuple[int, bool, str, Suffix] | None = None
    for spec in FORMATS.values():
        for suffix in spec.suffixes():
            if suffix.matches(name, transport):
                rank = (len(suffix.text), suffix.transport is not None)
                if best is None or rank > best[:2]:
                    best = (*rank, spec.name, suffix)
    if best is None:
        return None
    _, _, fmt, suffix = best
    return NameMatch(fmt, suffix.words(), suffix.obvious)
