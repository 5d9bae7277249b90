"""Talking to a legacy HTTP+SSE server (MCP 2024-11-05): the probe behind ``mcpreel check http://…/sse``.

The client opens an event stream (``GET /sse``); its first event, ``endpoint``, names the URL to POST
every message to (the Python SDK: ``/messages/?session_id=…``, TypeScript: ``/message?sessionId=…``).
A POST only says 202; the answers come back as ``message`` events on the stream. So this probe is the
HTTP probe base for its POSTs (the transport's probe mode) and a stream reader like the stdio probe for
the answers (:class:`~mcpreel.check.probe._Arrivals` over a :class:`~mcpreel.clients.LegacySSETransport`).
It keeps every exchange as an :class:`~mcpreel.check.probe.ProbeExchange` and judges nothing.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from mcpreel.check.probe import ProbeExchange, Unreachable, _Arrivals, _HttpProbeBase, excerpt
from mcpreel.errors import TransportError

__all__ = ["SseProbe", "is_legacy_sse_url"]

_NOT_A_STREAM = ": not a legacy HTTP+SSE stream (for Streamable HTTP give the POST endpoint, e.g. …/mcp)"


def is_legacy_sse_url(url: str) -> bool:
    """True for a URL whose path ends in ``/sse``: the convention of legacy HTTP+SSE servers."""
    return urlsplit(url).path.rstrip("/").endswith("/sse")


class SseProbe(_HttpProbeBase):
    """Holds the server's event stream open and POSTs JSON-RPC to the endpoint it names."""

    transport = "sse"

    def __init__(self, url: str, *, timeout: float = 10.0, headers: dict[str, str] | None = None,
                 transport: Any = None) -> None:
        super().__init__(url, timeout=timeout, headers=headers)
        from mcpreel.clients.http import LegacySSETransport

        self.sse = LegacySSETransport(url, headers=self.extra_headers, timeout=timeout, http_transport=transport)
        self.wire = self.sse
        self._arrivals = _Arrivals(self.sse, self._answer)
        try:
            self._loop.run(self.sse.start())
        except TransportError as exc:
            self._loop.close()
            raise Unreachable(self._refusal(exc)) from None
        self.endpoint: str | None = self.sse.endpoint

    def _refusal(self, exc: TransportError) -> str:
        """Why the event stream gave no endpoint, in one line."""
        answer = self.sse.stream_answer
        if answer is not None and answer.status is not None and (answer.status != 200 or not answer.is_sse):
            said = f"GET {self.target} answered {answer.status} {answer.content_type or 'no content type'} "
            return (said + excerpt(answer.body, 120)).rstrip() + _NOT_A_STREAM
        if answer is not None and answer.error:
            return answer.error
        if "no endpoint event within" in str(exc):
            return f"{self.target}: no endpoint event on the event stream within {self.timeout:g} s"
        return "the server closed the event stream"

    def _post_route(self) -> tuple[str, dict[str, Any]]:
        assert self.endpoint is not None
        return self.endpoint, {"Content-Type": "application/json", **self.extra_headers}

    @property
    def noise(self) -> list[str]:
        """event data that was not JSON"""
        return self._arrivals.noise

    def exited_reason(self) -> str:
        return self.sse.ended or "the server closed the event stream"

    @property
    def alive(self) -> bool:
        return not self._arrivals.eof

    def send(self, body: bytes, *, label: str, request_id: Any = None, timeout: float | None = None,
             settle: float = 0.0, **_: Any) -> ProbeExchange:
        """POST one message; wait on the stream for the answer to ``request_id`` (or ``settle`` seconds)."""
        assert self.endpoint is not None
        ex = ProbeExchange(label=label, sent=body, request_id=request_id)
        self.exchanges.append(ex)
        start = time.monotonic()
        limit = self.timeout if timeout is None else timeout
        if self._arrivals.eof:
            ex.error = self.exited_reason()
            return ex
        url, headers = self._post_route()  # every message goes to the endpoint the stream named
        wire = self._exchange(ex, body, headers=headers, limit=limit, url=url)
        if wire.status is None:
            ex.error = f"POST {urlsplit(self.endpoint).path} failed: {wire.reason or wire.error}"
            return ex
        if not wire.ok_status:
            ex.error = f"POST answered {wire.status}: {excerpt(wire.body, 160)}"
        self._loop.run(self._arrivals.collect(ex, start + (limit if request_id is not None else settle)))
        if self._arrivals.eof and ex.response is None:
            ex.error = ex.error or self.exited_reason()
        elif request_id is not None and ex.response is None and not ex.error:
            ex.error = f"no answer on the event stream within {limit:g} s"
        ex.elapsed_ms = int((time.monotonic() - start) * 1000)
        return ex

    def drain(self, seconds: float) -> list[Any]:
        """Messages that arrive on the stream within ``seconds`` with nothing sent."""
        return self._loop.run(self._arrivals.drain(seconds))
