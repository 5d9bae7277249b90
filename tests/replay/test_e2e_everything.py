"""End to end with server-everything (npm): a recording with a server sampling request, replayed and served."""

from __future__ import annotations

import json

import pytest

from tests.conftest import LISTEN127, free_port

from .e2e_helpers import MCPREEL, Background, mcpreel, record, run_client

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def everything(everything_js, tmp_path_factory):
    path = tmp_path_factory.mktemp("ev") / "everything.jsonl"
    got = record(path, f"node {everything_js} stdio", "everything")
    assert got["trigger-sampling-request"]["text"].startswith("LLM sampling result")
    return path, got, everything_js


def test_replay_against_server_everything_over_stdio_and_streamable_http(everything, tmp_path):
    path, _, js = everything
    out = tmp_path / "r.json"
    proc = mcpreel("replay", str(path), "--target-command", f"node {js} stdio", "--output", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["summary"]["same"] == 5 and report["summary"]["server_requests"] == 1
    sampling = report["server_requests"][0]
    assert sampling["method"] == "sampling/createMessage" and sampling["answered_from"]
    port = free_port()
    server = Background(["node", "--require", str(LISTEN127), str(js), "streamableHttp"],
                        port=port, env={"PORT": str(port)})
    try:
        proc = mcpreel("replay", str(path), "--target-url", f"http://127.0.0.1:{port}/mcp")
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 same" in proc.stdout


def test_serve_the_everything_recording_to_the_sdk_client(everything):
    path, got, _ = everything
    assert run_client("stdio", " ".join([*MCPREEL, "serve", str(path)]), "everything") == got
    port = free_port()
    server = Background([*MCPREEL, "serve", str(path), "--transport", "streamable-http", "--port", str(port)],
                        ready="serving")
    try:
        served = run_client("streamable-http", f"http://127.0.0.1:{port}/mcp", "everything")
    finally:
        code, err = server.stop()
    assert served == got and code == 0, err
