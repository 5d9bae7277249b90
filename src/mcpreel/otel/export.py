"""Spans out through the OpenTelemetry Python SDK: OTLP/HTTP protobuf to a collector, or OTLP JSON to a file.

:class:`~mcpreel.otel.mapping.SpanRecord` s become the SDK's ``ReadableSpan`` s (the recorded times and
ids are kept: no tracer is involved) and go to the SDK's own ``OTLPSpanExporter`` or, for a file, through
the same exporter's protobuf encoder (``encode_spans``) and protobuf's JSON mapping, with the ids as hex
as OTLP/JSON wants them. Nothing is hand-built.

The file is JSON Lines: one ``ExportTraceServiceRequest`` per batch (the OpenTelemetry Collector's
``otlpjsonfile`` receiver and the file exporter's layout); a session of up to :data:`BATCH` spans is one
line, so one JSON document.

The SDK is an optional dependency (``pip install 'mcpreel[otel]'``): importing this module without it
raises a :class:`~mcpreel.errors.UsageError` that says so.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from mcpreel._infra import jsonio
from mcpreel._version import __version__
from mcpreel.errors import TransportError, UsageError
from mcpreel.model import Session
from mcpreel.otel.mapping import SpanMapper, SpanRecord

try:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExportResult
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState
except ImportError as exc:  # pragma: no cover - depends on the install
    raise UsageError("OpenTelemetry export needs the OpenTelemetry SDK: pip install 'mcpreel[otel]'") from exc

__all__ = ["BATCH", "CONVENTIONS", "ExportSummary", "endpoint_url", "export_session", "mapper_for", "otlp_exporter", "readable_spans", "to_otlp_json"]

#: spans per export call (the SDK's batch processor default)
BATCH = 512

_KINDS = {"client": SpanKind.CLIENT, "server": SpanKind.SERVER, "internal": SpanKind.INTERNAL}
_SCOPE = InstrumentationScope("mcpreel", __version__)


def _context(trace_id: int, span_id: int, *, remote: bool = False, flags: int = 1, state: str | None = None) -> SpanContext:
    trace_state = None
    if state:
        try:
            trace_state = TraceState.from_header([state])
        except Exception:  # an unparsable tracestate is dropped, as the W3C spec says
            trace_state = None
    return SpanContext(trace_id, span_id, is_remote=remote, trace_flags=TraceFlags(flags), trace_state=trace_state)


def _utf8(text: str) -> str:
    """``text`` as protobuf can encode it: a lone surrogate (valid in a JSON string, not in UTF-8) is U+FFFD."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _utf8_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    def clean(v: Any) -> Any:
        if isinstance(v, str):
            return _utf8(v)
        if type(v) is int and not -(2**63) <= v < 2**63:  # past OTLP's int64: its digits
            return str(v)
        if isinstance(v, (list, tuple)) and all(isinstance(x, (str, bool, int, float)) for x in v):
            return [clean(x) for x in v]
        if isinstance(v, (dict, list, tuple)):  # no attribute value (a method that is an object): its JSON text
            return _utf8(jsonio.dumps_str(v))
        return v

    return {_utf8(k): clean(v) for k, v in attrs.items()}


def readable_spans(records: Iterable[SpanRecord], resource_attributes: dict[str, Any]) -> list[ReadableSpan]:
    """The SDK's view of our spans, under one resource; text protobuf cannot encode (a lone surrogate from
    the session) is replaced, and a name that is not text (a method that is a list) is written short."""
    from mcpreel._infra.nesting import cut_repr

    resource = Resource.create(_utf8_attrs(resource_attributes))
    out = []
    for r in records:
        r.name = _utf8(r.name if isinstance(r.name, str) else cut_repr(r.name))
        r.attributes = _utf8_attrs(r.attributes)
        r.error = None if r.error is None else _utf8(r.error if isinstance(r.error, str) else cut_repr(r.error))
        for e in r.events:
            e.name = _utf8(e.name if isinstance(e.name, str) else cut_repr(e.name))
            e.attributes = _utf8_attrs(e.attributes)
        for link in r.links:
            link.attributes = _utf8_attrs(link.attributes)
        context = _context(r.trace_id, r.span_id, flags=r.trace_flags, state=r.trace_state)
        parent = None
        if r.parent_id is not None:
            parent = _context(r.trace_id, r.parent_id, remote=r.parent_remote, flags=r.trace_flags, state=r.trace_state)
        status = Status(StatusCode.ERROR, r.error) if r.error is not None else Status(StatusCode.UNSET)
        out.append(ReadableSpan(
            name=r.name, context=context, parent=parent, resource=resource, attributes=r.attributes,
            events=[Event(e.name, e.attributes, e.time_ns) for e in r.events],
            links=[Link(_context(link.trace_id, link.span_id), link.attributes) for link in r.links],
            kind=_KINDS[r.kind], status=status, start_time=r.start_ns, end_time=r.end_ns,
            instrumentation_scope=_SCOPE,
        ))
    return out


def _hex_ids(node: Any) -> None:
    """protobuf's JSON mapping writes bytes as base64; OTLP/JSON wants trace and span ids as hex."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)


def to_otlp_json(spans: list[ReadableSpan]) -> dict[str, Any]:
    """One ``ExportTraceServiceRequest`` as OTLP/JSON (camelCase names, integer enums, hex ids)."""
    from google.protobuf.json_format import MessageToDict

    doc = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    _hex_ids(doc)
    return doc


def endpoint_url(endpoint: str | None) -> str | None:
    """``--endpoint`` as the base URL of a collector, like ``OTEL_EXPORTER_OTLP_ENDPOINT``: ``/v1/traces``
    is added unless the URL already has a path. None: the exporter reads the standard variables."""
    if endpoint is None:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        from mcpreel.redact.urls import not_a_url

        raise UsageError(f"--endpoint {not_a_url(endpoint)}")
    if parts.path in ("", "/"):
        return endpoint.rstrip("/") + "/v1/traces"
    return endpoint


def otlp_exporter(endpoint: str | None = None, *, timeout: float | None = None) -> Any:
    """The SDK's OTLP/HTTP protobuf exporter; ``OTEL_EXPORTER_OTLP_*`` variables apply (headers,
    timeout, compression, certificates, and the endpoint when none is given)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    url = endpoint_url(endpoint)
    if url is None and not (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")):
        raise UsageError("no OTLP endpoint: give --endpoint URL or --output FILE, or set OTEL_EXPORTER_OTLP_ENDPOINT")
    return OTLPSpanExporter(endpoint=url, timeout=timeout)


class ExportSummary:
    """What an export sent (spans, batches, traces), for the line the command ends with."""
    def __init__(self) -> None:
        self.spans = 0
        self.batches = 0
        self.traces: set[int] = set()


def _batches(mapper: SpanMapper, session: Session, size: int) -> Iterator[list[SpanRecord]]:
    batch: list[SpanRecord] = []
    for record in mapper.feed_all(session):
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


#: the span conventions ``export otlp --convention`` offers (the first is the default)
CONVENTIONS = ("genai", "openinference")


def mapper_for(convention: str, session: Session, *, include_content: bool = False,
               ids: Callable[[int], int] | None = None) -> SpanMapper:
    """The span mapper of a convention name (``genai`` or ``openinference``)."""
    if convention == "openinference":
        from mcpreel.otel.openinference import OpenInferenceMapper

        return OpenInferenceMapper(session, include_content=include_content, ids=ids)
    if convention != "genai":
        raise UsageError(f"unknown span convention {convention!r} (known: {', '.join(CONVENTIONS)})")
    return SpanMapper(session, include_content=include_content, ids=ids)


def export_session(
    session: Session,
    *,
    out: IO[bytes] | None = None,
    exporter: Any = None,
    include_content: bool = False,
    ids: Callable[[int], int] | None = None,
    batch: int = BATCH,
    convention: str = "genai",
) -> ExportSummary:
    """Map ``session`` to spans and send them, batch by batch, to ``exporter`` or as JSON lines to ``out``.

    ``convention`` is ``genai`` (the GenAI MCP conventions) or ``openinference``
    (:mod:`mcpreel.otel.openinference`: the same spans as OpenInference's TOOL/CHAIN spans with their input
    and output, redacted)."""
    from mcpreel._infra import jsonio

    if (out is None) == (exporter is None):
        raise UsageError("export to a file or to an endpoint: one of the two")
    mapper = mapper_for(convention, session, include_content=include_content, ids=ids)
    summary = ExportSummary()
    try:
        for records in _batches(mapper, session, batch):
            spans = readable_spans(records, mapper.resource_attributes())
            if out is not None:
                out.write(jsonio.dumps(to_otlp_json(spans)) + b"\n")
            else:
                result = exporter.export(spans)
                if result is not SpanExportResult.SUCCESS:
                    raise TransportError(f"the OTLP endpoint refused or did not take {len(spans)} spans "
                                         f"(after {summary.spans} sent)")
            summary.spans += len(records)
            summary.batches += 1
            summary.traces.update(r.trace_id for r in records)
    finally:
        if exporter is not None:
            exporter.shutdown()
    return summary
