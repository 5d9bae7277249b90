"""Issue 11: the HTTP mock follows the transport rules `mcpreel check --profile mcp` enforces (session ids
issued and required, an unsupported MCP-Protocol-Version refused), for recordings of both eras."""

from __future__ import annotations

import pytest

from tests.conftest import free_port
from tests.replay.e2e_helpers import MCPREEL, SDK_SERVER, Background, mcpreel, record

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_check_profile_mcp_passes_against_serve(tmp_path, era):
    out = tmp_path / "s.jsonl"
    record(out, SDK_SERVER, era=era)
    port = free_port()
    mock = Background([*MCPREEL, "serve", str(out), "--transport", "streamable-http", "--port", str(port)], port=port)
    try:
        r = mcpreel("check", f"http://127.0.0.1:{port}/mcp", "--profile", "mcp", "--era", "legacy", timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr  # exit 0: no check failed
    finally:
        mock.stop()
