"""Record sessions with ``mcpreel record`` between the official SDK client and ``server.py``, both eras.

    python drive.py OUT_DIR [RECORD OPTIONS...]

writes ``OUT_DIR/legacy.jsonl`` (``Client(mode="legacy")``: the initialize handshake, sampling works)
and ``OUT_DIR/modern.jsonl`` (the default mode: server/discover, 2026-07-28, sampling has no
back-channel and fails) and prints what the client saw as JSON. Options after OUT_DIR go to
``mcpreel record``; ``DRIVE_ERAS=legacy`` records one era only.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import Client, MCPError, StdioServerParameters
from mcp.types import CreateMessageResult, TextContent

HERE = Path(__file__).resolve().parent
PY = sys.executable
#: a W3C trace context the test client puts in one request's _meta (the OTLP export must honour it)
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def sampling(ctx, params):
    return CreateMessageResult(role="assistant", model="fake", content=TextContent(type="text", text="42"))


async def session(out: Path, mode: str) -> dict:
    params = StdioServerParameters(command=PY, args=["-m", "mcpreel", "record", "-q", "--out", str(out),
                                                     *sys.argv[2:], "--", PY, str(HERE / "server.py")])
    seen: dict = {"progress": []}

    async def on_progress(p, total, message):
        seen["progress"].append(p)

    async with Client(params, mode=mode, sampling_callback=sampling) as c:
        seen["tools"] = sorted(t.name for t in (await c.list_tools()).tools)
        seen["echo"] = (await c.call_tool("echo", {"text": "hello <b>&</b>"})).is_error
        seen["slow"] = (await c.call_tool("slow", {"steps": 3}, progress_callback=on_progress)).is_error
        seen["traced"] = (await c.call_tool("echo", {"text": "traced"}, meta={"traceparent": TRACEPARENT})).is_error
        try:
            seen["ask"] = (await c.call_tool("ask", {"question": "meaning?"})).is_error
        except MCPError as exc:
            seen["ask"] = exc.error.code
        seen["fail"] = (await c.call_tool("fail", {"reason": "no way"})).is_error
        seen["prompt"] = len((await c.get_prompt("greet", {"name": "Ada"})).messages)
        seen["resource"] = len((await c.read_resource("res://motd")).contents)
        try:
            await c.get_prompt("no-such-prompt")
            seen["missing_prompt"] = None
        except MCPError as exc:
            seen["missing_prompt"] = exc.error.code
    return seen


async def main(out_dir: Path) -> None:
    eras = os.environ.get("DRIVE_ERAS", "legacy,modern").split(",")
    result = {era: await session(out_dir / f"{era}.jsonl", "legacy" if era == "legacy" else "auto") for era in eras}
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
