"""The :class:`Redactor`: applies :class:`~mcpreel.redact.rules.Rules` to JSON values, texts, argv,
headers, messages and whole sessions, copy on write, and counts what it replaced by rule.

One instance serves a whole run (a recording, a ``mcpreel redact``): its counts are that run's counts.
"""

from __future__ import annotations

import re
import shlex
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._infra.nesting import recursion_room
from mcpreel.redact.headers import is_secret_header
from mcpreel.redact.keys import KEYED_MARKER, keyed_marker
from mcpreel.redact.rules import Rules
from mcpreel.redact.secrets import QUICK_LITERALS, Pattern, is_secret_key, norm_key

__all__ = ["Redactor"]

#: a secret named in free text, as the argv rule sees it in the command: ``--api-key=V``, ``--token V``,
#: ``password: V``, ``token=V`` (group ``name`` is checked by the key rule, group ``value`` is replaced)
_TEXT_FLAG = re.compile(r"(?<![\w-])--?(?P<name>[A-Za-z][\w.-]*)(?:=|[ \t]+)(?P<value>(?!-)[^\s\"'`,;]+)")
_TEXT_PAIR = re.compile(r"(?<![\w.-])(?P<name>[A-Za-z_][\w.-]*)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>[^\s\"'`,;&]+)")

#: the last member of a path as :func:`mcpreel.compare.jsondiff.format_path` writes it: ``.name`` or ``["na me"]``
_LAST_MEMBER = re.compile(r'(?:\.([A-Za-z_][A-Za-z0-9_\-]*)|\[("(?:[^"\\]|\\.)*")\])$')

_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_COMMAND_KEYS = frozenset({"command", "server_command", "cmd", "argv"})


class Redactor:
    """Applies :class:`Rules` to values, texts, argv, messages and whole sessions; counts what it replaced.

    ``counts`` maps a rule name (``key``, ``header``, ``command``, a pattern's name, ``path …``,
    ``rule N``) to the number of values it replaced; :attr:`total` is their sum. Thread-safe: a
    recording's pipeline calls it from the recorder's threads (the stdio pumps, one per direction).
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
        self._quick = QUICK_LITERALS if self._patterns and not self.rules.patterns else None
        # the same test as "any of the literals is in the lower-cased text", in one regex search (the
        # generator over two dozen literals was half the time of redacting a big session)
        self._quick_re = re.compile("|".join(re.escape(q) for q in self._quick)) if self._quick else None
        self._keys: dict[str, bool] = {}
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self._key = self.rules.key
        self._keys_hit: set[str] = set()  # the user's key names seen (for :meth:`unmatched`)
        self._counted = 0  # messages of a session already counted (see :meth:`session`)

    def _mark(self, rule: str, secret: Any) -> str:
        """The marker that replaces ``secret``: keyed (``[REDACTED:rule:hmac]``) when the rules hold a key."""
        key = self._key
        return self.marker if key is None else keyed_marker(key, rule, secret)

    def _is_marker(self, v: Any) -> bool:
        return isinstance(v, str) and (v == self.marker or (v.startswith("[REDACTED:")
                                                            and KEYED_MARKER.fullmatch(v) is not None))

    def _has_marker(self, s: str) -> bool:
        return self.marker in s or ("[REDACTED:" in s and KEYED_MARKER.search(s) is not None)

    def unmatched(self) -> list[str]:
        """The user's rules (keys, patterns, paths, path+regex rules) that replaced nothing in this run.

        A rule that never matched is most often a typo or a path that does not reach where the user
        thinks (a JSON value inside a tool's text): saying so beats a silent \"redacted 0 values\".
        """
        with self._lock:
            counts = dict(self.counts)
            hit = set(self._keys_hit)
        out = [f"key {k!r}" for k in sorted(self.rules.keys) if k not in hit]
        out += [f"{p.name} ({p.regex.pattern!r})" for p in self.rules.patterns if not counts.get(p.name)]
        out += [(f"{r.name} ({r.path.text if r.path is not None else ''}"
                 f"{' ' if r.path is not None and r.regex is not None else ''}"
                 f"{r.regex.pattern if r.regex is not None else ''})" if r.name.startswith("rule ") else r.name)
                for r in self.rules.paths if not counts.get(r.name)]
        return out

    @property
    def total(self) -> int:
        """How many secrets were replaced in all (what ``redact`` and ``record --redact`` report)."""
        return sum(self.counts.values())

    def _add(self, counts: dict[str, int]) -> None:
        if counts:
            with self._lock:
                for k, v in counts.items():
                    self.counts[k] = self.counts.get(k, 0) + v

    def _secret_key(self, name: str) -> bool:
        known = self._keys.get(name)
        if known is None:
            known = is_secret_key(name, self.rules.keys) if self.rules.defaults else norm_key(name) in self.rules.keys
            if len(self._keys) < 65536:
                self._keys[name] = known
        return known

    # -- strings -----------------------------------------------------------------------------------
    def _text(self, s: str, counts: dict[str, int], depth: int = 0) -> str:
        if not s or self._is_marker(s):
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
        quick = self._quick_re
        if quick is not None and quick.search(s.lower()) is None:
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
            if self._has_marker(secret):
                return m.group(0)  # already redacted (by an earlier pattern or an earlier run)
            n += 1
            new = self._mark(pat.name, secret) if self._key is not None else marker
            if not g:
                return new
            start, end = m.start(g) - m.start(0), m.end(g) - m.start(0)
            whole = m.group(0)
            return whole[:start] + new + whole[end:]

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
                    new = self._mark("key", v)
                    counts["key"] = counts.get("key", 0) + 1
                    if self.rules.keys:
                        self._user_key_hit(k)
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

    def _user_key_hit(self, name: str) -> None:
        n = norm_key(name)
        if n in self.rules.keys and n not in self._keys_hit:
            with self._lock:
                self._keys_hit.add(n)

    def _redactable(self, v: Any) -> bool:
        if v is None or isinstance(v, bool) or self._is_marker(v):
            return False
        if isinstance(v, (dict, list, str)) and not v:
            return False
        return True

    def _paths(self, value: Any, counts: dict[str, int]) -> Any:
        for rule in self.rules.paths:
            if rule.regex is None:
                # a marker names a path rule "path" (the path itself would make a long, noisy marker)
                def whole(v: Any, name: str = "path" if rule.name.startswith("path ") else rule.name) -> tuple[Any, int]:
                    return (v, 0) if v is None or self._is_marker(v) else (self._mark(name, v), 1)

                # into_text: a path reaches into JSON carried inside a string (a tool's text content)
                value, n = rule.path.apply(value, whole, into_text=True) if rule.path is not None else (value, 0)
            else:
                pat = Pattern(rule.name, rule.regex)

                def inner(v: Any, pat: Pattern = pat) -> tuple[Any, int]:
                    local: dict[str, int] = {}
                    new = _map_strings(v, lambda s: self._sub(pat, s, local))
                    return new, local.get(pat.name, 0)

                if rule.path is None:
                    value, n = inner(value)
                else:
                    value, n = rule.path.apply(value, inner, into_text=True)
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
        redact_next = False
        for arg in argv:
            if redact_next:
                redact_next = False
                if not arg.startswith("-"):
                    if not self._is_marker(arg):
                        counts["command"] = counts.get("command", 0) + 1
                        arg = self._mark("command", arg)
                    out.append(arg)
                    continue
            if arg.startswith("-") and len(arg) > 1:
                name, eq, val = arg.lstrip("-").partition("=")
                if name and self._secret_key(name):
                    if eq:
                        if val and not self._is_marker(val):
                            counts["command"] = counts.get("command", 0) + 1
                            arg = arg[: len(arg) - len(val)] + self._mark("command", val)
                        out.append(arg)
                    else:
                        out.append(arg)
                        redact_next = True
                    continue
            elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", arg):
                name, _, val = arg.partition("=")
                if self._secret_key(name) and val and not self._is_marker(val):
                    counts["command"] = counts.get("command", 0) + 1
                    out.append(f"{name}={self._mark('command', val)}")
                    continue
            out.append(self._text(arg, counts))
        return out

    def _headers(self, headers: dict[str, Any], counts: dict[str, int]) -> dict[str, Any]:
        out = None
        for k, v in headers.items():
            new = v
            secret = isinstance(k, str) and (self._secret_key(k) or (self.rules.defaults and is_secret_header(k)))
            if secret and self._redactable(v):
                new = self._mark("header", v)
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
        """A JSON value with keys, patterns (and, for JSON-RPC messages, path rules) applied.

        The walk recurses; a value nested deeper than the interpreter's limit allows (the readers accept
        1024 levels) is walked again with room for that depth, counting afresh (what it counted is added
        only once a walk ends)."""
        try:
            return self._walked(value)
        except RecursionError:
            with recursion_room(per_level=3):
                return self._walked(value)

    def _walked(self, value: Any) -> Any:
        counts: dict[str, int] = {}
        new = self._value(value, counts)
        if self.rules.paths:
            new = self._paths(new, counts)
        self._add(counts)
        return new

    raw = value  # a parsed JSON-RPC message (or batch) -> the copy to record

    def difference(self, d: Any) -> Any:
        """A :class:`~mcpreel.compare.jsondiff.Difference` with both its values redacted in their place
        (:meth:`value_at`); the same object when nothing changed."""
        recorded, new = self.value_at(d.path, d.recorded), self.value_at(d.path, d.new)
        return d if recorded is d.recorded and new is d.new else replace(d, recorded=recorded, new=new)

    def value_at(self, path: str, value: Any) -> Any:
        """A value taken from its place (a difference at ``$.params.arguments.password``), redacted as it
        would be in its place: the last member's name counts for the key rule."""
        m = _LAST_MEMBER.search(path)
        if m is None:
            return self.value(value)
        name = m.group(1) if m.group(1) is not None else jsonio.loads(m.group(2))
        return self.value({name: value})[name]

    def _free_text(self, s: str, counts: dict[str, int]) -> str:
        """A line of free text (stderr, an invalid frame): the value patterns, then the rule the argv
        gets (a secret-named flag or ``name: value`` / ``name=value`` pair has its value replaced), so a
        server that prints ``--api-key=V`` or ``password: V`` is redacted as its command line is."""
        s = self._text(s, counts)
        if ("=" not in s and ":" not in s and " -" not in s and not s.startswith("-")) or s == self.marker:
            return s
        marker = self.marker
        n = 0

        def repl(m: re.Match[str]) -> str:
            nonlocal n
            value = m.group("value")
            if marker in value or not self._secret_key(m.group("name")):
                return m.group(0)
            if m.string[m.end("value"):m.end("value") + 1 + len(marker)].lstrip(" \t").startswith(marker):
                return m.group(0)  # ``Authorization: Bearer [REDACTED]``: a pattern took the secret already
            n += 1
            start, end = m.start("value") - m.start(0), m.end("value") - m.start(0)
            return m.group(0)[:start] + marker + m.group(0)[end:]

        s = _TEXT_PAIR.sub(repl, _TEXT_FLAG.sub(repl, s))
        if n:
            counts["key"] = counts.get("key", 0) + n
        return s

    def text(self, text: str) -> str:
        """A free text (stderr, an invalid frame) with the value patterns and the key rule applied (JSON in
        it nested deeper than the interpreter's limit allows is walked again with room, see :meth:`value`)."""
        counts: dict[str, int] = {}
        try:
            new = self._free_text(text, counts)
        except RecursionError:
            counts = {}
            with recursion_room(per_level=3):
                new = self._free_text(text, counts)
        self._add(counts)
        return new

    def command(self, argv: list[str]) -> list[str]:
        """The server's argv: ``--token X``, ``--api-key=X``, ``GITHUB_TOKEN=X`` and patterns in any arg (an
        arg that is JSON nested deeper than the interpreter's limit allows is walked again with room)."""
        counts: dict[str, int] = {}
        try:
            new = self._argv(list(argv), counts)
        except RecursionError:
            counts = {}
            with recursion_room(per_level=3):
                new = self._argv(list(argv), counts)
        self._add(counts)
        return new

    def message(self, msg: Any) -> Any:
        """A redacted copy of a :class:`~mcpreel.model.Message` (the original is left as it was); a payload
        nested deeper than the interpreter's limit allows is walked again with room (see :meth:`value`)."""
        counts: dict[str, int] = {}
        try:
            new = self._message(msg, counts)
        except RecursionError:
            counts = {}
            with recursion_room(per_level=3):
                new = self._message(msg, counts)
        self._add(counts)
        return new

    def _message(self, msg: Any, counts: dict[str, int]) -> Any:
        from mcpreel.model import Kind

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
            text = self._free_text(msg.text, counts)
            if text != msg.text:
                changes["text"] = text
        if msg.extra:
            extra = self._value(msg.extra, counts)
            if extra is not msg.extra:
                changes["extra"] = extra
        return replace(msg, **changes) if changes else msg

    def info(self, info: Any) -> Any:
        """A redacted copy of a :class:`~mcpreel.model.SessionInfo` (command, URL, headers, metadata); its
        metadata nested deeper than the interpreter's limit allows is walked again with room (see :meth:`value`)."""
        try:
            return self._info(info)
        except RecursionError:
            with recursion_room(per_level=3):
                return self._info(info)

    def _info(self, info: Any) -> Any:
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
        if info.headers and isinstance(info.headers, dict):
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

    def session(self, session: Any, *, payloads: bool = True) -> Any:
        """The session redacted lazily: a streaming session stays streaming (its header at once).

        ``payloads=False`` (what a view that shows no message body needs: ``inspect`` without ``-v``) leaves
        the JSON-RPC payloads of records without transport context as they are and redacts the rest (the
        header, stderr and invalid lines, transport context), so such a view pays nothing per message.
        """
        from mcpreel.model import Kind, Session

        if not payloads:
            info = self.info(session.info)

            def texts_only() -> Iterator[Any]:
                for msg in session:
                    if msg.kind != Kind.MESSAGE or msg.original is not None:
                        yield self.message(msg)
                    elif msg.ctx:  # an HTTP record: its headers and URL, not its payload
                        try:
                            ctx = self._ctx(msg.ctx, {})
                        except RecursionError:  # a context nested to the readers' limit (see value)
                            with recursion_room(per_level=3):
                                ctx = self._ctx(msg.ctx, {})
                        yield msg if ctx is msg.ctx else replace(msg, ctx=ctx)
                    else:
                        yield msg

            if session.is_streaming:
                return Session.streaming(info, texts_only)
            return Session(info, list(texts_only()))
        info = self.info(session.info)
        self._counted = 0

        def counted_once() -> Iterator[Any]:
            # a writer may read the session more than once (a trace writer reads it twice); redaction is
            # deterministic, so the n-th message replaces the same values on every pass: count it on the
            # first pass that reaches it only, and the counts are the model's, whatever the writer
            for i, msg in enumerate(session):
                if i < self._counted:
                    yield self._message(msg, {})
                else:
                    self._counted = i + 1
                    yield self.message(msg)

        if session.is_streaming:
            return Session.streaming(info, counted_once)
        return Session(info, list(counted_once()))


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
