"""A session as spans in the OpenInference conventions (``export otlp --convention openinference``).

OpenInference (Arize's semantic conventions, what Phoenix, AWS AgentCore Evaluations and other evaluation
tools read) names a span's role with ``openinference.span.kind`` and carries what went in and came out as
``input.value``/``output.value`` with their ``input.mime_type``/``output.mime_type``. The spans are the
GenAI mapping's (:class:`~mcpreel.otel.mapping.SpanMapper`: one per operation, the same tree, times,
``mcp.*``/``jsonrpc.*``/``network.*`` attributes, events and links); what differs:

- ``openinference.span.kind``: ``TOOL`` for a ``tools/call``, ``PROMPT`` for a ``prompts/get``, ``CHAIN``
  for every other request and for the session span (the start of a client's work);
- ``tool.name``, and where the session listed the tool (a ``tools/list`` before the call):
  ``tool.description`` and ``tool.parameters`` (its input JSON schema, as JSON text);
- ``input.value`` (the request's params) and ``output.value`` (the answer's result, or its error) as JSON
  with ``application/json``: the point of the convention, so always written, **redacted** with the rules of
  ``mcpreel redact`` (``--include-content`` changes nothing here);
- ``session.id`` beside ``mcp.session.id`` (Phoenix groups a session's traces by it);
- no ``gen_ai.*`` attributes (the other convention's).
"""

from __future__ import annotations

from typing import Any

from mcpreel._infra import jsonio
from mcpreel.model import Session
from mcpreel.otel.mapping import SpanMapper, SpanRecord

__all__ = ["JSON_MIME", "OpenInferenceMapper"]

JSON_MIME = "application/json"
_GEN_AI = ("gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.prompt.name", "gen_ai.tool.call.arguments",
           "gen_ai.tool.call.result")


class OpenInferenceMapper(SpanMapper):
    """The GenAI mapping's spans with OpenInference's attributes in place of ``gen_ai.*`` (module doc)."""

    def __init__(self, session: Session, **kwargs: Any):
        kwargs["include_content"] = False  # content is OpenInference's own input/output, written below
        super().__init__(session, **kwargs)
        from mcpreel.redact import Redactor

        self.values = Redactor()
        self.tools: dict[str, dict[str, Any]] = {}

    def _json(self, value: Any) -> str:
        return jsonio.dumps_str(self.values.value(value))

    def _open(self, ex: Any, root: Any, parent_span: SpanRecord | None = None) -> SpanRecord:
        span = super()._open(ex, root, parent_span)
        attrs = span.attributes
        for key in _GEN_AI:
            attrs.pop(key, None)
        method = ex.method
        kind = "TOOL" if method == "tools/call" else "PROMPT" if method == "prompts/get" else "CHAIN"
        attrs["openinference.span.kind"] = kind
        if method == "tools/call":
            name = ex.tool
            attrs["tool.name"] = name
            tool = self.tools.get(name)
            if tool is not None:
                if isinstance(tool.get("description"), str):
                    attrs["tool.description"] = tool["description"]
                if isinstance(tool.get("inputSchema"), dict):
                    attrs["tool.parameters"] = jsonio.dumps_str(tool["inputSchema"])
        if ex.params is not None:
            attrs["input.value"] = self._json(ex.params)
            attrs["input.mime_type"] = JSON_MIME
        return span

    def _output(self, span: SpanRecord, response: Any) -> None:
        if not isinstance(response, dict):
            return
        value = response.get("error") if response.get("error") is not None else response.get("result")
        span.attributes["output.value"] = self._json(value)
        span.attributes["output.mime_type"] = JSON_MIME

    def _close(self, span: SpanRecord, ex: Any, root: Any, count: bool = True) -> None:
        super()._close(span, ex, root, count)
        self._output(span, ex.response)

    def _end_operation(self, span: SpanRecord, op: Any, root: Any) -> SpanRecord:
        span = super()._end_operation(span, op, root)
        final = op.final
        if op.kind == "task" and final is not None:
            response = final.response
            result = response.get("result") if isinstance(response, dict) else None
            if final.role == "poll" and isinstance(result, dict) and isinstance(result.get("result"), dict):
                response = {"result": result["result"]}  # the 2026-07-28 extension: the outcome in tasks/get
            self._output(span, response)
        return span

    def _learn(self, ex: Any, root: Any) -> None:
        super()._learn(ex, root)
        if ex.method != "tools/list":
            return
        result = (ex.response or {}).get("result")
        listed = result.get("tools") if isinstance(result, dict) else None
        for tool in listed if isinstance(listed, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tools[tool["name"]] = tool

    def _session_attr(self, span: SpanRecord, root: Any) -> None:
        super()._session_attr(span, root)
        session_id = span.attributes.get("mcp.session.id")
        if session_id:
            span.attributes["session.id"] = session_id

    def finish(self) -> list[SpanRecord]:
        out = super().finish()
        for span in out:
            if "mcp.method.name" not in span.attributes:  # a session span
                span.attributes["openinference.span.kind"] = "CHAIN"
                if span.attributes.get("mcp.session.id"):
                    span.attributes["session.id"] = span.attributes["mcp.session.id"]
        return out
