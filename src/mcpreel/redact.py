"""Redaction of secrets in what is recorded (never in what is forwarded).

Headers: ``Authorization``, ``Proxy-Authorization``, cookies and API-key headers are replaced by
:data:`MARKER` in every recorded header set unless the user asks to keep secrets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MARKER", "SECRET_HEADERS", "is_secret_header", "redact_headers"]

MARKER = "[REDACTED]"

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "apikey",
        "x-auth-token",
        "x-access-token",
        "x-csrf-token",
        "x-amz-security-token",
    }
)


def is_secret_header(name: str) -> bool:
    low = name.lower()
    if low in SECRET_HEADERS:
        return True
    return any(part in low for part in ("api-key", "apikey", "api_key", "secret", "token", "password"))


def redact_headers(headers: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of ``headers`` with every secret header's value replaced by :data:`MARKER`."""
    if not headers:
        return {}
    return {k: (MARKER if is_secret_header(k) else v) for k, v in headers.items()}
