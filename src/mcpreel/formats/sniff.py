"""Content sniffing: which format is this file? (``--format auto``)

Kept apart from the readers (pandoc's rule): a reader reads one format and never guesses. Sniffing asks
each reader through the format table (:mod:`mcpreel.formats.table`: a row names its reader's predicate),
so this module imports no reader and a reader may ask it what another recorder's file looks like. Sniffing
looks at the first line for line formats, and at the parsed document (cached on the :class:`Source`,
so the reader does not parse twice) for JSON documents. A :class:`Detection` says what was chosen and
whether the choice was obvious; the CLI says which format it chose when it was not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.errors import FormatError
from mcpreel.formats._source import Source
from mcpreel.formats.table import FORMATS, sniffers

__all__ = ["Detection", "detect", "detect_document"]


@dataclass(frozen=True)
class Detection:
    format: str
    reason: str
    obvious: bool = True


def _is_jsonrpc(obj: Any) -> bool:
    return isinstance(obj, dict) and ("jsonrpc" in obj or "method" in obj or (("result" in obj or "error" in obj) and "id" in obj))


def _hub_line(first: Any) -> Detection | None:
    """Other recorders' JSONL formats, told apart by the first line's members (before bare JSON-RPC:
    an MCPSpy event has a ``method`` too). Each reader says whether the record is its own (the table's
    ``sniff_line``)."""
    if not isinstance(first, dict):
        return None
    for spec, looks_like in sniffers("line"):
        if looks_like(first):
            return Detection(spec.name, spec.sniff_reason)
    return None


def _our_trace(obj: Any) -> str | None:
    """Which of our own tool-call traces (``assay-v2``, ``simple``) a line is a record of, if any."""
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return None
    kind = obj["type"]
    if kind in ("episode_start", "episode_end") or (kind in ("step", "tool_call") and "episode_id" in obj):
        return "an assay-v2 trace"
    if kind in ("tool_call", "tool_result") and "id" in obj and ("tool" in obj or "result" in obj or "error" in obj):
        return "a simple trace"
    return None


def _refuse_trace(obj: Any, name: str) -> None:
    """Our own traces are written, never read: say so and what to do instead (as for a HAR)."""
    trace = _our_trace(obj)
    if trace is not None:
        raise FormatError(f"{trace} (first record: {obj['type']}): mcpreel writes tool-call traces but does not read "
                          "them back, they keep only tool semantics; inspect or convert the session file the trace "
                          "was made from", path=name)


def foreign_record(first: Any) -> Detection | None:
    """Another recorder's record, which a reader of bare messages must not take for one (a forced
    ``--format jsonrpc`` on an MCPSpy file would read its events as garbage)."""
    return _hub_line(first)


def foreign_document(doc: Any) -> Detection | None:
    """Another recorder's JSON document (an mcp-cassette, an agent-vcr recording, an Inspector network
    export...), which the Inspector reader must not take for its ``{"messages": [...]}`` or array."""
    return _hub_document(doc)


def _hub_document(doc: Any) -> Detection | None:
    """Other recorders' JSON documents (each reader says whether the document is its own: the table's
    ``sniff_document``), then a document that is one record of a line format."""
    for spec, looks_like in sniffers("document"):
        if looks_like(doc):
            return Detection(spec.name, spec.sniff_reason)
    return _hub_line(doc)


def detect_document(doc: Any, name: str) -> Detection:
    """The format of an already parsed JSON document."""
    hub = _hub_document(doc)
    if hub is not None:
        return hub
    if isinstance(doc, dict):
        if "entries" in doc and "transport" in doc:
            tr = doc.get("transport")
            if tr in ("streamable-http", "http-sse"):
                return Detection(tr, f"HTTP transcript envelope with transport {tr!r}")
            raise FormatError(
                f'HTTP transcript envelope with unknown transport {jsonio.dumps_str(tr)} (expected "streamable-http" or "http-sse")',
                path=name,
            )
        msgs = doc.get("messages")
        if isinstance(msgs, list):
            sample = next((m for m in msgs if isinstance(m, dict)), {})
            if "proxy_id" in sample or "direction" in sample and "payload" in sample or "started_at" in doc:
                return Detection("qai", "qai session file (messages with proxy_id and payload)")
            return Detection("inspector", 'MCP Inspector export {"messages": [...]}')
        if isinstance(doc.get("events"), list):
            return Detection("inspector", 'MCP Inspector export {"events": [...]}')
        if isinstance(doc.get("runs"), list):
            return Detection("langchain", 'LangChain runs {"runs": [...]}')
        if isinstance(doc.get("interactions"), list):
            return Detection("mcp-recorder", "mcp-recorder cassette (interactions)")
        if isinstance(doc.get("log"), dict) and "entries" in doc["log"]:
            raise FormatError("a HAR file: mcpreel writes HAR but does not read it", path=name)
        if doc.get("type") == "meta" and "v" in doc:
            return Detection("reel", "a reel (mcp-replay v1 meta line)")
        if "dir" in doc and "t" in doc:
            return Detection("reel", "an mcp-replay v1 message line (no meta line)", obvious=False)
        if _is_jsonrpc(doc):
            return Detection("jsonrpc", "one JSON-RPC message", obvious=False)
        _refuse_trace(doc, name)
        keys = ", ".join(jsonio.dumps_str(k) for k in sorted(doc)[:6])  # quoted: a key may hold a newline
        raise FormatError(f"not a session format mcpreel knows (a JSON object with members {keys})", path=name)
    if isinstance(doc, list):
        first = next((m for m in doc if isinstance(m, dict)), None)
        if first is None:
            if not doc:
                return Detection("jsonrpc", "an empty JSON array", obvious=False)
            raise FormatError("a JSON array with no objects in it is not a session", path=name)
        if FORMATS["inspector"].load().is_v2_entry(first):
            return Detection("inspector", "MCP Inspector v2 export (entries with message/origin)")
        if "run_type" in first or ("inputs" in first and "outputs" in first):
            return Detection("langchain", "LangSmith runs")
        return Detection(
            "jsonrpc", "a bare JSON array of JSON-RPC messages (read as jsonrpc; inspector reads it the same)", obvious=False
        )
    raise FormatError(f"not a session: the file is {jsonio.type_name(doc)}", path=name)


def detect(source: Source) -> Detection:
    """The format of ``source`` from its content: line formats by the first line, JSON documents by their parsed
    shape."""
    head = source.head()
    stripped = head.lstrip()
    if not stripped:
        raise FormatError("empty file: no session in it", path=source.name)
    if stripped[:1] not in (b"{", b"["):
        if FORMATS["mcp-vcr"].load().looks_like_yaml_transcript(head):
            return Detection("mcp-vcr", "MCP-VCR YAML transcript (meta: and messages:)")
        raise FormatError("not JSON or JSONL: a session file starts with '{' or '['", path=source.name)
    first_line, more = source.first_line()
    if more:
        try:
            first = jsonio.loads(first_line)
        except (ValueError, UnicodeDecodeError):
            first = None  # not a complete value on line 1: one multi-line JSON document
        if first is not None:
            if isinstance(first, dict) and first.get("type") == "meta" and "v" in first:
                return Detection("reel", "mcp-replay v1 trace (meta line first)")
            hub = _hub_line(first)
            if hub is not None:
                return hub
            if _is_jsonrpc(first) or isinstance(first, list):
                return Detection("jsonrpc", "JSONL of JSON-RPC messages")
            if isinstance(first, dict) and ("dir" in first and "t" in first):
                return Detection("reel", "mcp-replay v1 message lines (no meta line)", obvious=False)
            _refuse_trace(first, source.name)
            what = (f"a JSON object with members {', '.join(jsonio.dumps_str(k) for k in sorted(first)[:6])}"
                    if isinstance(first, dict) else jsonio.type_name(first))
            raise FormatError(f"line 1 is JSON ({what}) but neither a reel meta line nor a JSON-RPC message nor "
                              "a record of another recorder mcpreel reads; `mcpreel convert --help` lists the formats",
                              path=source.name, line=1)
    if stripped[:1] == b"{" and b'"messages"' in head:
        found = FORMATS["qai"].load().scan(source)  # a big document: its header and first message, not all of it in memory
        if found is not None:
            first = found.first_object
            stand_in = {**found.members, "messages": [first] if first is not None else []}
            try:
                stand = detect_document(stand_in, source.name)  # every check reads the first message only
            except FormatError:
                stand = None
            if stand is not None and stand.format == "qai":
                return stand
    doc = source.document()
    return detect_document(doc, source.name)
