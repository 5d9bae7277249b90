"""The one Origin + Host policy of mcpreel's local servers, rule by rule, and its ASGI guard."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from mcpreel._infra import jsonio
from mcpreel.serving.origin import (
    LOOPBACK_HOSTS,
    OriginGuard,
    Refusal,
    RequestPolicy,
    host_allowed,
    is_loopback,
    origin_allowed,
)

ORIGINS = [
    # (origin, allow-list, Host header, bound address, allowed?)
    ("http://localhost:6274", (), None, "127.0.0.1", True),  # loopback, any port, any scheme of the web
    ("http://127.0.0.1:3000", (), None, "127.0.0.1", True),
    ("https://localhost", (), None, "127.0.0.1", True),
    ("http://[::1]:5173", (), None, "127.0.0.1", True),
    ("HTTP://LOCALHOST:1", (), None, "127.0.0.1", True),
    ("http://10.0.0.5:8000", (), "10.0.0.5:8000", "0.0.0.0", True),  # the server's own origin, an address
    ("http://10.0.0.5:8000", (), "10.0.0.5:9000", "127.0.0.1", False),  # another port of that host is another origin
    ("http://Example.COM", (), "example.com", "example.com", True),  # ... or the bound name
    # a name that is not the bound one may be a rebound one: its page's origin is its Host
    ("http://attacker.example:8000", (), "attacker.example:8000", "0.0.0.0", False),
    ("http://attacker.example:8000", (), "attacker.example:8000", "127.0.0.1", False),
    ("http://[2001:db8::1]:8000", (), "[2001:db8::1]:8000", "::", True),
    ("https://app.example", ("https://app.example/",), None, "127.0.0.1", True),  # the list: trailing / ignored
    ("HTTPS://App.Example/", ("https://app.example",), None, "127.0.0.1", True),  # ... and case
    ("https://app.example:8443", ("https://app.example",), None, "127.0.0.1", False),  # a port makes another origin
    ("http://evil.example", ("*",), None, "127.0.0.1", True),  # * allows every origin
    ("null", ("*",), None, "127.0.0.1", True),
    ("http://evil.example", (), None, "127.0.0.1", False),  # foreign
    ("http://evil.example", ("https://app.example",), "127.0.0.1:8000", "127.0.0.1", False),
    ("http://127.0.0.1.evil.example", (), None, "127.0.0.1", False),
    ("http://localhost.evil", (), None, "127.0.0.1", False),
    ("null", (), None, "127.0.0.1", False),  # sandboxed frames and file:// pages say null
    ("file://", (), None, "127.0.0.1", False),  # not a web scheme
    ("file://localhost", (), None, "127.0.0.1", False),
    ("ws://localhost:1", (), None, "127.0.0.1", False),
    ("http://[oops", (), None, "127.0.0.1", False),  # malformed
]


@pytest.mark.parametrize(("origin", "allowed", "host", "bound", "expected"), ORIGINS)
def test_origin_rules(origin: str, allowed: tuple[str, ...], host: str | None, bound: str, expected: bool) -> None:
    assert origin_allowed(origin, allowed, host=host, bound=bound) is expected


HOSTS = [
    # (Host header, address the listener is bound to, allowed?)
    ("127.0.0.1:8000", "127.0.0.1", True),
    ("localhost:8000", "127.0.0.1", True),  # any loopback name, whatever the bound one
    ("[::1]:8000", "127.0.0.1", True),
    ("LOCALHOST", "127.0.0.1", True),  # no port
    ("localhost:8000", "::1", True),
    ("[::1]:8000", "[::1]", True),
    ("attacker.example:8000", "127.0.0.1", False),  # a rebound name
    ("127.0.0.1.nip.io:8000", "localhost", False),
    (None, "127.0.0.1", False),  # none: refused, as the SDK does
    ("", "127.0.0.1", False),
    ("attacker.example:8000", "0.0.0.0", True),  # bound beyond loopback: meant to be reached by other names
    (None, "10.0.0.5", True),
    ("myhost.lan:8000", "myhost.lan", True),
]


@pytest.mark.parametrize(("host", "bound", "expected"), HOSTS)
def test_host_rules(host: str | None, bound: str, expected: bool) -> None:
    assert host_allowed(host, bound) is expected


def test_loopback_names() -> None:
    assert all(is_loopback(h) for h in LOOPBACK_HOSTS)
    assert is_loopback("LOCALHOST") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("127.0.0.2") and not is_loopback("localhost.evil")


def test_policy_checks_host_first_then_origin() -> None:
    policy = RequestPolicy(("https://app.example",), "127.0.0.1")
    assert policy.refusal(None, "127.0.0.1:1") is None
    assert policy.refusal("https://app.example", "127.0.0.1:1") is None
    assert policy.refusal("http://evil.example", "127.0.0.1:1") == Refusal(403, "Origin http://evil.example is not allowed")
    rebound = policy.refusal("http://localhost:1", "evil.example:1")
    assert rebound is not None and rebound.status == 421 and "evil.example:1" in rebound.reason
    assert policy.refusal(None, None) == Refusal(421, "no Host header")
    assert RequestPolicy(("*",), "0.0.0.0").refusal("http://evil.example", "evil.example") is None


def test_a_policy_that_does_not_check_host_still_checks_origin() -> None:
    """The recording proxy's: any Host is answered, and a rebound page's origin is still foreign."""
    policy = RequestPolicy((), "127.0.0.1", check_host=False)
    assert policy.refusal(None, "x") is None and policy.refusal(None, None) is None
    assert policy.refusal("http://localhost:3000", "x") is None
    refused = policy.refusal("http://attacker.example:8000", "attacker.example:8000")
    assert refused is not None and refused.status == 403


async def _app(scope, receive, send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"inner"})


def _ask(policy: RequestPolicy, base_url: str, headers: dict[str, str]) -> httpx2.Response:
    async def main() -> httpx2.Response:
        transport = httpx2.ASGITransport(app=OriginGuard(_app, policy))
        async with httpx2.AsyncClient(transport=transport, base_url=base_url) as c:
            response = await c.get("/mcp", headers=headers)
            await response.aread()
            return response

    return anyio.run(main)


def test_guard_answers_refusals_with_a_json_rpc_error_and_passes_the_rest() -> None:
    policy = RequestPolicy((), "127.0.0.1")
    assert _ask(policy, "http://127.0.0.1:8000", {"Origin": "http://localhost:3000"}).text == "inner"
    forbidden = _ask(policy, "http://127.0.0.1:8000", {"Origin": "https://evil.example"})
    assert forbidden.status_code == 403 and forbidden.headers["content-type"] == "application/json"
    assert jsonio.loads(forbidden.content) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "Forbidden: Origin https://evil.example is not allowed"}}
    rebound = _ask(policy, "http://attacker.example:8000", {})
    assert rebound.status_code == 421
    assert jsonio.loads(rebound.content)["error"]["message"].startswith("Misdirected Request: Host attacker.example")
    assert _ask(RequestPolicy(("*",)), "http://127.0.0.1:8000", {"Origin": "https://evil.example"}).text == "inner"


def test_allow_host_adds_names_to_a_loopback_listener() -> None:
    """``--allow-host`` names a host the user vouches for (a port given there is ignored); others stay refused."""
    assert host_allowed("dev.example:8000", "127.0.0.1", ("dev.example",))
    assert host_allowed("DEV.example", "127.0.0.1", ("dev.example:9000",))
    assert not host_allowed("evil.example:8000", "127.0.0.1", ("dev.example",))
    refusal = RequestPolicy(allow_hosts=("dev.example",)).refusal(None, "evil.example:1")
    assert refusal is not None and refusal.status == 421 and "--allow-host" in refusal.reason
    assert RequestPolicy(allow_hosts=("dev.example",)).refusal(None, "dev.example:1") is None
