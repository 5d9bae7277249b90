"""A client of a ``stdio-v2`` server: Streamable HTTP as HTTP/2 on a child process's stdin and stdout.

The Transports WG's http-over-stdio drafts (:mod:`mcpreel.drafts` names them and their versions) run
Streamable HTTP over HTTP/2 on a subprocess's pipes, with prior knowledge: the client writes the connection
preface, each request is a stream. :func:`stdio_v2_transport` is the Streamable HTTP client of
:mod:`mcpreel.clients.http` with an httpx transport (:class:`PipeH2Transport`) that carries each request
on a stream of one h2 client connection to the child, so ``replay --target-command`` meets a ``stdio-v2``
server as the recorded client did. The child starts with the first request and ends when the transport
closes (GOAWAY, then its stdin closes); its stderr is passed on to ours.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import httpx2

from mcpreel.clients.process import spawn_async, with_environ
from mcpreel.drafts import STDIO_V2_AUTHORITY, STDIO_V2_PATH
from mcpreel.errors import TransportError

__all__ = ["PipeH2Transport", "stdio_v2_transport"]

_HOP = frozenset((b"host", b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"te", b"proxy-connection"))


class _Stream:
    def __init__(self) -> None:
        self.head: asyncio.Future[tuple[int, list[tuple[bytes, bytes]]]] = asyncio.get_running_loop().create_future()
        self.data: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.window = asyncio.Event()
        self.ended = False


class _Body(httpx2.AsyncByteStream):
    def __init__(self, owner: PipeH2Transport, sid: int, st: _Stream):
        self._owner, self._sid, self._st = owner, sid, st

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            chunk = await self._st.data.get()
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        """A body left unread is a cancelled stream: reset it (``CANCEL``), as a client closing its response."""
        if not self._st.ended:
            self._owner._reset(self._sid)


class PipeH2Transport(httpx2.AsyncBaseTransport):
    """An httpx transport whose one connection is HTTP/2 on the pipes of the child ``argv``."""

    def __init__(self, argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None):
        self.argv, self.env, self.cwd = list(argv), env, cwd
        self.proc: asyncio.subprocess.Process | None = None
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
        self._streams: dict[int, _Stream] = {}
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._dead: str | None = None
        self._stderr: asyncio.Task[None] | None = None
        #: the child's last stderr lines
        self.stderr_tail: list[str] = []

    async def _start(self) -> None:
        if self.proc is not None:
            return
        self.proc = await spawn_async(self.argv, env=with_environ(self.env), cwd=self.cwd)
        self._stderr = asyncio.create_task(self._drain_stderr())
        self.conn.initiate_connection()
        await self._flush()
        self._reader = asyncio.create_task(self._read())

    async def _drain_stderr(self) -> None:
        """The child's stderr is read (it must never block on a full pipe), its last lines kept for errors."""
        assert self.proc is not None and self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.stderr_tail = [*self.stderr_tail[-19:], line.decode("utf-8", "replace").rstrip()]

    async def _flush(self) -> None:
        data = self.conn.data_to_send()
        if data and self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.write(data)
                await self.proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as exc:
                self._die(f"the stdio-v2 server closed its stdin ({exc})")

    def _die(self, why: str) -> None:
        self._dead = self._dead or why
        for st in self._streams.values():
            if not st.head.done():
                st.head.set_exception(TransportError(why))
            st.data.put_nowait(None)
            st.window.set()

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            data = await self.proc.stdout.read(1 << 16)
            if not data:
                self._die("the stdio-v2 server closed its stdout")
                return
            try:
                events = self.conn.receive_data(data)
            except h2.exceptions.ProtocolError as exc:
                self._die(f"the stdio-v2 server broke HTTP/2: {exc}")
                return
            for ev in events:
                st = self._streams.get(getattr(ev, "stream_id", 0) or 0)
                if isinstance(ev, h2.events.ResponseReceived) and st is not None:
                    headers = [(bytes(k), bytes(v)) for k, v in ev.headers]
                    status = int(dict(headers).get(b":status", b"0"))
                    if not st.head.done():
                        st.head.set_result((status, [(k, v) for k, v in headers if not k.startswith(b":")]))
                elif isinstance(ev, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                    if st is not None:
                        st.data.put_nowait(bytes(ev.data))
                elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)) and st is not None:
                    st.ended = True
                    if not st.head.done():
                        st.head.set_exception(TransportError("the stdio-v2 server reset the stream"))
                    st.data.put_nowait(None)
                elif isinstance(ev, h2.events.WindowUpdated):
                    for s in self._streams.values():
                        s.window.set()
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    self._die("the stdio-v2 server ended the connection (GOAWAY)")
            await self._flush()

    def _reset(self, sid: int) -> None:
        with contextlib.suppress(h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError):
            self.conn.reset_stream(sid, error_code=8)  # CANCEL
        self._streams.pop(sid, None)
        asyncio.ensure_future(self._flush())

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """One request on a new stream of the child's connection; the response streams as it comes."""
        async with self._lock:
            await self._start()
        if self._dead is not None:
            raise TransportError(self._dead)
        body = await request.aread()
        path = request.url.raw_path or STDIO_V2_PATH.encode()
        headers = [(b":method", request.method.encode()), (b":scheme", b"http"),
                   (b":authority", STDIO_V2_AUTHORITY.encode()), (b":path", path)]
        headers += [(k.lower(), v) for k, v in request.headers.raw if k.lower() not in _HOP]
        async with self._lock:
            sid = self.conn.get_next_available_stream_id()
            st = self._streams[sid] = _Stream()
            self.conn.send_headers(sid, headers, end_stream=not body)
            await self._flush()
        while body:
            room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
            if room <= 0:
                st.window.clear()
                await st.window.wait()
                if self._dead is not None:
                    raise TransportError(self._dead)
                continue
            self.conn.send_data(sid, body[:room], end_stream=len(body) <= room)
            body = body[room:]
            await self._flush()
        timeouts = request.extensions.get("timeout") or {}
        try:  # a server that never answers is a read timeout, as over a socket
            wait = timeouts.get("read") or timeouts.get("connect")  # no socket to connect: headers are the sign of life
            status, response_headers = await asyncio.wait_for(asyncio.shield(st.head), wait)
        except TimeoutError:
            self._reset(sid)
            raise httpx2.ReadTimeout("the stdio-v2 server sent no response headers in time", request=request) from None
        return httpx2.Response(status, headers=response_headers, stream=_Body(self, sid, st), request=request)

    async def aclose(self) -> None:
        """GOAWAY, the child's stdin closed, the child waited for (killed when it does not end)."""
        proc = self.proc
        if proc is None:
            return
        with contextlib.suppress(Exception):
            self.conn.close_connection()
            await self._flush()
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        for task in (self._reader, self._stderr):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


def stdio_v2_transport(argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                       timeout: float = 30.0) -> Any:
    """A Streamable HTTP client transport to the ``stdio-v2`` server ``argv`` (not yet started)."""
    from mcpreel.clients.http import StreamableHTTPTransport

    transport = StreamableHTTPTransport(f"http://{STDIO_V2_AUTHORITY}{STDIO_V2_PATH}", timeout=timeout,
                                        get_stream=False, http_transport=PipeH2Transport(argv, env=env, cwd=cwd))
    transport.name = "stdio-v2"
    return transport
