"""A long recording served from disk: a compact index instead of every message as Python objects.

``mcpreel serve`` of a million-message reel used to hold every message twice (the session's records and
the cassette's exchanges). For a line-based recording (a reel or a JSON-RPC log) of one client session,
:func:`load_compact` reads the file once and keeps only numbers:

- where every 32nd line starts (a line is read back by skipping at most 31 from there);
- per recorded client request: the line of its request and how many lines later its answer stands (two
  4-byte arrays; the member of a batch, and an answer more than 16M lines away, in a dictionary for the
  few that need it); the server messages said before or after it, as (line, member) references, only
  for the requests that have any;
- the match keys: a 40-bit hash of (method, canonical params) and the request's position packed into one
  8-byte integer, sorted within runs of 65,536 requests taken in recorded order, so identical requests
  form one stretch per run (found by bisection in each run; the runs are never merged, which would hold
  two copies of the keys at once: the load's peak memory);
- per method, the positions of its first 500 requests (the candidates a miss is explained from: the
  matcher looks at no more) and its first few subjects.

A matched exchange is read back from disk (one seek and one line parsed per message) and built as an
:class:`~mcpreel.operations.cassette.Turn`, so the engine and the matcher answer exactly as from memory. Two
keys that share a hash are told apart when read back: a request whose key is not the one asked for is
not served for it. The client's notifications (with what the server said after them) and the first
``initialize`` and ``server/discover`` exchanges are kept as objects: they are few.

Not compacted (served from memory as before): other formats (documents such as qai or HAR hold the
whole file anyway), a file with several client sessions (a merged reel, several HTTP sessions or
conversations: each client is served from its own), ``--on-miss forward`` (which adds to the recording),
and more than 8,388,608 requests. Times are not read back: the mock answers at once, whatever was
recorded.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from mcpreel._infra import jsonio
from mcpreel.mock.matcher import _CLOSEST_SCAN, MATCH_MODES, KeyedLookup, match_key
from mcpreel.model import SCOPE_KEY, Session
from mcpreel.operations.cassette import ClientItem, Turn
from mcpreel.operations.facts import progress_token, subject
from mcpreel.operations.walk import Walker

__all__ = ["CompactIndex", "CompactPlayback", "load_compact"]

_POS_BITS = 23
_POS_MASK = (1 << _POS_BITS) - 1
_HASH_MASK = (1 << 40) - 1  # with the 23 bits of a position: a non-negative 63-bit integer
_MEMBER_BITS = 16
_SUBJECTS_KEPT = 13  # the miss message lists 12 and says when there are more
_CHUNK = 65536  # keys sorted per run of this many requests (bounds the sort's temporary memory)
_FORMATS = ("reel", "jsonrpc")
_EVERY = 32  # lines between two kept line offsets
_FAR = 1  # an answer stored in CompactPlayback.responses_far (0 lines after and member 1 cannot happen)
_MAX_LINE = 0xFFFFFFFF
_NEAR = 1 << 24  # an answer at most this many lines after its request is kept in the 4-byte array


#: the payloads read back lately, kept for the next requests that match them: at most this many bytes of
#: their lines, and this many payloads
_RECENT_BYTES = 64 << 20
_RECENT_COUNT = 256


def _ref(line: int, member: int) -> int:
    return (line << _MEMBER_BITS) | member


class CompactPlayback:
    """The client side of one recorded session, on disk behind an index (see the module docstring): the
    :class:`~mcpreel.operations.cassette.Playback` of a recording too long to hold."""

    def __init__(self, path: str | Path, fmt: str, mode: str):
        self.path = Path(path)
        self.format = fmt
        self.mode = mode
        self.line_starts = array("q")
        self.requests = array("I")  # per exchange: the line of its request
        self.request_member: dict[int, int] = {}  # the member of a batch, when not the first
        # per exchange: its answer as (lines after the request << 8 | member), 0 when none, _FAR when
        # it stands too far (then in ``responses_far`` as a _ref)
        self.responses = array("I")
        self.responses_far: dict[int, int] = {}
        self.before: dict[int, list[int]] = {}
        self.after: dict[int, list[int]] = {}
        self.keys: list[array[int]] = []  # runs in recorded order, each sorted: (hash << _POS_BITS) | position
        self.by_method: dict[str, array[int]] = {}  # the first _CLOSEST_SCAN positions of each method
        self.subjects_of: dict[str, list[str]] = {}
        self.items: list[ClientItem] = []  # the client's notifications (the requests are in the arrays)
        # per method, the keys and positions of requests whose params hold keyed redaction markers (few)
        self.keyed: dict[str, list[tuple[tuple[str, bytes], int]]] = {}
        self.has_initialize = False
        self.first_initialize: Turn | None = None
        self.first_discover: Turn | None = None
        self._fh: Any = None
        self._recent: OrderedDict[int, tuple[dict[str, Any], int]] = OrderedDict()
        self._recent_bytes = 0

    def __len__(self) -> int:
        return len(self.requests)

    # -- reading back ------------------------------------------------------------------------------
    def _payload(self, ref: int) -> dict[str, Any]:
        line, member = ref >> _MEMBER_BITS, ref & ((1 << _MEMBER_BITS) - 1)
        if self._fh is None:
            self._fh = open(self.path, "rb")  # kept open while serving; closed by close()
        fh = self._fh
        cached = self._recent.get(ref)
        if cached is not None:
            self._recent.move_to_end(ref)
            return cached[0]
        fh.seek(self.line_starts[(line - 1) // _EVERY])
        for _ in range((line - 1) % _EVERY):
            fh.readline()
        text = fh.readline()
        obj = jsonio.loads(text)
        raw = obj.get("raw") if self.format == "reel" else obj
        members = [raw] if isinstance(raw, dict) else [m for m in raw if isinstance(m, dict)]
        payload: dict[str, Any] = members[member]
        # many clients asking for the same (big) answer at once share one parsed copy, as they do when
        # the cassette is in memory; the recent payloads are bounded by their lines' size
        size = len(text)
        if size <= _RECENT_BYTES:
            self._recent[ref] = (payload, size)
            self._recent_bytes += size
            while self._recent_bytes > _RECENT_BYTES or len(self._recent) > _RECENT_COUNT:
                _, (_, gone) = self._recent.popitem(last=False)
                self._recent_bytes -= gone
        return payload

    def exchange(self, position: int) -> Turn:
        """The recorded exchange at ``position`` (0-based among the client's requests), read from disk."""
        line = self.requests[position]
        request = self._payload(_ref(line, self.request_member.get(position, 0)))
        ex = Turn(request, request, position, line, unit="line")
        answer = self.responses[position]
        if answer == _FAR:
            ex.response = self._payload(self.responses_far[position])
        elif answer:
            ex.response = self._payload(_ref(line + (answer >> 8), answer & 0xFF))
        ex.before = [self._payload(r) for r in self.before.get(position, ())]
        ex.after = [self._payload(r) for r in self.after.get(position, ())]
        return ex

    def close(self) -> None:
        """Close the recording file the index reads answers back from."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def index(self) -> CompactIndex:
        """The match index over this cassette (the questions a :class:`~mcpreel.mock.matcher.Matcher` asks)."""
        return CompactIndex(self)


class _Rows(Sequence[Turn]):
    """Exchanges at some positions, read from disk when asked for."""

    def __init__(self, cassette: CompactPlayback, positions: Sequence[int]):
        self.cassette = cassette
        self.positions = positions

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, i: int) -> Turn: ...
    @overload
    def __getitem__(self, i: slice) -> list[Turn]: ...
    def __getitem__(self, i: int | slice) -> Turn | list[Turn]:
        if isinstance(i, slice):
            return [self.cassette.exchange(p) for p in self.positions[i]]
        return self.cassette.exchange(self.positions[i])

    def __iter__(self) -> Iterator[Turn]:
        for p in self.positions:
            yield self.cassette.exchange(p)


class _Bucket(Sequence[Turn]):
    """The run of sorted keys that share a request's hash: the recorded requests with its key, in order.

    A request read back whose key is not the one asked for shares the hash only: the run is then
    filtered once, reading each of its requests.
    """

    def __init__(self, cassette: CompactPlayback, key: tuple[str, bytes], positions: Sequence[int]):
        self.cassette, self.key = cassette, key
        self.positions: Sequence[int] = positions

    def __len__(self) -> int:
        return len(self.positions)

    @overload
    def __getitem__(self, i: int) -> Turn: ...
    @overload
    def __getitem__(self, i: slice) -> list[Turn]: ...
    def __getitem__(self, i: int | slice) -> Turn | list[Turn]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        ex = self.cassette.exchange(self.positions[i])
        if match_key(ex.request, self.cassette.mode) == self.key:
            return ex
        self.positions = [p for p in self.positions
                          if match_key(self.cassette.exchange(p).request, self.cassette.mode) == self.key]
        if not self.positions:
            raise IndexError(i)
        return self.cassette.exchange(self.positions[i])


class _Positions(Sequence[int]):
    def __init__(self, keys: array[int], lo: int, hi: int):
        self.keys, self.lo, self.hi = keys, lo, hi

    def __len__(self) -> int:
        return self.hi - self.lo

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> list[int]: ...
    def __getitem__(self, i: int | slice) -> int | list[int]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self.keys[self.lo + i] & _POS_MASK


class _Keyed(Mapping[str, list[tuple[tuple[str, bytes], Turn]]]):
    """Per method, the recorded requests with keyed redaction markers, read back when asked for."""

    def __init__(self, cassette: CompactPlayback):
        self.cassette = cassette

    def __getitem__(self, method: str) -> list[tuple[tuple[str, bytes], Turn]]:
        return [(key, self.cassette.exchange(p)) for key, p in self.cassette.keyed[method]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.cassette.keyed)

    def __len__(self) -> int:
        return len(self.cassette.keyed)

    def __contains__(self, method: object) -> bool:
        return method in self.cassette.keyed


class CompactIndex(KeyedLookup):
    """A :class:`~mcpreel.mock.matcher.RecordingIndex` over a :class:`CompactPlayback` (same questions)."""

    def __init__(self, cassette: CompactPlayback):
        self.cassette = cassette
        self.mode = cassette.mode
        self.exchanges: Sequence[Turn] = _Rows(cassette, range(len(cassette)))
        self.keyed = _Keyed(cassette)

    def bucket(self, key: tuple[str, bytes]) -> Sequence[Turn] | None:
        if self.mode == "sequential":
            return None
        h = hash(key) & _HASH_MASK
        found = []
        for run in self.cassette.keys:  # in recorded order: the positions come out in that order
            lo = bisect_left(run, h << _POS_BITS)
            hi = bisect_left(run, (h + 1) << _POS_BITS, lo)
            if hi > lo:
                found.append(_Positions(run, lo, hi))
        if not found:
            return None
        positions: Sequence[int] = found[0] if len(found) == 1 else [p for part in found for p in part]
        bucket = _Bucket(self.cassette, key, positions)
        try:
            bucket[0]  # read the first back: a hash shared with other keys filters the run here
        except IndexError:
            return None
        return bucket

    def candidates(self, method: str) -> Sequence[Turn] | None:
        """The first recorded exchanges of this method (as many as a miss is explained from)."""
        positions = self.cassette.by_method.get(method)
        return _Rows(self.cassette, positions) if positions is not None else None

    def has_method(self, method: str) -> bool:
        return method in self.cassette.by_method

    def methods(self) -> list[str]:
        return list(self.cassette.by_method)

    def subjects(self, method: str) -> list[str]:
        return list(self.cassette.subjects_of.get(method, ()))


def _line_starts(path: Path) -> array[int]:
    """Where lines 1, 1 + _EVERY, 1 + 2 * _EVERY ... of the file start (a BOM is not part of line 1)."""
    starts = array("q")
    with open(path, "rb") as fh:
        head = fh.read(3)
        offset = 3 if head == b"\xef\xbb\xbf" else 0
        fh.seek(offset)
        starts.append(offset)
        line = 1  # the line that starts after the next newline, minus one
        while True:
            block = fh.read(1 << 20)
            if not block:
                break
            find = block.find
            i = find(b"\n")
            while i >= 0:
                if line % _EVERY == 0:
                    starts.append(offset + i + 1)
                line += 1
                i = find(b"\n", i + 1)
            offset += len(block)
    return starts


class _Waiting:
    __slots__ = ("position", "token", "exchange_id")

    def __init__(self, position: int, token: Any, exchange_id: Any):
        self.position, self.token, self.exchange_id = position, token, exchange_id


#: requests of operations that live across messages: their recordings are served from memory
_LIVE_OPERATIONS = frozenset({"subscriptions/listen", "tasks/get", "tasks/result", "tasks/cancel", "tasks/update"})


def load_compact(path: str | Path, session: Session, mode: str) -> CompactPlayback | None:
    """The recording in ``path`` (already opened as ``session``) behind a compact index, or None when it
    is not one that is compacted (see the module docstring) and must be served from memory."""
    fmt = session.info.source_format
    if fmt not in _FORMATS or not session.is_streaming or mode not in MATCH_MODES:
        return None
    from mcpreel.operations.sessions import _direct_http_session

    cas = CompactPlayback(path, fmt, mode)
    keyed = mode != "sequential"
    chunk = array("q")
    # the requests still waiting, by the walk's number of their exchange (the one reading pairs each
    # answer, as build() does: within the session, a reused pending id first in, first out); insertion
    # order = request order, which _owner reads
    waiting: dict[int, _Waiting] = {}
    walk = Walker(pairing_only=True).feed
    last_note: ClientItem | None = None
    last_position: int | None = None  # the last client item, when it was a request
    http_ids: set[str] = set()
    for index, rec in enumerate(session):
        steps = walk(index, rec)
        if rec.kind != "message" or rec.dropped:
            continue
        if rec.extra and SCOPE_KEY in rec.extra:
            return None  # a merged file: one session per source
        if rec.ctx is not None:
            http = _direct_http_session(rec)
            if http is not None:
                http_ids.add(http)
                if len(http_ids) > 1:
                    return None
        raw = rec.raw
        members = [raw] if type(raw) is dict else rec.members()
        line = rec.source or 0
        for step in steps:
            payload = step.member
            if payload is None or step.kind == "record":
                continue
            k = 0 if len(members) == 1 else _member_of(members, payload)  # (a lone object: no call)
            ref = _ref(line, k)
            is_request = "method" in payload and "id" in payload
            is_note = "method" in payload and "id" not in payload
            if rec.dir == "in":
                if is_request:
                    position = len(cas.requests)
                    if position > _POS_MASK:
                        return None
                    method = payload["method"] if isinstance(payload["method"], str) else ""
                    if method in ("initialize", "server/discover") and position > 0:
                        return None  # a conversation starts after requests: several, each served from its own
                    if method in _LIVE_OPERATIONS:
                        return None  # tasks and listen streams are served from memory (mock.live_operations)
                    if line > _MAX_LINE:
                        return None
                    cas.requests.append(line)
                    if k:
                        cas.request_member[position] = k
                    cas.responses.append(0)
                    positions = cas.by_method.get(method)
                    if positions is None:
                        positions = cas.by_method[method] = array("i")
                    if len(positions) < _CLOSEST_SCAN:
                        positions.append(position)
                    named = subject(payload)
                    if named is not None:
                        kept = cas.subjects_of.setdefault(method, [])
                        if len(kept) < _SUBJECTS_KEPT and named not in kept:
                            kept.append(named)
                    if keyed:
                        key = match_key(payload, mode)
                        chunk.append(((hash(key) & _HASH_MASK) << _POS_BITS) | position)
                        if b"[REDACTED:" in key[1]:
                            cas.keyed.setdefault(method, []).append((key, position))
                        if len(chunk) >= _CHUNK:
                            cas.keys.append(array("q", sorted(chunk)))
                            chunk = array("q")
                    ctx = rec.ctx
                    assert step.exchange is not None
                    waiting[step.exchange.n] = _Waiting(
                        position, progress_token(payload), ctx.get("exchange") if ctx else None)
                    last_note, last_position = None, position
                    if method == "initialize":
                        cas.has_initialize = True
                elif is_note:
                    last_note, last_position = ClientItem(payload, source=line), None
                    cas.items.append(last_note)
            elif rec.dir == "out":
                if not is_request and not is_note:
                    if "result" in payload or "error" in payload:
                        asked = step.exchange if step.kind == "response" else None
                        answered = waiting.pop(asked.n, None) if asked is not None else None
                        if answered is not None:
                            delta = line - cas.requests[answered.position]
                            if 0 < delta < _NEAR and k < 256:
                                cas.responses[answered.position] = (delta << 8) | k
                            else:
                                cas.responses[answered.position] = _FAR
                                cas.responses_far[answered.position] = ref
                    continue
                owner = _owner(payload, rec.ctx, waiting)
                if owner is not None:
                    cas.before.setdefault(owner, []).append(ref)
                elif last_position is not None:
                    cas.after.setdefault(last_position, []).append(ref)
                elif last_note is not None:
                    last_note.after.append(payload)
    if chunk:
        cas.keys.append(array("q", sorted(chunk)))
    cas.line_starts = _line_starts(cas.path)
    for method in ("initialize", "server/discover"):
        for position in cas.by_method.get(method, ()):
            ex = cas.exchange(position)
            if isinstance((ex.response or {}).get("result"), dict):
                if method == "initialize":
                    cas.first_initialize = ex
                else:
                    cas.first_discover = ex
                break
    return cas


def _member_of(members: Sequence[dict[str, Any]], payload: dict[str, Any]) -> int:
    """Where ``payload`` (a member the walk stepped through) stands in its record's batch (0: a lone object)."""
    if len(members) == 1:
        return 0
    for k, member in enumerate(members):
        if member is payload:
            return k
    return 0


def _owner(message: dict[str, Any], ctx: dict[str, Any] | None, waiting: dict[int, _Waiting]) -> int | None:
    """:func:`mcpreel.operations.walk.Walker._owner` over the waiting requests' numbers (the same placement)."""
    if not waiting:
        return None
    if message.get("method") == "notifications/progress":
        params = message.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        if token is not None:
            for w in reversed(waiting.values()):
                if w.token == token:
                    return w.position
    if ctx:
        exchange_id = ctx.get("exchange")
        if exchange_id is not None:
            for w in reversed(waiting.values()):
                if w.exchange_id == exchange_id:
                    return w.position
        if ctx.get("method") == "GET":
            return None
    return next(reversed(waiting.values())).position
