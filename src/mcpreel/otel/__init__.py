"""OpenTelemetry: a recorded session as spans with the GenAI MCP semantic conventions.

:mod:`mcpreel.otel.mapping` maps a session to spans as plain data (no SDK needed, fully testable);
:mod:`mcpreel.otel.export` hands them to the OpenTelemetry Python SDK's OTLP/HTTP exporter or writes
OTLP JSON through its encoder. ``mcpreel export otlp`` is the command line.
"""

from __future__ import annotations

from mcpreel.otel.mapping import SpanMapper, SpanRecord, parse_traceparent, spans

__all__ = ["SpanMapper", "SpanRecord", "parse_traceparent", "spans"]
