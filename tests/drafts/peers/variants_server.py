"""A stdio MCP server speaking SEP-3279 (result variants) and SEP-2998 (partial tool results), written from
the drafts' own wire examples (no SDK speaks them): one tool ``generate_report`` declaring
``outputVariants``; a ``tools/call`` gets exactly the ``requestedOutputs`` (else the ``assistant/content``
fallback) in ``outputs``, and when its ``_meta`` names a ``partialResultToken``, chunks
(``notifications/tools/partial_result``, ``seq`` from 0) before the final result.

    python variants_server.py [v1|v2|v3]

``v2`` sends the same final result with its ``outputs`` in another order and other chunks; ``v3`` changes
the final result (the programmatic payload)."""

from __future__ import annotations

import json
import sys

VERSION = sys.argv[1] if len(sys.argv) > 1 else "v1"
TOOL = {"name": "generate_report", "description": "A report on a topic.",
        "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}},
        "outputVariants": [{"audience": "assistant", "format": "content"},
                           {"audience": "user", "format": "content"},
                           {"audience": "programmatic", "format": "structured",
                            "schema": {"type": "object", "properties": {"rows": {"type": "integer"}}}}]}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def output(selector: dict, topic: str) -> dict:
    audience, fmt = selector["audience"], selector["format"]
    if fmt == "structured":
        return {"audience": audience, "format": fmt, "structuredContent": {"rows": 1200 if VERSION != "v3" else 1300}}
    text = f"Report on {topic}: revenue grew." if audience == "assistant" else f"<h1>{topic}</h1>"
    return {"audience": audience, "format": fmt, "content": [{"type": "text", "text": text}]}


def call(request: dict) -> None:
    params = request.get("params") or {}
    topic = (params.get("arguments") or {}).get("topic", "")
    token = (params.get("_meta") or {}).get("partialResultToken")
    if token is not None:
        chunks = ["Gathering", "Summing"] if VERSION == "v1" else ["Gathering", "Summing", "Checking"]
        for seq, text in enumerate(chunks):
            send({"jsonrpc": "2.0", "method": "notifications/tools/partial_result",
                  "params": {"partialResultToken": token, "seq": seq, "content": [{"type": "text", "text": text}],
                             "final": seq == len(chunks) - 1}})
    selectors = params.get("requestedOutputs") or [{"audience": "assistant", "format": "content"}]
    outputs = [output(s, topic) for s in selectors]
    if VERSION == "v2":
        outputs.reverse()  # the order of outputs has no meaning
    send({"jsonrpc": "2.0", "id": request["id"], "result": {"outputs": outputs, "isError": False}})


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        if rid is None:
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "variants", "version": VERSION}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            call(request)
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
