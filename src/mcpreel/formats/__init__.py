"""Every session format, in one table: name -> reader and/or writer, aliases and file-name endings.

:data:`FORMATS` is the one source for what a format is called, which module reads or writes it, and which
output file names choose it. A row (:class:`FormatSpec`) is::

    FormatSpec(name, module, reads, writes, kwargs={}, aliases=(), extensions=(), description="")

- ``module`` is imported on first use and exposes ``read(source, **kwargs) -> Session`` when ``reads``
  and ``write(session, out, **kwargs)`` when ``writes``; ``LOSSES`` (what a write drops, one line) and
  ``KEEPS`` (the session features a write keeps, from which :mod:`mcpreel.convert` names what one session
  loses) when it writes. Several rows may share a module, told apart by ``kwargs`` (the two HTTP envelope
  flavours, the two tool-call traces).
- ``aliases`` are other names ``--from``/``--to`` accept.
- ``extensions`` are the file-name endings that choose this format for an *output* file: a compound
  ending (``".qai.json"``, matched at the end of the name) or an extension (``".har"``). A plain string
  says so in the default words ("the file name ends in .qai.json", "the extension .har"); a
  :class:`Suffix` gives its own words, marks a guess (``obvious=False``) or applies to one session
  transport only. The longest ending that matches wins (:func:`format_for_name`). Reading never looks at
  names: content sniffing is its own step (:mod:`mcpreel.formats.sniff`), done before a reader is chosen.

Readers and writers speak only to :mod:`mcpreel.model`, so N formats need N modules, not N^2 converters.
Adding a reader is one module and one row.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel.errors import InputError, UsageError
from mcpreel.formats._source import Source, encodable_header
from mcpreel.model import Session

__all__ = [
    "FORMATS",
    "FormatSpec",
    "NameMatch",
    "Source",
    "Suffix",
    "canonical_name",
    "format_for_name",
    "get_reader",
    "get_writer",
    "open_session",
    "reader_names",
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
        return self.text.count(".") > 1

    def words(self) -> str:
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

    def load(self) -> Any:
        return importlib.import_module(self.module)

    def suffixes(self) -> list[Suffix]:
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
                   description="MCPSpy JSONL events (stdio, http, sse)"),
        FormatSpec("mcp-cassette-npm", "mcpreel.formats.mcp_cassette_npm", True, False,
                   aliases=("mcp-cassette-js",),
                   description="mcp-cassette (npm) JSONL cassette, v1 and v2"),
        FormatSpec("mcp-cassette-pypi", "mcpreel.formats.mcp_cassette_pypi", True, True,
                   aliases=("mcp-cassette-py",), extensions=(".mcp.json",),
                   description="mcp-cassette (PyPI) .mcp.json cassette, format 1 and 2"),
        FormatSpec("mcp-vcr", "mcpreel.formats.mcp_vcr", True, False,
                   description="MCP-VCR YAML transcript, schema v1"),
        FormatSpec("agent-vcr", "mcpreel.formats.agent_vcr", True, False,
                   description="agent-vcr .vcr recording"),
        FormatSpec("mcpsnoop", "mcpreel.formats.mcpsnoop", True, False,
                   description="mcpsnoop session envelopes"),
        FormatSpec("inspector-network", "mcpreel.formats.inspector_network", True, False,
                   description="MCP Inspector v2 network export (credential headers redacted on read)"),
        FormatSpec("mcp-conformance", "mcpreel.formats.mcp_conformance", True, True,
                   aliases=("mcp-trace",),
                   description="mcp-conformance (mcp-trace-validator) wire trace"),
        FormatSpec("har", "mcpreel.formats.har", False, True, extensions=(".har",), description="HAR 1.2"),
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
    try:
        session = get_reader(detection.format)(source)
        if detection.reason == "given":
            _refuse_foreign(session, detection.format, path, strict)
    except InputError as exc:
        if detection.reason != "given" or "the content looks like" in exc.rule:
            raise
        # a forced format that fails at once: say what the content looks like and how to read it
        hint = _looks_like(path, strict, detection.format)
        if not hint:
            raise
        raise type(exc)(exc.rule + hint, path=exc.path, line=exc.line) from exc
    session.info.source_format = session.info.source_format or detection.format
    encodable_header(session.info)
    return session, detection


#: how many message records a forced format's reading is checked on before it is believed
_SHAPE_PROBE = 1000


def _looks_jsonrpc(member: Any) -> bool:
    """A JSON-RPC message, not another tool's record that wraps one (qai's, say, copies the method)."""
    if not isinstance(member, dict):
        return False
    if any(isinstance(v, dict) and "jsonrpc" in v for v in member.values()):
        return False
    return (member.get("jsonrpc") == "2.0" or isinstance(member.get("method"), str)
            or ("id" in member and ("result" in member or "error" in member)))


def _looks_like(path: str | Path, strict: bool, fmt: str) -> str:
    """``; the content looks like X (why): ...`` when the sniffer sees another format than ``fmt``, else ""."""
    from mcpreel.formats.sniff import detect

    try:
        looks = detect(Source(path, strict=strict))
    except Exception as exc:  # the sniffer knows it no better, or names what it is (a HAR, a trace)
        rule = getattr(exc, "rule", None)
        return f"; the content is {rule}" if isinstance(rule, str) and "does not read" in rule else ""
    if looks.format == fmt:
        return ""
    return f"; the content looks like {looks.format} ({looks.reason}): read it as {looks.format} (--format/--from " \
           f"{looks.format}, or auto)"


def _refuse_foreign(session: Session, fmt: str, path: str | Path, strict: bool) -> None:
    """A format forced with ``--format`` must find its shape in the file: a reading in which none of
    the first message records is a JSON-RPC message is another format read as garbage, an input error
    (exit 2) naming what the content looks like, never a trace of unknown calls."""
    from mcpreel.errors import FormatError
    from mcpreel.model import Kind

    seen = 0
    for msg in session:
        if msg.kind != Kind.MESSAGE:
            continue
        if any(_looks_jsonrpc(m) for m in msg.members()) or _looks_jsonrpc(msg.raw):
            return
        seen += 1
        if seen >= _SHAPE_PROBE:
            break
    if seen == 0:
        return  # nothing but stderr, transport events or nothing at all: no verdict on the shape
    hint = _looks_like(path, strict, fmt)
    raise FormatError(f"does not have the {fmt} format's shape: read as {fmt}, none of its first {seen} records is a JSON-RPC "
                      f"message{hint}", path=str(path))


from mcpreel.formats.sniff import Detection  # noqa: E402  (re-exported; sniff needs the table above)
