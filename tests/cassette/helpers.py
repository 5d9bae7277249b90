"""Driving a cassette-backed server with the official SDK client, in the test's own process."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from mcpreel.cassette.server import CassetteServer
from tests import peers

SDK_SERVER = [sys.executable, str(peers.SDK_SERVER)]
#: a server command that would fail: a replay that needed it would show
DEAD = [sys.executable, "-c", "import sys; sys.exit(3)"]


async def _sampling(ctx: Any, params: Any) -> Any:
    from mcp.types import CreateMessageResult, TextContent

    return CreateMessageResult(role="assistant", model="fake", content=TextContent(type="text", text="42"))


async def _calls(session: Any, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    from mcp import MCPError

    init = await session.initialize()
    got: dict[str, Any] = {"server": init.server_info.name,
                           "tools": sorted(t.name for t in (await session.list_tools()).tools), "calls": []}
    for name, arguments in calls:
        try:
            r = await session.call_tool(name, arguments)
            got["calls"].append(r.content[0].text if r.content else None)
        except MCPError as exc:
            got["calls"].append(f"error {exc.error.code}: {exc.error.message}")
    return got


def drive(server: CassetteServer, calls: list[tuple[str, dict[str, Any]]], errlog: Path) -> dict[str, Any]:
    """Initialize, list the tools, make ``calls``; what the client got (an MCP error as ``error CODE: message``)."""
    from mcp import ClientSession, stdio_client

    async def main() -> dict[str, Any]:
        if server.transport == "stdio":
            with open(errlog, "a") as err:
                async with stdio_client(server.stdio_parameters(), errlog=err) as (r, w):
                    async with ClientSession(r, w, sampling_callback=_sampling) as s:
                        return await _calls(s, calls)
        import httpx2
        from mcp.client.sse import sse_client
        from mcp.client.streamable_http import streamable_http_client

        if server.transport == "sse":
            async with sse_client(server.url) as (r, w):
                async with ClientSession(r, w, sampling_callback=_sampling) as s:
                    return await _calls(s, calls)

        async with httpx2.AsyncClient() as http:
            async with streamable_http_client(server.url, http_client=http) as (r, w):
                async with ClientSession(r, w, sampling_callback=_sampling) as s:
                    return await _calls(s, calls)

    return asyncio.run(asyncio.wait_for(main(), 60))


ECHO = ("echo", {"text": "hello"})
ADD = ("add", {"a": 2, "b": 3})
ASK = ("ask", {"question": "meaning?"})


def deny_replace(folder: Path, monkeypatch: Any, name: str) -> None:
    """Make every mcpreel process started from now on (PYTHONPATH) fail ``os.replace`` onto a file called
    ``name`` with PermissionError, as a read-only or locked cassette does: a ``sitecustomize`` in ``folder``."""
    import os

    (folder / "sitecustomize.py").write_text(
        "import os\n"
        "_replace = os.replace\n"
        "def replace(src, dst, *a, **k):\n"
        f"    if os.path.basename(os.fspath(dst)) == {name!r}:\n"
        "        raise PermissionError(13, 'Permission denied', os.fspath(dst))\n"
        "    return _replace(src, dst, *a, **k)\n"
        "os.replace = replace\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p))


def deny_create(folder: Path, monkeypatch: Any, where: Path) -> None:
    """Make every mcpreel process started from now on (PYTHONPATH) fail to create a file or folder in
    ``where`` with PermissionError, as a read-only folder does even for root: a ``sitecustomize`` in ``folder``."""
    import os

    (folder / "sitecustomize.py").write_text(
        "import os\n"
        "_open, _mkdir = os.open, os.mkdir\n"
        f"_where = {str(where)!r}\n"
        "def _inside(path):\n"
        "    return os.path.dirname(os.path.abspath(os.fspath(path))) == _where\n"
        "def open_(path, flags, *a, **k):\n"
        "    if flags & os.O_CREAT and _inside(path):\n"
        "        raise PermissionError(13, 'Permission denied', os.fspath(path))\n"
        "    return _open(path, flags, *a, **k)\n"
        "def mkdir(path, *a, **k):\n"
        "    if _inside(path):\n"
        "        raise PermissionError(13, 'Permission denied', os.fspath(path))\n"
        "    return _mkdir(path, *a, **k)\n"
        "os.open, os.mkdir = open_, mkdir\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p))
