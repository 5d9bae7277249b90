"""Keyed redaction markers: ``[REDACTED:rule:1a2b3c4d]``, an HMAC of the secret, never a bare hash.

Why keyed: a bare ``[REDACTED]`` makes every secret the same, so two different keys cannot be told
apart in a redacted file, and a cassette recorded with one secret cannot tell a live request that
carries it from one that carries another. A bare hash of the secret would tell them apart but also let
anyone who guesses a short secret (a PIN, a dictionary password) confirm the guess offline; an HMAC
with a key the redacted file does not contain cannot be checked without that key.

The fingerprint is HMAC-SHA256(key, secret) truncated to 8 hex digits (32 bits: enough to tell the
secrets of one project apart, too little to be an oracle). The secret is the replaced string itself,
or, for a whole non-string value (a key rule on a number or an object), its canonical JSON.

Where the key lives (:func:`find_key`, :func:`load_or_create_key`), first found wins:

1. a file given explicitly (``mcpreel redact --redact-key FILE``);
2. the file named by the environment variable ``MCPREEL_REDACT_KEY``;
3. ``.mcpreel/redact.key`` in the current folder, beside the project: ``mcpreel redact`` (and the pytest
   plugin, recording a cassette) creates it (32 random bytes, hex, mode 0600 in a 0700 folder) on first use,
   with a ``.gitignore`` beside it naming it; readers (the mock matching a live request against a redacted
   cassette) only read it.

A key file that others may read or write is refused, as ssh refuses such a private key
(:func:`check_key_mode`): anyone who can read the key can test guesses of short secrets against the
8-hex markers offline, and anyone who can write it can make the mock accept a secret of their choice.
The one line names the file, its mode and the fix (``chmod 600``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio, platform
from mcpreel._infra.fileio import PRIVATE_MODE
from mcpreel.errors import InputError, UsageError

__all__ = ["DEFAULT_KEY_FILE", "ENV_VAR", "KEYED_MARKER", "check_key_mode", "fingerprint", "find_key", "keyed_marker",
           "load_or_create_key", "read_key", "rule_slug"]

ENV_VAR = "MCPREEL_REDACT_KEY"
DEFAULT_KEY_FILE = Path(".mcpreel") / "redact.key"
#: a keyed marker; group 1 is the rule's slug, group 2 the fingerprint
KEYED_MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+):([0-9a-f]{8})\]")


def rule_slug(name: str) -> str:
    """A rule's name as a marker carries it: ``sk key`` -> ``sk-key``, ``path $..email`` -> ``path-email``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "rule"


def _secret_bytes(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return jsonio.dumps_canonical(value)


def fingerprint(key: bytes, value: Any) -> str:
    """The 8 hex digits of HMAC-SHA256(key, the secret) (see the module docstring)."""
    return hmac.new(key, _secret_bytes(value), hashlib.sha256).hexdigest()[:8]


def keyed_marker(key: bytes, rule: str, value: Any) -> str:
    """The marker of a secret under ``key``: the same secret gives the same marker, so the mock can still match it."""
    return f"[REDACTED:{rule_slug(rule)}:{fingerprint(key, value)}]"


def check_key_mode(path: str | Path) -> None:
    """Refuse a key file that its group or others may read or write (what ssh says of a private key).

    Where the system has no POSIX modes (Windows), there is nothing to look at.
    """
    if not platform.has_file_modes():
        return
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return  # the read that follows says why it cannot be read
    if mode & 0o077:
        raise InputError(f"permissions {mode:04o} are too open: a redaction key must be readable and writable by "
                         f"its owner only; run chmod 600 {path}", path=str(path))


def read_key(path: str | Path) -> bytes:
    """The key held by ``path`` (its text, blanks stripped, at least 16 characters), refused when others may
    read or write it (:func:`check_key_mode`)."""
    check_key_mode(path)
    try:
        data = Path(path).read_bytes().strip()
    except OSError as exc:
        raise InputError(f"cannot read the redaction key: {exc.strerror or exc}", path=str(path)) from exc
    if len(data) < 16:
        raise InputError("a redaction key must hold at least 16 characters", path=str(path))
    return data


def find_key(explicit: str | Path | None = None, *, cwd: str | Path | None = None) -> bytes | None:
    """The key from ``explicit``, ``$MCPREEL_REDACT_KEY`` or ``.mcpreel/redact.key``; None when there is none."""
    if explicit:
        return read_key(explicit)
    env = os.environ.get(ENV_VAR)
    if env:
        return read_key(env)
    default = Path(cwd or ".") / DEFAULT_KEY_FILE
    return read_key(default) if default.is_file() else None


def load_or_create_key(explicit: str | Path | None = None, *, cwd: str | Path | None = None) -> bytes:
    """:func:`find_key`, creating ``.mcpreel/redact.key`` (0600) when no key exists yet."""
    found = find_key(explicit, cwd=cwd)
    if found is not None:
        return found
    default = Path(cwd or ".") / DEFAULT_KEY_FILE
    key = secrets.token_hex(32).encode("ascii")
    try:
        default.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(default, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE)
    except FileExistsError:  # another process created it meanwhile: use theirs
        return read_key(default)
    except OSError as exc:
        raise UsageError(f"{default}: cannot create the redaction key: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "wb") as fh:
        fh.write(key + b"\n")
    _ignore_in_git(default)
    return key


#: what a generated key's folder gets beside it, so ``git add .`` never commits the key
GITIGNORE = "# made by mcpreel with redact.key: the key stays on this machine (a committed key lets its readers\n" \
            "# check guesses of short secrets against the redacted files' markers)\nredact.key\n"


def _ignore_in_git(key_file: Path) -> None:
    """A ``.gitignore`` naming the key beside a key just generated (an existing one is left as it is: the
    project's own); a folder that will not take it costs nothing (the key is made either way)."""
    try:
        fd = os.open(key_file.parent / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(GITIGNORE)
