"""The stateless 2026-07-28 era: probes that speak it, and the checks of its own rules.

In this era there is no ``initialize``: a client asks ``server/discover``, and every request carries
``params._meta`` with the protocol version and the client's info and capabilities; over HTTP every POST
also carries ``MCP-Protocol-Version``, ``Mcp-Method`` and, for ``tools/call``, ``resources/read`` and
``prompts/get``, ``Mcp-Name``. :class:`ModernHttpProbe` and :class:`ModernStdioProbe` add all of that to
what they send, so every check written for the handshake era can also run in this one.

A server may speak both eras (the official SDK does, one era per connection): the runner
(:mod:`mcpreel.check.runner`) checks each era the server answers on a connection of its own. The
checks here judge what only this era has: the discover result, the routing headers a server must
require, and ``-32022`` (with the versions it supports) for a version it does not.
"""

from __future__ import annotations

from typing import Any

from mcpreel._version import __version__
from mcpreel.check.context import FAIL, PASS, SKIP, WARN, Run, check, result
from mcpreel.check.probe import HttpProbe, ProbeExchange, StdioProbe, excerpt
from mcpreel.check.result import CheckResult

__all__ = [
    "MODERN",
    "MODERN_PLAN",
    "ModernHttpProbe",
    "ModernStdioProbe",
    "discovered",
    "envelope",
]

#: the protocol version of the stateless era
MODERN = "2026-07-28"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
#: a tool no server has: what a header check calls, so that a server that runs it anyway runs nothing
NO_SUCH_TOOL = "mcpreel-check-no-such-tool"
_RANK = {PASS: 0, SKIP: 0, WARN: 1, FAIL: 2}


def envelope(version: str = MODERN) -> dict[str, Any]:
    """The ``params._meta`` every request of this era carries (the check declares no capabilities)."""
    return {PROTOCOL_VERSION_KEY: version, CLIENT_INFO_KEY: {"name": "mcpreel-check", "version": __version__},
            CLIENT_CAPABILITIES_KEY: {}}


def _with_envelope(params: Any, version: str = MODERN) -> dict[str, Any]:
    out = dict(params) if isinstance(params, dict) else {}
    out["_meta"] = {**envelope(version), **(out.get("_meta") or {})}
    return out


def routing_headers(method: str, params: Any) -> dict[str, str]:
    """``Mcp-Method`` (and ``Mcp-Name``) for a POST of ``method`` with these (enveloped) params: the
    Streamable HTTP transport's own, as every client of this era sends them (``Mcp-Name`` in the SDK's
    base64 sentinel when it is not plain ASCII)."""
    from mcpreel.clients.http import modern_headers

    headers = modern_headers({"jsonrpc": "2.0", "method": method, "params": params})
    return {k: v for k, v in headers.items() if k != "MCP-Protocol-Version"} or {"Mcp-Method": method}


class ModernHttpProbe(HttpProbe):
    """An :class:`HttpProbe` that speaks 2026-07-28: the envelope in every request, the routing headers on
    every POST (``headers=`` given to a call replace them, ``drop_headers=`` removes them)."""

    def __init__(self, url: str, **kw: Any) -> None:
        super().__init__(url, **kw)
        self.protocol_version = MODERN

    def request(self, method: str, params: Any = None, *, headers: dict[str, str] | None = None,
                **kw: Any) -> ProbeExchange:
        params = _with_envelope(params)
        return super().request(method, params, headers=self._headers(method, params, headers, kw), **kw)

    def notify(self, method: str, params: Any = None, *, headers: dict[str, str] | None = None,
               **kw: Any) -> ProbeExchange:
        params = _with_envelope(params)
        return super().notify(method, params, headers=self._headers(method, params, headers, kw), **kw)

    @staticmethod
    def _headers(method: str, params: Any, given: dict[str, str] | None, kw: dict[str, Any]) -> dict[str, str]:
        dropped = {name.lower() for name in kw.get("drop_headers", ())}
        routing = {k: v for k, v in routing_headers(method, params).items() if k.lower() not in dropped}
        return {**routing, **(given or {})}


class ModernStdioProbe(StdioProbe):
    """A :class:`StdioProbe` that speaks 2026-07-28: the envelope in every request and notification."""

    def request(self, method: str, params: Any = None, **kw: Any) -> ProbeExchange:
        return super().request(method, _with_envelope(params), **kw)

    def notify(self, method: str, params: Any = None, **kw: Any) -> ProbeExchange:
        return super().notify(method, _with_envelope(params), **kw)


def discovered(ex: ProbeExchange) -> dict[str, Any] | None:
    """The result of a ``server/discover`` exchange, when the server answered one (not an error)."""
    resp = ex.response
    res = resp.get("result") if isinstance(resp, dict) else None
    return res if isinstance(res, dict) else None


def _error(ex: ProbeExchange) -> dict[str, Any] | None:
    resp = ex.response
    err = resp.get("error") if isinstance(resp, dict) else None
    return err if isinstance(err, dict) else None


# -- the checks ------------------------------------------------------------------------------------


@check("discover", "server/discover: supportedVersions, capabilities, resultType, serverInfo in _meta", 8,
       needs=())
def discover(run: Run) -> CheckResult:
    ex = run.init
    assert ex is not None
    res = discovered(ex)
    fix = ('answer server/discover with {"supportedVersions": ["2026-07-28"], "capabilities": {...}, '
           '"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": ..., "version": ...}}}')
    if res is None:
        err = _error(ex)
        said = f"error {err.get('code')}: {err.get('message')}" if err else (ex.error or "no JSON-RPC response")
        return result(discover, FAIL, f"server/discover answered {said}: the server does not speak {MODERN} "
                                      "(check it with --era legacy)", ex=ex, fix=fix)
    problems: list[tuple[str, str]] = []
    versions = res.get("supportedVersions")
    if not isinstance(versions, list) or not versions or not all(isinstance(v, str) for v in versions):
        problems.append((FAIL, "result.supportedVersions is missing or not a list of version strings"))
    elif MODERN not in versions:
        problems.append((WARN, f"result.supportedVersions {excerpt(versions, 80)} does not list {MODERN}, the "
                               "version this check spoke"))
    if not isinstance(res.get("capabilities"), dict):
        problems.append((FAIL, "result.capabilities is missing or not an object"))
    if res.get("resultType") not in ("complete", "input_required"):
        problems.append((FAIL, "result.resultType is "
                               + (excerpt(res.get("resultType"), 40) if "resultType" in res else "missing")
                               + ' (a 2026-07-28 result says "complete")'))
    meta = res.get("_meta")
    info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("name"), str):
        problems.append((WARN, f"result._meta has no {SERVER_INFO_KEY} with a name: clients show no server name"))
    if isinstance(run.probe, HttpProbe) and ex.headers.get("mcp-session-id"):
        problems.append((WARN, "the answer carries Mcp-Session-Id: the 2026-07-28 era has no sessions"))
    if not problems:
        assert isinstance(versions, list)  # else a problem says so
        name = f", server {info.get('name')} {info.get('version') or ''}".rstrip() if isinstance(info, dict) else ""
        return result(discover, PASS, f"supportedVersions {', '.join(versions)}{name}")
    status = max((p[0] for p in problems), key=_RANK.__getitem__)
    return result(discover, status, problems[0][1] if len(problems) == 1 else f"{len(problems)} problems: "
                  + "; ".join(p[1] for p in problems), ex=ex, fix=fix)


@check("routing-headers", "Mcp-Method and Mcp-Name required on every POST (2026-07-28)", 8, only="http")
def routing_header_rules(run: Run) -> CheckResult:
    probe = run.probe
    cases = (
        ("tools/list", None, "Mcp-Method", "a tools/list POST without Mcp-Method"),
        ("tools/call", {"name": NO_SUCH_TOOL, "arguments": {}}, "Mcp-Name", "a tools/call POST without Mcp-Name"),
    )
    problems: list[tuple[str, str, ProbeExchange]] = []
    for method, params, header, what in cases:
        ex = probe.request(method, params, label=what, drop_headers=(header,))
        err = _error(ex)
        if err is not None and err.get("code") == HEADER_MISMATCH:
            if ex.status != 400:
                problems.append((WARN, f"{what} got -32020 with HTTP {ex.status}; the 2026-07-28 era asks for 400",
                                 ex))
        elif ex.ok_status and err is None:
            problems.append((FAIL, f"{what} was served: a server must reject it with -32020 (HTTP 400)", ex))
        elif ex.status is None:
            problems.append((FAIL, f"{what}: {ex.error or 'no HTTP answer'}", ex))
        else:
            code = f"error {err.get('code')}" if err else "no JSON-RPC error"
            problems.append((WARN, f"{what} was refused with HTTP {ex.status} and {code}, not -32020", ex))
    fix = ("reject a POST whose Mcp-Method (or, for tools/call, resources/read and prompts/get, Mcp-Name) is "
           "missing or differs from the body with HTTP 400 and error -32020")
    if not problems:
        return result(routing_header_rules, PASS, "a POST without Mcp-Method or Mcp-Name gets 400 and -32020")
    status, summary, ex = max(problems, key=lambda p: _RANK[p[0]])
    return result(routing_header_rules, status, summary, ex=ex, fix=fix,
                  details=[f"{s}: {t}" for s, t, _ in problems] if len(problems) > 1 else [])


@check("unsupported-version", "An unsupported protocol version gets -32022 naming the supported ones", 8)
def unsupported_version(run: Run) -> CheckResult:
    version = "2099-01-01"
    params = {"_meta": envelope(version)}
    headers = {"MCP-Protocol-Version": version} if run.http else None
    kw: dict[str, Any] = {"headers": headers} if headers else {}
    ex = run.probe.request("server/discover", params, label=f"server/discover at {version}", **kw)
    fix = ('answer a request whose protocol version you do not support with {"error": {"code": -32022, '
           '"message": ..., "data": {"supported": ["2026-07-28"], "requested": "..."}}} (HTTP 400)')
    err = _error(ex)
    if err is None:
        if discovered(ex) is not None:
            return result(unsupported_version, FAIL, f"server/discover at {version} was answered as if supported",
                          ex=ex, fix=fix)
        return result(unsupported_version, FAIL, f"no JSON-RPC error for version {version}: "
                                                 f"{ex.error or 'no response'}", ex=ex, fix=fix)
    if err.get("code") != UNSUPPORTED_VERSION:
        return result(unsupported_version, FAIL, f"version {version} got error {err.get('code')}, not -32022", ex=ex,
                      fix=fix)
    data = err.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list) or not all(isinstance(v, str) for v in supported):
        return result(unsupported_version, FAIL, "-32022 without data.supported: the client cannot tell which "
                                                 "version to use", ex=ex, fix=fix)
    if run.http and ex.status != 400:
        return result(unsupported_version, WARN, f"-32022 with HTTP {ex.status}; the 2026-07-28 era asks for 400",
                      ex=ex, fix=fix)
    return result(unsupported_version, PASS, f"-32022, supported: {', '.join(supported)}")


#: the checks of this era's own rules, in the order they run
MODERN_PLAN = [discover, routing_header_rules, unsupported_version]
