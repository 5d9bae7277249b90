"""Talking to the server under check: an HTTP probe (httpx2) and a stdio probe (a child process).

Both send JSON-RPC and keep every exchange as an :class:`Exchange`: exactly what was sent, and exactly
what came back (status, headers, raw body, SSE events, parsed messages, frames that were not JSON), so a
check can judge the wire and a report can quote it. Neither probe judges anything.

The probes answer what a server asks of the client on the way (``ping`` with ``{}``, anything else with
``-32601``: the check declares no client capabilities), so a server never hangs waiting for us.

:class:`Unreachable` is raised when the server cannot be reached at all (connection refused, the
command cannot start, the process exits before answering); the runner turns it into exit code 2.
Anything that goes wrong later is kept on the exchange (``error``) for the checks to report.
"""

from __future__ import annotations

import contextlib
import queue
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcpreel._infra import jsonio
from mcpreel._infra.sse import SSEEvent, SSEParser
from mcpreel.clients.process import ServerStartError, command_argv, spawn, stop
from mcpreel.errors import TransportError
from mcpreel.redact import Redactor
from mcpreel.redact.urls import redact_url, redact_urls_in

__all__ = ["Exchange", "HttpProbe", "StdioProbe", "Unreachable", "excerpt"]

#: the most of one response body a probe keeps (a check needs the start, never gigabytes)
MAX_BODY = 8 << 20
#: what a report quotes of a body or a message
EXCERPT = 320


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
class Exchange:
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

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def is_sse(self) -> bool:
        return self.content_type == "text/event-stream"

    @property
    def ok_status(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

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


class _Base:
    transport = "?"
    target = ""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.exchanges: list[Exchange] = []
        self._next = 0
        #: ids the server used for its own requests, answered by us
        self.server_requests: list[dict[str, Any]] = []

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
                timeout: float | None = None, **kw: Any) -> Exchange:
        """Send a request (``id`` defaults to the next integer) and wait for its answer."""
        rid = self.next_id() if id is None else id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        return self.send(jsonio.dumps(msg), label=label or method, request_id=rid, timeout=timeout, **kw)

    def notify(self, method: str, params: Any = None, *, label: str | None = None, **kw: Any) -> Exchange:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return self.send(jsonio.dumps(msg), label=label or method, request_id=None, **kw)

    #: one exchange: ``send(body, *, label, request_id=None, timeout=None, **options)``, the options each
    #: transport's own (an HTTP session header, a stdio settle time)
    send: Callable[..., Exchange]

    def close(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __enter__(self) -> _Base:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- HTTP -------------------------------------------------------------------------------------------


class _HTTPBase(_Base):
    """What both HTTP probes share: the URL they were given, ``--header`` values, and one httpx2 client
    (``read_timeout=None`` for a probe that holds an event stream open)."""

    def __init__(self, url: str, *, timeout: float, headers: dict[str, str] | None, transport: Any,
                 read_timeout: float | None | bool = False) -> None:
        super().__init__(timeout)
        import httpx2

        parts = urlsplit(url)
        # the target as every report and message names it: its secret query parameters (``?api_key=…``)
        # redacted as the recorders redact them (the report is shared; the key is for the server only)
        self.target = redact_url(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise Unreachable(f"{self.target}: not an http:// or https:// URL")
        self.url = url
        self.extra_headers = dict(headers or {})
        self._httpx = httpx2
        limit = httpx2.Timeout(timeout) if read_timeout is False else httpx2.Timeout(timeout, read=read_timeout)
        kwargs: dict[str, Any] = {"timeout": limit, "follow_redirects": False}
        if transport is not None:
            kwargs["transport"] = transport
        self.client = httpx2.Client(**kwargs)


class HttpProbe(_HTTPBase):
    """POSTs JSON-RPC to one endpoint the way an MCP client does (Streamable HTTP).

    After ``initialize`` the runner sets :attr:`session_id` and :attr:`protocol_version`; every later
    POST carries them unless told otherwise. ``headers`` (``--header``) ride on every request.
    """

    transport = "http"

    def __init__(self, url: str, *, timeout: float = 10.0, headers: dict[str, str] | None = None,
                 transport: Any = None) -> None:
        super().__init__(url, timeout=timeout, headers=headers, transport=transport)
        self.session_id: str | None = None
        self.protocol_version: str | None = None

    def base_headers(self, *, session: bool = True) -> dict[str, Any]:
        h: dict[str, Any] = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        h.update(self.extra_headers)
        if session and self.session_id:
            h["Mcp-Session-Id"] = _header_value(self.session_id)
        if self.protocol_version:
            h["MCP-Protocol-Version"] = self.protocol_version
        return h

    def send(self, body: bytes, *, label: str, request_id: Any = None, timeout: float | None = None,
             session: bool = True, session_id: str | None = None, headers: dict[str, str] | None = None,
             drop_headers: tuple[str, ...] = (), http_method: str = "POST", url: str | None = None) -> Exchange:
        """One HTTP request; reads an SSE answer until the response to ``request_id`` has come."""
        h = self.base_headers(session=session)
        if session_id is not None:
            h["Mcp-Session-Id"] = _header_value(session_id)
        for name in drop_headers:
            for k in [k for k in h if k.lower() == name.lower()]:
                del h[k]
        if headers:
            h.update(headers)
        target_url = url or self.url
        ex = Exchange(label=label, sent=body, request_id=request_id, http_method=http_method,
                      url=target_url, sent_headers=h)
        self.exchanges.append(ex)
        limit = self.timeout if timeout is None else timeout
        start = time.monotonic()
        deadline = start + limit
        httpx2 = self._httpx
        try:
            with self.client.stream(http_method, target_url, content=body if http_method == "POST" else None,
                                    headers=h, timeout=httpx2.Timeout(limit)) as resp:
                ex.status = resp.status_code
                ex.headers = {k.lower(): v for k, v in resp.headers.items()}
                if ex.is_sse and ex.ok_status:
                    self._read_sse(resp, ex, deadline)
                else:
                    self._read_body(resp, ex, deadline)
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
            if not any(e.status is not None for e in self.exchanges):
                raise Unreachable(f"cannot reach {redact_url(target_url)}: {_reason(exc)}") from exc
            ex.error = f"connection failed: {_reason(exc)}"
        except httpx2.TimeoutException:
            ex.error = f"no answer within {limit:g} s"
        except httpx2.HTTPError as exc:
            ex.error = f"HTTP error: {_reason(exc)}"
        ex.elapsed_ms = int((time.monotonic() - start) * 1000)
        return ex

    def _read_body(self, resp: Any, ex: Exchange, deadline: float) -> None:
        buf = bytearray()
        for chunk in resp.iter_bytes():
            buf += chunk
            if len(buf) > MAX_BODY:
                ex.truncated = True
                break
            if time.monotonic() > deadline:
                ex.error = "body still arriving at the time limit"
                break
        ex.body = bytes(buf)
        if ex.body.strip() and ex.content_type in ("application/json", "") and not ex.truncated:
            try:
                doc = jsonio.loads(ex.body)
            except (ValueError, UnicodeDecodeError, RecursionError):
                if ex.content_type == "application/json":
                    ex.bad_frames.append(excerpt(ex.body))
                return
            for m in doc if isinstance(doc, list) else [doc]:
                self._take(ex, m)

    def _read_sse(self, resp: Any, ex: Exchange, deadline: float) -> None:
        parser = SSEParser()
        buf = bytearray()
        done = False
        iterator = resp.iter_bytes()
        try:
            while not done:
                if time.monotonic() > deadline:
                    ex.error = f"no response on the event stream within {self.timeout:g} s"
                    break
                try:
                    chunk = next(iterator)
                except StopIteration:
                    break
                buf += chunk
                for ev in parser.feed(chunk):
                    ex.events.append(ev)
                    done = self._event(ex, ev) or done
                if len(buf) > MAX_BODY:
                    ex.truncated = True
                    break
        except self._httpx.TimeoutException:
            ex.error = f"no response on the event stream within {self.timeout:g} s"
        finally:
            ex.body = bytes(buf)
        if not done:
            # the stream ended (or stalled) inside an event: say what a blank line would have dispatched
            tail = list(parser.feed(b"\n\n"))
            if tail and tail[0].comment is None:
                ex.unterminated = tail[0].raw
                self._event(ex, tail[0])

    def _event(self, ex: Exchange, ev: SSEEvent) -> bool:
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
            found = self._take(ex, item) or found
        return found and ex.response is not None

    def _take(self, ex: Exchange, m: Any) -> bool:
        ex.messages.append(m)
        if _is_server_request(m):
            self._answer(m)
            return False
        if _is_response(m) and ex.request_id is not None and ex.response is None:
            if m.get("id") == ex.request_id and type(m.get("id")) is type(ex.request_id):
                ex.response = m
                return True
            if _same_id(m.get("id"), ex.request_id):
                ex.response, ex.id_exact = m, False
                return True
        return False

    def _answer(self, req: dict[str, Any]) -> None:
        self.server_requests.append(req)
        with contextlib.suppress(self._httpx.HTTPError):
            self.client.post(self.url, content=jsonio.dumps(self._answer_for(req)), headers=self.base_headers())

    def delete(self, session_id: str) -> Exchange:
        return self.send(b"", label="DELETE session", http_method="DELETE", session_id=session_id)

    def close(self) -> None:
        self.client.close()


def _header_value(value: str) -> str | bytes:
    """A header value as the server sent it: text that is not ASCII goes back as its latin-1 bytes."""
    try:
        value.encode("ascii")
        return value
    except UnicodeEncodeError:
        return value.encode("latin-1", "replace")


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    # httpx wraps OSError texts like "[Errno 111] Connection refused"
    return text.splitlines()[0]


# -- stdio ------------------------------------------------------------------------------------------


class StdioProbe(_Base):
    """Runs the server command and speaks newline-delimited JSON-RPC on its stdin/stdout.

    A reader thread turns stdout lines into messages (and keeps the lines that are not JSON for the
    ``stdout-clean`` check); stderr is kept as a bounded tail for the reason of an early exit.
    """

    transport = "stdio"

    def __init__(self, command: str | list[str], *, timeout: float = 10.0, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        super().__init__(timeout)
        argv = command_argv(command)
        if not argv:
            raise Unreachable("--target-command is empty")
        self.argv = argv
        # named with the secrets of its argv redacted (``--token X``, ``API_KEY=X``), as a recording's argv is
        shown = Redactor().command(argv)
        self.target = shlex.join(shown) if shown != argv else command if isinstance(command, str) else shlex.join(argv)
        self.noise: list[str] = []  # stdout lines that were not JSON
        self.stderr_tail: deque[str] = deque(maxlen=40)
        self._inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        try:
            self.proc = spawn(argv, env=env, cwd=cwd)
        except ServerStartError as exc:
            raise Unreachable(str(exc)) from exc.__cause__  # a server that cannot start cannot be checked: exit 2
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for t in self._threads:
            t.start()
        self._eof = False

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.rstrip(b"\r\n")
            if not line.strip():
                continue
            try:
                self._inbox.put(("msg", jsonio.loads(line)))
            except (ValueError, UnicodeDecodeError, RecursionError):
                text = line.decode("utf-8", "replace")
                self.noise.append(text)
                self._inbox.put(("bad", text))
        self._inbox.put(("eof", None))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in iter(self.proc.stderr.readline, b""):
            self.stderr_tail.append(raw.decode("utf-8", "replace").rstrip())

    def exited_reason(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "the server closed its stdout"
        tail = next((line for line in reversed(self.stderr_tail) if line.strip()), "")
        how = f"signal {-code}" if code < 0 else f"code {code}"
        return f"the server exited with {how}" + (f": {tail.strip()}" if tail else "")

    def send(self, body: bytes, *, label: str, request_id: Any = None, timeout: float | None = None,
             wait: bool | None = None, settle: float = 0.0) -> Exchange:
        """Write one line; wait for the answer to ``request_id`` (or ``settle`` seconds when it is None)."""
        ex = Exchange(label=label, sent=body, request_id=request_id)
        self.exchanges.append(ex)
        start = time.monotonic()
        limit = self.timeout if timeout is None else timeout
        if self._eof:
            ex.error = self.exited_reason()
            return ex
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(body + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            ex.error = self._wait_reason()  # the server is dying: let it end and its last stderr be read
            return ex
        deadline = start + (limit if request_id is not None else settle)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if request_id is not None:
                    ex.error = f"no answer within {limit:g} s"
                break
            try:
                kind, value = self._inbox.get(timeout=remaining)
            except queue.Empty:
                continue
            if kind == "eof":
                self._eof = True
                ex.error = self._wait_reason()
                break
            if kind == "bad":
                ex.bad_frames.append(value)
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
        ex.elapsed_ms = int((time.monotonic() - start) * 1000)
        return ex

    def drain(self, seconds: float) -> list[Any]:
        """Messages that arrive within ``seconds`` with nothing sent (answers to notifications, say)."""
        out: list[Any] = []
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                kind, value = self._inbox.get(timeout=remaining)
            except queue.Empty:
                break
            if kind == "eof":
                self._eof = True
                break
            if kind == "msg":
                if _is_server_request(value):
                    self._answer(value)
                out.append(value)
        return out

    def _wait_reason(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=1.0)
        for t in self._threads[1:]:
            t.join(timeout=0.5)
        return self.exited_reason()

    def _answer(self, req: dict[str, Any]) -> None:
        self.server_requests.append(req)
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.write(jsonio.dumps(self._answer_for(req)) + b"\n")
            self.proc.stdin.flush()

    @property
    def alive(self) -> bool:
        return not self._eof and self.proc.poll() is None

    def close(self) -> None:
        """Close stdin, give the server 2 s to go, then end its process group."""
        stop(self.proc, 2.0)
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if stream:
                    stream.close()
