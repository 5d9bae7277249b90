"""A small ``stdio-v2`` MCP client: HTTP/2 (the h2 package) on a child's stdin/stdout, for the tests.

It starts a command (the server, or ``mcpreel record -- server``), writes the HTTP/2 connection preface
and POSTs JSON-RPC messages to the endpoint one after the other, reads each answer to its end (a JSON
body or an SSE stream), cancels one call with ``RST_STREAM``, ends with ``GOAWAY``, and keeps every byte
it wrote and read, so a test can compare both sides of the pipe byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions

from mcpreel.drafts import STDIO_V2_AUTHORITY, STDIO_V2_PATH

VERSION = "2026-07-28"
#: the protocol plumbing a 2026-07-28 client puts on every request (spec 03: ``params._meta``)
META = {"io.modelcontextprotocol/protocolVersion": VERSION}
SCRIPT: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
    {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"_meta": META}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "stream", "arguments": {}, "_meta": META}},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "big", "arguments": {}, "_meta": META}},
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "slow", "arguments": {}, "_meta": META}},
]


@dataclass
class Transcript:
    """What the client saw: each exchange's status, content type and body, and the bytes of the pipe."""

    answers: list[tuple[int, str, bytes]] = field(default_factory=list)
    wrote: bytearray = field(default_factory=bytearray)
    read: bytearray = field(default_factory=bytearray)
    returncode: int | None = None
    stderr: bytes = b""


def run(argv: list[str], *, timeout: float = 60, script: list[dict[str, Any]] | None = None,
        headers: list[tuple[str, str]] | None = None) -> Transcript:
    """Run the script (:data:`SCRIPT` unless ``script``) against ``argv``, with an ``authorization`` header on each
    request (``headers`` instead, when given); every read is bounded by ``timeout`` (the test fails, never hangs)."""
    import select

    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    out = Transcript()
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()

    def flush() -> None:
        data = conn.data_to_send()
        if data:
            out.wrote.extend(data)
            os.write(proc.stdin.fileno(), data)  # type: ignore[union-attr]

    def pump(until: Any) -> list[h2.events.Event]:
        seen: list[h2.events.Event] = []
        while not until(seen):
            ready, _, _ = select.select([proc.stdout], [], [], timeout)
            if not ready:
                raise TimeoutError("no answer from the stdio-v2 server")
            data = os.read(proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
            if not data:
                raise EOFError("the stdio-v2 server closed its stdout")
            out.read.extend(data)
            events = conn.receive_data(data)
            for ev in events:
                if isinstance(ev, h2.events.DataReceived):
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            seen.extend(events)
            flush()
        return seen

    try:
        flush()
        for msg in script if script is not None else SCRIPT:
            sid = conn.get_next_available_stream_id()
            body = json.dumps(msg).encode()
            conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", STDIO_V2_AUTHORITY),
                                    (":path", STDIO_V2_PATH), ("content-type", "application/json"),
                                    ("accept", "application/json, text/event-stream"),
                                    ("mcp-protocol-version", VERSION), ("mcp-method", msg["method"]),
                                    *([("mcp-name", msg["params"]["name"])] if msg["method"] == "tools/call" else []),
                                    *(headers if headers is not None else [("authorization", "Bearer s3cret-token")])])
            conn.send_data(sid, body, end_stream=True)
            flush()
            if msg.get("params", {}).get("name") == "slow":
                pump(lambda seen: True)  # nothing to wait for: the server never answers it
                conn.reset_stream(sid, error_code=8)  # CANCEL
                flush()
                out.answers.append((0, "reset", b""))
                continue
            status: list[int] = []
            ctype: list[str] = []
            chunks = bytearray()

            def ended(seen: list[h2.events.Event], sid: int = sid) -> bool:
                for ev in seen:
                    if isinstance(ev, h2.events.ResponseReceived) and ev.stream_id == sid:
                        hdrs = dict(ev.headers)
                        status.append(int(hdrs[":status"]))
                        ctype.append(hdrs.get("content-type", ""))
                    elif isinstance(ev, h2.events.DataReceived) and ev.stream_id == sid:
                        chunks.extend(ev.data)
                    elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                        return True
                seen.clear()
                return False

            pump(ended)
            out.answers.append((status[0], ctype[0], bytes(chunks)))
        conn.close_connection()
        flush()
    finally:
        proc.stdin.close()
        out.read.extend(proc.stdout.read())
        out.stderr = proc.stderr.read() if proc.stderr else b""
        out.returncode = proc.wait(timeout)
    return out
