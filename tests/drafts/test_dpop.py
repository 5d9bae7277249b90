"""SEP-1932 (DPoP): a session recorded through the HTTP proxy from a DPoP-bound client to a DPoP-gated
server (tests/drafts/dpop_peer.py, written from the draft's wire examples around the official SDK's server)
leaves no proof and no bound token in anything mcpreel writes by default -- the reel, HAR, the report page,
OTLP spans, the corpus index (query, show, Parquet) -- and replaying it says a live key is needed instead
of failing obscurely."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpreel import drafts
from mcpreel.cli import cli
from mcpreel.model import Kind
from mcpreel.redact import MARKER, is_secret_header
from tests.record.http.helpers import ThreadServer, proxy, sdk_server

from .dpop_peer import TOKEN, DpopGate, add_proof, claims_of

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def run(*args: object) -> tuple[int, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout + r.stderr


def leaks(text: str, proofs: list[str]) -> list[str]:
    """What of the planted credentials ``text`` holds: the token, any proof, or any proof's signature."""
    out = ["token"] if TOKEN in text else []
    out += [f"proof {i}" for i, p in enumerate(proofs) if p in text or p.rsplit(".", 1)[1] in text]
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], DpopGate]:
    """A modern SDK client session (discover, list, call) recorded through the proxy, every request DPoP-bound."""
    import anyio

    tmp = tmp_path_factory.mktemp("dpop")
    gate = DpopGate(sdk_server().streamable_http_app(json_response=True))

    async def session(url: str) -> str:
        async with httpx2.AsyncClient(event_hooks={"request": [add_proof]}) as http:
            unauthenticated = await httpx2.AsyncClient().post(url, content=b"{}", headers={"Content-Type": "application/json"})
            assert unauthenticated.status_code == 401
            assert drafts.is_dpop_authorization(unauthenticated.headers["www-authenticate"])
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    await s.list_tools()
                    answer = await s.call_tool("echo", {"text": "bound"})
        return answer.content[0].text

    with ThreadServer(gate) as srv, proxy("streamable-http", srv.url("/mcp"), tmp) as rec:
        assert anyio.run(session, rec.url) == "bound"
    assert gate.proofs and gate.refused == 1  # the gate checked every request; the bare one was refused
    assert "POST" in {claims_of(p)["htm"] for p in gate.proofs}  # each proof names its own request
    assert rec.out is not None
    return rec.out, gate.proofs, gate


def test_the_reel_keeps_the_header_names_never_the_values(recorded) -> None:
    reel, proofs, _ = recorded
    assert leaks(reel.read_text(), proofs) == []
    from mcpreel.formats import open_session

    session, _ = open_session(reel, "reel")
    sent = [m.ctx["headers"] for m in session.messages if m.kind == Kind.MESSAGE and m.dir == "in" and m.ctx]
    bound = [h for h in sent if "dpop" in h]  # all but the bare request the gate refused
    assert len(bound) == len(sent) - 1 >= 3
    assert all(h["dpop"] == MARKER and h.get("authorization") == MARKER for h in bound)
    assert any(h.get("www-authenticate", "").startswith("DPoP") for h in
               (m.ctx.get("headers", {}) for m in session.messages if m.ctx and m.ctx.get("status") == 401))


def test_nothing_shared_holds_a_proof(recorded, tmp_path: Path) -> None:
    reel, proofs, _ = recorded
    outputs: dict[str, str] = {}
    for fmt in ("har", "reel", "assay-v2"):
        out = tmp_path / {"har": "c.har", "reel": "c.jsonl", "assay-v2": "c.trace.jsonl"}[fmt]
        code, said = run("convert", reel, out, "--to", fmt)
        assert code == 0, said
        outputs[f"convert {fmt}"] = out.read_text() + said
    code, said = run("report", reel, "-o", tmp_path / "r.html")
    assert code == 0, said
    outputs["report"] = (tmp_path / "r.html").read_text() + said
    code, said = run("export", "otlp", reel, "-o", tmp_path / "spans.jsonl", "--include-content")
    assert code == 0, said
    outputs["otlp"] = (tmp_path / "spans.jsonl").read_text() + said
    for flags in ([], ["-v"], ["--json"]):
        code, said = run("inspect", reel, *flags)
        assert code == 0
        outputs[f"inspect {flags}"] = said
    db = tmp_path / "corpus.duckdb"
    code, said = run("index", reel.parent, "--db", db, "--parquet", tmp_path / "pq")
    assert code == 0, said
    for table in ("files", "sessions", "operations", "tools"):
        code, said = run("query", f"SELECT * FROM {table}", "--db", db, "--format", "json")
        assert code == 0, said
        outputs[f"query {table}"] = said
        if table == "operations":
            ids = [row["id"] for row in json.loads(said)]
    assert ids
    for op in ids:
        code, said = run("show", op, "--db", db)
        assert code == 0, said
        outputs[f"show {op}"] = said
    outputs["parquet"] = "".join(p.read_bytes().decode("latin-1") for p in (tmp_path / "pq").rglob("*.parquet"))
    assert {name: found for name, text in outputs.items() if (found := leaks(text, proofs))} == {}
    har = json.loads((tmp_path / "c.har").read_text())
    names = {h["name"].lower(): h["value"] for e in har["log"]["entries"] for h in e["request"]["headers"]}
    assert names.get("dpop") == MARKER  # the header is shown as there, its value not


def test_the_rules_name_dpop() -> None:
    """The header rule and the free-text rule: the proof header's value, ``Authorization: DPoP`` in text."""
    from mcpreel.redact import Redactor

    assert is_secret_header("DPoP") and not is_secret_header("DPoP-Nonce")
    proof = "eyJ0eXAiOiJkcG9wK2p3dCJ9.eyJqdGkiOiJ4In0.c2lnbmF0dXJl"
    for text in (f"Authorization: DPoP {TOKEN}", f"DPoP: {proof}", f"sent DPoP {TOKEN} to it"):
        scrubbed = Redactor().text(text)
        assert TOKEN not in scrubbed and "c2lnbmF0dXJl" not in scrubbed, scrubbed


@pytest.mark.e2e
def test_replay_of_a_dpop_bound_recording_says_it_needs_a_live_key(recorded) -> None:
    """Against a server that enforces DPoP: the handshake is refused (401) and the one-line error says why."""
    reel, _, _ = recorded
    gate = DpopGate(sdk_server().streamable_http_app(json_response=True))
    with ThreadServer(gate) as srv:
        code, said = run("replay", reel, "--target-url", srv.url("/mcp"))
    assert code == 2, said
    assert "HTTP 401" in said and "DPoP-bound" in said and "live key" in said, said
    assert "Traceback" not in said
    assert gate.refused > 0 and not gate.proofs  # nothing got through, and the user is told why


@pytest.mark.e2e
def test_replay_against_a_server_that_does_not_enforce_dpop_runs_and_notes_it(recorded) -> None:
    reel, _, _ = recorded
    with ThreadServer(sdk_server().streamable_http_app(json_response=True)) as srv:
        code, said = run("replay", reel, "--target-url", srv.url("/mcp"))
    assert "DPoP-bound" in said, said
    assert code == 0, said  # the answers are the same: only the credentials could not be replayed
