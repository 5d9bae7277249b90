"""Definition digests (transports-wg per-primitive digests draft): a session with a server that advertises
tool digests and refuses a stale ``expectedDigest`` with HTTP 409, recorded through the HTTP proxy; the
digests kept and shown; replayed against the server after its tool changed, the conditional call is its
own verdict, "definition changed", pointing at ``mcpreel contract``; ``serve`` refuses a stale digest as
the recorded server did (its code, HTTP 409) and serves the current one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcpreel import drafts
from mcpreel.cli import cli
from mcpreel.formats import open_session
from mcpreel.mock.engine import Mock
from mcpreel.mock.server import http_app
from mcpreel.operations.cassette import build
from mcpreel.operations.facts import definition_digests, digest_refusal, expected_digest
from tests.record.http.helpers import ThreadServer, proxy

from .digest_peer import REFUSAL_CODE, DigestGate, digest_server

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

V1, V2 = "Echo the text back.", "Echo the text back, in capitals from now on."


def run(*args: object) -> tuple[int, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout + r.stderr


def gated(description: str) -> tuple[DigestGate, str]:
    mcp, digest = digest_server(description)
    return DigestGate(mcp.streamable_http_app(json_response=True), digest), digest


async def conditional_session(url: str, statuses: list[int], current: str | None = None,
                              stale: str = "sha256:stale", stale_text: str = "stale") -> dict[str, Any]:
    """list the tools, call with ``current`` (the advertised digest when ``None``), then with the ``stale``
    one (refused), as a draft client."""

    async def seen(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    out: dict[str, Any] = {}
    async with httpx2.AsyncClient(event_hooks={"response": [seen]}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                tools = await s.list_tools()
                digest = (tools.tools[0].meta or {})[drafts.DIGEST_META]
                out["digest"] = digest
                ok = await s.call_tool("echo", {"text": "current"},
                                       meta={drafts.EXPECTED_DIGEST_META: digest if current is None else current})
                out["ok"] = ok.content[0].text
                try:
                    await s.call_tool("echo", {"text": stale_text}, meta={drafts.EXPECTED_DIGEST_META: stale})
                except MCPError as exc:
                    out["refused"] = exc.error.code
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("digests")
    gate, digest = gated(V1)
    statuses: list[int] = []
    with ThreadServer(gate) as srv, proxy("streamable-http", srv.url("/mcp"), tmp) as rec:
        got = anyio.run(conditional_session, rec.url, statuses)
    assert got == {"digest": digest, "ok": "current", "refused": REFUSAL_CODE}
    assert drafts.DIGEST_CHANGED_HTTP_STATUS in statuses and len(gate.refused) == 1
    assert rec.out is not None
    return rec.out, digest


def test_digests_are_kept_as_they_came(recorded) -> None:
    reel, digest = recorded
    session, _ = open_session(reel, "reel")
    raws = [m.raw for m in session.messages if isinstance(m.raw, dict)]
    listed = [r for r in raws if isinstance(r.get("result"), dict) and "tools" in r["result"]]
    assert definition_digests(listed[0], "tools/list") == {"echo": digest}
    asked = [expected_digest(r) for r in raws if r.get("method") == "tools/call"]
    assert asked == [digest, "sha256:stale"]
    refusals = [m for m in session.messages if isinstance(m.raw, dict) and digest_refusal(m.raw, (m.ctx or {}).get("status"))]
    assert len(refusals) == 1 and refusals[0].ctx["status"] == 409


def test_inspect_shows_the_digests(recorded) -> None:
    reel, digest = recorded
    code, said = run("inspect", reel, "-v")
    assert code == 0
    assert digest in said and "sha256:stale" in said


@pytest.mark.e2e
def test_replay_against_the_same_definitions_is_the_same(recorded) -> None:
    reel, _ = recorded
    gate, _ = gated(V1)
    with ThreadServer(gate) as srv:
        code, said = run("replay", reel, "--target-url", srv.url("/mcp"))
    assert code == 0, said
    assert "definition changed" not in said


@pytest.mark.e2e
def test_replay_after_the_tool_changed_says_definition_changed(recorded, tmp_path: Path) -> None:
    reel, _ = recorded
    gate, _ = gated(V2)
    out = tmp_path / "replay.json"
    with ThreadServer(gate) as srv:
        code, said = run("replay", reel, "--target-url", srv.url("/mcp"), "--output", out)
    assert code == 1, said
    import json

    results = json.loads(out.read_text())["results"]
    verdicts = [(r["method"], r["status"]) for r in results if r["method"] in ("tools/list", "tools/call")]
    # the list changed (a new description, a new digest); the conditional call was refused before it ran
    # (its own verdict); the stale call was refused then and now (the same)
    assert verdicts == [("tools/list", "changed"), ("tools/call", "definition changed"), ("tools/call", "same")]
    assert "definition changed" in said and "mcpreel contract" in said
    assert json.loads(out.read_text())["summary"]["definition changed"] == 1
    assert len(gate.refused) == 2 and len(gate.ran) == 0  # nothing ran against the changed definitions


@contextmanager
def serving(reel: Path) -> Iterator[str]:
    session, _ = open_session(reel, "reel")
    with ThreadServer(http_app(Mock(build(session))), lifespan="off") as server:
        yield server.url("/mcp")


def test_serve_refuses_a_stale_digest_as_the_recorded_server_did(recorded) -> None:
    reel, digest = recorded
    statuses: list[int] = []
    with serving(reel) as url:
        # the recorded digest, then another stale digest than the recorded one: refused all the same
        got = anyio.run(conditional_session, url, statuses, digest, "sha256:some-other-stale", "current")
    assert got == {"digest": digest, "ok": "current", "refused": REFUSAL_CODE}
    assert drafts.DIGEST_CHANGED_HTTP_STATUS in statuses
