"""Finding the recorded exchange that answers an incoming request.

Three modes (``--match``):

- ``method-params`` (default): method + canonical params (volatile ``_meta`` removed); ``initialize``
  on its method alone, since every client names itself differently;
- ``strict``: method + the exact params, ``_meta`` included;
- ``sequential``: recorded order, whatever the params; the next recorded request must have the
  incoming method.

A cassette redacted with keyed markers (``[REDACTED:rule:1a2b3c4d]``, :mod:`mcpreel.redact.keys`) still
answers a live request that carries the secret: when no recorded params equal the request's, a recorded
request of the same method whose strings hold keyed markers matches if everything else is equal and the
HMAC of what stands in the live request where each marker stands is the marker's (with the key of
``$MCPREEL_REDACT_KEY`` or ``.mcpreel/redact.key``, read once). A different secret does not match.

Identical requests are answered in recorded order; when a key's answers run out the last one
repeats, unless ``repeat=False``. A miss is a :class:`Miss` that says why, naming the closest
recorded request and where its params differ, and which JSON-RPC error code answers it (``-32601``
when the method was never recorded, ``-32602`` when it was with other params).

A miss is shared (the client's error, ``serve``'s stderr, pytest's output, ``--report``), so it never
shows a live secret: where the recorded request holds a redaction marker, the received value is replaced
by what the key says of it (:data:`DIFFERS`, :data:`MATCHES`, or that it could not be compared), a
keyed field whose live value has the marker's HMAC is no difference at all, and every other received
value a miss shows goes through the default redaction (:class:`~mcpreel.redact.Redactor`).

A :class:`RecordingIndex` is built once per cassette; a :class:`Matcher` holds one connection's cursors.
The matcher asks its index through :meth:`RecordingIndex.bucket`, :meth:`~RecordingIndex.candidates`,
:meth:`~RecordingIndex.methods` and :attr:`~RecordingIndex.exchanges` only, so an index that keeps the
recording on disk (:class:`mcpreel.mock.compact.CompactIndex`, for ``serve`` of a long reel) serves it
the same way.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.compare.jsondiff import Difference, diff, short
from mcpreel.compare.normalize import canonical_params, strip_volatile_meta
from mcpreel.errors import InputError, UsageError
from mcpreel.operations.cassette import Turn
from mcpreel.operations.facts import subject
from mcpreel.redact.keys import KEYED_MARKER, find_key, fingerprint

__all__ = ["DIFFERS", "MATCHES", "MATCH_MODES", "Matcher", "Miss", "RecordingIndex", "METHOD_NOT_FOUND",
           "INVALID_PARAMS", "SecretDifference"]

MATCH_MODES = ("method-params", "sequential", "strict")
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
_BY_METHOD_ALONE = frozenset({"initialize", "server/discover"})
_CLOSEST_SCAN = 500  # candidates compared when explaining a miss

#: what a miss says in place of a received value where the recording holds a redaction marker
DIFFERS = "differs from the recorded secret"
MATCHES = "matches the recorded secret"
_DIFFERS_AROUND = "differs from the recorded value, which holds a secret (the received value is not shown)"
_NO_KEY = "not compared with the recorded secret: no redaction key (the received value is not shown)"
_PLAIN = "differs from the recorded secret (redacted without a key: the received value is not shown)"


@dataclass(frozen=True, slots=True)
class SecretDifference(Difference):
    """A difference where the recording holds a redaction marker: the received value is never kept, only
    the verdict (``new`` stays None)."""

    verdict: str = DIFFERS

    def to_json(self) -> dict[str, Any]:
        """The difference as data, the received value given only as a verdict (a secret never goes into a report)."""
        return {"path": self.path, "kind": self.kind, "recorded": self.recorded, "received": self.verdict}

    def describe(self, width: int = 80) -> str:
        """One line for a miss message, saying whether the received secret matched without showing it."""
        return f"{self.path}: {short(self.recorded, width)} -> ({self.verdict})"


@dataclass
class Miss:
    """An incoming request the recording cannot answer, and why."""

    method: str
    code: int
    reason: str
    closest: Turn | None = None
    differences: list[Difference] = field(default_factory=list)
    #: the params of the request that missed, so whoever reports the miss can show what was asked
    #: (through :meth:`shown_params`, never as they are: they may carry a live secret)
    params: Any = None
    #: the key of keyed markers when one was found (for :meth:`shown_params`' verdicts)
    redact_key: bytes | None = field(default=None, repr=False, compare=False)

    def shown_params(self) -> Any:
        """:attr:`params` as a report may show them: where the closest recorded request holds a redaction
        marker, the received value becomes ``[matches the recorded secret]`` (or differs, or not
        compared); everything else goes through the default redaction."""
        if self.params is None:
            return None
        recorded = self.closest.request.get("params") if self.closest is not None else None
        return _veil(recorded, self.params, _redact_live(self.params), self.redact_key)

    def error(self, request_id: Any) -> dict[str, Any]:
        """The JSON-RPC error answer."""
        data: dict[str, Any] = {"mcpreel": "no recorded answer"}
        if self.closest is not None:
            data["closest"] = {"position": self.closest.position + 1, "line": self.closest.source,
                               "params": self.closest.request.get("params")}
            data["differences"] = [d.to_json() for d in self.differences[:20]]
        return {"jsonrpc": "2.0", "id": request_id,
                "error": {"code": self.code, "message": self.reason, "data": data}}


class KeyedLookup:
    """What both indexes (in memory, :class:`RecordingIndex`; on disk, the compact one) share: the match key
    of a live request, the key of keyed redaction markers, and the questions a :class:`Matcher` asks.

    The matcher speaks to this base only, so the compact index (:mod:`mcpreel.mock.compact`) builds on
    the matcher's module and the matcher never needs to know it exists."""

    mode: str
    #: the recorded exchanges, in recorded order
    exchanges: Sequence[Turn]
    #: per method, the recorded requests whose params hold keyed redaction markers
    keyed: Mapping[str, list[tuple[tuple[str, bytes], Turn]]]
    _redact_key: bytes | None | bool = False  # False: not looked for yet
    #: why the key file was refused (too open, unreadable, too short), for the miss to say
    key_problem: str | None = None

    @property
    def redact_key(self) -> bytes | None:
        """The key of keyed markers, looked for once, and only when a keyed recorded request needs it."""
        if self._redact_key is False:
            try:
                self._redact_key = find_key()
            except InputError as exc:  # an unusable key file: markers then match nothing, and the miss says why
                self._redact_key = None
                self.key_problem = str(exc)
        return self._redact_key if isinstance(self._redact_key, bytes) else None

    def key(self, request: dict[str, Any]) -> tuple[str, bytes]:
        """The live request's match key in this index's mode (see :func:`match_key`)."""
        return match_key(request, self.mode)

    def bucket(self, key: tuple[str, bytes]) -> Sequence[Turn] | None:
        """The recorded exchanges with this key, in recorded order."""
        raise NotImplementedError

    def candidates(self, method: str) -> Sequence[Turn] | None:
        """The recorded exchanges of this method a miss is explained from, in recorded order."""
        raise NotImplementedError

    def has_method(self, method: str) -> bool:
        """Whether the recording holds this method at all (a miss is then -32602, else -32601)."""
        raise NotImplementedError

    def methods(self) -> list[str]:
        """The recorded methods, in order of first appearance."""
        raise NotImplementedError

    def subjects(self, method: str) -> list[str]:
        """The tools (prompts, resources) this method named, in order of first appearance."""
        raise NotImplementedError


class RecordingIndex(KeyedLookup):
    """The lookup tables of one cassette's exchanges for one match mode (shared by connections)."""

    def __init__(self, exchanges: list[Turn], mode: str = "method-params"):
        if mode not in MATCH_MODES:
            raise UsageError(f"unknown match mode {mode!r} (known: {', '.join(MATCH_MODES)})")
        self.mode = mode
        self.exchanges: list[Turn] = exchanges
        self.by_key: dict[tuple[str, bytes], list[Turn]] = {}
        self.by_method: dict[str, list[Turn]] = {}
        #: per method, the recorded requests whose params hold keyed redaction markers
        self.keyed: dict[str, list[tuple[tuple[str, bytes], Turn]]] = {}
        for ex in exchanges:
            self.by_method.setdefault(ex.method, []).append(ex)
            if mode != "sequential":
                key = self.key(ex.request)
                self.by_key.setdefault(key, []).append(ex)
                if b"[REDACTED:" in key[1]:
                    self.keyed.setdefault(ex.method, []).append((key, ex))

    # -- what a matcher asks ------------------------------------------------------------------------
    def bucket(self, key: tuple[str, bytes]) -> Sequence[Turn] | None:
        """The recorded exchanges with this key, in recorded order."""
        return self.by_key.get(key)

    def candidates(self, method: str) -> Sequence[Turn] | None:
        """The recorded exchanges of this method, in recorded order (a miss looks at the first
        ``_CLOSEST_SCAN``; an index may hold no more)."""
        return self.by_method.get(method)

    def has_method(self, method: str) -> bool:
        return method in self.by_method

    def methods(self) -> list[str]:
        """The recorded methods, in order of first appearance."""
        return list(self.by_method)

    def subjects(self, method: str) -> list[str]:
        """The tools (prompts, resources) this method named, in order of first appearance."""
        return list(dict.fromkeys(c.subject for c in self.by_method.get(method, ()) if c.subject is not None))


def match_key(request: dict[str, Any], mode: str) -> tuple[str, bytes]:
    """What a request is matched on in ``mode``: its method, and its params as canonical bytes."""
    method = request.get("method")
    method = method if isinstance(method, str) else ""
    if method in _BY_METHOD_ALONE and mode == "method-params":
        return (method, b"")
    return (method, canonical_params(request.get("params"), strict=mode == "strict"))


#: the 2026-07-28 transport rules' errors: routing headers that disagree with the body, an unsupported version
_ERA_RULE_CODES = frozenset({-32020, -32022})


def _refused_by_era_rule(ex: Turn) -> bool:
    error = (ex.response or {}).get("error")
    return isinstance(error, dict) and error.get("code") in _ERA_RULE_CODES


def _used_key(key: tuple[str, bytes]) -> bytes:
    digest = hashlib.blake2b(key[1], digest_size=16)
    digest.update(key[0].encode("utf-8", "surrogatepass"))
    return digest.digest()


class Matcher:
    """One connection's view of a recording: cursors over the index."""

    def __init__(self, index: KeyedLookup, *, repeat: bool = True):
        self.index = index
        self.repeat = repeat
        #: how many answers of each bucket this connection used, by a 16-byte digest of the bucket's key
        #: (a key holds the request's whole canonical params: a million distinct calls would keep them all)
        self._used: dict[Any, int] = {}
        self._next = 0  # sequential mode: position of the next recorded request

    def match(self, request: dict[str, Any]) -> Turn | Miss:
        """The recorded exchange that answers ``request`` for this connection, or a :class:`Miss` saying why none
        does."""
        index = self.index
        method = request.get("method")
        method = method if isinstance(method, str) else ""
        if index.mode == "sequential":
            return self._sequential(request, method)
        key = index.key(request)
        bucket = index.bucket(key)
        if bucket:
            found = self._take(key, bucket)
            if found is not None:
                return found
            times = "once" if len(bucket) == 1 else f"{len(bucket)} times"
            return Miss(method, INVALID_PARAMS,
                        f"the recording answered this {method} {times} and every answer was used (--no-repeat)",
                        bucket[-1], redact_key=index.redact_key if method in index.keyed else None)
        if method in index.keyed:
            found = self._keyed(request, method)
            if found is not None:
                return found
        return self._explain(request, method)

    def _keyed(self, request: dict[str, Any], method: str) -> Turn | None:
        index = self.index
        secret_key = index.redact_key
        if secret_key is None:
            return None
        strict = index.mode == "strict"
        mine = request.get("params") or {}
        mine = mine if strict else strip_volatile_meta(mine)
        for key, ex in index.keyed[method]:
            theirs = ex.request.get("params") or {}
            theirs = theirs if strict else strip_volatile_meta(theirs)
            if not _unify(theirs, mine, secret_key):
                continue
            bucket = index.bucket(key)
            if bucket:
                found = self._take(key, bucket)
                if found is not None:
                    return found
        return None

    def _take(self, key: tuple[str, bytes], bucket: Sequence[Turn]) -> Turn | None:
        """The bucket's next unused answer (its last again when repeats are allowed), or None when used up.

        A recorded refusal by the 2026 era's transport rules (``-32020`` routing headers, ``-32022`` version)
        answered a request the mock now refuses itself before matching (:mod:`mcpreel.mock.server`), so it
        is passed over while a later answer of the same request remains: otherwise the requests that pass
        the rules would be answered with the refusals of those that did not."""
        used = _used_key(key)
        n = self._used.get(used, 0)
        while n < len(bucket) - 1 and _refused_by_era_rule(bucket[n]):
            n += 1
        if n < len(bucket):
            self._used[used] = n + 1
            return bucket[n]
        return bucket[-1] if self.repeat else None

    def _sequential(self, request: dict[str, Any], method: str) -> Turn | Miss:
        exchanges = self.index.exchanges
        if self._next < len(exchanges):
            ex = exchanges[self._next]
            if ex.method == method:
                self._next += 1
                return ex
            return Miss(method, METHOD_NOT_FOUND if not self.index.has_method(method) else INVALID_PARAMS,
                        f"sequential match: the next recorded request is {ex.label()}, not {method or '(none)'}", ex,
                        redact_key=self.index.redact_key)  # for what shown_params says at a marker
        if self.repeat and exchanges and exchanges[-1].method == method:
            return exchanges[-1]
        return Miss(method, METHOD_NOT_FOUND, f"sequential match: all {len(exchanges)} recorded requests were used")

    def _explain(self, request: dict[str, Any], method: str) -> Miss:
        candidates = self.index.candidates(method)
        if not candidates:
            known = ", ".join(self.index.methods()[:12]) or "nothing"
            return Miss(method, METHOD_NOT_FOUND, f"no recorded answer for method {method!r} (the recording has: {known})")
        strict = self.index.mode == "strict"
        mine = request.get("params") or {}
        mine = mine if strict else strip_volatile_meta(mine)
        named = subject(request)
        key = self.index.redact_key if method in self.index.keyed else None
        # closest: a request naming the same tool (prompt, resource) first, then the fewest differences
        best: tuple[tuple[bool, int], Turn, list[Difference]] | None = None
        for ex in candidates[:_CLOSEST_SCAN]:
            theirs = ex.request.get("params") or {}
            theirs = theirs if strict else strip_volatile_meta(theirs)
            found = diff(theirs, mine, "$.params", limit=50)
            if key is not None:  # a keyed field whose live value has the marker's HMAC did match
                found = [d for d in found if not (d.kind == "changed" and _verdict(d.recorded, d.new, key) == MATCHES)]
            rank = (ex.subject != named, len(found))
            if best is None or rank < best[0]:
                best = (rank, ex, found)
        assert best is not None
        (other_subject, _), ex, found = best
        found = [_shown(d, key) for d in found]
        shown = "; ".join(d.describe(40) for d in found[:3])
        more = f" (+{len(found) - 3} more)" if len(found) > 3 else ""
        head = f"no recorded {method} matches these params"
        if other_subject and named is not None:
            subjects = self.index.subjects(method)
            listed = ", ".join(subjects[:12]) + (", …" if len(subjects) > 12 else "")
            head = f"no recorded {method} of {named!r} (the recording has {method} of: {listed or 'nothing named'})"
        if found:
            reason = f"{head}; closest is {ex.label()}, which differs at {shown}{more} (recorded -> received)"
        else:  # the same request, its secrets included: only its used-up answers (--no-repeat) leave it here
            reason = f"{head}; closest is {ex.label()}, the same request (its secrets match), whose answers were all used"
        if method in self.index.keyed and self.index.redact_key is None:
            problem = self.index.key_problem
            reason += (f"; the recording holds keyed redaction markers but the key was refused: {problem}" if problem
                       else "; the recording holds keyed redaction markers but no key was found "
                            "($MCPREEL_REDACT_KEY or .mcpreel/redact.key)")
        return Miss(method, INVALID_PARAMS, reason, ex, found, redact_key=key)


def _holds_marker(value: Any) -> bool:
    """True when a recorded value (or anything inside it) holds a redaction marker, plain or keyed."""
    if isinstance(value, str):
        return "[REDACTED" in value
    if isinstance(value, dict):
        return any(_holds_marker(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_marker(v) for v in value)
    return False


def _verdict(recorded: Any, live: Any, key: bytes | None) -> str | None:
    """What a miss may say of ``live`` where ``recorded`` holds a redaction marker; None where it holds none
    (the received value may then be shown, redacted the default way)."""
    if not _holds_marker(recorded):
        return None
    if not KEYED_MARKER.search(recorded if isinstance(recorded, str) else jsonio.dumps_str(recorded)):
        return _PLAIN
    if key is None:
        return _NO_KEY
    if _unify(recorded, live, key):
        return MATCHES
    if isinstance(recorded, str) and (KEYED_MARKER.fullmatch(recorded) is not None or (
            isinstance(live, str) and _around_markers(recorded, live)[1] is not None)):
        return DIFFERS  # the whole value is the secret, or the text around the secret is the same
    return _DIFFERS_AROUND


@functools.cache
def _display_redactor() -> Any:
    """One default redactor for what misses show (made on the first miss that shows a value; thread-safe)."""
    from mcpreel.redact.engine import Redactor

    return Redactor()


def _redact_live(value: Any, path: str | None = None) -> Any:
    """A received value as a miss shows it: through the default redaction (keys, value patterns; at
    ``path``, its last member's name counts for the key rule)."""
    redactor = _display_redactor()
    return redactor.value(value) if path is None else redactor.value_at(path, value)


def _shown(d: Difference, key: bytes | None) -> Difference:
    """A difference as a miss shows it: no received value where the recording holds a marker, and the
    default redaction over the others."""
    if d.kind == "removed":
        return d
    verdict = _verdict(d.recorded, d.new, key) if d.kind == "changed" else None
    if verdict is not None:
        return SecretDifference(d.path, d.kind, d.recorded, None, verdict)
    return Difference(d.path, d.kind, d.recorded, _redact_live(d.new, d.path))


def _veil(recorded: Any, live: Any, shown: Any, key: bytes | None) -> Any:
    """``shown`` (``live`` redacted the default way) with the value at each place ``recorded`` holds a marker
    replaced by ``[verdict]`` (what the key says of ``live`` there)."""
    if isinstance(recorded, dict) and isinstance(live, dict) and isinstance(shown, dict) and shown.keys() == live.keys():
        return {k: _veil(recorded[k], v, shown[k], key) if k in recorded else shown[k] for k, v in live.items()}
    if (isinstance(recorded, list) and isinstance(live, list) and isinstance(shown, list)
            and len(recorded) == len(live) == len(shown)):
        return [_veil(a, b, c, key) for a, b, c in zip(recorded, live, shown, strict=True)]
    verdict = _verdict(recorded, live, key)
    return shown if verdict is None else f"[{verdict}]"


def _same_secret(key: bytes, marker: re.Match[str], live: Any) -> bool:
    return live is not None and fingerprint(key, live) == marker.group(2)


def _around_markers(recorded: str, live: str) -> tuple[list[re.Match[str]], re.Match[str] | None]:
    """The keyed markers of ``recorded``, and ``live`` matched against it with each marker standing for any
    text (None when the text around the markers differs)."""
    markers = list(KEYED_MARKER.finditer(recorded))
    parts, pos = [], 0
    for m in markers:
        parts.append(re.escape(recorded[pos:m.start()]) + "(.+?)")
        pos = m.end()
    parts.append(re.escape(recorded[pos:]))
    return markers, re.fullmatch("".join(parts), live, re.DOTALL)


def _unify(recorded: Any, live: Any, key: bytes) -> bool:
    """True when ``live`` equals ``recorded`` but where a keyed marker stands, whose secret's HMAC it matches."""
    if isinstance(recorded, str):
        if "[REDACTED:" not in recorded:
            return isinstance(live, str) and recorded == live
        whole = KEYED_MARKER.fullmatch(recorded)
        if whole is not None:
            return _same_secret(key, whole, live)
        if not isinstance(live, str):
            return False
        if recorded.lstrip()[:1] in ("{", "["):  # JSON carried as text, redacted inside
            try:
                inner_rec, inner_live = jsonio.loads(recorded), jsonio.loads(live)
            except (ValueError, UnicodeDecodeError):
                pass
            else:
                return _unify(inner_rec, inner_live, key)
        markers, got = _around_markers(recorded, live)
        return got is not None and all(fingerprint(key, got.group(i + 1)) == m.group(2)
                                       for i, m in enumerate(markers))
    if isinstance(recorded, dict):
        return (isinstance(live, dict) and recorded.keys() == live.keys()
                and all(_unify(v, live[k], key) for k, v in recorded.items()))
    if isinstance(recorded, list):
        return (isinstance(live, list) and len(recorded) == len(live)
                and all(_unify(a, b, key) for a, b in zip(recorded, live, strict=True)))
    return type(recorded) is type(live) and recorded == live
