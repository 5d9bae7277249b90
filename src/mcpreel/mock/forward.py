"""``serve --on-miss forward``: a request the recording cannot answer goes to a live server, and its
answer joins the recording (in memory at once, on disk after every forward).

The live server is started on the first miss and initialized with what the client sent the mock
(its ``initialize``), so it sees a proper session. When it loses that session — HTTP 404 on a session id
a restarted server no longer knows, or a stdio server that exited — the forward that found out opens a
new session (starts the server again), once, and retries once; both are told as events. A request the
server may have acted on is never sent twice: a stdio server that died after the request was written to
it fails that request (the server may have carried out the tool before it died); the next miss starts
it again. HTTP 404 on the session (refused, not acted on) and a request never written are retried. Requests go upstream under fresh ids; what the
live server says meanwhile is relayed to the client: notifications as they are, server requests under
an id of the mock's and their answers sent back upstream under the server's own id.

:class:`CassetteFile` appends the new exchanges to the session and rewrites the file in its own
format, atomically (temp file + rename, mode 0600); a format mcpreel cannot write is refused before
serving starts, never silently turned into another.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpreel._infra.correlation import verbatim_key
from mcpreel._infra.fileio import atomic_output
from mcpreel._infra.timeutil import now_ms
from mcpreel._version import __version__
from mcpreel.clients.base import Transport
from mcpreel.errors import TransportError, UsageError
from mcpreel.formats import FORMATS, canonical_name, get_writer
from mcpreel.mock.engine import Emit, MockConnection
from mcpreel.model import Kind, Message, Session
from mcpreel.operations.cassette import Turn

__all__ = ["CassetteFile", "Forwarder"]


class CassetteFile:
    """The recording on disk, grown by forwarded exchanges."""

    def __init__(self, path: str | Path, session: Session, format: str,
                 redact: Callable[[Session], Session] | None = None):
        name = canonical_name(format)
        if not FORMATS[name].writes:
            raise UsageError(f"--on-miss forward adds answers to the recording, and {name} files cannot be "
                             "written: convert the recording to a reel first")
        self.path = Path(path)
        self.format = name
        self.session = session.materialize()
        #: what the file gets instead of the session, when it is written redacted (a cassette of the plugin)
        self.redact = redact

    def append(self, ex: Turn, notes: list[Message]) -> None:
        """Add a forwarded exchange to the recording and rewrite the file atomically (a crash leaves the old file
        whole)."""
        msgs = self.session.messages
        msgs.append(Message("in", ex.request, ex.t_request))
        msgs.extend(notes)
        if ex.response is not None:
            msgs.append(Message("out", ex.response, ex.t_response))
        writer = get_writer(self.format)
        with atomic_output(self.path) as out:
            writer(self.session if self.redact is None else self.redact(self.session), out)


class _SessionLost(TransportError):
    """The live server no longer knows the session (HTTP 404 on it): a new session may well work."""


class _NotSent(TransportError):
    """The live server was gone before the request was written to it: sending it to a new one is safe."""


class _Flight:
    __slots__ = ("conn", "emit", "future", "notes")

    def __init__(self, conn: MockConnection, emit: Emit):
        self.conn = conn
        self.emit = emit
        self.future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.notes: list[Message] = []


class Forwarder:
    """The live server behind a mock."""

    def __init__(self, make_transport: Callable[[], Transport], cassette_file: CassetteFile | None = None, *,
                 timeout: float = 30.0, on_event: Callable[[str], None] | None = None):
        self.make_transport = make_transport
        self.cassette_file = cassette_file
        self.timeout = timeout
        self.on_event = on_event or (lambda line: None)
        self.transport: Transport | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._flights: dict[tuple[str, Any], _Flight] = {}
        self._reader: asyncio.Task[None] | None = None
        self._started = False

    async def _ensure_started(self, conn: MockConnection) -> None:
        async with self._lock:
            if self._started:
                return
            transport = self.make_transport()
            await transport.start()
            self.transport = transport
            self._reader = asyncio.ensure_future(self._read())
            init = conn.client_initialize or {
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "mcpreel-serve", "version": __version__}}}
            answer = await self._call(conn, lambda m: None, init)
            if "result" not in answer:
                raise TransportError(f"the live server refused initialize: {answer.get('error')}")
            await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            self._started = True
            self.on_event("forward: the live server is up and initialized")

    async def _call(self, conn: MockConnection, emit: Emit, request: dict[str, Any]) -> dict[str, Any]:
        return await self._call_collect(conn, emit, request, [])

    async def forward(self, conn: MockConnection, request: dict[str, Any], emit: Emit) -> dict[str, Any] | None:
        """Ask the live server for a request the recording lacks, starting it on first use, and keep its answer."""
        await self._ensure_started(conn)
        t0 = now_ms()
        flight_notes: list[Message] = []
        try:
            answer = await self._call_collect(conn, emit, request, flight_notes)
        except TransportError as exc:
            if not self._lost(exc):
                if self._reader is not None and self._reader.done():
                    raise TransportError(f"{exc}, with this request in hand: not sent again (the server may "
                                         "have acted on it)") from exc
                raise
            # the live server restarted (HTTP: our session id is stale) or crashed (stdio): open a new
            # session, or start it again, once for this request, and try it once more; a second failure
            # is the request's
            await self._restart(conn, exc)
            self.on_event(f"forward: retrying {request.get('method')} once on the new session")
            flight_notes.clear()
            answer = await self._call_collect(conn, emit, request, flight_notes)
        ex = Turn(request, request, 0, None, t0, response={**answer, "id": request.get("id")}, t_response=now_ms(),
                      before=[n.raw for n in flight_notes if n.kind == Kind.MESSAGE])
        conn.mock.add_exchange(ex)
        if self.cassette_file is not None:
            self.cassette_file.append(ex, flight_notes)
        self.on_event(f"forward: {request.get('method')} answered by the live server and added to the recording")
        return answer

    def _lost(self, exc: TransportError) -> bool:
        # only what the server did not act on is sent again: a refused session (404) or a request never
        # written; a server that died with the request in hand may have done it (a tool's side effect)
        return isinstance(exc, (_SessionLost, _NotSent))

    async def _restart(self, conn: MockConnection, exc: TransportError) -> None:
        http = isinstance(exc, _SessionLost)
        self.on_event(f"forward: {exc}: " + ("opening a new session" if http else "starting the live server again"))
        async with self._lock:
            old, self.transport = self.transport, None
            if self._reader is not None:
                self._reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._reader
                self._reader = None
            if old is not None:
                with contextlib.suppress(Exception):
                    await old.close()
            self._started = False
        await self._ensure_started(conn)

    async def _call_collect(self, conn: MockConnection, emit: Emit, request: dict[str, Any],
                            notes: list[Message]) -> dict[str, Any]:
        assert self.transport is not None
        if self._reader is not None and self._reader.done():
            # nobody would ever read the answer: say so now rather than after the timeout
            raise _NotSent(self.transport.ended or "the live server went away")
        # live-wire pairing: the live server's answer to the request forwarded just now, under an id made
        # up for it (a recording's pairs come from the one reading, operations/)
        upstream_id = f"mcpreel-fwd-{next(self._ids)}"
        flight = _Flight(conn, emit)
        flight.notes = notes
        self._flights[verbatim_key(upstream_id)] = flight
        try:
            await self.transport.send({**request, "id": upstream_id})
            return await asyncio.wait_for(flight.future, self.timeout)
        except TimeoutError as exc:
            raise TransportError(f"the live server did not answer within {self.timeout:g} s") from exc
        finally:
            self._flights.pop(verbatim_key(upstream_id), None)

    async def _read(self) -> None:
        assert self.transport is not None
        transport = self.transport
        async for rec in transport:
            if rec.kind == Kind.TRANSPORT:
                self._fail_flights(rec.ctx or {})
                continue
            if rec.kind != Kind.MESSAGE:
                continue
            for member in rec.members():
                if "method" not in member:
                    flight = self._flights.get(verbatim_key(member.get("id")))
                    if flight is not None and not flight.future.done():
                        flight.future.set_result(member)
                    continue
                flight = next(reversed(self._flights.values()), None) if self._flights else None
                if flight is None:
                    continue  # said outside any forwarded request: nobody to tell
                flight.notes.append(Message("out", member, rec.t))
                if "id" in member:
                    upstream_id = member["id"]

                    def answer(reply: dict[str, Any], upstream_id: Any = upstream_id, flight: _Flight = flight) -> None:
                        flight.notes.append(Message("in", {**reply, "id": upstream_id}, now_ms()))
                        asyncio.ensure_future(self._send_quietly({**reply, "id": upstream_id}))

                    flight.conn.relay_request(member, flight.emit, answer)
                else:
                    flight.emit(member)
        for flight in self._flights.values():
            if not flight.future.done():
                flight.future.set_exception(TransportError(transport.ended or "the live server went away"))

    def _fail_flights(self, ctx: dict[str, Any]) -> None:
        # an HTTP answer that is no JSON-RPC answer (an error status, a broken stream) ends the requests it
        # was for at once, instead of leaving them to the timeout
        ids = ctx.get("request_ids") or []
        if not ids:
            return
        status = ctx.get("status")
        if status == 404:
            error: TransportError = _SessionLost("the live server answered HTTP 404: its session is gone")
        elif ctx.get("error"):
            error = TransportError(f"the live server: {ctx['error']}")
        else:
            body = str(ctx.get("body") or "").strip()[:200]
            error = TransportError(f"the live server answered HTTP {status}" + (f": {body}" if body else ""))
        for upstream_id in ids:
            flight = self._flights.get(verbatim_key(upstream_id))
            if flight is not None and not flight.future.done():
                flight.future.set_exception(error)

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        if self.transport is not None:
            with contextlib.suppress(TransportError):
                await self.transport.send(message)

    async def close(self) -> None:
        """Stop the live server session (its reader task first, so no answer arrives after the transport is gone)."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self.transport is not None:
            await self.transport.close()
