"""Hand-written files for the two formats no one has published a file of (mcpsnoop session logs and the MCP
Inspector network export), written field by field from their defining source as described in
``../shared/spec/08-other-recorders.md`` (mcpsnoop ``internal/proxy/frame.go`` ``Envelope``; Inspector
``core/mcp/types.ts`` ``FetchRequestEntry``)."""

from __future__ import annotations

import json
from pathlib import Path

MCPSNOOP_LINES = [
    {"session_id": "s-7f3a", "server_label": "weather", "seq": 0, "ts": "2026-08-20T10:00:00.000000001+02:00",
     "direction": "meta", "transport": "http", "raw": {"command": ["npx", "weather-mcp"], "cwd": "/srv"}},
    {"session_id": "s-7f3a", "server_label": "weather", "seq": 1, "ts": "2026-08-20T10:00:00.100000000+02:00",
     "direction": "c2s", "transport": "http", "conn_id": "c1", "mcp_method": "tools/call", "mcp_name": "forecast",
     "mcp_protocol_version": "2026-07-28",
     "mcp_param_headers": [{"name": "Mcp-Param-City", "value": "Oslo"}, {"name": "Mcp-Param-Token", "value": "", "redacted": True}],
     "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "forecast", "arguments": {"city": "Oslo"}}}},
    {"session_id": "s-7f3a", "server_label": "weather", "seq": 2, "ts": "2026-08-20T10:00:00.150000000+02:00",
     "direction": "s2c", "transport": "http", "conn_id": "c1", "status": 401,
     "auth_challenge": 'Bearer resource_metadata="https://w.example/.well-known/oauth-protected-resource"',
     "raw": {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "unauthorized"}}},
    {"session_id": "s-7f3a", "server_label": "weather", "seq": 3, "ts": "2026-08-20T10:00:01.000000000+02:00",
     "direction": "c2s", "transport": "http", "conn_id": "c2", "mcp_method": "tools/call", "mcp_name": "forecast",
     "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "forecast", "arguments": {"city": "Oslo"}}}},
    {"session_id": "s-7f3a", "server_label": "weather", "seq": 4, "ts": "2026-08-20T10:00:01.250000000+02:00",
     "direction": "s2c", "transport": "http", "conn_id": "c2", "status": 200, "batch": True, "truncated": True,
     "raw": {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "rain"}]}}},
    {"session_id": "s-7f3a", "server_label": "weather", "seq": 5, "ts": "2026-08-20T10:00:01.300000000+02:00",
     "direction": "stderr", "transport": "http", "text": "warn: cache cold"},
    {"session_id": "s-7f3a", "server_label": "weather", "seq": 6, "ts": "2026-08-20T10:00:01.400000000+02:00",
     "direction": "s2c", "transport": "http", "text": "not json <&>"},
]

SSE_BODY = ('event: message\nid: e1\ndata: {"jsonrpc":"2.0","method":"notifications/progress",'
            '"params":{"progressToken":1,"progress":0.5}}\n\n'
            'event: message\nid: e2\ndata: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}}\n\n')

INSPECTOR_NETWORK = [
    {"id": "a1", "timestamp": "2026-08-20T08:00:00.000Z", "method": "GET",
     "url": "https://w.example/.well-known/oauth-protected-resource", "requestHeaders": {"accept": "application/json"},
     "responseStatus": 200, "responseStatusText": "OK", "responseHeaders": {"content-type": "application/json"},
     "responseBody": '{"resource":"https://w.example/mcp"}', "duration": 12, "category": "auth"},
    {"id": "t1", "timestamp": "2026-08-20T08:00:01.000Z", "method": "POST", "url": "https://w.example/mcp",
     "requestHeaders": {"content-type": "application/json", "Authorization": "Bearer sk-live-abcdef", "Cookie": "sid=1"},
     "requestBody": '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
     "responseStatus": 200, "responseStatusText": "OK",
     "responseHeaders": {"content-type": "application/json", "set-cookie": "sid=2; HttpOnly"},
     "responseBody": '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"forecast","inputSchema":{"type":"object"}}]}}',
     "duration": 30, "category": "transport"},
    {"id": "t2", "timestamp": "2026-08-20T08:00:02.000Z", "method": "POST", "url": "https://w.example/mcp",
     "requestHeaders": {"content-type": "application/json", "authorization": "Bearer sk-live-abcdef"},
     "requestBody": '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Oslo"}}}',
     "responseStatus": 200, "responseHeaders": {"content-type": "text/event-stream"}, "responseBody": SSE_BODY,
     "duration": 250, "category": "transport"},
    {"id": "t3", "timestamp": "2026-08-20T08:00:03.000Z", "method": "POST", "url": "https://w.example/mcp",
     "requestHeaders": {"content-type": "application/json"},
     "requestBody": '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}',
     "responseStatus": 202, "responseStatusText": "Accepted", "duration": 3, "category": "transport"},
    {"id": "t4", "timestamp": "2026-08-20T08:00:04.000Z", "method": "POST", "url": "https://w.example/mcp",
     "requestHeaders": {}, "requestBody": '{"jsonrpc":"2.0","id":3,"method":"ping"}',
     "error": "Failed to fetch", "category": "transport"},
]


def write_mcpsnoop(path: Path, lines: list | None = None) -> Path:
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in (lines or MCPSNOOP_LINES)))
    return path


def write_inspector_network(path: Path, entries: list | None = None) -> Path:
    path.write_text(json.dumps(entries or INSPECTOR_NETWORK, indent=2))
    return path
