"""Talking to a legacy HTTP+SSE server (MCP 2024-11-05): the probe behind ``mcpreel check http://…/sse``.

The client opens an event stream (``GET /sse``); its first event, ``endpoint``, names the URL to POST
every message to (the Python SDK: ``/messages/?session_id=…``, TypeScript: ``/message?sessionId=…``).
A POST only says 202; the answers come back as ``message`` events on the stream. So this probe is a
stream reader like the stdio probe: a thread turns events into messages, and a request waits for the
message that answers it. It keeps every exchange as an :class:`~mcpreel.check.probe.Exchange` and
judges nothing, like the other probes.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

from mcpreel._infra import jsonio
from mcpreel._infra.sse import SSEParser
from mcpreel.check.probe import Exchange, Unreachable, _HTTPBase, _is_response, _is_server_request, _same_id, excerpt

__all__ = ["SseProbe", "is_legacy_sse_url"]


def is_legacy_sse_url(url: str) -> bool:
    """True for a URL whose path ends in ``/sse``: the convention of legacy HTTP+SSE servers."""
    return urlsplit(url).path.rstrip("/").endswith("/sse")


class SseProbe(_HTTPBase):
    """Holds the server's event stream open and POSTs JSON-RPC to the endpoint it names."""

    transport = "sse"

    def __init__(self, url: str, *, timeout: float = 10.0, headers: dict[str, str] | None = None,
                 transport: Any = None) -> None:
        super().__init__(url, timeout=timeout, headers=headers, transport=transport, read_timeout=None)
        self.endpoint: str | None = None
        self.noise: list[str] = []  # event data that was not JSON
        self._inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._closed_why: str | None = None
        self._eof = False
        self._stream: Any = None  # the GET response, closed to end the reader
        self._reader = threading.Thread(target=self._read_stream, daemon=True)
        self._reader.start()
        self._wait_for_endpoint()

    def _read_stream(self) -> None:
        headers = {"Accept": "text/event-stream", **self.extra_headers}
        why = "the server closed the event stream"
        try:
            with self.client.stream("GET", self.url, headers=headers) as resp:
                self._stream = resp
                ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
                if resp.status_code != 200 or ctype != "text/event-stream":
                    body = resp.read()[:300]
                    self._inbox.put(("refused", f"GET {self.target} answered {resp.status_code} "
                                                f"{ctype or 'no content type'} {excerpt(body, 120)}".rstrip()))
                    return
                parser = SSEParser()
                for chunk in resp.iter_bytes():
                    for ev in parser.feed(chunk):
                        if ev.comment is not None:
                            continue
                        if ev.event == "endpoint":
                            self._inbox.put(("endpoint", ev.data.strip()))
                            continue
                        try:
                            self._inbox.put(("msg", jsonio.loads(ev.data)))
                        except (ValueError, UnicodeDecodeError, RecursionError):
                            self.noise.append(ev.data)
                            self._inbox.put(("bad", ev.data))
        except (self._httpx.ConnectError, self._httpx.ConnectTimeout) as exc:
            why = f"cannot reach {self.target}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        except self._httpx.HTTPError as exc:
            why = f"the event stream failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        except (RuntimeError, OSError):  # the check closed the stream under the reader: it is over
            why = "the check closed the event stream"
        self._inbox.put(("eof", why))

    def _wait_for_endpoint(self) -> None:
        deadline = time.monotonic() + self.timeout
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                kind, value = self._inbox.get(timeout=remaining)
            except queue.Empty:
                break
            if kind == "endpoint":
                self.endpoint = urljoin(self.url, value)
                return
            if kind in ("refused", "eof"):
                self.close()
                hint = "" if kind == "eof" else (": not a legacy HTTP+SSE stream (for Streamable HTTP give the "
                                                 "POST endpoint, e.g. …/mcp)")
                raise Unreachable(f"{value}{hint}")
        self.close()
        raise Unreachable(f"{self.target}: no endpoint event on the event stream within {self.timeout:g} s")

    def exited_reason(self) -> str:
        return self._closed_why or "the server closed the event stream"

    @property
    def alive(self) -> bool:
        return not self._eof

    def send(self, body: bytes, *, label: str, request_id: Any = None, timeout: float | None = None,
             settle: float = 0.0, **_: Any) -> Exchange:
        """POST one message; wait on the stream for the answer to ``request_id`` (or ``settle`` seconds)."""
        assert self.endpoint is not None
        ex = Exchange(label=label, sent=body, request_id=request_id)
        self.exchanges.append(ex)
        start = time.monotonic()
        limit = self.timeout if timeout is None else timeout
        if self._eof:
            ex.error = self.exited_reason()
            return ex
        try:
            resp = self.client.post(self.endpoint, content=body, timeout=self._httpx.Timeout(limit),
                                    headers={"Content-Type": "application/json", **self.extra_headers})
        except self._httpx.HTTPError as exc:
            ex.error = f"POST {urlsplit(self.endpoint).path} failed: {str(exc).splitlines()[0] if str(exc) else exc}"
            return ex
        if not 200 <= resp.status_code < 300:
            ex.error = f"POST answered {resp.status_code}: {excerpt(resp.content, 160)}"
        deadline = start + (limit if request_id is not None else settle)
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                kind, value = self._inbox.get(timeout=remaining)
            except queue.Empty:
                break
            if kind == "eof":
                self._eof, self._closed_why = True, value
                ex.error = ex.error or value
                break
            if kind == "bad":
                ex.bad_frames.append(value)
                continue
            if kind != "msg":
                continue
            ex.messages.append(value)
            if _is_server_request(value):
                self._answer(value)
                continue
            if request_id is not None and _is_response(value) and ex.response is None:
                if value.get("id") == request_id and type(value.get("id")) is type(request_id):
                    ex.response = value
                    break
                if _same_id(value.get("id"), request_id):
                    ex.response, ex.id_exact = value, False
                    break
        if request_id is not None and ex.response is None and not ex.error:
            ex.error = f"no answer on the event stream within {limit:g} s"
        ex.elapsed_ms = int((time.monotonic() - start) * 1000)
        return ex

    def drain(self, seconds: float) -> list[Any]:
        """Messages that arrive on the stream within ``seconds`` with nothing sent."""
        out: list[Any] = []
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                kind, value = self._inbox.get(timeout=remaining)
            except queue.Empty:
                break
            if kind == "eof":
                self._eof, self._closed_why = True, value
                break
            if kind == "msg":
                if _is_server_request(value):
                    self._answer(value)
                out.append(value)
        return out

    def _answer(self, req: dict[str, Any]) -> None:
        self.server_requests.append(req)
        if self.endpoint is not None:
            with contextlib.suppress(self._httpx.HTTPError):
                self.client.post(self.endpoint, content=jsonio.dumps(self._answer_for(req)),
                                 headers={"Content-Type": "application/json", **self.extra_headers})

    def close(self) -> None:
        """End the event stream: shut its socket down, which wakes the reader blocked in a read (closing
        the response from this thread would not), so the server sees the client go at once."""
        net = self._stream.extensions.get("network_stream") if self._stream is not None else None
        sock = net.get_extra_info("socket") if net is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.client.close()
        self._reader.join(timeout=2.0)
