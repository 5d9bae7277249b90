"""A DPoP-bound MCP server and client, written from SEP-1932 / RFC 9449's own wire examples (no SDK speaks
DPoP yet on the resource-server side): the official SDK's server behind a gate that wants
``Authorization: DPoP <token>`` and a fresh ``DPoP`` proof JWT whose ``htm``/``htu`` match the request and
whose ``iat`` is within five minutes, else ``401`` with ``WWW-Authenticate: DPoP``; and a client hook that
puts a new proof on every request, as the draft's clients must.

The proofs are structurally real (a ``dpop+jwt`` header, the RFC's claims, a unique ``jti``) and signed
with a throwaway HMAC: the gate checks structure and claims, not the key, which is all a recorder test
needs (it must never let any of it out)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from typing import Any

#: the bound access token the client presents (planted: must never leave mcpreel unredacted)
TOKEN = "dpop-bound-token-Zq81xWv93kLm"
_KEY = b"throwaway-test-key"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def proof(method: str, url: str) -> str:
    """A fresh DPoP proof JWT for one request (RFC 9449 section 4.2's claims)."""
    header = {"typ": "dpop+jwt", "alg": "HS256", "jwk": {"kty": "oct", "kid": "test"}}
    ath = _b64(hashlib.sha256(TOKEN.encode()).digest())
    claims = {"jti": uuid.uuid4().hex, "htm": method.upper(), "htu": url.split("?")[0], "iat": int(time.time()),
              "ath": ath}
    signing = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    sig = hmac.new(_KEY, signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{_b64(sig)}"


def claims_of(jwt: str) -> dict[str, Any]:
    """The claims of a proof (no signature check: see the module's docstring)."""
    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


class DpopGate:
    """ASGI middleware: refuses a request without a valid DPoP-bound token and proof, as SEP-1932 says."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.proofs: list[str] = []
        self.refused = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        auth, dpop = headers.get("authorization", ""), headers.get("dpop", "")
        ok = auth == f"DPoP {TOKEN}" and dpop.count(".") == 2 and dpop not in self.proofs
        if ok:
            c = claims_of(dpop)
            # htu: the path only -- through a recording proxy the client's URL is the proxy's
            ok = (c.get("htm") == scope["method"] and str(c.get("htu", "")).endswith(scope["path"])
                  and abs(time.time() - c.get("iat", 0)) <= 300)
        if not ok:
            self.refused += 1
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"www-authenticate", b'DPoP error="invalid_dpop_proof", algs="ES256"'),
                                    (b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b'{"error":"invalid_dpop_proof"}'})
            return
        self.proofs.append(dpop)
        await self.app(scope, receive, send)


async def add_proof(request: Any) -> None:
    """An httpx request hook: ``Authorization: DPoP`` and a fresh proof on every request."""
    request.headers["Authorization"] = f"DPoP {TOKEN}"
    request.headers["DPoP"] = proof(request.method, str(request.url))
