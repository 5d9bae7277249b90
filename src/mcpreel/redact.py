"""Redaction of secrets in what is recorded (never in what is forwarded).

Headers: ``Authorization``, ``Proxy-Authorization``, cookies and API-key headers are replaced by
:data:`MARKER` in every recorded header set unless the user asks to keep secrets (:func:`redact_headers`,
used by the HTTP recorders).

Sessions (``mcpreel redact``, ``record --redact``): a :class:`Redactor` applies three kinds of rule to
every JSON value of a session (JSON-RPC messages, edit originals, transport context, other producers'
lines, stderr text, the session header) and to the server's ``command`` argv:

- **by key**: the value of a member whose name says secret (``token``, ``password``, ``authorization``,
  ``api_key``, ``secret``, ``cookie``, ``client_secret``, ``private_key``, ``GITHUB_TOKEN``, … — compared
  case-insensitively with ``-``/``_`` ignored, by suffix) becomes ``[REDACTED]``. Names that end in
  "token" but are not secrets (``progressToken``, ``nextPageToken``) are spared, and so are the property
  names of a JSON schema (a tool whose input has a ``password`` property keeps its schema);
- **by value pattern**: bearer and basic credentials, JWTs, ``sk-…`` API keys, AWS access keys, GitHub,
  GitLab, Slack, Google and Stripe tokens, private key blocks, URL passwords and secret URL parameters,
  ``NAME_TOKEN=…`` assignments, secret header lines — only the secret part of the string is replaced;
  a string that holds JSON (tool results often do) is redacted inside and written back;
- **the user's rules** (``--rules FILE``, JSON): more key names, more regexes, JSONPath expressions whose
  values are replaced whole, and JSONPath + regex pairs (see :func:`load_rules`).

A value that already is the marker is not counted again, so redacting twice reports 0 the second time.
The redactor never changes its input: it returns copies (copy on write).
"""

from __future__ import annotations

import re
import shlex
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.errors import InputError

__all__ = [
    "DEFAULT_PATTERNS",
    "MARKER",
    "SECRET_HEADERS",
    "JsonPath",
    "RedactResult",
    "Redactor",
    "Rules",
    "is_secret_header",
    "is_secret_key",
    "load_rules",
    "redact_command",
    "redact_file",
    "redact_headers",
    "redact_message",
]

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


# -- keys -------------------------------------------------------------------------------------------

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
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_COMMAND_KEYS = frozenset({"command", "server_command", "cmd", "argv"})


def _norm(name: str) -> str:
    return re.sub(r"[-_.\s]", "", name.lower())


def is_secret_key(name: str, extra: frozenset[str] = frozenset()) -> bool:
    """True when a member, flag or variable named ``name`` holds a secret (the default key rule)."""
    n = _norm(name)
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
    _p("bearer", r"\b(?:bearer|token)\s+([A-Za-z0-9\-._~+/]{8,}=*)", 1, re.IGNORECASE),
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
       r"(?:^|[\r\n\"'])\s*(?:proxy-)?(?:authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token|x-access-token)"
       r"\s*:\s*([^\r\n\"']+)", 1, re.IGNORECASE),
    _p("secret assignment",
       r"\b[A-Za-z0-9_]*(?:API_?KEY|SECRET|PASSWORD|PASSWD|TOKEN)[A-Za-z0-9_]*=([^\s\"'&;,]+)", 1, re.IGNORECASE),
)


#: every built-in pattern needs one of these literals (compared lower-cased); a string with none is skipped
_QUICK = ("=", ":", "eyj", "sk-", "sk_", "rk_", "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva",
          "aipa", "gh", "github_pat_", "glpat-", "xox", "aiza", "-----begin", "bearer", "basic", "token")


# -- JSONPath (the subset rules need) ---------------------------------------------------------------

_PATH_TOKEN = re.compile(
    r"""\.\.(?P<dname>[A-Za-z_$][\w$-]*|\*)"""
    r"""|\.(?P<name>[A-Za-z_$][\w$-]*|\*)"""
    r"""|\[\s*(?:(?P<index>-?\d+)|'(?P<sq>(?:[^'\\]|\\.)*)'|"(?P<dq>(?:[^"\\]|\\.)*)"|(?P<star>\*))\s*\]"""
)


class JsonPath:
    """``$``, ``.name``, ``['name']``, ``[n]``, ``[*]``, ``.*`` and ``..name`` (recursive descent).

    Enough to point at a member of a JSON-RPC message wherever it sits:
    ``$.params.arguments.email``, ``$.result.content[*].text``, ``$..apiKey``.
    """

    __slots__ = ("text", "steps")

    def __init__(self, text: str):
        self.text = text
        s = text.strip()
        if not s.startswith("$"):
            raise ValueError("a JSONPath starts with $")
        pos = 1
        steps: list[tuple[str, Any]] = []
        while pos < len(s):
            m = _PATH_TOKEN.match(s, pos)
            if m is None:
                raise ValueError(f"cannot read the path at {s[pos:]!r}")
            if m.group("dname") is not None:
                steps.append(("desc", None if m.group("dname") == "*" else m.group("dname")))
            elif m.group("name") is not None:
                steps.append(("wild", None) if m.group("name") == "*" else ("key", m.group("name")))
            elif m.group("index") is not None:
                steps.append(("index", int(m.group("index"))))
            elif m.group("star") is not None:
                steps.append(("wild", None))
            else:
                raw = m.group("sq") if m.group("sq") is not None else m.group("dq")
                steps.append(("key", re.sub(r"\\(.)", r"\1", raw)))
            pos = m.end()
        self.steps = tuple(steps)

    def apply(self, value: Any, fn: Any) -> tuple[Any, int]:
        """``value`` with ``fn(v) -> (new, changes)`` applied at every match; (copy, total changes)."""
        return _apply(value, self.steps, 0, fn)

    def __repr__(self) -> str:
        return f"JsonPath({self.text!r})"


def _apply(value: Any, steps: tuple[tuple[str, Any], ...], i: int, fn: Any) -> tuple[Any, int]:
    if i == len(steps):
        return fn(value)
    kind, arg = steps[i]
    if kind == "key":
        if isinstance(value, dict) and arg in value:
            new, n = _apply(value[arg], steps, i + 1, fn)
            if n:
                value = {**value, arg: new}
            return value, n
        return value, 0
    if kind == "index":
        if isinstance(value, list) and -len(value) <= arg < len(value):
            new, n = _apply(value[arg], steps, i + 1, fn)
            if n:
                value = list(value)
                value[arg] = new
            return value, n
        return value, 0
    if kind == "wild":
        return _each(value, lambda v: _apply(v, steps, i + 1, fn))
    # recursive descent: the rest of the path from here and from every node below
    total = 0
    if arg is None:
        value, n = _each(value, lambda v: _apply(v, steps, i + 1, fn))
    else:
        value, n = _apply(value, (("key", arg),) + steps[i + 1:], 0, fn)
    total += n
    value, n = _each(value, lambda v: _apply(v, steps, i, fn))
    return value, total + n


def _each(value: Any, fn: Any) -> tuple[Any, int]:
    total = 0
    if isinstance(value, dict):
        out = None
        for k, v in value.items():
            new, n = fn(v)
            if n:
                if out is None:
                    out = dict(value)
                out[k] = new
                total += n
        return (out if out is not None else value), total
    if isinstance(value, list):
        out_l = None
        for idx, v in enumerate(value):
            new, n = fn(v)
            if n:
                if out_l is None:
                    out_l = list(value)
                out_l[idx] = new
                total += n
        return (out_l if out_l is not None else value), total
    return value, 0


# -- rules ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PathRule:
    """A JSONPath whose values are replaced whole, or (with ``regex``) only where the regex matches."""

    name: str
    path: JsonPath | None
    regex: re.Pattern[str] | None = None


@dataclass
class Rules:
    """What a :class:`Redactor` redacts. ``Rules()`` is the default set."""

    defaults: bool = True
    marker: str = MARKER
    keys: frozenset[str] = frozenset()  # extra key names (normalized)
    patterns: tuple[Pattern, ...] = ()  # extra value patterns
    paths: tuple[PathRule, ...] = ()  # the user's JSONPath rules (applied to JSON-RPC messages)

    @property
    def all_patterns(self) -> tuple[Pattern, ...]:
        return (DEFAULT_PATTERNS if self.defaults else ()) + self.patterns


_RULE_MEMBERS = ("defaults", "marker", "keys", "patterns", "paths", "rules")


def _compile(regex: Any, where: str, path: str) -> re.Pattern[str]:
    if not isinstance(regex, str) or not regex:
        raise InputError(f"{where}: a regex must be a non-empty string", path=path)
    try:
        return re.compile(regex)
    except re.error as exc:
        raise InputError(f"{where}: invalid regex {regex!r}: {exc}", path=path) from exc


def _jsonpath(text: Any, where: str, path: str) -> JsonPath:
    if not isinstance(text, str):
        raise InputError(f"{where}: a path must be a JSONPath string like $.params.arguments.token", path=path)
    try:
        return JsonPath(text)
    except ValueError as exc:
        raise InputError(f"{where}: invalid JSONPath {text!r}: {exc}", path=path) from exc


def rules_from_dict(doc: Any, path: str = "<rules>") -> Rules:
    """Rules from a parsed rules document (see :func:`load_rules`)."""
    if not isinstance(doc, dict):
        raise InputError("the rules file must hold one JSON object", path=path)
    unknown = sorted(k for k in doc if k not in _RULE_MEMBERS)
    if unknown:
        raise InputError(f"unknown member {unknown[0]!r} (known: {', '.join(_RULE_MEMBERS)})", path=path)
    defaults = doc.get("defaults", True)
    if not isinstance(defaults, bool):
        raise InputError("defaults must be true or false", path=path)
    marker = doc.get("marker", MARKER)
    if not isinstance(marker, str) or not marker:
        raise InputError("marker must be a non-empty string", path=path)
    keys = doc.get("keys", [])
    if not isinstance(keys, list) or not all(isinstance(k, str) and k for k in keys):
        raise InputError("keys must be an array of member names", path=path)
    patterns = doc.get("patterns", [])
    if not isinstance(patterns, list):
        raise InputError("patterns must be an array of regexes", path=path)
    compiled = tuple(Pattern(f"pattern {i + 1}", _compile(p, f"patterns[{i}]", path)) for i, p in enumerate(patterns))
    paths: list[PathRule] = []
    plain = doc.get("paths", [])
    if not isinstance(plain, list):
        raise InputError("paths must be an array of JSONPath strings", path=path)
    for i, p in enumerate(plain):
        paths.append(PathRule(f"path {p}", _jsonpath(p, f"paths[{i}]", path)))
    rules = doc.get("rules", [])
    if not isinstance(rules, list):
        raise InputError("rules must be an array of {path, regex} objects", path=path)
    for i, r in enumerate(rules):
        where = f"rules[{i}]"
        if not isinstance(r, dict) or not r or any(k not in ("path", "regex") for k in r):
            raise InputError(f"{where} must be an object with path and/or regex", path=path)
        jp = _jsonpath(r["path"], where, path) if "path" in r else None
        rx = _compile(r["regex"], where, path) if "regex" in r else None
        paths.append(PathRule(f"rule {i + 1}", jp, rx))
    return Rules(defaults, marker, frozenset(_norm(k) for k in keys), compiled, tuple(paths))


def load_rules(path: str | Path) -> Rules:
    r"""Read a rules file: one JSON object, every member optional (plain JSON, no comments)::

        {
          "defaults": true,
          "marker": "[REDACTED]",
          "keys": ["ssn", "customer_id"],
          "patterns": ["cust_[0-9]{6}"],
          "paths": ["$.params.arguments.email", "$..patient"],
          "rules": [{"path": "$.result.content[*].text", "regex": "\\d{3}-\\d{2}-\\d{4}"}]
        }

    ``defaults`` keeps the built-in keys and patterns (``false``: only yours); ``keys`` are more secret
    member names; ``patterns`` more regexes matched in every string; ``paths`` JSONPath expressions
    (relative to each JSON-RPC message) whose values are replaced whole; ``rules`` a path and a regex:
    only the matches inside the strings at that path are replaced (a rule without a path: everywhere).
    An unknown member, a bad regex or a bad path is an error naming it.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the rules file: {exc.strerror or exc}", path=name) from exc
    try:
        doc = jsonio.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        where = f" on line {line}" if line else ""
        raise InputError(f"invalid JSON{where}: {jsonio.error_reason(exc)}", path=name, line=line) from exc
    return rules_from_dict(doc, name)


# -- the redactor -----------------------------------------------------------------------------------


class Redactor:
    """Applies :class:`Rules` to values, texts, argv, messages and whole sessions; counts what it replaced.

    ``counts`` maps a rule name (``key``, ``header``, ``command``, a pattern's name, ``path …``,
    ``rule N``) to the number of values it replaced; :attr:`total` is their sum. Thread-safe: the stdio
    recorder calls :meth:`raw` from its two pump threads.
    """

    def __init__(self, rules: Rules | None = None):
        self.rules = rules or Rules()
        self.marker = self.rules.marker
        self._patterns = self.rules.all_patterns
        # one search over all patterns first: most strings hold no secret, and one regex is cheaper than many
        try:
            self._hint: re.Pattern[str] | None = re.compile("|".join(
                f"(?i:{p.regex.pattern})" if p.regex.flags & re.IGNORECASE else f"(?:{p.regex.pattern})"
                for p in self._patterns)) if self._patterns else None
        except re.error:  # a user regex with global inline flags cannot be combined: no shortcut then
            self._hint = None
        self._no_hint = bool(self._patterns) and self._hint is None
        # the built-in patterns each need one of these (lower-cased) literals: a cheaper first test still
        self._quick = _QUICK if self._patterns and not self.rules.patterns else None
        self._keys: dict[str, bool] = {}
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def _add(self, counts: dict[str, int]) -> None:
        if counts:
            with self._lock:
                for k, v in counts.items():
                    self.counts[k] = self.counts.get(k, 0) + v

    def _secret_key(self, name: str) -> bool:
        known = self._keys.get(name)
        if known is None:
            known = is_secret_key(name, self.rules.keys) if self.rules.defaults else _norm(name) in self.rules.keys
            if len(self._keys) < 65536:
                self._keys[name] = known
        return known

    # -- strings -----------------------------------------------------------------------------------
    def _text(self, s: str, counts: dict[str, int], depth: int = 0) -> str:
        if s == self.marker or not s:
            return s
        stripped = s.lstrip()
        if depth < 4 and stripped[:1] in ("{", "[") and len(s) < (16 << 20):
            try:
                inner = jsonio.loads(s)
            except (ValueError, UnicodeDecodeError):
                inner = None
            if isinstance(inner, (dict, list)):
                local: dict[str, int] = {}
                new = self._value(inner, local, depth + 1)
                if local:
                    for k, v in local.items():
                        counts[k] = counts.get(k, 0) + v
                    return jsonio.dumps_str(new)
                return s
        quick = self._quick
        if quick is not None:
            low = s.lower()
            if not any(q in low for q in quick):
                return s
        if not self._no_hint and (self._hint is None or self._hint.search(s) is None):
            return s
        for pat in self._patterns:
            s = self._sub(pat, s, counts)
        return s

    def _sub(self, pat: Pattern, s: str, counts: dict[str, int]) -> str:
        marker = self.marker
        n = 0

        def repl(m: re.Match[str]) -> str:
            nonlocal n
            g = pat.group
            if g and m.group(g) is None:
                return m.group(0)
            secret = m.group(g)
            if marker in secret:
                return m.group(0)  # already redacted (by an earlier pattern or an earlier run)
            n += 1
            if not g:
                return marker
            start, end = m.start(g) - m.start(0), m.end(g) - m.start(0)
            whole = m.group(0)
            return whole[:start] + marker + whole[end:]

        out = pat.regex.sub(repl, s)
        if n:
            counts[pat.name] = counts.get(pat.name, 0) + n
        return out

    # -- JSON values -------------------------------------------------------------------------------
    def _value(self, value: Any, counts: dict[str, int], depth: int = 0, schema_map: bool = False) -> Any:
        if isinstance(value, str):
            return self._text(value, counts, depth)
        if isinstance(value, dict):
            out = None
            for k, v in value.items():
                new = v
                if not schema_map and isinstance(k, str) and self._secret_key(k) and self._redactable(v):
                    new = self.marker
                    counts["key"] = counts.get("key", 0) + 1
                elif isinstance(k, str) and k in _COMMAND_KEYS and _is_argv(v):
                    new = self._command(v, counts)
                elif isinstance(v, (dict, list, str)):
                    new = self._value(v, counts, depth, schema_map=isinstance(k, str) and k in _SCHEMA_MAPS
                                      and isinstance(v, dict))
                if new is not v:
                    if out is None:
                        out = dict(value)
                    out[k] = new
            return out if out is not None else value
        if isinstance(value, list):
            out_l = None
            for i, v in enumerate(value):
                if isinstance(v, (dict, list, str)):
                    new = self._value(v, counts, depth)
                    if new is not v:
                        if out_l is None:
                            out_l = list(value)
                        out_l[i] = new
            return out_l if out_l is not None else value
        return value

    def _redactable(self, v: Any) -> bool:
        if v is None or isinstance(v, bool) or v == self.marker:
            return False
        if isinstance(v, (dict, list, str)) and not v:
            return False
        return True

    def _paths(self, value: Any, counts: dict[str, int]) -> Any:
        marker = self.marker
        for rule in self.rules.paths:
            if rule.regex is None:
                def whole(v: Any) -> tuple[Any, int]:
                    return (v, 0) if v == marker or v is None else (marker, 1)

                value, n = rule.path.apply(value, whole) if rule.path is not None else (value, 0)
            else:
                pat = Pattern(rule.name, rule.regex)

                def inner(v: Any, pat: Pattern = pat) -> tuple[Any, int]:
                    local: dict[str, int] = {}
                    new = _map_strings(v, lambda s: self._sub(pat, s, local))
                    return new, local.get(pat.name, 0)

                if rule.path is None:
                    value, n = inner(value)
                else:
                    value, n = rule.path.apply(value, inner)
            if n:
                counts[rule.name] = counts.get(rule.name, 0) + n
        return value

    # -- argv --------------------------------------------------------------------------------------
    def _command(self, argv: Any, counts: dict[str, int]) -> Any:
        if isinstance(argv, str):
            try:
                parts = shlex.split(argv)
            except ValueError:
                return self._text(argv, counts)
            local: dict[str, int] = {}
            new = self._argv(parts, local)
            if not local:
                return argv
            for k, v in local.items():
                counts[k] = counts.get(k, 0) + v
            return shlex.join(new)
        return self._argv(list(argv), counts)

    def _argv(self, argv: list[str], counts: dict[str, int]) -> list[str]:
        out: list[str] = []
        marker = self.marker
        redact_next = False
        for arg in argv:
            if redact_next:
                redact_next = False
                if not arg.startswith("-"):
                    if arg != marker:
                        counts["command"] = counts.get("command", 0) + 1
                    out.append(marker)
                    continue
            if arg.startswith("-") and len(arg) > 1:
                name, eq, val = arg.lstrip("-").partition("=")
                if name and self._secret_key(name):
                    if eq:
                        if val and val != marker:
                            counts["command"] = counts.get("command", 0) + 1
                            arg = arg[: len(arg) - len(val)] + marker
                        out.append(arg)
                    else:
                        out.append(arg)
                        redact_next = True
                    continue
            elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", arg):
                name, _, val = arg.partition("=")
                if self._secret_key(name) and val and val != marker:
                    counts["command"] = counts.get("command", 0) + 1
                    out.append(f"{name}={marker}")
                    continue
            out.append(self._text(arg, counts))
        return out

    def _headers(self, headers: dict[str, Any], counts: dict[str, int]) -> dict[str, Any]:
        out = None
        for k, v in headers.items():
            new = v
            if isinstance(k, str) and (self._secret_key(k) or (self.rules.defaults and is_secret_header(k))) and self._redactable(v):
                new = self.marker
                counts["header"] = counts.get("header", 0) + 1
            elif isinstance(v, (str, list, dict)):
                new = self._value(v, counts)
            if new is not v:
                if out is None:
                    out = dict(headers)
                out[k] = new
        return out if out is not None else headers

    def _ctx(self, ctx: dict[str, Any], counts: dict[str, int]) -> dict[str, Any]:
        out = None
        for k, v in ctx.items():
            if k == "headers" and isinstance(v, dict):
                new = self._headers(v, counts)
            elif isinstance(v, (dict, list, str)):
                new = self._value(v, counts)
            else:
                new = v
            if new is not v:
                if out is None:
                    out = dict(ctx)
                out[k] = new
        return out if out is not None else ctx

    # -- the public surface ------------------------------------------------------------------------
    def value(self, value: Any) -> Any:
        """A JSON value with keys, patterns (and, for JSON-RPC messages, path rules) applied."""
        counts: dict[str, int] = {}
        new = self._value(value, counts)
        if self.rules.paths:
            new = self._paths(new, counts)
        self._add(counts)
        return new

    raw = value  # a parsed JSON-RPC message (or batch) -> the copy to record

    def text(self, text: str) -> str:
        """A free text (stderr, an invalid frame, a URL) with the value patterns applied."""
        counts: dict[str, int] = {}
        new = self._text(text, counts)
        self._add(counts)
        return new

    def command(self, argv: list[str]) -> list[str]:
        """The server's argv: ``--token X``, ``--api-key=X``, ``GITHUB_TOKEN=X`` and patterns in any arg."""
        counts: dict[str, int] = {}
        new = self._argv(list(argv), counts)
        self._add(counts)
        return new

    def message(self, msg: Any) -> Any:
        """A redacted copy of a :class:`~mcpreel.model.Message` (the original is left as it was)."""
        from mcpreel.model import Kind

        counts: dict[str, int] = {}
        changes: dict[str, Any] = {}
        if msg.kind in (Kind.MESSAGE, Kind.EVENT) and msg.raw is not None:
            raw = self._value(msg.raw, counts)
            if msg.kind == Kind.MESSAGE and self.rules.paths:
                raw = self._paths(raw, counts)
            if raw is not msg.raw:
                changes["raw"] = raw
        if msg.original is not None:
            original = self._value(msg.original, counts)
            if self.rules.paths:
                original = self._paths(original, counts)
            if original is not msg.original:
                changes["original"] = original
        if msg.ctx:
            ctx = self._ctx(msg.ctx, counts)
            if ctx is not msg.ctx:
                changes["ctx"] = ctx
        if msg.text:
            text = self._text(msg.text, counts)
            if text != msg.text:
                changes["text"] = text
        if msg.extra:
            extra = self._value(msg.extra, counts)
            if extra is not msg.extra:
                changes["extra"] = extra
        self._add(counts)
        return replace(msg, **changes) if changes else msg

    def info(self, info: Any) -> Any:
        """A redacted copy of a :class:`~mcpreel.model.SessionInfo` (command, URL, headers, metadata)."""
        counts: dict[str, int] = {}
        changes: dict[str, Any] = {}
        if info.command:
            command = self._argv(list(info.command), counts)
            if command != info.command:
                changes["command"] = command
        for name in ("url", "label"):
            value = getattr(info, name)
            if value:
                text = self._text(value, counts)
                if text != value:
                    changes[name] = text
        if info.headers:
            headers = self._headers(info.headers, counts)
            if headers is not info.headers:
                changes["headers"] = headers
        for name in ("metadata", "extra"):
            value = getattr(info, name)
            if value:
                new = self._value(value, counts)
                if name == "extra" and isinstance(new.get("transport_context"), dict):
                    new = {**new, "transport_context": self._ctx(new["transport_context"], counts)}
                if new is not value:
                    changes[name] = new
        self._add(counts)
        return replace(info, **changes) if changes else info

    def session(self, session: Any) -> Any:
        """The session redacted lazily: a streaming session stays streaming (its header at once)."""
        from mcpreel.model import Session

        info = self.info(session.info)
        if session.is_streaming:
            def factory() -> Iterator[Any]:
                for msg in session:
                    yield self.message(msg)

            return Session.streaming(info, factory)
        return Session(info, [self.message(m) for m in session.messages])


def _is_argv(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v))


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value


_DEFAULT: Redactor | None = None


def _default() -> Redactor:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Redactor()
    return _DEFAULT


def redact_message(raw: Any) -> Any:
    """The recorders' hook (``record --redact``): a parsed JSON-RPC message -> the copy to record."""
    return _default().value(raw)


def redact_command(argv: list[str]) -> list[str]:
    """The recorders' hook for the server's argv in the session header."""
    return _default().command(argv)


# -- files ------------------------------------------------------------------------------------------


@dataclass
class RedactResult:
    input: str
    output: str
    format: str
    total: int
    counts: dict[str, int] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)


def redact_file(
    in_path: str | Path,
    out_path: str | Path,
    *,
    rules: Rules | None = None,
    from_: str = "auto",
    to: str | None = None,
) -> RedactResult:
    """Redact a session file into ``out_path`` (atomically, mode 0600).

    The output keeps the input's format unless ``to`` is given (or the input format cannot be
    written: then the output file's name decides, as in ``convert``).
    """
    from mcpreel.convert import choose_output_format, write_session
    from mcpreel.formats import FORMATS, open_session

    session, detection = open_session(in_path, from_ or "auto")
    if to in (None, "", "auto"):
        fmt = detection.format if FORMATS[detection.format].writes else choose_output_format(out_path, session).format
    else:
        fmt = choose_output_format(out_path, session, to).format
    redactor = Redactor(rules)
    _, lost, _ = write_session(redactor.session(session), out_path, fmt)
    return RedactResult(str(in_path), str(out_path), fmt, redactor.total, dict(redactor.counts), lost)
