"""The two HTTP transports of MCP, client side: Streamable HTTP and legacy HTTP+SSE.

Streamable HTTP: every message is its own ``POST`` with ``Accept: application/json,
text/event-stream``; a request's answer is one JSON body or an SSE stream that may carry server
notifications and server requests before the response; notifications and responses get 202. The
``Mcp-Session-Id`` issued on the ``initialize`` answer is sent on every later request, and from the
negotiated protocol version on, ``MCP-Protocol-Version`` too. After ``notifications/initialized`` a
``GET`` opens the optional server -> client stream (a 405 is fine). ``close()`` sends ``DELETE``.
A 2026-07-28 request (one whose ``params._meta`` names its protocol version) is stateless: its POST
carries ``MCP-Protocol-Version``, ``Mcp-Method`` and, for the methods that name something, ``Mcp-Name``,
as the official SDK sends them.

Legacy HTTP+SSE (2024-11-05): ``GET`` the SSE URL, wait for the ``endpoint`` event, ``POST`` every
message to that URI (answered 202); everything the server says comes on the stream.

An HTTP error (a 4xx/5xx page, a 401 challenge, a JSON-RPC error with a null id) reaches the caller as a
``Kind.TRANSPORT`` record whose ``ctx`` names the ``status``, the body and the ``request_ids`` it
answered, so a caller waiting for those requests stops waiting at once and can say what the server said.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx2

from mcpreel._infra import jsonio
from mcpreel._infra.sse import SSEParser
from mcpreel.clients.base import Transport
from mcpreel.eras import protocol_of_request
from mcpreel.errors import TransportError

__all__ = ["LegacySSETransport", "StreamableHTTPTransport"]

_ACCEPT_POST = "application/json, text/event-stream"
#: method -> the params member a 2026-07-28 POST mirrors in ``Mcp-Name``
_NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _header_value(value: str) -> str:
    """An ``Mcp-Name`` value as the SDK encodes it: verbatim when it is plain printable ASCII without
    edge spaces, else base64 in the ``=?base64?...?=`` sentinel."""
    import base64

    if value.isascii() and value.isprintable() and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def modern_headers(message: Any) -> dict[str, str]:
    """The routing headers of a 2026-07-28 request or notification (none for a handshake-era one)."""
    if not isinstance(message, dict):
        return {}
    version = protocol_of_request(message)
    method = message.get("method")
    if version is None or not isinstance(method, str):
        return {}
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    key = _NAME_BEARING.get(method)
    params = message.get("params")
    if key is not None and isinstance(params, dict) and isinstance(params.get(key), str):
        headers["Mcp-Name"] = _header_value(params[key])
    return headers


def _request_ids(message: Any) -> list[Any]:
    members = message if isinstance(message, list) else [message]
    return [m["id"] for m in members if isinstance(m, dict) and "method" in m and "id" in m]


def _connect_error(url: str, exc: Exception) -> TransportError:
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, httpx2.ConnectError):
        reason = f"connection refused or unreachable ({reason})"
    return TransportError(f"cannot reach {url}: {reason}")


class _HTTPBase(Transport):
    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0):
        super().__init__()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise TransportError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.client: httpx2.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        # no read timeout: an SSE stream may stay quiet for as long as the server likes
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(self.timeout, read=None), follow_redirects=False)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _pump_sse(self, resp: httpx2.Response, ctx: dict[str, Any]) -> None:
        parser = SSEParser()
        async for chunk in resp.aiter_bytes():
            for ev in parser.feed(chunk):
                if ev.comment is not None:
                    continue
                self._on_event(ev.event, ev.data, ev.id, ctx)

    def _on_event(self, event: str, data: str, event_id: str | None, ctx: dict[str, Any]) -> None:
        if event not in ("message", ""):
            self._deliver_transport({**ctx, "sse": {"event": event, "id": event_id}, "data": data})
            return
        if not data.strip():
            return  # a priming event (2025-11-25) has an id and no data
        try:
            raw = jsonio.loads(data)
        except (ValueError, UnicodeDecodeError):
            self._deliver_text("invalid", data, ctx)
            return
        self._seen(raw)
        self._deliver_json(raw, {**ctx, "sse": {"event": event or "message", "id": event_id}})

    def _seen(self, raw: Any) -> None:
        """Hook: a JSON-RPC message arrived (Streamable HTTP learns the protocol version here)."""

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.aclose()
        self._finish("closed")


class StreamableHTTPTransport(_HTTPBase):
    """A client of a Streamable HTTP server: one POST a message, answers as JSON or SSE, the session id and protocol
    headers carried for the caller."""
    name = "streamable-http"

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0,
                 get_stream: bool = True):
        super().__init__(url, headers=headers, timeout=timeout)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.get_stream = get_stream
        self._init_ids: set[Any] = set()
        self._get_started = False

    def _post_headers(self, message: Any = None) -> dict[str, str]:
        headers = {"Accept": _ACCEPT_POST, "Content-Type": "application/json", **self.headers}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        headers.update(modern_headers(message))
        return headers

    def _seen(self, raw: Any) -> None:
        if isinstance(raw, dict) and raw.get("id") in self._init_ids and isinstance(raw.get("result"), dict):
            version = raw["result"].get("protocolVersion")
            if isinstance(version, str):
                self.protocol_version = version

    async def send(self, message: Any) -> None:
        if self.client is None:
            raise TransportError("the transport is not started")
        for m in message if isinstance(message, list) else [message]:
            if isinstance(m, dict) and m.get("method") == "initialize" and "id" in m:
                self._init_ids.add(m["id"])
        request = self.client.build_request("POST", self.url, content=jsonio.dumps(message),
                                            headers=self._post_headers(message))
        try:
            resp = await self.client.send(request, stream=True)
        except httpx2.HTTPError as exc:
            raise _connect_error(self.url, exc) from exc
        sid = resp.headers.get("mcp-session-id")
        if sid:
            self.session_id = sid
        self._spawn(self._read_answer(resp, _request_ids(message)))
        if (self.get_stream and not self._get_started and isinstance(message, dict)
                and message.get("method") == "notifications/initialized"):
            self._get_started = True
            self._spawn(self._get_loop())

    async def _read_answer(self, resp: httpx2.Response, request_ids: list[Any]) -> None:
        ctx: dict[str, Any] = {"method": "POST", "status": resp.status_code}
        try:
            ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype == "text/event-stream" and resp.status_code < 400:
                await self._pump_sse(resp, ctx)
                return
            body = await resp.aread()
            if not body.strip():
                if resp.status_code >= 300 and request_ids:
                    self._deliver_transport({**ctx, "request_ids": request_ids, "body": ""})
                return
            try:
                raw = jsonio.loads(body)
            except (ValueError, UnicodeDecodeError):
                raw = None
            text = body.decode("utf-8", "replace")
            if isinstance(raw, (dict, list)) and (resp.status_code < 300 or _is_jsonrpc(raw)):
                self._seen(raw)
                self._deliver_json(raw, ctx)
                if resp.status_code < 300:
                    return
                # an error status: the JSON-RPC error may carry a null id; the requests it answered must
                # not wait for an answer that will never come (an answer with their id wins: it came first)
            self._deliver_transport({**ctx, "request_ids": request_ids, "body": text[:2000]})
        except httpx2.HTTPError as exc:
            self._deliver_transport({**ctx, "request_ids": request_ids, "error": f"the response stream broke: {exc}"})
        finally:
            await resp.aclose()

    async def _get_loop(self) -> None:
        assert self.client is not None
        headers = {"Accept": "text/event-stream", **self.headers}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        with contextlib.suppress(httpx2.HTTPError):
            async with self.client.stream("GET", self.url, headers=headers) as resp:
                if resp.status_code != 200:
                    return
                await self._pump_sse(resp, {"method": "GET", "status": 200})

    async def close(self) -> None:
        if self.client is not None and self.session_id:
            headers = {**self.headers, "Mcp-Session-Id": self.session_id}
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.delete(self.url, headers=headers), 2.0)
        await super().close()


def _is_jsonrpc(raw: Any) -> bool:
    members = raw if isinstance(raw, list) else [raw]
    return any(isinstance(m, dict) and m.get("jsonrpc") == "2.0" for m in members)


class LegacySSETransport(_HTTPBase):
    """A client of a legacy HTTP+SSE server: one GET stream for answers, POSTs to the endpoint the stream names."""
    name = "sse"

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0):
        super().__init__(url, headers=headers, timeout=timeout)
        self.endpoint: str | None = None
        self._endpoint_ready: asyncio.Future[str] | None = None

    async def start(self) -> None:
        await super().start()
        self._endpoint_ready = asyncio.get_running_loop().create_future()
        self._spawn(self._stream())
        try:
            self.endpoint = await asyncio.wait_for(asyncio.shield(self._endpoint_ready), self.timeout)
        except TimeoutError as exc:
            await self.close()
            raise TransportError(f"{self.url}: no endpoint event within {self.timeout:g} s (is it a legacy SSE URL?)") from exc
        except TransportError:
            await self.close()
            raise

    async def _stream(self) -> None:
        assert self.client is not None and self._endpoint_ready is not None
        ready = self._endpoint_ready
        try:
            async with self.client.stream("GET", self.url, headers={"Accept": "text/event-stream", **self.headers}) as resp:
                if resp.status_code != 200:
                    if not ready.done():
                        ready.set_exception(TransportError(f"{self.url}: GET answered HTTP {resp.status_code}"))
                    return
                parser = SSEParser()
                async for chunk in resp.aiter_bytes():
                    for ev in parser.feed(chunk):
                        if ev.comment is not None:
                            continue
                        if ev.event == "endpoint":
                            if not ready.done():
                                ready.set_result(urljoin(self.url, ev.data.strip()))
                            continue
                        self._on_event(ev.event, ev.data, ev.id, {"method": "GET", "status": 200})
        except httpx2.HTTPError as exc:
            if not ready.done():
                ready.set_exception(_connect_error(self.url, exc))
        finally:
            if not ready.done():
                ready.set_exception(TransportError(f"{self.url}: the SSE stream ended before an endpoint event"))
            self._finish("the server closed the SSE stream")

    async def send(self, message: Any) -> None:
        if self.client is None or self.endpoint is None:
            raise TransportError("the transport is not started")
        try:
            resp = await self.client.post(self.endpoint, content=jsonio.dumps(message),
                                          headers={"Content-Type": "application/json", **self.headers})
        except httpx2.HTTPError as exc:
            raise _connect_error(self.endpoint, exc) from exc
        if resp.status_code >= 300:
            self._deliver_transport({"method": "POST", "status": resp.status_code,
                                     "request_ids": _request_ids(message), "body": resp.text[:2000]})
