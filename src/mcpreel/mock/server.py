"""The mock's I/O: stdio, Streamable HTTP and legacy HTTP+SSE around a :class:`~mcpreel.mock.engine.Mock`.

- stdio: one connection; newline-delimited JSON-RPC on stdin/stdout, nothing else on stdout. Input is
  read in blocks and every answer a block produces goes out in one write, so a pipelining client is
  answered as fast as it can send.
- Streamable HTTP (seed 002's format): ``POST /mcp``; a request is answered as ``text/event-stream``
  (``event: message`` / ``data: <json>`` / blank line), or as one JSON body when the client accepts only
  JSON; notifications and responses get 202. ``initialize`` opens a session and its answer carries
  ``Mcp-Session-Id``; later handshake-era requests must name it (none: 400, an unknown one: 404), as the
  transport rules that ``mcpreel check --profile mcp`` enforces say. 2026-07-28 requests (protocol
  ``_meta``, no handshake) are stateless and share one sessionless connection; their POST must carry
  ``MCP-Protocol-Version``, ``Mcp-Method`` and (``tools/call``, ``prompts/get``, ``resources/read``)
  ``Mcp-Name`` agreeing with the body (else 400 and ``-32020``), at a version the recorded server supports
  (else 400 and ``-32022`` naming those it does); an error answered alone to such a POST has the era's
  HTTP status (404 for ``-32601``, 400 for the others the era names). A ``MCP-Protocol-Version`` header
  naming a version no era has gets 400. ``GET /mcp`` opens the server -> client stream that carries what the
  recording has the server say outside any request; ``DELETE /mcp`` ends the session.
- legacy HTTP+SSE on the same server: ``GET /sse`` sends the ``endpoint`` event, ``POST
  /messages/?session_id=…`` is answered 202 and everything goes out on the stream.

Bound to 127.0.0.1 by default; which requests are answered (``Origin``, ``Host``) is the policy of
:mod:`mcpreel.serving.origin`, and :mod:`mcpreel.serving.loop` serves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mcpreel._infra import jsonio
from mcpreel._infra.sse import encode_event
from mcpreel.clients.base import Transport
from mcpreel.drafts import DIGEST_CHANGED_HTTP_STATUS, LIST_QUERY_PARAMETER
from mcpreel.eras import LEGACY_PROTOCOLS, MODERN_PROTOCOL, protocol_of_request
from mcpreel.mock.engine import CLOSE, Mock, MockConnection, RawLine
from mcpreel.mock.list_gets import list_get_answer
from mcpreel.operations.facts import digest_refusal
from mcpreel.serving.loop import DropConnection
from mcpreel.serving.origin import OriginGuard, RequestPolicy

__all__ = ["http_app", "serve_stdio", "serve_transport"]

#: the protocol versions the mock speaks over HTTP (whatever the recording's own)
SUPPORTED_VERSIONS = (*LEGACY_PROTOCOLS, MODERN_PROTOCOL)

# -- stdio ------------------------------------------------------------------------------------------


async def serve_stdio(mock: Mock, *, stdin_fd: int | None = None, stdout_fd: int | None = None) -> None:
    """Serve one client on stdin/stdout until stdin ends (then finish started answers, waiting no more
    for a client's reply to a recorded server request)."""
    loop = asyncio.get_running_loop()
    in_fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
    out_fd = sys.stdout.fileno() if stdout_fd is None else stdout_fd
    write = _fd_writer(out_fd)
    conn = mock.connection()
    tasks: set[asyncio.Task[None]] = set()
    out: list[bytes] = []
    dumps = jsonio.dumps
    buffering = [False]
    closed = [False]
    # a daemon thread reads stdin, so an interrupted server never waits for a blocked read to return
    chunks: asyncio.Queue[bytes] = asyncio.Queue(maxsize=64)

    def close() -> None:
        # a rule's ``close``: what was said before goes out, then stdout ends (the client reads EOF)
        # and stdin is read no more
        if closed[0]:
            return
        closed[0] = True
        if out:
            out.append(b"")
            write(b"\n".join(out))
            out.clear()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, out_fd)
        finally:
            os.close(devnull)
        with contextlib.suppress(asyncio.QueueFull):
            chunks.put_nowait(b"")

    def emit(message: Any) -> None:
        # while a block of input is being answered, answers gather for one write; a slow answer
        # finishing later (after a client's reply to a server request) is written at once
        if closed[0]:
            return
        if message is CLOSE:
            close()
            return
        data = message if isinstance(message, RawLine) else dumps(message)
        if buffering[0]:
            out.append(data)
        else:
            write(data + b"\n")

    def answer_block(lines: list[bytes]) -> None:
        buffering[0] = True
        try:
            for line in lines:
                if closed[0]:
                    break
                _handle_line(line, conn, emit, tasks, mock)
        finally:
            buffering[0] = False
        if out:
            out.append(b"")
            write(b"\n".join(out))
            out.clear()

    def reader() -> None:
        while True:
            chunk = _read(in_fd)
            fut = asyncio.run_coroutine_threadsafe(chunks.put(chunk), loop)
            try:
                fut.result()
            except Exception:  # the loop is gone
                return
            if not chunk:
                return

    threading.Thread(target=reader, name="mcpreel-stdin", daemon=True).start()
    tail = b""
    while True:
        chunk = await chunks.get()
        if not chunk or closed[0]:
            break
        data = tail + chunk if tail else chunk
        lines = data.split(b"\n")
        tail = lines.pop()
        answer_block(lines)
    if tail.strip() and not closed[0]:
        answer_block([tail])
    conn.client_gone()
    if closed[0]:
        for task in list(tasks):
            task.cancel()
    elif tasks:
        await asyncio.wait(tasks, timeout=mock.options.answer_timeout + 5)


def _handle_line(line: bytes, conn: MockConnection, emit: Callable[[Any], None],
                 tasks: set[asyncio.Task[None]], mock: Mock) -> None:
    if not line.strip():
        return
    try:
        message = jsonio.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        mock.on_event(f"a line that is not JSON was answered with a parse error: {jsonio.error_reason(exc)}")
        emit({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        return
    pending = conn.receive(message, emit)
    if pending is not None:
        task = asyncio.ensure_future(pending)
        tasks.add(task)
        task.add_done_callback(tasks.discard)


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 20)
    except OSError:
        return b""


def _fd_writer(fd: int) -> Callable[[bytes], None]:
    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(fd, view)
            except BrokenPipeError:
                return
            view = view[n:]

    return write


# -- HTTP -------------------------------------------------------------------------------------------


class _HTTPSession:
    """One client session: its mock connection and its server -> client stream.

    What the recording has the server say outside any request waits in ``backlog`` until the client
    opens its GET stream (a client opens it only after ``notifications/initialized``, which is what
    sets the recorded ``list_changed`` notifications off).
    """

    __slots__ = ("id", "conn", "stream", "backlog", "closed")
    BACKLOG = 1000

    def __init__(self, sid: str | None, conn: MockConnection):
        self.id = sid
        self.conn = conn
        self.stream: asyncio.Queue[Any] | None = None  # the GET (or legacy SSE) stream, once open
        self.backlog: list[Any] = []
        self.closed = False

    def push(self, message: Any) -> None:
        if message is CLOSE:  # a rule's ``close``: the stream ends and the session is forgotten
            self.closed = True
            if self.stream is not None:
                self.stream.put_nowait(None)
            return
        if self.stream is not None:
            self.stream.put_nowait(message)
        elif len(self.backlog) < self.BACKLOG:
            self.backlog.append(message)

    def open_stream(self) -> None:
        self.stream = asyncio.Queue()
        for message in self.backlog:
            self.stream.put_nowait(message)
        self.backlog.clear()


#: an answer larger than this is sent in :data:`_PIECE` pieces, at most :data:`_BIG_AT_ONCE` such answers
#: at a time per server: each client asking for a big recorded answer would otherwise hold its own
#: encoded copy in the socket's buffer until it read it all (a 50 MB answer to 20 clients: 1.2 GB)
_BIG_ANSWER = 1 << 20
_PIECE = 1 << 20
_BIG_AT_ONCE = 2


def _event(message: Any) -> bytes:
    if isinstance(message, RawLine):  # a rule's ``malformed``: data that is not JSON
        return encode_event(message.decode("utf-8", "replace"))
    return encode_event(jsonio.dumps_str(message))


def _sse_parts(messages: list[Any]) -> list[bytes]:
    # compact JSON holds no raw newline, so one event is its bytes between `data: ` and a blank line
    # (the bytes encode_event writes, without copying a big answer four more times)
    parts: list[bytes] = []
    for m in messages:
        if m is CLOSE:
            continue
        if isinstance(m, RawLine):
            parts.append(_event(m))
        else:
            parts += (b"event: message\ndata: ", jsonio.dumps(m), b"\n\n")
    return parts


def _sse_bytes(messages: list[Any]) -> bytes:
    return b"".join(_sse_parts(messages))


async def _dropped(before: bytes) -> Any:
    """A body that sends ``before`` and then breaks the connection (a rule's ``close``)."""
    if before:
        yield before
    raise DropConnection("closed by a rule")


class _BigAnswer(Response):
    """A big answer (over :data:`_BIG_ANSWER`), sent in pieces while holding one of ``gate``'s places.

    The encoded ``parts`` are kept only when a place was free as the answer was made (taken at once, no
    other task runs between the handler and this call); otherwise they are dropped and encoded again once
    a place frees up. Each piece waits for the client's reading (uvicorn's drain), so what one answer holds
    is its encoded copy, and the gate bounds how many exist at a time -- not the number of clients.
    """

    def __init__(self, parts: list[bytes], encode: Callable[[], list[bytes]], gate: asyncio.Semaphore, *,
                 status_code: int, media_type: str, headers: dict[str, str] | None) -> None:
        super().__init__(None, status_code=status_code, media_type=media_type, headers=headers)
        self.parts: list[bytes] | None = None if gate.locked() else parts
        self.encode = encode
        self.gate = gate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async with self.gate:
            parts = self.parts if self.parts is not None else self.encode()
            self.parts = None
            length = str(sum(map(len, parts))).encode("ascii")
            head = [(k, length if k == b"content-length" else v) for k, v in self.raw_headers]
            await send({"type": "http.response.start", "status": self.status_code, "headers": head})
            for part in parts:
                for start in range(0, len(part), _PIECE):
                    await send({"type": "http.response.body", "body": part[start:start + _PIECE], "more_body": True})
                    # the listener's writes go out at the end of a loop turn (serving.wire): let them, so a
                    # client that reads slowly pauses this answer instead of piling it up in the buffer
                    await asyncio.sleep(0)
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _answer(encode: Callable[[], list[bytes]], gate: asyncio.Semaphore, *, media_type: str, status_code: int = 200,
            headers: dict[str, str] | None = None) -> Response:
    """A whole answer: one body when small, else a :class:`_BigAnswer`."""
    parts = encode()
    if sum(map(len, parts)) <= _BIG_ANSWER:
        return Response(b"".join(parts), status_code=status_code, media_type=media_type, headers=headers)
    return _BigAnswer(parts, encode, gate, status_code=status_code, media_type=media_type, headers=headers)


def _jsonrpc_error(code: int, message: str, status: int) -> Response:
    body = jsonio.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})
    return Response(body, status_code=status, media_type="application/json")


#: the 2026-07-28 error for routing headers that are missing or disagree with the body
HEADER_MISMATCH = -32020
#: method -> the params member its POST repeats in ``Mcp-Name``
_NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _decoded_header(value: str | None) -> str | None:
    """An ``Mcp-Name`` value: without the optional whitespace around it (RFC 9110 5.5: a field value is
    parsed without it), verbatim or the ``=?base64?...?=`` sentinel decoded."""
    if value is None:
        return None
    value = value.strip(" \t")
    if not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    import base64
    import binascii

    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


#: the HTTP status of a 2026-07-28 error answer, by JSON-RPC code (others: 200), as the era has a server send it
ERROR_STATUS = {-32700: 400, -32600: 400, -32602: 400, HEADER_MISMATCH: 400, -32021: 400, -32022: 400, -32601: 404}


def _digest_status(answers: list[Any], codes: frozenset[Any] = frozenset()) -> int:
    """409 for an answer that is one DigestChanged refusal alone (the drafts' codes, or a code the recording's
    server refused a stale digest with: ``codes``), in either era, as the recorded server sends it; else 200."""
    if len(answers) != 1 or not isinstance(answers[0], dict):
        return 200
    error = answers[0].get("error")
    if digest_refusal(answers[0]) or isinstance(error, dict) and error.get("code") in codes:
        return DIGEST_CHANGED_HTTP_STATUS
    return 200


def _error_status(answers: list[Any], codes: frozenset[Any] = frozenset()) -> int:
    """The HTTP status of a 2026 POST's answer: the era's status of its error when it is one error alone."""
    if len(answers) != 1 or not isinstance(answers[0], dict) or "error" in answers[0] and "result" in answers[0]:
        return 200
    if _digest_status(answers, codes) != 200:
        return DIGEST_CHANGED_HTTP_STATUS  # DigestChanged is 409 on Streamable HTTP (mcpreel.drafts)
    error = answers[0].get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return ERROR_STATUS.get(code, 200) if isinstance(code, int) else 200


def _header_mismatch(message: dict[str, Any], headers: Any) -> dict[str, Any] | None:
    """The ``-32020`` answer (HTTP 400) to a 2026-era POST whose ``MCP-Protocol-Version``, ``Mcp-Method`` or
    ``Mcp-Name`` is missing or differs from its body (None: they agree), as the era has a server check."""
    method = message.get("method")
    if not isinstance(method, str):
        return None
    why = None
    if headers.get("mcp-protocol-version") != protocol_of_request(message):
        why = "MCP-Protocol-Version header does not match the request envelope's protocol version"
    elif headers.get("mcp-method") != method:
        why = "Mcp-Method header does not match the request body's method"
    else:
        key = _NAME_BEARING.get(method)
        params = message.get("params")
        value = params.get(key) if key is not None and isinstance(params, dict) else None
        if value is not None and _decoded_header(headers.get("mcp-name")) != value:
            why = f"Mcp-Name header does not match the request body's {key!r} parameter"
    if why is None:
        return None
    return {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": HEADER_MISMATCH, "message": why}}


def http_app(mock: Mock, *, path: str = "/mcp", sse_path: str = "/sse", messages_path: str = "/messages/",
             allow_origins: tuple[str, ...] = (), host: str = "127.0.0.1",
             allow_hosts: tuple[str, ...] = ()) -> OriginGuard:
    """An ASGI app serving ``mock`` over Streamable HTTP (``path``) and legacy SSE (``sse_path``).

    ``host`` is the address it is served on; with ``allow_origins`` it decides which requests are
    answered (:mod:`mcpreel.serving.origin`). Each route is one method of :class:`_MockHttp`.
    """
    app = _MockHttp(mock, messages_path)
    routes = [
        Route(path, app.post_mcp, methods=["POST"]),
        Route(path, app.get_mcp, methods=["GET"]),
        Route(path, app.delete_mcp, methods=["DELETE"]),
        Route(sse_path, app.get_sse, methods=["GET"]),
        Route(messages_path, app.post_messages, methods=["POST"]),
    ]
    if messages_path.endswith("/"):
        routes.append(Route(messages_path.rstrip("/"), app.post_messages, methods=["POST"]))
    return OriginGuard(Starlette(routes=routes), RequestPolicy(tuple(allow_origins), host, allow_hosts=tuple(allow_hosts)))


class _MockHttp:
    """The mock over HTTP: its sessions (by ``Mcp-Session-Id``, one shared for stateless 2026 requests), the
    answers still being written, and one method per route."""

    def __init__(self, mock: Mock, messages_path: str) -> None:
        self.mock = mock
        self.messages_path = messages_path
        self.sessions: dict[str, _HTTPSession] = {}
        self.shared: list[_HTTPSession] = []
        self.background: set[asyncio.Task[None]] = set()
        self.big_answers = asyncio.Semaphore(_BIG_AT_ONCE)

    # -- sessions -------------------------------------------------------------------------------------
    def sessionless(self) -> _HTTPSession:
        """The one session of the requests that open none (2026-07-28 stateless, ``server/discover``)."""
        if not self.shared:
            self.shared.append(_HTTPSession(None, self.mock.connection()))
        return self.shared[0]

    def keep(self, task: asyncio.Task[None]) -> None:
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def forget(self, session: _HTTPSession) -> None:
        """After a rule's ``close`` the session is gone: its stream ends, its id is unknown (404)."""
        if session.id is not None:
            self.sessions.pop(session.id, None)
        elif self.shared and self.shared[0] is session:
            self.shared.clear()
        if session.stream is not None:
            session.stream.put_nowait(None)

    def closed(self, session: _HTTPSession, answers: list[Any]) -> bool:
        if session.closed or getattr(session.conn, "closed", False) or any(m is CLOSE for m in answers):
            self.forget(session)
            return True
        return False

    def _session_of(self, request: Request, is_init: bool, stateless: bool) -> _HTTPSession | Response:
        """The session a POST belongs to (a new one for ``initialize``), or the refusal to send."""
        sid = request.headers.get("mcp-session-id")
        if sid is not None:
            session = self.sessions.get(sid)
            return session if session is not None else _jsonrpc_error(-32001, "Session not found", 404)
        if is_init:
            sid = uuid.uuid4().hex
            session = self.sessions[sid] = _HTTPSession(sid, self.mock.connection())
            return session
        if stateless:
            return self.sessionless()
        return _jsonrpc_error(-32600, "Bad Request: Mcp-Session-Id header is required (send initialize first)", 400)

    # -- Streamable HTTP --------------------------------------------------------------------------------
    async def post_mcp(self, request: Request) -> Response:
        """A POST to the MCP endpoint: checked as the recorded server checks it, then answered as JSON or a
        stream, whichever the client accepts."""
        mock = self.mock
        body = await request.body()
        try:
            message = jsonio.loads(body)
        except (ValueError, UnicodeDecodeError):
            return _jsonrpc_error(-32700, "Parse error", 400)
        members = message if isinstance(message, list) else [message]
        is_init = any(isinstance(m, dict) and m.get("method") == "initialize" for m in members)
        stateless = any(isinstance(m, dict) and (m.get("method") == "server/discover" or protocol_of_request(m))
                        for m in members)
        modern = message if isinstance(message, dict) and protocol_of_request(message) is not None else None
        if modern is not None:  # the 2026-07-28 rules of a stateless POST, as the recorded server applies them
            refused = _header_mismatch(modern, request.headers) or mock.version_rejection(modern)
            if refused is not None:
                return Response(jsonio.dumps(refused), status_code=400, media_type="application/json")
        # a 2026 POST: its body says so, or it names its method in Mcp-Method outside any handshake session
        # (a handshake-era client never sends that header); its error answers carry the era's HTTP status
        era_2026 = modern is not None or ("mcp-method" in request.headers and "mcp-session-id" not in request.headers)
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in SUPPORTED_VERSIONS:
            return _jsonrpc_error(-32600, f"Bad Request: unsupported MCP-Protocol-Version {version!r} "
                                          f"(supported: {', '.join(SUPPORTED_VERSIONS)})", 400)
        session = self._session_of(request, is_init, stateless)
        if isinstance(session, Response):
            return session
        headers = {"mcp-session-id": session.id} if session.id else {}
        has_request = any(isinstance(m, dict) and "method" in m and "id" in m for m in members)
        if not has_request and isinstance(message, (dict, list)) and members:
            pending = session.conn.receive(message, session.push)
            if pending is not None:
                self.keep(asyncio.ensure_future(pending))
            if self.closed(session, []):
                return StreamingResponse(_dropped(b""))
            return Response(status_code=202, headers=headers)
        accept = request.headers.get("accept", "")
        if "text/event-stream" not in accept and "application/json" in accept:
            return await self._answer_json(session, message, headers, era_2026)
        return await self._answer_stream(session, message, headers, era_2026)

    async def _answer_json(self, session: _HTTPSession, message: Any, headers: dict[str, str],
                           era_2026: bool) -> Response:
        """One JSON body holding only answers: what the server says meanwhile goes on the GET stream at once
        (a recorded sampling request must reach the client before the answer it waits for)."""
        queue: list[Any] = []

        def emit(m: Any) -> None:
            if isinstance(m, dict) and "method" in m:
                session.push(m)
            else:
                queue.append(m)

        pending = session.conn.receive(message, emit)
        if pending is not None:
            await pending
        answers = queue
        if self.closed(session, answers):
            return StreamingResponse(_dropped(b""))
        if any(isinstance(m, RawLine) for m in answers):  # malformed: the broken text is the body
            return Response(b"".join(m for m in answers if isinstance(m, RawLine)), status_code=200,
                            media_type="application/json", headers=headers)
        codes = self.mock.digests.codes
        status = _error_status(answers, codes) if era_2026 else _digest_status(answers, codes)
        return _answer(lambda: [jsonio.dumps(answers[-1] if len(answers) == 1 else answers)] if answers else [],
                       self.big_answers, status_code=status if answers else 202, media_type="application/json",
                       headers=headers)

    async def _answer_stream(self, session: _HTTPSession, message: Any, headers: dict[str, str],
                             era_2026: bool) -> Response:
        """An SSE stream: what the server says, then the answer (streamed as it comes when it is slow)."""
        queue: list[Any] = []
        pending = session.conn.receive(message, queue.append)
        if pending is None:
            if self.closed(session, queue):
                return StreamingResponse(_dropped(_sse_bytes(queue[:queue.index(CLOSE)] if CLOSE in queue else queue)),
                                         media_type="text/event-stream")
            codes = self.mock.digests.codes
            status = _error_status(queue, codes) if era_2026 else _digest_status(queue, codes)
            if status != 200:  # a 2026 error alone: one JSON body with the era's status, as the server sends it
                return Response(jsonio.dumps(queue[0]), status_code=status, media_type="application/json",
                                headers=headers)
            return _answer(lambda: _sse_parts(queue), self.big_answers, media_type="text/event-stream",
                           headers={**headers, "cache-control": "no-cache"})
        return StreamingResponse(_stream_pending(queue, pending, lambda: self.forget(session)),
                                 media_type="text/event-stream", headers={**headers, "cache-control": "no-cache"})

    async def get_mcp(self, request: Request) -> Response:
        """A GET: a list over GET (the drafts), or the session's stream of what the server says unasked."""
        if LIST_QUERY_PARAMETER in request.query_params:  # a list over GET (the drafts): answered as recorded
            return list_get_answer(self.mock, request)
        sid = request.headers.get("mcp-session-id")
        session = self.sessions.get(sid) if sid else self.sessionless()
        if session is None:
            return _jsonrpc_error(-32001, "Session not found", 404)
        if session.stream is not None:
            return _jsonrpc_error(-32600, "Conflict: a stream is already open for this session", 409)
        session.open_stream()
        headers = {"mcp-session-id": session.id} if session.id else {}
        return StreamingResponse(_stream_queue(session), media_type="text/event-stream",
                                 headers={**headers, "cache-control": "no-cache"})

    async def delete_mcp(self, request: Request) -> Response:
        """A DELETE: the client ends its session."""
        sid = request.headers.get("mcp-session-id")
        session = self.sessions.pop(sid, None) if sid else None
        if session is None:
            return _jsonrpc_error(-32001, "Session not found", 404)
        if session.stream is not None:
            session.stream.put_nowait(None)
        return Response(status_code=200)

    # -- legacy HTTP+SSE --------------------------------------------------------------------------------
    async def get_sse(self, request: Request) -> Response:
        """The legacy SSE stream: its first event names the endpoint the client posts to."""
        sid = uuid.uuid4().hex
        session = self.sessions[sid] = _HTTPSession(sid, self.mock.connection())
        session.open_stream()
        endpoint = f"{self.messages_path}?session_id={sid}"
        sessions = self.sessions

        async def events() -> Any:
            yield encode_event(endpoint, event="endpoint")
            try:
                async for chunk in _stream_queue(session):
                    yield chunk
            finally:
                sessions.pop(sid, None)

        return StreamingResponse(events(), media_type="text/event-stream", headers={"cache-control": "no-cache"})

    async def post_messages(self, request: Request) -> Response:
        """A legacy POST: accepted at once; its answer goes on the session's SSE stream."""
        sid = request.query_params.get("session_id") or request.query_params.get("sessionId") or ""
        session = self.sessions.get(sid)
        if session is None or session.stream is None:
            return Response("Could not find session", status_code=404)
        try:
            message = jsonio.loads(await request.body())
        except (ValueError, UnicodeDecodeError):
            return Response("Could not parse message", status_code=400)
        pending = session.conn.receive(message, session.push)
        if pending is not None:
            self.keep(asyncio.ensure_future(pending))
        self.closed(session, [])
        return Response("Accepted", status_code=202)


async def _stream_pending(queue: list[Any], pending: Any, forget: Callable[[], None]) -> Any:
    """Send what a slow answer emits as it emits it, ending with the answer (or breaking the connection
    where a rule closes it)."""
    task = asyncio.ensure_future(pending)
    sent = 0
    try:
        while True:
            if sent < len(queue):
                fresh, sent = queue[sent:], len(queue)
                if CLOSE in fresh:
                    forget()
                    before = _sse_bytes(fresh[:fresh.index(CLOSE)])
                    if before:
                        yield before
                    raise DropConnection("closed by a rule")
                yield _sse_bytes(fresh)
                continue
            if task.done():
                break
            await asyncio.wait({task}, timeout=0.01)
        task.result()
    finally:
        if not task.done():
            task.cancel()


async def _stream_queue(session: _HTTPSession) -> Any:
    assert session.stream is not None
    queue = session.stream
    try:
        while True:
            message = await queue.get()
            if message is None:
                return
            yield _event(message)
    finally:
        session.stream = None


async def serve_transport(mock: Mock, transport: Transport) -> None:
    """Serve one connection over any server-side :class:`~mcpreel.clients.Transport` (in-memory tests)."""
    conn = mock.connection()
    tasks: set[asyncio.Task[Any]] = set()

    def emit(message: Any) -> None:
        with contextlib.suppress(Exception):
            transport.send_nowait(message)

    async for record in transport:
        if record.kind != "message":
            continue
        pending = conn.receive(record.raw, emit)
        if pending is not None:
            task = asyncio.ensure_future(pending)
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    for task in list(tasks):
        task.cancel()
