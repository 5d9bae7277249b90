"""A small ``stdio-v2`` MCP server: HTTP/2 (the h2 package) on its stdin/stdout, Streamable HTTP inside.

Written from the Transports WG's http-over-stdio drafts (mcpreel.drafts names them): the client writes
the HTTP/2 connection preface and frames, the server answers on stdout; every client message is a POST to
the endpoint; a request is answered with one JSON body, or (``tools/call`` of ``stream``) an SSE stream
carrying a progress notification before the result; a notification gets 202. ``tools/call`` of ``big``
answers 200 KB (past HTTP/2's initial 64 KB window: flow control must work through the proxy), ``slow``
opens an SSE stream and never answers on it (the client resets the stream). ``--log DIR`` writes what it read and wrote, byte for byte.

Run: ``python h2_server.py [--log DIR]``.
"""

from __future__ import annotations

import json
import os
import sys

import h2.config
import h2.connection
import h2.events
import h2.exceptions


def main() -> int:
    log = sys.argv[sys.argv.index("--log") + 1] if "--log" in sys.argv else None
    got = open(os.path.join(log, "server-read.bin"), "wb") if log else None
    sent = open(os.path.join(log, "server-wrote.bin"), "wb") if log else None
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    conn.initiate_connection()
    bodies: dict[int, bytearray] = {}
    heads: dict[int, dict[str, str]] = {}
    outgoing: dict[int, bytes] = {}  # stream -> body bytes still to send (flow control)

    def flush() -> None:
        data = conn.data_to_send()
        if data:
            os.write(1, data)
            if sent:
                sent.write(data)
                sent.flush()

    def send_body(sid: int) -> None:
        rest = outgoing.get(sid, b"")
        while rest:
            room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
            if room <= 0:
                break
            conn.send_data(sid, rest[:room])
            rest = rest[room:]
        if rest:
            outgoing[sid] = rest
        else:
            outgoing.pop(sid, None)
            conn.end_stream(sid)

    def answer(sid: int) -> None:
        msg = json.loads(bytes(bodies.pop(sid)) or b"null")
        if not isinstance(msg, dict) or "id" not in msg:
            conn.send_headers(sid, [(":status", "202")], end_stream=True)
            return
        method = msg.get("method")
        name = (msg.get("params") or {}).get("name")
        if method == "tools/call" and name == "slow":  # a stream opened and never answered: the client cancels
            conn.send_headers(sid, [(":status", "200"), ("content-type", "text/event-stream")])
            return
        result: dict = {"echo": method}
        if method == "tools/list":
            result = {"tools": [{"name": "stream", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call" and name == "big":
            result = {"content": [{"type": "text", "text": "b" * 200_000}]}
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        if method == "tools/call" and name == "stream":
            note = {"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": 1, "progress": 1}}
            body = (b"event: message\ndata: " + json.dumps(note).encode() + b"\n\n"
                    + b"event: message\ndata: " + json.dumps(reply).encode() + b"\n\n")
            ctype = "text/event-stream"
        else:
            body = json.dumps(reply).encode()
            ctype = "application/json"
        conn.send_headers(sid, [(":status", "200"), ("content-type", ctype), ("content-length", str(len(body)))])
        outgoing[sid] = body
        send_body(sid)

    flush()
    while True:
        data = os.read(0, 65536)
        if not data:
            break
        if got:
            got.write(data)
            got.flush()
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                heads[ev.stream_id] = dict(ev.headers)
                bodies[ev.stream_id] = bytearray()
            elif isinstance(ev, h2.events.DataReceived):
                bodies.setdefault(ev.stream_id, bytearray()).extend(ev.data)
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                try:
                    answer(ev.stream_id)
                except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                    pass  # the client reset the stream or closed the connection in the same read
            elif isinstance(ev, h2.events.WindowUpdated):
                for sid in list(outgoing):
                    send_body(sid)
            elif isinstance(ev, h2.events.StreamReset):
                outgoing.pop(ev.stream_id, None)
                bodies.pop(ev.stream_id, None)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                flush()
                return 0
        flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
