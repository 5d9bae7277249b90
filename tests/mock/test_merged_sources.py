"""A merged file keeps its servers apart (issue 19): serve and replay take one source (--source), serve refuses
to be several servers at once, and a writer with no place for the source says it drops it.

Two real SDK servers (tests/peers/sdk_server.py as ``replay-peer`` and as ``sdk-peer``), recorded by the SDK
client in its default 2026-07-28 mode and in ``mode="legacy"``, merged, then served over stdio and HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.replay.e2e_helpers import MCPREEL, SDK_SERVER, Background, mcpreel, record, run_client

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("merged")
    a, b = folder / "replay-peer.jsonl", folder / "check-peer.jsonl"
    record(a, f"{SDK_SERVER} stdio", era="auto")
    record(b, f"{SDK_SERVER} stdio --as check", era="legacy")
    out = folder / "m.jsonl"
    r = mcpreel("merge", str(a), str(b), "-o", str(out))
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_serve_advertises_the_tools_of_the_source_it_serves(merged: Path, era: str) -> None:
    serve = " ".join([*MCPREEL, "serve", str(merged)])
    got = run_client("stdio", f"{serve} --source check-peer.jsonl", era=era)
    assert got["server"] == "sdk-peer" and got["tools"] == ["echo", "info"]
    got = run_client("stdio", f"{serve} --source replay-peer.jsonl", era=era)
    assert got["server"] == "replay-peer" and got["tools"] == ["add", "ask", "echo", "fail"]
    assert got["add"]["text"].replace(" ", "").replace("\n", "") == '{"sum":5,"inputs":[2,3]}'


def test_each_source_on_its_own_port_over_http(merged: Path) -> None:
    ports = {name: free_port() for name in ("replay-peer.jsonl", "check-peer.jsonl")}
    servers = [Background([*MCPREEL, "serve", str(merged), "--source", name, "--transport", "streamable-http",
                           "--port", str(port)], port=port) for name, port in ports.items()]
    try:
        one = run_client("streamable-http", f"http://127.0.0.1:{ports['replay-peer.jsonl']}/mcp", era="auto")
        two = run_client("streamable-http", f"http://127.0.0.1:{ports['check-peer.jsonl']}/mcp", era="legacy")
    finally:
        for s in servers:
            s.stop()
    assert (one["server"], one["tools"]) == ("replay-peer", ["add", "ask", "echo", "fail"])
    assert (two["server"], two["tools"]) == ("sdk-peer", ["echo", "info"])


def test_serve_refuses_to_be_several_servers_and_names_the_sources(merged: Path) -> None:
    r = mcpreel("serve", str(merged))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert (f"{merged} merges 2 servers (replay-peer.jsonl, check-peer.jsonl): serve one of them with --source NAME"
            in r.stderr)
    r = mcpreel("serve", str(merged), "--source", "nope.jsonl")
    assert r.returncode == 2 and "the file's sources are replay-peer.jsonl, check-peer.jsonl" in r.stderr


def test_replay_sends_one_source_to_its_own_server(merged: Path, tmp_path: Path) -> None:
    r = mcpreel("replay", str(merged), "--source", "check-peer.jsonl", "--target-command",
                f"{SDK_SERVER} stdio --as check", "--timeout", "10")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 requests replayed: 5 same, 0 changed" in r.stdout
    r = mcpreel("replay", str(merged), "--source", "replay-peer.jsonl", "--target-command", f"{SDK_SERVER} stdio",
                "--timeout", "10")
    assert r.returncode == 0, r.stdout + r.stderr
    # without --source: each source in its own target session, and the warning says they share the target
    r = mcpreel("replay", str(merged), "--target-command", f"{SDK_SERVER} stdio", "--timeout", "10",
                "--output", str(tmp_path / "r.json"))
    assert "merges 2 servers (replay-peer.jsonl, check-peer.jsonl): each is replayed in its own target session" \
        in r.stderr
    sessions = json.loads((tmp_path / "r.json").read_text())["sessions"]
    assert [s["label"].rsplit(", ", 1)[-1] for s in sessions] == ["replay-peer.jsonl", "check-peer.jsonl"]
    assert [s["requests"] for s in sessions] == [5, 5]


@pytest.mark.parametrize(("name", "fmt"), [("m.har", "har"), ("m.qai.json", "qai")])
def test_a_writer_without_a_place_for_the_source_says_it_drops_it(merged: Path, tmp_path: Path, name: str,
                                                                   fmt: str) -> None:
    a, b = merged.parent / "replay-peer.jsonl", merged.parent / "check-peer.jsonl"
    r = mcpreel("merge", str(a), str(b), "-o", str(tmp_path / name), "--to", fmt)
    assert r.returncode == 0, r.stderr
    assert "which file each record came from" in r.stderr
    r = mcpreel("merge", str(a), str(b), "-o", str(tmp_path / "again.jsonl"))
    assert r.returncode == 0 and "which file" not in r.stderr
