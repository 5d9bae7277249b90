"""Secret HTTP headers: ``Authorization``, ``Proxy-Authorization``, cookies and API-key headers.

The HTTP recorder replaces their values by :data:`~mcpreel.redact.secrets.MARKER` in every recorded
header set unless the user keeps secrets (``--keep-secrets``); :class:`~mcpreel.redact.engine.Redactor`
uses the same rule for the headers of a session it redacts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpreel.redact.secrets import MARKER

__all__ = ["SECRET_HEADERS", "is_secret_header", "redact_headers"]

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

