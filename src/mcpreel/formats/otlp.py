"""OTLP JSON files of MCP spans (read, lossy): an ``ExportTraceServiceRequest`` a document or a line.

The OpenTelemetry protocol's JSON encoding (``resourceSpans[].scopeSpans[].spans[]``, ids as hex,
times as nanosecond strings, attributes as ``{key, value: {stringValue|intValue|boolValue|doubleValue|
arrayValue}}``): what ``mcpreel export otlp -o`` writes (one request a line, the OpenTelemetry Collector's
file exporter layout) and what other tools write as one document. Two conventions are read:

- the **GenAI MCP conventions** (ours, :mod:`mcpreel.otel.mapping`): a span per operation with
  ``mcp.method.name``, ``jsonrpc.request.id``, ``gen_ai.tool.name``, ``gen_ai.prompt.name``,
  ``mcp.resource.uri``, ``error.type``/``rpc.response.status_code``, and with ``--include-content`` the
  tool's ``gen_ai.tool.call.arguments``/``.result``; events for notifications; a session span a root;
- **OpenInference** (``openinference.span.kind``): ``input.value``/``output.value`` (JSON) are the request's
  params and the answer's result; a ``TOOL`` span without ``mcp.method.name`` is a ``tools/call`` of
  ``tool.name``. Spans of other kinds without an MCP method (an LLM, a chain) are skipped and counted.

Each span becomes a request at its start and its answer at its end (a CLIENT span is the client's
request, a SERVER span the server's), each event named ``notifications/...`` a notification at its time.
What spans cannot carry is rebuilt where the conventions say it and **said as lossy** in the session's
notes: JSON-RPC ids of requests that had none on the span (made up), string ids that look like numbers
(read as numbers), the params and results of a span exported without content (only names, URIs and
error codes remain), notification ids and params beyond what the event says (a progress token is made
up to tie a progress event to its request), a task's polls and a multi-round-trip request's
``requestState`` (events and links only), raw bytes, stderr and the transport's headers. The session
header comes from the session span and the resource (id, label, server command, transport).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import cut_repr
from mcpreel.formats._source import Source, iter_json_lines
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.operations.facts import META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO

NAME = "otlp"

_INT = re.compile(r"^-?(0|[1-9][0-9]{0,17})$")
_KIND_NAMES = {"SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2, "SPAN_KIND_CLIENT": 3}
_ERROR = (2, "STATUS_CODE_ERROR")
#: ``error.type`` values that are not JSON-RPC error codes
_NOT_CODES = ("tool_error", "cancelled", "task_failed")


def looks_like_otlp(obj: Any) -> bool:
    """An OTLP ``ExportTraceServiceRequest`` in JSON (``resourceSpans``)."""
    return type(obj) is dict and isinstance(obj.get("resourceSpans"), list)


# -- OTLP JSON values ---------------------------------------------------------------------------------


def _any_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError, OverflowError):
            return None
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        items = value["arrayValue"].get("values") if isinstance(value["arrayValue"], dict) else None
        return [_any_value(v) for v in items if isinstance(v, dict)] if isinstance(items, list) else []
    if "kvlistValue" in value:
        kv = value["kvlistValue"].get("values", []) if isinstance(value["kvlistValue"], dict) else []
        return _attributes(kv)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                out[item["key"]] = _any_value(item.get("value"))
    return out


def _ns(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


@dataclass
class _Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    start: int
    end: int
    attrs: dict[str, Any]
    events: list[tuple[int, str, dict[str, Any]]]
    error: bool
    status_message: str
    resource: dict[str, Any]
    flags: int = 1
    trace_state: str = ""
    children: list[_Span] = field(default_factory=list)

    @property
    def method(self) -> str | None:
        method = self.attrs.get("mcp.method.name")
        if isinstance(method, str) and method:
            return method
        if self.attrs.get("openinference.span.kind") == "TOOL" and isinstance(self.attrs.get("tool.name"), str):
            return "tools/call"
        return None


def _span(source: Source, raw: Any, resource: dict[str, Any], where: str) -> _Span:
    if not isinstance(raw, dict):
        raise source.fail(f"{where}: a span must be a JSON object, found {jsonio.type_name(raw)}")
    start, end = _ns(raw.get("startTimeUnixNano")), _ns(raw.get("endTimeUnixNano"))
    if start is None:
        raise source.fail(f"{where}: startTimeUnixNano is missing or not a number")
    kind = raw.get("kind", 0)
    kind = _KIND_NAMES.get(kind, 0) if isinstance(kind, str) else kind if type(kind) is int else 0
    status: dict[str, Any] = raw["status"] if isinstance(raw.get("status"), dict) else {}
    message = status.get("message")
    state = raw.get("traceState")
    events = []
    listed = raw.get("events")
    for event in listed if isinstance(listed, list) else ():
        if isinstance(event, dict) and isinstance(event.get("name"), str):
            events.append((_ns(event.get("timeUnixNano")) or start, event["name"], _attributes(event.get("attributes"))))
    flags = raw.get("flags")
    return _Span(_word(raw.get("traceId", "")), _word(raw.get("spanId", "")), _word(raw.get("parentSpanId") or ""),
                 _word(raw.get("name", "")), kind, start, end if end is not None else start,
                 _attributes(raw.get("attributes")), events, status.get("code") in _ERROR,
                 message if isinstance(message, str) else "", resource,
                 (flags & 0xFF) if type(flags) is int and flags else 1, state if isinstance(state, str) else "")


def _word(value: Any) -> str:
    """A span's id or name as text: ``str`` of a scalar, the cut repr of anything else (``str`` of a value
    nested to the readers' limit recurses past the interpreter's, issue 40)."""
    return value if isinstance(value, str) else cut_repr(value)


def _requests(source: Source) -> list[tuple[Any, int]]:
    """The ExportTraceServiceRequests of the file (one document, or one a line) with where each stood."""
    head, more = source.first_line()
    if more:
        try:
            first = jsonio.loads(head)
        except (ValueError, UnicodeDecodeError):
            first = None  # not a whole value on line 1: one document over many lines
        if looks_like_otlp(first):
            return [(obj, line) for line, obj in iter_json_lines(source)]
    return [(source.document(), 1)]


def _spans(source: Source) -> list[_Span]:
    spans: list[_Span] = []
    for doc, line in _requests(source):
        if not looks_like_otlp(doc):
            raise source.fail(f"line {line} is not an OTLP ExportTraceServiceRequest (no resourceSpans)", line=line)
        for rs in doc["resourceSpans"]:
            if not isinstance(rs, dict):
                raise source.fail(f"line {line}: resourceSpans holds {jsonio.type_name(rs)}, not an object", line=line)
            res = rs.get("resource")
            resource = _attributes(res.get("attributes") if isinstance(res, dict) else None)
            scopes = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []
            if not isinstance(scopes, list):
                raise source.fail(f"line {line}: scopeSpans holds {jsonio.type_name(scopes)}, not an array", line=line)
            for ss in scopes:
                found = (ss.get("spans") if isinstance(ss, dict) else None) or []
                if not isinstance(found, list):
                    raise source.fail(f"line {line}: spans holds {jsonio.type_name(found)}, not an array", line=line)
                for i, raw in enumerate(found):
                    spans.append(_span(source, raw, resource, f"line {line}, span {i + 1}"))
    return spans


# -- spans -> messages ----------------------------------------------------------------------------------


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return jsonio.loads(value)
    except (ValueError, UnicodeDecodeError):
        return value


def _rpc_id(value: Any) -> Any:
    if isinstance(value, str) and _INT.match(value):
        return int(value)
    return value


class _Builder:
    """Turns spans into timed messages and counts what was made up or left out (the lossy notes)."""

    def __init__(self, spans: list[_Span]):
        self.spans = spans
        self.by_id = {s.span_id: s for s in spans}
        self.out: list[tuple[int, int, Message]] = []
        self.order = 0
        self.made_ids = 0
        self.bare = 0  # MCP spans without content
        self.skipped = 0  # spans of another kind (an LLM's, a chain's)
        self.task_events = 0
        self.tokens = 0
        self.next_id = 1_000_000

    def add(self, t_ns: int, d: str, raw: dict[str, Any], phase: int) -> None:
        t = t_ns // 1_000_000
        self.out.append((t * 4 + phase, self.order, Message(d, raw, t)))
        self.order += 1

    def roots(self) -> list[_Span]:
        return [s for s in self.spans if s.method is None and s.parent_id not in self.by_id and
                (s.name.startswith("mcp session") or any(k.startswith("mcpreel.") for k in s.attrs))]

    def root_of(self, span: _Span) -> _Span | None:
        seen = 0
        while span.parent_id in self.by_id and seen < 1000:
            span = self.by_id[span.parent_id]
            seen += 1
        return span if span.method is None else None

    def build(self) -> None:
        roots = self.roots()
        discovered: set[str] = set()
        for span in sorted(self.spans, key=lambda s: (s.start, s.end)):
            method = span.method
            if method is None:
                if span not in roots:
                    self.skipped += 1
                else:
                    self.root_events(span)
                continue
            self.request_span(span, method, discovered)

    def root_events(self, root: _Span) -> None:
        for t, name, attrs in root.events:
            self.notification(t, name, attrs, None)

    def notification(self, t: int, name: str, attrs: dict[str, Any], token: Any) -> None:
        if not name.startswith("notifications/"):
            self.task_events += 1  # a task's poll or result: an event, no longer a request
            return
        d = "out" if attrs.get("mcpreel.direction") == "server_to_client" else "in"
        params = _json(attrs.get("mcpreel.params"))
        if not isinstance(params, dict):
            params = {}
            if name == "notifications/progress":
                for key, attr in (("progress", "mcp.progress"), ("total", "mcp.progress.total"),
                                  ("message", "mcp.progress.message")):
                    if attr in attrs:
                        params[key] = attrs[attr]
            elif name == "notifications/cancelled" and "jsonrpc.request.id" in attrs:
                params["requestId"] = _rpc_id(attrs["jsonrpc.request.id"])
                if isinstance(attrs.get("mcpreel.reason"), str):
                    params["reason"] = attrs["mcpreel.reason"]
            elif name == "notifications/message" and isinstance(attrs.get("mcp.log.level"), str):
                params["level"] = attrs["mcp.log.level"]
        if token is not None and name == "notifications/progress":
            params.setdefault("progressToken", token)
        raw: dict[str, Any] = {"jsonrpc": "2.0", "method": name}
        if params:
            raw["params"] = params
        self.add(t, d, raw, 1)

    def params_of(self, span: _Span, method: str) -> Any:
        a = span.attrs
        given = _json(a.get("input.value"))
        if "mcp.method.name" not in a:  # another tool's OpenInference TOOL span: its input is the arguments
            return {"name": a["tool.name"], **({"arguments": given} if given is not None else {})}
        if isinstance(given, dict):
            return dict(given)
        params: dict[str, Any] = {}
        if method == "tools/call":
            name = a.get("gen_ai.tool.name", a.get("tool.name"))
            if isinstance(name, str):
                params["name"] = name
            if "gen_ai.tool.call.arguments" in a:
                params["arguments"] = _json(a["gen_ai.tool.call.arguments"])
            else:
                self.bare += 1
        elif method == "prompts/get" and isinstance(a.get("gen_ai.prompt.name"), str):
            params["name"] = a["gen_ai.prompt.name"]
        elif method.startswith("resources/") and isinstance(a.get("mcp.resource.uri"), str):
            params["uri"] = a["mcp.resource.uri"]
        return params

    def _meta(self, span: _Span, params: dict[str, Any], method: str, root: _Span | None,
              discovered: set[str]) -> None:
        meta: dict[str, Any] = {}
        if span.parent_id and span.parent_id not in self.by_id:
            meta["traceparent"] = f"00-{span.trace_id}-{span.parent_id}-{span.flags & 1:02x}"
            if span.trace_state:
                meta["tracestate"] = span.trace_state
        stateless = root is not None and not any(
            s.method == "initialize" and self.root_of(s) is root for s in self.spans)
        version = span.attrs.get("mcp.protocol.version")
        if stateless and isinstance(version, str) and method != "initialize" and span.kind != 2:
            meta[META_PROTOCOL_VERSION] = version
            client = root.attrs.get("mcpreel.client") if root is not None else None
            if isinstance(client, str) and root is not None and root.span_id not in discovered:
                meta[META_CLIENT_INFO] = {"name": client}
                discovered.add(root.span_id)
        if any(name == "notifications/progress" for _, name, _ in span.events):
            self.tokens += 1
            meta["progressToken"] = f"otlp-{self.tokens}"
        if meta:
            params["_meta"] = {**meta, **(params.get("_meta") or {})}

    def request_span(self, span: _Span, method: str, discovered: set[str]) -> None:
        a = span.attrs
        root = self.root_of(span)
        server_side = span.kind == 2
        d_req, d_res = ("out", "in") if server_side else ("in", "out")
        rid = a.get("jsonrpc.request.id")
        if rid is None:
            rid = self.next_id
            self.next_id += 1
            self.made_ids += 1
        rid = _rpc_id(rid)
        params = self.params_of(span, method)
        if method == "initialize" and root is not None and isinstance(root.attrs.get("mcpreel.client"), str):
            params.setdefault("clientInfo", {"name": root.attrs["mcpreel.client"]})
        self._meta(span, params, method, root, discovered)
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            request["params"] = params
        self.add(span.start, d_req, request, 0)
        token = (params.get("_meta") or {}).get("progressToken") if isinstance(params, dict) else None
        for t, name, attrs in span.events:
            self.notification(t, name, attrs, token)
        if a.get("mcpreel.unanswered") is True:
            return
        self.add(span.end, d_res, {"jsonrpc": "2.0", "id": rid, **self.answer(span, method, root)}, 2)

    def answer(self, span: _Span, method: str, root: _Span | None) -> dict[str, Any]:
        a = span.attrs
        error_type = a.get("error.type")
        code = a.get("rpc.response.status_code", error_type)
        if (span.error and error_type not in _NOT_CODES) or a.get("mcpreel.era_fallback") is True:
            given_error = _json(a.get("output.value"))
            if isinstance(given_error, dict) and type(given_error.get("code")) is int:
                return {"error": given_error}  # OpenInference's output.value holds the error itself
            number = _rpc_id(code)
            return {"error": {"code": number if isinstance(number, int) else -32603, "message": span.status_message}}
        given = _json(a.get("output.value", a.get("gen_ai.tool.call.result")))
        if "mcp.method.name" not in a and "output.value" in a:  # another tool's TOOL span: its output as text
            text = a["output.value"] if isinstance(a["output.value"], str) else jsonio.dumps_str(a["output.value"])
            told: dict[str, Any] = {"content": [{"type": "text", "text": text}], **({"isError": True} if span.error else {})}
            return {"result": {**told, "structuredContent": given} if isinstance(given, dict) else told}
        if isinstance(given, dict) and ("output.value" in a or "gen_ai.tool.call.result" in a):
            return {"result": given}
        result: dict[str, Any] = {}
        if error_type == "tool_error":
            result = {"content": [{"type": "text", "text": span.status_message}], "isError": True}
        elif method == "tools/call":
            result = {"content": []}
        if isinstance(a.get("mcp.result.type"), str):
            result["resultType"] = a["mcp.result.type"]
        server = root.name[len("mcp session "):] if root is not None and root.name.startswith("mcp session ") else ""
        info = {"name": server, "version": span.resource.get("service.version", "")} if server else None
        if method == "initialize":
            if isinstance(a.get("mcp.protocol.version"), str):
                result["protocolVersion"] = a["mcp.protocol.version"]
            if info:
                result["serverInfo"] = info
        elif method == "server/discover" and info:
            result["_meta"] = {META_SERVER_INFO: info}
        return {"result": result}


def _header(info: SessionInfo, roots: list[_Span], spans: list[_Span]) -> None:
    resource = spans[0].resource if spans else {}
    producer = resource.get("mcpreel.recorder.name")
    if isinstance(producer, str):
        info.producer = {"name": producer, **({"version": resource["mcpreel.recorder.version"]}
                                               if isinstance(resource.get("mcpreel.recorder.version"), str) else {})}
    else:
        info.producer = {"name": "otlp"}
    if not roots:
        session_id = next((s.attrs["session.id"] for s in spans if isinstance(s.attrs.get("session.id"), str)), None)
        info.id = session_id  # OpenInference's session, when another tool's spans name one
        return
    root = roots[0]
    a = root.attrs
    session_id = a.get("mcp.session.id")
    info.id = session_id if isinstance(session_id, str) else None
    label = a.get("mcpreel.session.label")
    info.label = label if isinstance(label, str) else None
    command = a.get("mcpreel.server.command")
    if isinstance(command, str) and command:
        info.command = command.split(" ")
    transport = a.get("network.transport")
    info.transport = {"pipe": "stdio", "tcp": "streamable-http"}.get(transport) if isinstance(transport, str) else None
    if isinstance(a.get("server.address"), str):
        port = a.get("server.port")
        info.metadata["otlp_server"] = f"{a['server.address']}:{port}" if port else a["server.address"]
    if type(a.get("mcpreel.server.exit_code")) is int:
        info.exit_code = a["mcpreel.server.exit_code"]
    info.started = min(r.start for r in roots) // 1_000_000
    info.ended = max(r.end for r in roots) // 1_000_000
    if isinstance(resource.get("mcpreel.source.format"), str):
        info.metadata["otlp_source_format"] = resource["mcpreel.source.format"]


def _notes(info: SessionInfo, b: _Builder) -> None:
    info.notes.append("read from OTLP spans: lossy (a span keeps a request's method, id, names and times; "
                      "framing, raw bytes, stderr and transport headers are not in spans)")
    if b.bare:
        info.notes.append(f"{b.bare} tool call span{'s' if b.bare != 1 else ''} carry no content (exported without "
                          "--include-content): their arguments and results are empty")
    if b.made_ids:
        info.notes.append(f"{b.made_ids} span{'s' if b.made_ids != 1 else ''} had no jsonrpc.request.id: ids made up")
    if b.tokens:
        info.notes.append(f"progress tokens made up for {b.tokens} request{'s' if b.tokens != 1 else ''} "
                          "(spans keep the progress, not the token)")
    if b.task_events:
        info.notes.append(f"{b.task_events} task poll/result event{'s' if b.task_events != 1 else ''} kept as "
                          "counts only (not requests again)")
    if b.skipped:
        info.notes.append(f"skipped {b.skipped} span{'s that are' if b.skipped != 1 else ' that is'} not an MCP "
                          "request (another kind: an LLM's, a chain's)")


def read(source: Source) -> Session:
    """Read MCP spans from an OTLP JSON file into a session (lossy: the notes say what was made up)."""
    spans = _spans(source)
    if not spans:
        raise source.fail("the OTLP file holds no spans")
    builder = _Builder(spans)
    builder.build()
    info = SessionInfo(source_format=NAME, path=source.name)
    _header(info, builder.roots(), spans)
    _notes(info, builder)
    builder.out.sort(key=lambda item: (item[0], item[1]))
    return Session(info, [m for _, _, m in builder.out])
