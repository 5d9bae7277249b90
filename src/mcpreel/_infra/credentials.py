"""What replaces a secret, and which HTTP headers carry credentials: one copy, below every reader.

Readers of other recorders' files redact credential headers on read (an Inspector network export holds
the user's ``Authorization``), and the HTTP recorder and the redactor apply the same rule. The rule lives
here, not in :mod:`mcpreel.redact`, because the readers sit below ``redact`` (``mcpreel redact`` reads
and writes files through them): :mod:`mcpreel.redact.headers` and :mod:`mcpreel.redact.secrets` re-export
these names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpreel.drafts import DPOP_HEADER

__all__ = ["MARKER", "SECRET_HEADERS", "is_secret_header", "redact_headers"]

#: what a redacted value becomes (a keyed marker adds a fingerprint: :mod:`mcpreel.redact.keys`)
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
        DPOP_HEADER,  # SEP-1932: the per-request proof JWT (mcpreel.drafts)
    }
)


def is_secret_header(name: str) -> bool:
    """Whether a header's value is a credential: the known names, and any name that says key, secret,
    token or password (a server's own ``X-Acme-Token`` is as secret as ``Authorization``)."""
    low = name.lower()
    if low in SECRET_HEADERS:
        return True
    return any(part in low for part in ("api-key", "apikey", "api_key", "secret", "token", "password"))


def redact_headers(headers: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of ``headers`` with every secret header's value replaced by :data:`MARKER`."""
    if not headers:
        return {}
    return {k: (MARKER if is_secret_header(k) else v) for k, v in headers.items()}
