"""The official-SDK test server (``sdk_server.py --as replay``) that also takes ``logging/setLevel``.

    python tests/peers/sdk_logging_server.py

Over stdio. A server that handles ``logging/setLevel`` advertises the ``logging`` capability, and the MCP
Inspector CLI then sends ``logging/setLevel`` right after connecting: a handshake-era request the
2026-07-28 era does not have (what ``replay --era modern`` must leave out).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp import types

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sdk_server import build


async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


def main() -> None:
    mcp = build("replay")
    mcp._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    mcp.run()


if __name__ == "__main__":
    main()
