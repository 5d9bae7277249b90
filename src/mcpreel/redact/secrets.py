"""What is a secret: member names (the key rule) and the value patterns found inside strings.

The key rule compares names case-insensitively with ``-``/``_``/``.`` ignored, by suffix, sparing
protocol values that merely end in "token" (``progressToken``, ``nextPageToken``). Each value pattern
names what it finds (for the counts) and may replace only one group of its match, so the text around a
secret stays readable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcpreel._infra.credentials import MARKER

__all__ = ["DEFAULT_PATTERNS", "MARKER", "QUICK_LITERALS", "Pattern", "is_secret_key", "norm_key"]


_KEY_EXACT = frozenset({
    "auth", "pwd", "pass", "passwd", "password", "secret", "token", "apikey", "authorization", "cookie",
    "setcookie", "credential", "credentials", "privatekey", "accesskey", "secretkey", "clientsecret", "jwt",
    "bearer", "sessiontoken", "signingkey", "encryptionkey",
})
_KEY_SUFFIXES = ("token", "password", "passwd", "passphrase", "secret", "apikey", "accesskey", "secretkey",
                 "privatekey", "credentials", "cookie", "authorization", "signingkey")
#: names that end like a secret but are protocol values (pagination, progress), never secrets
_KEY_SPARED = frozenset({"progresstoken", "pagetoken", "nextpagetoken", "nexttoken", "continuationtoken",
                         "cursortoken", "synctoken", "cancellationtoken", "maxtoken", "idempotencytoken"})


def norm_key(name: str) -> str:
    """A member name as the key rule compares it: lower-cased, without `-`, `_`, `.` or spaces."""
    return re.sub(r"[-_.\s]", "", name.lower())


def is_secret_key(name: str, extra: frozenset[str] = frozenset()) -> bool:
    """True when a member, flag or variable named ``name`` holds a secret (the default key rule)."""
    n = norm_key(name)
    if n in extra:
        return True
    if n in _KEY_SPARED:
        return False
    return n in _KEY_EXACT or n.endswith(_KEY_SUFFIXES)


# -- value patterns ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """A regex whose match (or its ``group``) is replaced by the marker; ``name`` is for the counts."""

    name: str
    regex: re.Pattern[str]
    group: int = 0  # 0: the whole match; n: only group n (the groups around it stay)


def _p(name: str, regex: str, group: int = 0, flags: int = 0) -> Pattern:
    return Pattern(name, re.compile(regex, flags), group)


DEFAULT_PATTERNS: tuple[Pattern, ...] = (
    _p("private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    _p("jwt", r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),
    _p("bearer", r"\b(?:bearer|token|dpop)\s+([A-Za-z0-9\-._~+/]{8,}=*)", 1, re.IGNORECASE),
    _p("basic", r"\bbasic\s+([A-Za-z0-9+/]{12,}={0,2})", 1, re.IGNORECASE),
    _p("sk key", r"\bsk-[A-Za-z0-9_-]{16,}"),
    _p("stripe key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    _p("aws access key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
    _p("aws secret", r"aws_?secret_?access_?key[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9/+=]{40})", 1, re.IGNORECASE),
    _p("github token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})\b"),
    _p("gitlab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    _p("slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    _p("google api key", r"\bAIza[0-9A-Za-z_-]{35}"),
    _p("url password", r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:([^@\s/]+)@", 1, re.IGNORECASE),
    _p("url parameter",
       r"[?&](?:access_token|id_token|refresh_token|token|api_key|apikey|key|password|secret|client_secret|sig|signature|auth)"
       r"=([^&#\s\"']+)", 1, re.IGNORECASE),
    _p("secret header",
       r"(?:^|[\r\n\"'])\s*(?:proxy-)?(?:authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token|x-access-token|dpop)"
       r"\s*:\s*([^\r\n\"']+)", 1, re.IGNORECASE),
    _p("secret assignment",
       r"\b[A-Za-z0-9_]*(?:API_?KEY|SECRET|PASSWORD|PASSWD|TOKEN)[A-Za-z0-9_]*=([^\s\"'&;,]+)", 1, re.IGNORECASE),
)


#: every built-in pattern needs one of these literals (compared lower-cased); a string with none is skipped
QUICK_LITERALS = ("=", ":", "eyj", "sk-", "sk_", "rk_", "akia", "asia", "abia", "acca", "agpa", "aida", "aroa",
                  "anpa", "anva", "aipa", "gh", "github_pat_", "glpat-", "xox", "aiza", "-----begin", "bearer", "basic",
                  "token", "dpop")

