"""The two protocol eras of MCP and how a message of one is said in the other.

- **legacy**, the handshake era (2024-11-05 .. 2025-11-25): ``initialize`` -> result ->
  ``notifications/initialized``, then requests on that connection (over HTTP, an ``Mcp-Session-Id``).
- **modern**, the stateless 2026-07-28 era: no handshake; ``server/discover`` when the client wants the
  server's capabilities, and every request carries its own protocol plumbing in ``params._meta``
  (``io.modelcontextprotocol/protocolVersion``, ``clientInfo``, ``clientCapabilities``, ``logLevel``);
  results carry ``resultType`` and cache hints (``ttlMs``, ``cacheScope``).

A recording made in one era can be replayed or served in the other: ``replay --era`` translates the
client side, and the mock answers each client in the era it speaks. The translations here are pure
functions over JSON-RPC dicts; they change the plumbing only, never what a request asks.
"""

from __future__ import annotations

from typing import Any

from mcpreel.drafts import BEHAVIOUR_META_KEYS

__all__ = [
    "ABSENT_METHODS",
    "CACHEABLE_METHODS",
    "ERAS",
    "LATEST_LEGACY_PROTOCOL",
    "LEGACY",
    "LEGACY_PROTOCOLS",
    "MODERN",
    "MODERN_PROTOCOL",
    "PROTOCOL_META",
    "UNKNOWN",
    "absent_in_era",
    "client_identity",
    "discover_request",
    "discover_result_from_initialize",
    "era_name",
    "initialize_request",
    "initialize_result_from_discover",
    "is_protocol_meta_key",
    "protocol_of_request",
    "to_legacy_request",
    "to_legacy_result",
    "to_modern_request",
    "to_modern_result",
]

MODERN = "modern"
LEGACY = "legacy"
UNKNOWN = "unknown"
ERAS = (MODERN, LEGACY, UNKNOWN)
#: the stateless protocol version that starts the modern era
MODERN_PROTOCOL = "2026-07-28"
#: the handshake era's versions, oldest first
LEGACY_PROTOCOLS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_LEGACY_PROTOCOL = LEGACY_PROTOCOLS[-1]
#: the ``_meta`` namespace of per-request protocol plumbing
PROTOCOL_META = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY = PROTOCOL_META + "protocolVersion"
CLIENT_INFO_KEY = PROTOCOL_META + "clientInfo"
CLIENT_CAPABILITIES_KEY = PROTOCOL_META + "clientCapabilities"
SERVER_INFO_KEY = PROTOCOL_META + "serverInfo"
#: result members only the modern era has
MODERN_RESULT_KEYS = ("resultType", "ttlMs", "cacheScope")


#: what every surface calls each era: the word ``--era`` takes, then how that era talks
_ERA_GLOSS = {LEGACY: "handshake", MODERN: "stateless", UNKNOWN: "no handshake seen"}


def era_name(era: str | None, protocol: str | None = None) -> str:
    """The one way every surface names an era (inspect, the report, replay, the viewer, ``check``):
    ``legacy era (handshake, 2025-11-25)``, ``modern era (stateless, 2026-07-28)``, ``unknown era (no
    handshake seen)``. The first word is what ``--era`` takes; ``protocol`` is the version the session
    spoke (the modern era's own when not given)."""
    if era not in _ERA_GLOSS:
        return f"{era} era" if era else f"{UNKNOWN} era ({_ERA_GLOSS[UNKNOWN]})"
    if era == MODERN:
        protocol = protocol or MODERN_PROTOCOL
    details = ", ".join(x for x in (_ERA_GLOSS[era], protocol) if x)
    return f"{era} era ({details})"


#: per era, the client methods it does not have: a session said in that era leaves them out (the 2026-07-28
#: era has no ``ping`` and no ``logging/setLevel``, the log level travels in each request's ``_meta``; the
#: handshake era has no ``subscriptions/listen``)
ABSENT_METHODS = {
    MODERN: frozenset({"ping", "logging/setLevel"}),
    LEGACY: frozenset({"subscriptions/listen"}),
}


def absent_in_era(method: str | None, era: str) -> bool:
    """True when ``era`` has no client method ``method`` (what ``replay --era`` leaves out)."""
    return isinstance(method, str) and method in ABSENT_METHODS.get(era, frozenset())


def is_protocol_meta_key(key: str) -> bool:
    """A ``_meta`` member that is protocol plumbing, never behaviour (2026-07-28 per-request fields); the
    next release's drafts put behaviour under the same prefix (a stale expected digest is refused): those
    keys are not plumbing (:data:`mcpreel.drafts.BEHAVIOUR_META_KEYS`)."""
    return key.startswith(PROTOCOL_META) and key not in BEHAVIOUR_META_KEYS


def _params(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _meta(message: dict[str, Any]) -> dict[str, Any]:
    meta = _params(message).get("_meta")
    return meta if isinstance(meta, dict) else {}


def protocol_of_request(message: dict[str, Any]) -> str | None:
    """The protocol version a 2026-era request names in its ``_meta`` (None for a handshake-era one)."""
    value = _meta(message).get(PROTOCOL_VERSION_KEY)
    return value if isinstance(value, str) else None


def client_identity(message: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(clientInfo, capabilities) of a client request of either era (``initialize`` params, or ``_meta``)."""
    if message.get("method") == "initialize":
        params = _params(message)
        info, caps = params.get("clientInfo"), params.get("capabilities")
    else:
        meta = _meta(message)
        info, caps = meta.get(CLIENT_INFO_KEY), meta.get(CLIENT_CAPABILITIES_KEY)
    return (info if isinstance(info, dict) else None, caps if isinstance(caps, dict) else None)


def to_legacy_request(message: dict[str, Any]) -> dict[str, Any]:
    """A 2026-era request or notification without its per-request protocol ``_meta``."""
    meta = _meta(message)
    if not any(is_protocol_meta_key(k) for k in meta):
        return message
    params = dict(_params(message))
    kept = {k: v for k, v in meta.items() if not is_protocol_meta_key(k)}
    if kept:
        params["_meta"] = kept
    else:
        params.pop("_meta", None)
    out = {**message}
    if params:
        out["params"] = params
    else:
        out.pop("params", None)
    return out


def to_modern_request(message: dict[str, Any], client_info: dict[str, Any] | None,
                      capabilities: dict[str, Any] | None, protocol: str = MODERN_PROTOCOL) -> dict[str, Any]:
    """A handshake-era request with the per-request ``_meta`` a 2026 client sends."""
    params = dict(_params(message))
    meta = dict(params.get("_meta") or {}) if isinstance(params.get("_meta"), dict) else {}
    meta.setdefault(PROTOCOL_VERSION_KEY, protocol)
    if client_info is not None:
        meta.setdefault(CLIENT_INFO_KEY, client_info)
    if capabilities is not None:
        meta.setdefault(CLIENT_CAPABILITIES_KEY, capabilities)
    params["_meta"] = meta
    return {**message, "params": params}


def initialize_request(request_id: Any, client_info: dict[str, Any] | None, capabilities: dict[str, Any] | None,
                       protocol: str = LATEST_LEGACY_PROTOCOL) -> dict[str, Any]:
    """The handshake-era opening request mcpreel sends as a client (replay, check), one copy for every caller."""
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": protocol, "capabilities": capabilities or {},
                       "clientInfo": client_info or {"name": "mcpreel", "version": "0"}}}


def discover_request(request_id: Any, client_info: dict[str, Any] | None,
                     capabilities: dict[str, Any] | None) -> dict[str, Any]:
    """The 2026-07-28 opening request (``server/discover``) with the client's identity in ``_meta``, as a client of
    that era sends it."""
    return to_modern_request({"jsonrpc": "2.0", "id": request_id, "method": "server/discover"},
                             client_info, capabilities)


def initialize_result_from_discover(result: dict[str, Any], protocol: str) -> dict[str, Any]:
    """What a handshake-era server would have answered to ``initialize``, from a ``server/discover`` result."""
    meta = result.get("_meta")
    if not isinstance(meta, dict):
        meta = {}
    info = meta.get(SERVER_INFO_KEY)
    if not isinstance(info, dict):
        info = None
    out: dict[str, Any] = {"protocolVersion": protocol,
                           "capabilities": result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {},
                           "serverInfo": info or {"name": "mcpreel-mock", "version": "0"}}
    if isinstance(result.get("instructions"), str):
        out["instructions"] = result["instructions"]
    return out


def discover_result_from_initialize(result: dict[str, Any]) -> dict[str, Any]:
    """What a 2026-era server would have answered to ``server/discover``, from an ``initialize`` result."""
    out: dict[str, Any] = {"supportedVersions": [MODERN_PROTOCOL],
                           "capabilities": result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {},
                           "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    if isinstance(result.get("instructions"), str):
        out["instructions"] = result["instructions"]
    if isinstance(result.get("serverInfo"), dict):
        out["_meta"] = {SERVER_INFO_KEY: result["serverInfo"]}
    return out


def to_legacy_result(result: Any) -> Any:
    """A result as a handshake-era client expects it: without the modern-only members."""
    if not isinstance(result, dict) or not any(k in result for k in MODERN_RESULT_KEYS):
        return result
    return {k: v for k, v in result.items() if k not in MODERN_RESULT_KEYS}


#: methods whose 2026 results are cacheable: ``ttlMs`` and ``cacheScope`` are required there
CACHEABLE_METHODS = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list",
                               "resources/templates/list", "resources/read"})


def to_modern_result(result: Any, method: str | None = None) -> Any:
    """A result as a 2026 client expects it: ``resultType`` present and, for a cacheable method, the
    cache hints (the SDK's defaults when a handshake-era recording has none: ``ttlMs`` 0, immediately
    stale, and ``cacheScope`` private)."""
    if not isinstance(result, dict):
        return result
    missing: dict[str, Any] = {}
    if "resultType" not in result:
        missing["resultType"] = "complete"
    if method in CACHEABLE_METHODS:
        if "ttlMs" not in result:
            missing["ttlMs"] = 0
        if "cacheScope" not in result:
            missing["cacheScope"] = "private"
    return {**result, **missing} if missing else result
