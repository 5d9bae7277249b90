"""Issue 34 against real peers: a recording made by the official SDK's default client starts with a refused
``server/discover`` (server-everything speaks the handshake era only: over Streamable HTTP it refuses the
probe with HTTP 400, over stdio with a JSON-RPC error), and replays against the same server with no
change and exit 0; a list result is compared by name in both eras (the SDK's own server speaks 2026-07-28
to the default client and the handshake era to ``mode="legacy"``)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import LISTEN127, free_port
from tests.replay.e2e_helpers import MCPREEL, SDK_SERVER, Background, mcpreel, record, run_client

pytestmark = pytest.mark.e2e


def _everything_http(js, port: int) -> Background:
    return Background(["node", "--require", str(LISTEN127), str(js), "streamableHttp"], port=port,
                      env={"PORT": str(port)})


def _probe_rows(report: dict) -> list[dict]:
    return [r for r in report["results"] if r["method"] == "server/discover"]


def test_a_default_client_recording_over_streamable_http_replays_same_against_server_everything(everything_js, tmp_path):
    port, listen = free_port(), free_port()
    out = tmp_path / "everything-http.jsonl"
    server = _everything_http(everything_js, port)
    try:
        proxy = Background([*MCPREEL, "record", "-q", "--transport", "streamable-http", "--target",
                            f"http://127.0.0.1:{port}/mcp", "--listen", f"127.0.0.1:{listen}", "--out", str(out)],
                           port=listen)
        try:
            got = [run_client("streamable-http", f"http://127.0.0.1:{listen}/mcp", "everything", era=era)
                   for era in ("auto", "legacy")]
        finally:
            proxy.stop()
        assert got[0]["protocol"] == got[1]["protocol"] == "2025-11-25"  # the default client fell back
        recorded = [json.loads(line) for line in out.read_text().splitlines()]
        refused = [r for r in recorded if r.get("dir") == "out" and (r.get("ctx") or {}).get("status") == 400]
        assert refused and "error" in refused[0]["raw"], "the recording starts with a refused server/discover"
        report_path = tmp_path / "r.json"
        r = mcpreel("replay", str(out), "--target-url", f"http://127.0.0.1:{port}/mcp", "--timeout", "20",
                    "--output", str(report_path))
    finally:
        server.stop()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 changed" in r.stdout and " error" not in r.stdout.splitlines()[-1], r.stdout
    report = json.loads(report_path.read_text())
    (probe,) = _probe_rows(report)
    assert probe["status"] == "same"
    assert probe["notes"] == ["refused then and now (JSON-RPC error -32000 -> HTTP 400): a refused server/discover "
                              "is plumbing, not a difference"]
    assert "server/discover: refused then and now" in r.stdout
    assert {x["status"] for x in report["results"]} == {"same"}
    listed = [x for x in report["results"] if x["method"] == "tools/list"]
    assert len(listed) == 2 and all(x["status"] == "same" for x in listed)


def test_a_default_client_recording_over_stdio_replays_same_against_server_everything(everything_js, tmp_path):
    out = tmp_path / "everything-stdio.jsonl"
    got = record(out, f"node {everything_js} stdio", "everything", era="auto")
    assert got["protocol"] == "2025-11-25"
    report_path = tmp_path / "r.json"
    r = mcpreel("replay", str(out), "--target-command", f"node {everything_js} stdio", "--timeout", "20",
                "--output", str(report_path))
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(report_path.read_text())
    assert {x["status"] for x in report["results"]} == {"same"}, r.stdout
    for probe in _probe_rows(report):  # refused with a JSON-RPC error over stdio: the same, with its note
        assert probe["notes"][0].startswith("refused then and now (JSON-RPC error")


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_a_new_tool_is_named_by_key_in_both_eras(tmp_path, era):
    out = tmp_path / "s.jsonl"
    got = record(out, SDK_SERVER, era=era)
    assert got["protocol"] == ("2026-07-28" if era == "auto" else "2025-11-25")
    r = mcpreel("replay", str(out), "--target-command", f"{SDK_SERVER} --changed", "--timeout", "20")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "$.result.tools[name=brand_new]: added" in r.stdout, r.stdout
    assert "$.result.tools[" in r.stdout and "$.result.tools[0]" not in r.stdout
    # the change is ignorable by the path the row shows, and the list is otherwise the same
    r = mcpreel("replay", str(out), "--target-command", f"{SDK_SERVER} --changed", "--timeout", "20",
                "--ignore-path", "$.result.tools[name=brand_new]", "--output", str(tmp_path / "r.json"))
    listed = [x for x in json.loads((tmp_path / "r.json").read_text())["results"] if x["method"] == "tools/list"]
    assert [x["status"] for x in listed] == ["same"]
