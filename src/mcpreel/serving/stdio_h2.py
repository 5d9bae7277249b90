"""An ASGI app served as HTTP/2 on this process's stdin and stdout: the ``stdio-v2`` draft's server side.

The Transports WG's http-over-stdio drafts (:mod:`mcpreel.drafts` names them and their versions) run
Streamable HTTP over HTTP/2 on a subprocess's pipes, chosen by configuration, with prior knowledge: the
client writes the connection preface, each request is a stream. ``mcpreel serve --transport stdio-v2``
(the default when the recording's pipe spoke it) serves the mock's own Streamable HTTP app
(:func:`mcpreel.mock.server.http_app`) this way, so a ``stdio-v2`` client meets the mock as it met the
recorded server.

The h2 package's server connection does the protocol (frames, HPACK, flow control, resets); this module
is the glue: a thread reads stdin into the event loop, each request stream runs the app as an ASGI
``http`` call (its body, then ``http.disconnect`` when the client resets the stream or leaves), and the
response's body waits for flow-control window before it is written. stdin's EOF ends the serving; nothing
but HTTP/2 is ever written to stdout.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions

from mcpreel.drafts import STDIO_V2_AUTHORITY

__all__ = ["serve_asgi_stdio_h2"]

App = Callable[[dict[str, Any], Callable[[], Awaitable[dict[str, Any]]], Callable[[dict[str, Any]], Awaitable[None]]],
               Awaitable[None]]


@dataclass
class _Stream:
    headers: list[tuple[str, str]]
    body: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    window: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    reset: bool = False


async def serve_asgi_stdio_h2(app: App, *, stdin_fd: int = 0, stdout_fd: int = 1) -> None:
    """Serve ``app`` as HTTP/2 on ``stdin_fd``/``stdout_fd`` until the client closes its end."""
    loop = asyncio.get_running_loop()
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    conn.initiate_connection()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    streams: dict[int, _Stream] = {}

    def flush() -> None:
        data = conn.data_to_send()
        view = memoryview(data)
        while view:
            view = view[os.write(stdout_fd, view):]

    def reader() -> None:
        while True:
            try:
                data = os.read(stdin_fd, 1 << 16)
            except OSError:
                data = b""
            loop.call_soon_threadsafe(chunks.put_nowait, data)
            if not data:
                return

    async def respond(sid: int, st: _Stream) -> None:
        pseudo = dict(h for h in st.headers if h[0].startswith(":"))
        path, _, query = pseudo.get(":path", "/").partition("?")
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in st.headers if not k.startswith(":")]
        headers.append((b"host", pseudo.get(":authority", STDIO_V2_AUTHORITY).encode("latin-1")))
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "2", "method": pseudo.get(":method", "GET"),
                 "scheme": pseudo.get(":scheme", "http"), "path": path, "raw_path": path.encode("latin-1"),
                 "query_string": query.encode("latin-1"), "root_path": "", "headers": headers,
                 "server": (STDIO_V2_AUTHORITY, None), "client": ("stdio", 0)}

        async def receive() -> dict[str, Any]:
            return await st.body.get()

        async def send(event: dict[str, Any]) -> None:
            if st.reset:
                return
            if event["type"] == "http.response.start":
                out = [(":status", str(event["status"]))]
                out += [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in event.get("headers", [])
                        if k.lower() not in (b"connection", b"transfer-encoding", b"keep-alive")]
                conn.send_headers(sid, out)
                flush()
            elif event["type"] == "http.response.body":
                data = event.get("body", b"")
                more = event.get("more_body", False)
                while data and not st.reset:
                    room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
                    if room <= 0:
                        st.window.clear()
                        await st.window.wait()
                        continue
                    conn.send_data(sid, data[:room])
                    data = data[room:]
                    flush()
                if not more and not st.reset:
                    conn.end_stream(sid)
                    flush()

        try:
            await app(scope, receive, send)
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            pass  # the client reset the stream or went away while it was answered
        finally:
            streams.pop(sid, None)

    threading.Thread(target=reader, name="mcpreel-stdio-v2", daemon=True).start()
    flush()
    try:
        while True:
            data = await chunks.get()
            if not data:
                break
            try:
                events = conn.receive_data(data)
            except h2.exceptions.ProtocolError:
                flush()  # the GOAWAY h2 queued says why
                break
            for ev in events:
                if isinstance(ev, h2.events.RequestReceived):
                    streams[ev.stream_id] = _Stream(list(ev.headers))  # type: ignore[arg-type]
                elif isinstance(ev, h2.events.DataReceived):
                    st = streams.get(ev.stream_id)
                    if st is not None:
                        st.body.put_nowait({"type": "http.request", "body": ev.data, "more_body": True})
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded):
                    st = streams.get(ev.stream_id)
                    if st is not None:
                        st.body.put_nowait({"type": "http.request", "body": b"", "more_body": False})
                        st.task = asyncio.ensure_future(respond(ev.stream_id, st))
                elif isinstance(ev, h2.events.StreamReset):
                    st = streams.get(ev.stream_id)
                    if st is not None:
                        st.reset = True
                        st.window.set()
                        st.body.put_nowait({"type": "http.disconnect"})
                elif isinstance(ev, h2.events.WindowUpdated):
                    for st in streams.values():
                        st.window.set()
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    flush()
                    return
            flush()
    finally:
        for st in list(streams.values()):
            st.reset = True
            st.body.put_nowait({"type": "http.disconnect"})
            if st.task is not None:
                st.task.cancel()
        pending = [st.task for st in streams.values() if st.task is not None]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
