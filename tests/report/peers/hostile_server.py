"""A stdio MCP server (handshake era, newline-delimited JSON) whose every answer is hostile text.

``hostile_server.py hostile|plain ...``: the strings come from ``hostile.hostile`` or ``hostile.plain``
(the rest of argv is only there to be shown in the replay page's target). It answers ``initialize``,
``tools/list`` and ``tools/call`` with strings that differ from the recording's (so the replay page has
differences whose paths and values are that text), answers one tool and any unknown method with a
JSON-RPC error whose message is that text, writes that text on stderr, and sends a request of its own
under a method the recording does not hold.
"""

from __future__ import annotations

import json
import sys

from hostile import hostile, plain  # beside this file: the script's folder is on sys.path

s = hostile if sys.argv[1] == "hostile" else plain


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict) -> dict:
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        return {"result": {"protocolVersion": params.get("protocolVersion", "2025-11-25"), "capabilities": {"tools": {}},
                           "serverInfo": {"name": s("replayed-server"), "version": s("replayed-version")},
                           "instructions": s("replayed-instructions")}}
    if method == "tools/list":
        return {"result": {"tools": [{"name": s("tool"), "description": s("replayed-description"),
                                      "inputSchema": {"type": "object"}}]}}
    if method == "tools/call":
        if params.get("name") == s("tool-2"):
            return {"error": {"code": -32000, "message": s("replayed-error"), "data": s("replayed-error-data")}}
        send({"jsonrpc": "2.0", "id": "server-asks", "method": s("server-method"),
              "params": {s("server-param-key"): s("server-param")}})
        return {"result": {"content": [{"type": "text", "text": s("replayed-result")}],
                           s("replayed-key"): s("replayed-value")}}
    if method == "ping":
        return {"result": {}}
    return {"error": {"code": -32601, "message": s("replayed-unknown-method")}}


for line in sys.stdin:
    message = json.loads(line)
    if isinstance(message, dict) and "method" in message and "id" in message:
        sys.stderr.write(s("replayed-stderr") + "\n")
        sys.stderr.flush()
        send({"jsonrpc": "2.0", "id": message["id"], **answer(message)})
