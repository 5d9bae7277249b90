"""Which requests a local mcpreel server answers: the one ``Origin`` and ``Host`` policy.

A server on 127.0.0.1 is still reachable from any web page the user opens: the page cannot read a foreign
answer, but it can send requests, and with DNS rebinding (a name of the attacker's that resolves to
127.0.0.1) it can read them too. MCP asks servers to validate ``Origin``; the official SDK also checks
``Host`` when it listens on loopback. The recording proxy, the mock and the demo server all apply this:

- ``Host`` (only when the listener is bound to a loopback address, as the SDK does): it must name a
  loopback host, the bound address or a name given with ``--allow-host`` (``allow_hosts``), any port;
  anything else -- a rebound name -- is answered 421. The recording proxy checks it too: it sends the
  target's own ``Host`` upstream, but a page rebound to its loopback port could otherwise drive the target
  through it;
- ``Origin``: allowed when absent (not a browser, or a same-origin request), a loopback origin (any port:
  the MCP Inspector and other local tools run there), the server's own origin (the one ``Host`` names,
  when that is an address or the bound name: a rebound page's origin is its ``Host`` too), or listed in
  ``allow_origins`` (case-insensitive, a trailing ``/`` ignored; ``*`` allows every origin); anything
  else is answered 403.

The pure functions are for a server that answers refusals itself (the proxy records them);
:class:`OriginGuard` is the same policy as ASGI middleware, for the others.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from mcpreel._infra import jsonio

__all__ = ["LOOPBACK_HOSTS", "OriginGuard", "Refusal", "RequestPolicy", "host_allowed", "is_loopback",
           "origin_allowed", "refusal_body"]

#: the names of the loopback interface, as hosts are written in URLs and ``--listen`` (IPv6 with or without [])
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def is_loopback(host: str) -> bool:
    """Is ``host`` (a name or an address, IPv6 with or without brackets) the loopback interface?"""
    return host.strip().lower() in LOOPBACK_HOSTS


def _hostname(authority: str) -> str:
    """``host:port`` / ``[::1]:port`` / ``host`` -> the host, lower-case, brackets kept off."""
    try:
        return (urlsplit(f"//{authority.strip()}").hostname or "").lower()
    except ValueError:
        return ""


def _normal(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def origin_allowed(origin: str, allowed: Sequence[str] = (), *, host: str | None = None, bound: str = "") -> bool:
    """Is a request with this ``Origin`` header answered? ``host`` is the request's ``Host`` header.

    Allowed: a loopback ``http``/``https`` origin (any port), one listed in ``allowed`` (case-insensitive,
    trailing ``/`` ignored), anything with ``*``, and the server's own origin (its authority is ``host``)
    when ``host`` cannot be a rebound name: an IP address, a loopback name or ``bound``, the address the
    server is bound to. (A DNS rebinding page's origin *is* its ``Host``, a name of the attacker's.)
    """
    if "*" in allowed:
        return True
    value = _normal(origin)
    if any(value == _normal(a) for a in allowed):
        return True
    try:
        parts = urlsplit(value)
        hostname = parts.hostname or ""
    except ValueError:  # a malformed authority ("http://[x") is nobody's origin
        return False
    if parts.scheme not in ("http", "https"):
        return False
    if hostname in LOOPBACK_HOSTS:
        return True
    if not host or parts.netloc != host.strip().lower():
        return False
    return _is_address(hostname) or hostname == bound.strip("[]").lower()


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_allowed(host: str | None, bound: str, allowed: Sequence[str] = ()) -> bool:
    """Is a request with this ``Host`` header answered by a listener bound to ``bound``?

    Bound beyond loopback, any ``Host`` is (the server is meant to be reached by other names). Bound to
    loopback, the ``Host`` must name a loopback host, ``bound`` itself or one of ``allowed`` (names the
    user vouches for, case-insensitive, a port given there ignored), any port -- as the SDK's
    ``TransportSecuritySettings(allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"])`` -- and a
    missing one is refused like there.
    """
    if not is_loopback(bound):
        return True
    if not host:
        return False
    name = _hostname(host)
    if name in LOOPBACK_HOSTS or name == bound.strip("[]").lower():
        return True
    return bool(name) and any(name == (_hostname(a) or a.strip().lower()) for a in allowed)


class Refusal(NamedTuple):
    """Why a request is not answered: the HTTP status and one line saying why."""

    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class RequestPolicy:
    """The policy of one listener: the origins allowed beyond the defaults, the address it is bound to,
    whether ``Host`` is checked, and the host names allowed beyond loopback (``--allow-host``)."""

    allow_origins: tuple[str, ...] = ()
    bound_host: str = "127.0.0.1"
    check_host: bool = True
    allow_hosts: tuple[str, ...] = ()

    def refusal(self, origin: str | None, host: str | None, *, hosts: int = 1) -> Refusal | None:
        """None when a request with these ``Origin`` and ``Host`` headers is answered, else why not.

        ``hosts``: how many ``Host`` header lines the request had; more than one is a 400 whatever they say
        (RFC 9112, section 3.2: which one a check reads and which one the app uses may differ: an evil name,
        then a loopback one, passed a check that read the last). ``Host`` first, as the SDK does: a rebound
        name is refused whatever its ``Origin``.
        """
        if hosts > 1:
            return Refusal(400, f"{hosts} Host headers (a request has one: RFC 9112)")
        if self.check_host and not host_allowed(host, self.bound_host, self.allow_hosts):
            return Refusal(421, f"Host {host} is not this server's (DNS rebinding? allow it with --allow-host)" if host else "no Host header")
        if origin is not None and not origin_allowed(origin, self.allow_origins, host=host, bound=self.bound_host):
            return Refusal(403, f"Origin {origin} is not allowed")
        return None


def refusal_body(refusal: Refusal, code: int = -32600) -> bytes:
    """A refusal as a JSON-RPC error with no id (what MCP suggests for a 403 body)."""
    message = {403: "Forbidden", 400: "Bad Request"}.get(refusal.status, "Misdirected Request")
    return jsonio.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": f"{message}: {refusal.reason}"}})


class OriginGuard:
    """ASGI middleware applying a :class:`RequestPolicy` to every HTTP request before ``app`` sees it."""

    def __init__(self, app: Any, policy: RequestPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            origin = host = None
            hosts = 0
            for k, v in scope["headers"]:
                if k == b"origin":
                    origin = v.decode("latin-1")
                elif k == b"host":
                    host = v.decode("latin-1")
                    hosts += 1
            refusal = self.policy.refusal(origin, host, hosts=hosts)
            if refusal is not None:
                body = refusal_body(refusal)
                await send({"type": "http.response.start", "status": refusal.status,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
