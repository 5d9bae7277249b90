"""The official SDK client for the operations recordings; prints what it saw as JSON.

    python ops_client.py listen|plain TARGET [auto|legacy]

TARGET is a stdio command line (split like a shell) or an ``http://`` URL. ``listen`` (2026-07-28, the
default mode) opens ``client.listen(tools_list_changed=True)``, calls ``touch``, waits (bounded) for the
change event, leaves the stream (the SDK sends ``notifications/cancelled``), then calls ``echo`` and
``fail``. ``plain`` (either mode) lists the tools and calls ``echo``, ``touch`` and ``fail``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from typing import Any

from mcp import Client, StdioServerParameters

WAIT_S = 10.0


def _target(text: str) -> Any:
    if text.startswith("http://"):
        return text
    argv = shlex.split(text)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))


async def listen(client: Client, seen: dict[str, Any]) -> None:
    async with client.listen(tools_list_changed=True) as sub:
        seen["touch"] = (await client.call_tool("touch", {})).content[0].text
        events = []
        async with asyncio.timeout(WAIT_S):
            async for event in sub:
                events.append(type(event).__name__)
                break
        seen["events"] = events


async def main(kind: str, target: str, mode: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = {} if mode == "auto" else {"mode": mode}
    seen: dict[str, Any] = {}
    async with asyncio.timeout(60), Client(_target(target), **kwargs) as client:
        seen["protocol"] = client.protocol_version
        if kind == "listen":
            await listen(client, seen)
        else:
            seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            seen["touch"] = (await client.call_tool("touch", {})).content[0].text
        seen["echo"] = (await client.call_tool("echo", {"text": "hi"})).content[0].text
        seen["fail"] = (await client.call_tool("fail", {"reason": "no"})).is_error
    return seen


if __name__ == "__main__":
    kind, target = sys.argv[1], sys.argv[2]
    print(json.dumps(asyncio.run(main(kind, target, sys.argv[3] if len(sys.argv) > 3 else "auto"))))
