"""Talking to the server under check, through the client transports of :mod:`mcpreel.clients`.

A probe speaks through a transport (:class:`~mcpreel.clients.StreamableHTTPTransport`,
:class:`~mcpreel.clients.LegacySSETransport`, :class:`~mcpreel.clients.StdioTransport`) and keeps every
exchange as an :class:`ProbeExchange`: exactly what was sent, and exactly what came back (status, headers, raw
body, SSE events, parsed messages, frames that were not JSON), so a check can judge the wire and a report
can quote it. Over HTTP the transport's probe mode (:meth:`~mcpreel.clients.http._HTTPBase.exchange`)
sends the bytes and headers as given and returns the answer as it was on the wire; over stdio and the
legacy event stream the transport's received records are read in order (:class:`_Arrivals`). No probe
judges anything.

The checks are plain functions that call a probe and wait: each probe runs its transport on an event
loop of its own (:class:`_Loop`), so a check reads like the exchange it makes.

The probes answer what a server asks of the client on the way (``ping`` with ``{}``, anything else with
``-32601``: the check declares no client capabilities), so a server never hangs waiting for us.

:class:`Unreachable` is raised when the server cannot be reached at all (connection refused, the
command cannot start, the process exits before answering); the runner turns it into exit code 2.
Anything that goes wrong later is kept on the exchange (``error``) for the checks to report.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from mcpreel._infra import jsonio
from mcpreel._infra.sse import SSEEvent
from mcpreel.clients.base import HttpAnswer, Transport
from mcpreel.clients.process import ServerStartError, command_argv
from mcpreel.clients.stdio import StdioTransport
from mcpreel.errors import TransportError
from mcpreel.model import Kind
from mcpreel.redact import Redactor
from mcpreel.redact.urls import redact_url, redact_urls_in

if TYPE_CHECKING:  # the HTTP client loads with the first HTTP probe: a stdio check never needs it
    from mcpreel.clients.http import StreamableHTTPTransport, WireExchange, _HTTPBase

__all__ = ["ProbeExchange", "HttpProbe", "StdioProbe", "Unreachable", "excerpt"]

#: what a report quotes of a body or a message
EXCERPT = 320
_T = TypeVar("_T")


class Unreachable(TransportError):
    """The server could not be reached at all; ``str()`` says why, its secrets redacted (the URL's
    ``?api_key=…``, a ``--token X`` the server's stderr repeats): the line goes to CI logs."""

    def __init__(self, message: str) -> None:
        super().__init__(Redactor().text(redact_urls_in(message)))


def excerpt(data: bytes | str | Any, limit: int = EXCERPT) -> str:
    """A one-line, bounded rendering of a body, a line or a message for a report."""
    if isinstance(data, (bytes, bytearray)):
        text = bytes(data).decode("utf-8", "replace")
    elif isinstance(data, str):
        text = data
    else:
        text = jsonio.dumps_str(data)
    text = text.replace("\r\n", "\\r\\n").replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _same_id(a: Any, b: Any) -> bool:
    """Ids equal in value, whatever their JSON type (1 and "1"): how a lenient client would match."""
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
        return False
    return str(a) == str(b)


def _is_response(m: Any) -> bool:
    return isinstance(m, dict) and "method" not in m and ("result" in m or "error" in m)


def _is_server_request(m: Any) -> bool:
    return isinstance(m, dict) and isinstance(m.get("method"), str) and "id" in m


@dataclass
class ProbeExchange(HttpAnswer):
    """One thing we sent and everything that came back for it.

    ``response`` is the message answering ``request_id`` (matched by value; ``id_exact`` says whether
    the id also kept its JSON type). ``messages`` holds every JSON-RPC message received, the response
    included; ``bad_frames`` SSE data or stdout lines that were not JSON. Over HTTP ``events`` are the
    SSE events and ``unterminated`` the bytes of an event the stream ended inside (no blank line after
    it: a conforming client never sees that event).
    """

    label: str
    sent: bytes
    request_id: Any = None
    http_method: str | None = None  # "POST"/"DELETE" over HTTP, None over stdio
    url: str | None = None
    sent_headers: dict[str, Any] = field(default_factory=dict)
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # names lower-cased
    body: bytes = b""
    events: list[SSEEvent] = field(default_factory=list)
    unterminated: bytes | None = None
    messages: list[Any] = field(default_factory=list)
    bad_frames: list[str] = field(default_factory=list)
    response: dict[str, Any] | None = None
    id_exact: bool = True
    error: str | None = None
    elapsed_ms: int = 0
    truncated: bool = False
    side: bool = False  # made on a connection of its own (version negotiation), not in the checked session

    def sent_text(self) -> str:
        head = f"{self.http_method} {urlsplit(self.url).path or '/'}  " if self.http_method and self.url else ""
        extra = "".join(f"[{k}: {v}] " for k, v in self.sent_headers.items()
                        if k.lower() in ("origin", "mcp-protocol-version", "mcp-session-id"))
        return head + extra + excerpt(self.sent)

    def received_text(self) -> str:
        if self.status is None and self.http_method is None:
            # stdio: the answer, or what came instead
            if self.response is not None:
                return excerpt(self.response)
            if self.messages:
                return "; ".join(excerpt(m, 160) for m in self.messages[:3])
            if self.bad_frames:
                return "not JSON: " + excerpt(self.bad_frames[0])
            return self.error or "nothing"
        if self.status is None:
            return self.error or "no HTTP answer"
        ctype = self.headers.get("content-type") or "no content type"
        body = excerpt(self.body) if self.body else "(empty body)"
        tail = f"  ({self.error})" if self.error else ""
        return f"{self.status} {ctype}  {body}{tail}"


class _Loop:
    """The event loop a probe's transport lives on; the (plain, waiting) checks hand it one coroutine at a
    time.

    It runs in the calling thread, so a check's run stays in one thread (a test's scripted server, a
    hypothesis draw in it, signals); the transport's readers pause between calls and catch up on the
    next, the bytes waiting in the socket or pipe meanwhile. Called from inside a running event loop
    (a library caller in async code), it runs in a helper thread instead.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._thread = threading.Thread(target=self.loop.run_forever, name="mcpreel-check-probe", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        if self._thread is None:
            return self.loop.run_until_complete(coro)
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        """Cancel what still runs on the loop, then close it; safe to call twice."""
        if self.loop.is_closed():
            return
        with contextlib.suppress(Exception):
            self.run(_cancel_pending())
        if self._thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5.0)
            if self._thread.is_alive():
                return
        self.loop.close()


async def _cancel_pending() -> None:
    me = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


class _Base:
    transport = "?"
    target = ""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.exchanges: list[ProbeExchange] = []
        self._next = 0
        #: ids the server used for its own requests, answered by us
        self.server_requests: list[dict[str, Any]] = []
        self._loop = _Loop()

    def next_id(self) -> int:
        self._next += 1
        return self._next

    @staticmethod
    def _answer_for(req: dict[str, Any]) -> dict[str, Any]:
        if req.get("method") == "ping":
            return {"jsonrpc": "2.0", "id": req.get("id"), "result": {}}
        return {"jsonrpc": "2.0", "id": req.get("id"),
                "error": {"code": -32601, "message": "mcpreel check declares no client capabilities"}}

    def request(self, method: str, params: Any = None, *, id: Any = None, label: str | None = None,
                timeout: float | None = None, **kw: Any) -> ProbeExchange:
        """Send a request (``id`` defaults to the next integer) and wait for its answer."""
        rid = self.next_id() if id is None else id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        return self.send(jsonio.dumps(msg), label=label or method, request_id=rid, timeout=timeout, **kw)

    def notify(self, method: str, params: Any = None, *, label: str | None = None, **kw: Any) -> ProbeExchange:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return self.send(jsonio.dumps(msg), label=label or method, request_id=None, **kw)

    #: one exchange: ``send(body, *, label, request_id=None, timeout=None, **options)``, the options each
    #: transport's own (an HTTP session header, a stdio settle time)
    send: Callable[..., ProbeExchange]

    def _close_transport(self, transport: Transport | None) -> None:
        """Close the transport on its loop, then end the loop."""
        if transport is not None and not self._loop.loop.is_closed():
            with contextlib.suppress(Exception):
                self._loop.run(transport.close())
        self._loop.close()

    def close(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __enter__(self) -> _Base:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _take(ex: ProbeExchange, m: Any, answer: Callable[[dict[str, Any]], None]) -> bool:
    """Keep one received message on the exchange; True when it is the response the exchange waits for.
    A request of the server's own is handed to ``answer``."""
    ex.messages.append(m)
    if _is_server_request(m):
        answer(m)
        return False
    if _is_response(m) and ex.request_id is not None and ex.response is None:
        if m.get("id") == ex.request_id and type(m.get("id")) is type(ex.request_id):
            ex.response = m
            return True
        if _same_id(m.get("id"), ex.request_id):
            ex.response, ex.id_exact = m, False
            return True
    return False


class _Arrivals:
    """What a stream transport (stdio, the legacy event stream) received, read in order for a probe: each
    message goes to the exchange waiting, frames that were not JSON are kept (``noise``), the end of the
    stream is remembered (``eof``, with the transport's ``ended`` saying why)."""

    def __init__(self, transport: Transport, answer: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self.transport = transport
        self._answer = answer
        self.noise: list[str] = []
        self.eof = False

    async def _next(self, deadline: float) -> Any:
        """The next message, a ``str`` frame that was not JSON, or None at the end; TimeoutError when nothing
        came by ``deadline``. Other records (stderr lines, HTTP statuses) are passed over; an SSE event of
        another type than ``message`` is read for what it carries, as the check always read it."""
        while True:
            msg = await asyncio.wait_for(self.transport.receive(), max(deadline - time.monotonic(), 0.0))
            if msg is None:
                self.eof = True
                return None
            if msg.kind == Kind.MESSAGE:
                return msg.raw
            text: str | None = msg.text
            if msg.kind == Kind.TRANSPORT and msg.ctx and "sse" in msg.ctx and isinstance(msg.ctx.get("data"), str):
                try:
                    return jsonio.loads(msg.ctx["data"])
                except (ValueError, UnicodeDecodeError, RecursionError):
                    text = msg.ctx["data"]
            elif msg.kind != Kind.INVALID:
                continue
            self.noise.append(text or "")
            return text or ""

    async def collect(self, ex: ProbeExchange, deadline: float) -> None:
        """Take what arrives into ``ex`` until the response to its request, the end or ``deadline``."""
        while deadline - time.monotonic() > 0:
            try:
                value = await self._next(deadline)
            except TimeoutError:
                break
            if value is None:
                return
            if isinstance(value, str):
                ex.bad_frames.append(value)
                continue
            answered: list[dict[str, Any]] = []
            found = _take(ex, value, answered.append)
            for req in answered:
                await self._answer(req)
            if found:
                return

    async def drain(self, seconds: float) -> list[Any]:
        out: list[Any] = []
        deadline = time.monotonic() + seconds
        while not self.eof and deadline - time.monotonic() > 0:
            try:
                value = await self._next(deadline)
            except TimeoutError:
                break
            if value is None or isinstance(value, str):
                continue
            if _is_server_request(value):
                await self._answer(value)
            out.append(value)
        return out


# -- HTTP -------------------------------------------------------------------------------------------


class _HttpProbeBase(_Base):
    """What both HTTP probes share: the URL they were given (named redacted), ``--header`` values, the
    transport whose probe mode they speak through, and one HTTP exchange as an :class:`ProbeExchange`."""

    def __init__(self, url: str, *, timeout: float, headers: dict[str, str] | None) -> None:
        parts = urlsplit(url)
        # the target as every report and message names it: its secret query parameters (``?api_key=…``)
        # redacted as the recorders redact them (the report is shared; the key is for the server only)
        self.target = redact_url(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            from mcpreel.redact.urls import not_a_url

            raise Unreachable(not_a_url(url))
        super().__init__(timeout)
        self.url = url
        self.extra_headers = dict(headers or {})
        self.wire: _HTTPBase | None = None

    def _exchange(self, ex: ProbeExchange, body: bytes | None, *, headers: dict[str, Any], limit: float,
                  method: str = "POST", url: str | None = None) -> WireExchange:
        """One HTTP request in the transport's probe mode; an SSE answer read until ``ex``'s response came
        (the server's own requests on it answered on the way)."""
        assert self.wire is not None
        wire = self.wire

        async def go() -> WireExchange:
            answers: list[asyncio.Task[None]] = []

            def on_event(ev: SSEEvent) -> bool:
                return _take_event(ex, ev, lambda req: answers.append(asyncio.create_task(self._answer(req))))

            record = await wire.exchange(body, headers=headers, method=method, url=url, limit=limit,
                                         on_event=on_event)
            if answers:
                await asyncio.gather(*answers, return_exceptions=True)
            return record

        return self._loop.run(go())

    async def _answer(self, req: dict[str, Any]) -> None:
        """POST our answer to a request of the server's, in the probe mode too (nothing of the answer's
        own HTTP answer changes the probe's state)."""
        self.server_requests.append(req)
        assert self.wire is not None
        url, headers = self._post_route()
        await self.wire.exchange(jsonio.dumps(self._answer_for(req)), headers=headers, url=url, limit=self.timeout)

    def _post_route(self) -> tuple[str, dict[str, Any]]:
        """Where our answers to the server's requests are POSTed, with which headers."""
        raise NotImplementedError

    def close(self) -> None:
        self._close_transport(self.wire)


def _take_event(ex: ProbeExchange, ev: SSEEvent, answer: Callable[[dict[str, Any]], None]) -> bool:
    """Take one SSE event's data; True when it was the response we wait for."""
    if ev.comment is not None or ev.data == "":
        return False
    try:
        m = jsonio.loads(ev.data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        ex.bad_frames.append(excerpt(ev.data))
        return False
    found = False
    for item in m if isinstance(m, list) else [m]:
        found = _take(ex, item, answer) or found
    return found and ex.response is not None


class HttpProbe(_HttpProbeBase):
    """POSTs JSON-RPC to one endpoint the way an MCP client does (Streamable HTTP), through a
    :class:`~mcpreel.clients.StreamableHTTPTransport` in its probe mode.

    After ``initialize`` the runner sets :attr:`session_id` and :attr:`protocol_version` (the
    transport's); every later POST carries them unless told otherwise. ``headers`` (``--header``) ride
    on every request. ``transport`` replaces httpx2's network layer (a test's ``httpx2.MockTransport``).
    """

    transport = "http"

    def __init__(self, url: str, *, timeout: float = 10.0, headers: dict[str, str] | None = None,
                 transport: Any = None) -> None:
        super().__init__(url, timeout=timeout, headers=headers)
        from mcpreel.clients.http import StreamableHTTPTransport

        self.http: StreamableHTTPTransport = StreamableHTTPTransport(url, headers=self.extra_headers, timeout=timeout, get_stream=False,
                                            http_transport=transport)
        self.wire = self.http
        self._loop.run(self.http.start())

    @property
    def session_id(self) -> str | None:
        return self.http.session_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self.http.session_id = value

    @property
    def protocol_version(self) -> str | None:
        return self.http.protocol_version

    @protocol_version.setter
    def protocol_version(self, value: str | None) -> None:
        self.http.protocol_version = value

    def _post_route(self) -> tuple[str, dict[str, Any]]:
        return self.url, self.base_headers()

    def base_headers(self, *, session: bool = True) -> dict[str, Any]:
        h = self.http.post_headers()
        if not session:
            h.pop("Mcp-Session-Id", None)
        return h

    def send(self, body: bytes, *, label: str, request_id: Any = None, timeout: float | None = None,
             session: bool = True, session_id: str | None = None, headers: dict[str, str] | None = None,
             drop_headers: tuple[str, ...] = (), http_method: str = "POST", url: str | None = None) -> ProbeExchange:
        """One HTTP request; reads an SSE answer until the response to ``request_id`` has come."""
        from mcpreel.clients.http import wire_value

        h = self.base_headers(session=session)
        if session_id is not None:
            h["Mcp-Session-Id"] = wire_value(session_id)
        for name in drop_headers:
            for k in [k for k in h if k.lower() == name.lower()]:
                del h[k]
        if headers:
            h.update(headers)
        target_url = url or self.url
        ex = ProbeExchange(label=label, sent=body, request_id=request_id, http_method=http_method,
                      url=target_url, sent_headers=h)
        self.exchanges.append(ex)
        limit = self.timeout if timeout is None else timeout
        wire = self._exchange(ex, body if http_method == "POST" else None, headers=h, limit=limit,
                              method=http_method, url=target_url)
        if wire.connect_failed and not any(e.status is not None for e in self.exchanges):
            raise Unreachable(f"cannot reach {redact_url(target_url)}: {wire.reason}")
        ex.status, ex.headers, ex.body, ex.events = wire.status, wire.headers, wire.body, wire.events
        ex.truncated, ex.error, ex.elapsed_ms = wire.truncated, wire.error, wire.elapsed_ms
        ex.unterminated = wire.unterminated.raw if wire.unterminated is not None else None
        if wire.status is not None and not (wire.is_sse and wire.ok_status):
            self._take_body(ex)
        return ex

    def _take_body(self, ex: ProbeExchange) -> None:
        """The messages of a whole (JSON) body."""
        if not (ex.body.strip() and ex.content_type in ("application/json", "") and not ex.truncated):
            return
        try:
            doc = jsonio.loads(ex.body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            if ex.content_type == "application/json":
                ex.bad_frames.append(excerpt(ex.body))
            return
        answers: list[dict[str, Any]] = []
        for m in doc if isinstance(doc, list) else [doc]:
            _take(ex, m, answers.append)
        for req in answers:
            self._loop.run(self._answer(req))

    def delete(self, session_id: str) -> ProbeExchange:
        return self.send(b"", label="DELETE session", http_method="DELETE", session_id=session_id)

    def close(self) -> None:
        """Close the connection without a word to the server: the run deleted its sessions itself
        (the transport's own close would send one more ``DELETE``)."""
        self.http.session_id = None
        super().close()


# -- stdio ------------------------------------------------------------------------------------------


class StdioProbe(_Base):
    """Runs the server command through a :class:`~mcpreel.clients.StdioTransport` and speaks
    newline-delimited JSON-RPC on its stdin/stdout.

    The transport's stdout lines become messages (the lines that are not JSON are kept for the
    ``stdout-clean`` check: :attr:`noise`); its stderr tail gives the reason of an early exit.
    """

    transport = "stdio"

    def __init__(self, command: str | list[str], *, timeout: float = 10.0, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        argv = command_argv(command)
        if not argv:
            raise Unreachable("--target-command is empty")
        super().__init__(timeout)
        self.argv = argv
        # named with the secrets of its argv redacted (``--token X``, ``API_KEY=X``), as a recording's argv is
        shown = Redactor().command(argv)
        self.target = shlex.join(shown) if shown != argv else command if isinstance(command, str) else shlex.join(argv)
        # ``env`` is the server's whole environment, as a caller of run_check gives it
        self.stdio = StdioTransport(argv, env=env, cwd=cwd, grace=2.0, inherit_env=False)
        self._arrivals = _Arrivals(self.stdio, self._answer)
        try:
            self._loop.run(self.stdio.start())
        except TransportError as exc:
            self._loop.close()
            # a server that cannot start cannot be checked: exit 2 (in the process module's words)
            why = exc.__context__ if isinstance(exc.__context__, ServerStartError) else exc
            raise Unreachable(str(why)) from exc.__cause__

    @property
    def proc(self) -> asyncio.subprocess.Process:
        assert self.stdio.proc is not None
        return self.stdio.proc

    @property
    def noise(self) -> list[str]:
        """stdout lines that were not JSON"""
        return self._arrivals.noise

    def exited_reason(self) -> str:
        self._loop.run(asyncio.sleep(0))  # take in an exit the loop has not looked at since the last call
        return self._exit_words()

    def _exit_words(self) -> str:
        code = self.stdio.returncode
        if code is None:
            return "the server closed its stdout"
        tail = next((line for line in reversed(self.stdio.stderr_tail) if line.strip()), "")
        how = f"signal {-code}" if code < 0 else f"code {code}"
        return f"the server exited with {how}" + (f": {tail.strip()}" if tail else "")

    def send(self, body: bytes, *, label: str, request_id: Any = None, timeout: float | None = None,
             wait: bool | None = None, settle: float = 0.0) -> ProbeExchange:
        """Write one line; wait for the answer to ``request_id`` (or ``settle`` seconds when it is None)."""
        ex = ProbeExchange(label=label, sent=body, request_id=request_id)
        self.exchanges.append(ex)
        start = time.monotonic()
        limit = self.timeout if timeout is None else timeout
        if self._arrivals.eof:
            ex.error = self.exited_reason()
            return ex
        deadline = start + (limit if request_id is not None else settle)
        self._loop.run(self._send(ex, body, deadline, limit))
        ex.elapsed_ms = int((time.monotonic() - start) * 1000)
        return ex

    async def _send(self, ex: ProbeExchange, body: bytes, deadline: float, limit: float) -> None:
        try:
            await self.stdio.send_bytes(body + b"\n")
        except TransportError:
            # the server is dying: the transport let it end and its last stderr be read
            ex.error = self._exit_words()
            return
        await self._arrivals.collect(ex, deadline)
        if self._arrivals.eof and ex.response is None:
            await self.stdio.wait_gone()  # let it end and its last stderr be read
            ex.error = self._exit_words()
        elif ex.request_id is not None and ex.response is None:
            ex.error = f"no answer within {limit:g} s"

    def drain(self, seconds: float) -> list[Any]:
        """Messages that arrive within ``seconds`` with nothing sent (answers to notifications, say)."""
        return self._loop.run(self._arrivals.drain(seconds))

    async def _answer(self, req: dict[str, Any]) -> None:
        self.server_requests.append(req)
        with contextlib.suppress(TransportError):
            await self.stdio.send(self._answer_for(req))

    @property
    def alive(self) -> bool:
        if self._arrivals.eof:
            return False
        self._loop.run(asyncio.sleep(0))  # take in an exit the loop has not looked at since the last call
        return self.stdio.returncode is None

    def close(self) -> None:
        """Close stdin, give the server 2 s to go, then end its process group."""
        self._close_transport(self.stdio)
