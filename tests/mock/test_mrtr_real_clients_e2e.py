"""Issue 25, finding 2, against the other real clients the issue names: a 2026-07-28 multi-round-trip
recording (``resultType: "input_required"``, retried with ``inputResponses``) served by ``mcpreel serve``
to a handshake-era client that made none of it. The mock sends the recorded input requests mid-call as
server -> client requests, then the recorded result; each client gets what it gets from the real server.

- the MCP Inspector CLI (2.12): it declares roots (answering ``roots/list`` with no roots), not
  elicitation; a roots recording it gets as recorded, an elicitation recording it is refused as the SDK
  server refuses it (-32021, the capability named), not asked;
- the official TypeScript SDK client (npm ``@modelcontextprotocol/sdk`` in ``.peers``, run by Node 22):
  both recordings, as recorded;
- the official Python SDK ``Client`` with no elicitation callback, in either era: refused (-32021) as the
  real server refuses it, where the mock used to hand it the recorded input request.

The recordings are made by the official Python SDK ``Client`` in its default mode (2026-07-28 with these
servers), which answers the elicitation "Bob" and ``roots/list`` with no roots, as the other two do.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.suite import NODE22
from tests.replay.e2e_helpers import MCPREEL, PY

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parents[1]
CLIENT = HERE / "peers" / "mrtr_input_client.py"
TS_CLIENT = HERE / "peers" / "ts_mrtr_client.mjs"
TS_SDK = HERE.parent / ".peers" / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
#: tool name -> the real server that has it
SERVERS = {"greet": HERE / "replay" / "peers" / "mrtr_server.py", "roots": HERE / "peers" / "mrtr_roots_server.py"}
V = "2026-07-28"


def _env_argv(argv: list[str]) -> list[str]:
    """Clients that give their server a clean environment get mcpreel's PYTHONPATH spelled out."""
    if os.environ.get("PYTHONPATH"):
        return ["env", f"PYTHONPATH={os.environ['PYTHONPATH']}", *argv]
    return argv


def _record(tmp_path: Path, tool: str) -> Path:
    """A 2026-07-28 recording of the SDK client calling ``tool`` (one input round, then the result)."""
    out = tmp_path / f"{tool}.jsonl"
    target = " ".join([*MCPREEL, "record", "-q", "--out", str(out), "--", PY, str(SERVERS[tool])])
    proc = subprocess.run([PY, str(CLIENT), target, "auto", tool], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["protocol"] == V
    text = out.read_text().replace(" ", "")
    assert '"resultType":"input_required"' in text and '"inputResponses"' in text
    return out


def _serve(reel: Path) -> list[str]:
    return _env_argv([*MCPREEL, "serve", str(reel)])


def _inspector(cli: Path, server: list[str], tool: str) -> tuple[int, dict[str, Any], str]:
    """The Inspector's exit code, its answer (on stdout; a failure's JSON on stderr) and its stderr."""
    r = subprocess.run([str(cli), "--cli", *server, "--method", "tools/call", "--tool-name", tool],
                       capture_output=True, text=True, timeout=90)
    if r.returncode == 0:
        return r.returncode, json.loads(r.stdout), r.stderr
    failure = [line for line in r.stderr.splitlines() if line.startswith('{"error"')]
    assert failure, r.stdout[-2000:] + r.stderr[-2000:]
    return r.returncode, json.loads(failure[-1]), r.stderr


def _real(tool: str) -> list[str]:
    return [PY, str(SERVERS[tool])]


def test_the_inspector_cli_gets_the_recorded_roots_result_from_a_2026_recording(tmp_path: Path,
                                                                                inspector_cli: Path) -> None:
    reel = _record(tmp_path, "roots")
    code, direct, _ = _inspector(inspector_cli, _real("roots"), "roots")  # the real server, handshake era
    assert code == 0 and direct["content"][0]["text"] == "0 roots"
    code, got, said = _inspector(inspector_cli, _serve(reel), "roots")
    assert code == 0, said[-2000:]
    assert got == direct  # no resultType, no 2026 serverInfo in _meta: what the real server said
    assert "served 3 requests: 3 answered from the recording, 0 missed" in said  # initialize, tools/list, call


def test_the_inspector_cli_is_refused_an_elicitation_it_did_not_declare_as_the_real_server_refuses_it(
        tmp_path: Path, inspector_cli: Path) -> None:
    reel = _record(tmp_path, "greet")
    code, direct, _ = _inspector(inspector_cli, _real("greet"), "greet")
    assert code != 0
    assert "did not declare the form elicitation capability" in direct["error"]["message"]
    code, got, said = _inspector(inspector_cli, _serve(reel), "greet")
    assert code != 0  # an error, as from the real server, and counted as a miss: the recording never saw it
    assert "needs the client's elicitation capability, which this client did not declare" in got["error"]["message"]
    assert "1 missed" in said


@pytest.mark.parametrize("tool", ["greet", "roots"])
def test_the_typescript_sdk_client_gets_the_recorded_result_from_a_2026_recording(tmp_path: Path, tool: str) -> None:
    if not NODE22.exists() or not TS_SDK.exists():
        pytest.fail(f"Node 22 ({NODE22}) or the TypeScript SDK ({TS_SDK}) is not installed: run `make peers`")
    reel = _record(tmp_path, tool)

    def ts(server: list[str]) -> tuple[dict[str, Any], str]:
        r = subprocess.run([str(NODE22), str(TS_CLIENT), tool, *server], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        return json.loads(r.stdout), r.stderr

    direct, _ = ts(_real(tool))
    assert direct["protocol"] == "2025-11-25"  # the TypeScript SDK 1.x speaks the handshake era
    assert direct["text"] == {"greet": "hello Bob", "roots": "0 roots"}[tool] and not direct["isError"]
    got, said = ts(_serve(reel))
    assert got == direct
    assert "0 missed" in said


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_the_sdk_client_without_the_capability_is_refused_as_the_real_server_refuses_it(tmp_path: Path,
                                                                                       era: str) -> None:
    """The SDK ``Client`` with no elicitation callback declares no elicitation: the real server answers -32021
    in either era; so does the mock of a recording whose client declared it (a miss: never recorded)."""
    reel = _record(tmp_path, "greet")

    def call(target: str) -> dict[str, Any]:
        proc = subprocess.run([PY, str(CLIENT), target, era, "greet", "--declare-nothing"], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)

    direct = call(f"{PY} {SERVERS['greet']}")
    assert direct["error"] == -32021 and "did not declare the form elicitation capability" in direct["message"]
    got = call(" ".join(_serve(reel)))
    assert got["protocol"] == direct["protocol"] and got["error"] == -32021
    assert "needs the client's elicitation capability, which this client did not declare" in got["message"]
