"""Noise, learned not guessed: what varies within one side of a replay is noise, not a change.

A server's answer can hold what differs on every run (a time, an id, an object address, a random pick).
Judging one live answer against one recording cannot tell that from a real change, so a replay can take
**samples** (:class:`Sampling`): ``--repeat K`` replays the recording K times against the target, and
``--baseline-command``/``--baseline-url`` K times against the old release too; the recording itself is
one more baseline sample. The runs replay the same recording, so a request is the same request in every
run: it is aligned by its client session and its number in the recording (:class:`SampleBook`).

Per request and per path of its differences (the paths a difference row shows):

- a path whose value is not the same in every sample of one side (between the target's runs, or between
  the baseline's runs and the recording) **varies**: it is noise;
- a path that is stable on each side and differs between the two is a **change**.

A request with a change is ``changed`` (only its changed paths are listed as differences); a request with
no change whose target answers differ from the recording only where paths vary is ``flaky`` (never a
failure unless ``--fail-on flaky``); a request that got no answer in some of the target's runs but did in
others is ``flaky`` too. Memory: a run whose results are streamed keeps, per request that differed, one
short digest per differing path and sample -- never the bodies (and, when learning, a few values of the
paths that differed).

What was learned (:class:`LearnedNoise`, ``--learn-noise FILE``) is written per server (its
``serverInfo`` name), method, tool and path: how often the value differed from the recording (``varied``
of ``samples`` live answers), one redacted example, and a ``mask`` (a regular expression) where only part
of a text varies -- a timestamp, an id, an address (:func:`derive_mask`) -- else the whole value is left
out. ``--noise FILE`` reads it back (:func:`load_noise`) into compare rules
(:mod:`mcpreel.compare.rules`) for the recording's server, so CI learns once on the release and gates each
change. The file (JSON, written 0600)::

    {"version": 1, "kind": "mcpreel noise",
     "noise": [{"server": "time-server", "method": "tools/call", "tool": "get_current_time",
                "path": "$.result.content[0].text.datetime", "varied": 3, "samples": 3,
                "mask": "\\\\d{4}-\\\\d{2}-...", "looks": "a timestamp", "example": "2026-11-28T12:00:01+00:00"}]}

``server`` (absent: any server), ``method``, ``tool`` (absent: any), ``path`` and ``mask`` (absent: the
whole value) are what is applied; ``varied``, ``samples``, ``looks`` and ``example`` are for people.
A bad file or entry is one :class:`~mcpreel.errors.InputError` line naming the file and the entry.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.compare.jsondiff import Difference
from mcpreel.compare.normalize import MASK
from mcpreel.compare.rules import CompareRule, CompareRules, suggest
from mcpreel.errors import InputError, UsageError

__all__ = ["NOISE_KIND", "LearnedNoise", "Noise", "NoiseEntry", "SampleBook", "Sampling", "derive_mask",
           "load_noise", "noise_document", "parse_noise", "server_name_of"]

#: the ``kind`` member of a noise file
NOISE_KIND = "mcpreel noise"
#: the versions of the noise file this mcpreel reads
_VERSIONS = (1,)
#: the members an entry of the noise file may have
_FIELDS = ("server", "method", "tool", "path", "mask", "varied", "samples", "looks", "example", "note")
#: the two sides of a sampled replay
TARGET, BASELINE = "target", "baseline"
#: the digest of "the same as the recording" at a path
_RECORDED = "="
#: the digest of a sample that got no answer
_NO_ANSWER = "!"
#: distinct live values kept per path while learning (enough to derive a mask, bounded)
_KEEP_VALUES = 6
#: characters of a redacted example kept in the noise file
_EXAMPLE_CHARS = 160
#: characters a text may have for a mask to be derived from its common prefix and suffix
_MAX_MASKED_TEXT = 100_000
#: the characters a varying token is made of (a time, an id, an address): where a derived mask widens to
_TOKEN = re.compile(r"[\w.:+\-]")
#: literal context a derived mask keeps on each side of the varying part
_CONTEXT = 16


@dataclass(frozen=True)
class Sampling:
    """How many samples a replay takes: ``repeat`` runs against the target; with a baseline
    (``baseline_command`` or ``baseline_url``; its transport and headers are the target's) as many runs
    against it; ``learn`` keeps the values of the paths that vary, to derive masks (``--learn-noise``)."""

    repeat: int = 1
    baseline_command: str | Sequence[str] | None = None
    baseline_url: str | None = None
    learn: bool = False

    @property
    def baseline(self) -> bool:
        """Whether a baseline server is replayed against too."""
        return self.baseline_command is not None or self.baseline_url is not None

    @property
    def needed(self) -> bool:
        """Whether the replay takes more than the one sample of a plain replay."""
        return self.repeat > 1 or self.baseline or self.learn


# -- aligning and merging samples -----------------------------------------------------------------


def _digest(value: Any) -> str:
    try:
        data = jsonio.dumps_canonical(value)
    except (TypeError, ValueError, RecursionError):
        data = repr(value).encode("utf-8", "replace")
    return hashlib.blake2b(data, digest_size=8).hexdigest()


@dataclass
class _Path:
    """What the samples of one request said at one path, while learning: the recorded value and a few
    distinct live values."""

    recorded: Any = None
    values: list[Any] = field(default_factory=list)
    digests: set[str] = field(default_factory=set)

    def keep(self, d: Difference) -> None:
        if d.kind != "added":
            self.recorded = d.recorded
        digest = _digest(d.new)
        if digest not in self.digests and len(self.values) < _KEEP_VALUES:
            self.digests.add(digest)
            self.values.append(d.new if d.kind != "removed" else None)


@dataclass
class _Track:
    """One request across the samples taken before the last: only the samples that were not the same as
    the recording (a dict of path -> digest of the live value, or no answer)."""

    method: str
    tool: str | None
    target: list[dict[str, str] | None] = field(default_factory=list)
    baseline: list[dict[str, str] | None] = field(default_factory=list)
    paths: dict[str, _Path] | None = None  # learning only


@dataclass
class _Learned:
    method: str
    tool: str | None
    path: str
    varied: int = 0
    samples: int = 0
    recorded: Any = None
    values: list[Any] = field(default_factory=list)


class SampleBook:
    """The samples of a sampled replay, aligned by (client session, request number).

    :meth:`add` each result of the earlier runs (against the target with ``side`` ``target``, against the
    baseline with ``baseline``) as it streams by; then :meth:`settle` each result of the last run against
    the target: its verdict becomes ``same``, ``changed``, ``flaky`` or ``error`` over every sample, its
    differences the changed paths only, and ``noise`` lists the paths that varied. :meth:`learned` is
    what was learned over all requests (when ``learn``)."""

    def __init__(self, *, learn: bool = False) -> None:
        self.learn = learn
        self.runs = {TARGET: 1, BASELINE: 0}  # the last run against the target counts from the start
        self._tracks: dict[tuple[int | None, int], _Track] = {}
        self._learned: dict[tuple[str, str | None, str], _Learned] = {}

    def started(self, side: str) -> None:
        """A run against ``side`` begins (the last run against the target is counted already)."""
        self.runs[side] += 1

    def add(self, side: str, result: Any) -> None:
        """One result of an earlier run: kept as the digests of its differing paths (nothing when it was
        the same as the recording)."""
        fingerprint = self._fingerprint(result)
        if not fingerprint:
            return  # the same as the recording (or says nothing): counted, not kept
        key = (result.session, result.index)
        track = self._tracks.get(key)
        if track is None:
            track = self._tracks[key] = _Track(result.method, result.tool)
        elif track.method != result.method:
            return  # not the same request: the runs did not line up (a session ended early)
        (track.target if side == TARGET else track.baseline).append(None if _NO_ANSWER in fingerprint else fingerprint)
        if self.learn and result.diff:
            paths = track.paths if track.paths is not None else {}
            track.paths = paths
            for d in result.diff:
                paths.setdefault(d.path, _Path()).keep(d)

    def _fingerprint(self, result: Any) -> dict[str, str] | None:
        """``{}`` for an answer the same as the recording, path -> digest for one that differs,
        ``{"!": "!"}`` for no answer; None for a result that says nothing about variation."""
        if result.status == "error":
            return {_NO_ANSWER: _NO_ANSWER}
        if result.status not in ("same", "changed"):
            return None
        return {d.path: _digest((d.kind, d.new)) for d in result.diff}

    def settle(self, result: Any) -> None:
        """The last run's result against the target: its verdict over every sample (in place)."""
        if result.status not in ("same", "changed", "error"):
            return
        track = self._tracks.pop((result.session, result.index), None)
        if track is not None and track.method != result.method:
            track = None
        final = self._fingerprint(result)
        if track is None and final == {}:
            return  # the same in every sample
        target = list(track.target) if track is not None else []
        baseline = list(track.baseline) if track is not None else []
        if final is not None and final != {}:
            target.append(None if _NO_ANSWER in final else final)
        paths = dict(track.paths or {}) if track is not None and self.learn else {}
        if self.learn:
            for d in result.diff:
                paths.setdefault(d.path, _Path()).keep(d)
        t_total, b_total = self.runs[TARGET], self.runs[BASELINE]
        t_none = sum(1 for t in target if t is None)
        b_none = sum(1 for b in baseline if b is None)
        t_answered = [t for t in target if t is not None]
        b_answered = [b for b in baseline if b is not None]
        t_same = t_total - t_none - len(t_answered)  # answered as recorded
        b_same = b_total - b_none - len(b_answered)
        every = sorted({p for fp in t_answered + b_answered for p in fp})
        changed, noisy, touched = [], [], []
        # a difference that masking times, ids or addresses absorbs (the rule replay suggests for it) is never
        # a change: a clock read twice in the same second is stable within a side and still differs between them
        volatile = {r.path for r in getattr(result, "suggestions", None) or []}
        varied: dict[str, tuple[int, int]] = {}
        for p in every:
            tvals = {fp.get(p, _RECORDED) for fp in t_answered} | ({_RECORDED} if t_same else set())
            bvals = {_RECORDED} | {fp.get(p, _RECORDED) for fp in b_answered}
            n = sum(1 for fp in t_answered + b_answered if p in fp)
            varied[p] = (n, len(t_answered) + t_same + len(b_answered) + b_same)
            if len(tvals) > 1 or len(bvals) > 1:
                noisy.append(p)
                if tvals != {_RECORDED}:
                    touched.append(p)
            elif tvals != bvals and tvals:
                if p in volatile:  # stable on each side, yet only a time, an id, an address apart: noise
                    noisy.append(p)
                    touched.append(p)
                else:
                    changed.append(p)
        if self.learn:
            self._learn(result, noisy, changed, paths, varied)
        result.noise = [{"path": p, "varied": varied[p][0], "samples": varied[p][1]} for p in touched]
        answered_now = result.status != "error"
        if changed and answered_now:
            kept = set(changed)
            result.diff = [d for d in result.diff if d.path in kept]
            result.suggestions = [r for r in getattr(result, "suggestions", []) if r.path in kept]
            result.status = "changed"
        elif not answered_now:
            if len(t_answered) + t_same:
                result.status = "flaky"
                result.notes.append(f"no answer in {t_none} of {t_total} runs against the target: {result.error}")
        elif touched or t_none:
            result.status = "flaky"
            if t_none:
                result.notes.append(f"no answer in {t_none} of {t_total} runs against the target")
            result.suggestions = []
        else:
            result.status = "same"
            result.diff = []

    def _learn(self, result: Any, noisy: list[str], changed: list[str], paths: dict[str, _Path],
               varied: dict[str, tuple[int, int]]) -> None:
        chosen = list(noisy)
        for p in changed:  # a stable difference that looks volatile (a date) is noise at a slower pace
            seen = paths.get(p)
            if seen is not None and seen.values and suggest(
                    Difference(p, "changed", seen.recorded, seen.values[0]), result.method, result.tool) is not None:
                chosen.append(p)
        for p in chosen:
            seen = paths.get(p)
            entry = self._learned.setdefault((result.method, result.tool, p), _Learned(result.method, result.tool, p))
            n, m = varied[p]
            entry.varied += n
            entry.samples += m
            if seen is None:
                continue
            if entry.recorded is None:
                entry.recorded = seen.recorded
            for v in seen.values:
                if len(entry.values) < _KEEP_VALUES and v not in entry.values:
                    entry.values.append(v)

    def learned(self, server: str | None) -> LearnedNoise:
        """What the samples taught, per method, tool and path, for ``server`` (its ``serverInfo`` name)."""
        from mcpreel.redact import Redactor

        redactor = Redactor()
        entries = []
        for (method, tool, path), seen in sorted(self._learned.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2])):
            observed = ([seen.recorded] if seen.recorded is not None else []) + seen.values
            mask, looks = derive_mask(observed, path, method, tool)
            example = next((v for v in seen.values if v is not None), seen.recorded)
            entries.append(NoiseEntry(path=path, method=method, tool=tool, server=server, mask=mask,
                                      varied=seen.varied, samples=seen.samples, looks=looks,
                                      example=_example(redactor.value_at(path, example))))
        return LearnedNoise(server=server, samples=dict(self.runs), entries=entries)


def _example(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= _EXAMPLE_CHARS else value[: _EXAMPLE_CHARS - 1] + "…"
    try:
        text = jsonio.dumps_str(value)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if len(text) <= _EXAMPLE_CHARS else text[: _EXAMPLE_CHARS - 1] + "…"


# -- masks ----------------------------------------------------------------------------------------


def _all_equal_masked(pattern: str, values: Sequence[str]) -> bool:
    try:
        compiled = re.compile(pattern)
    except re.error:
        return False
    if compiled.fullmatch(""):
        return False
    masked = {compiled.sub(MASK, v) for v in values}
    return len(masked) == 1


def derive_mask(values: Sequence[Any], path: str = "$", method: str = "", tool: str | None = None) -> tuple[str | None, str | None]:
    """A regular expression that masks what varies between ``values`` (strings), and what it looks like:
    ``(mask, looks)``. First the volatile tokens a compare rule knows (:func:`mcpreel.compare.rules.suggest`:
    a timestamp, a UUID, an address, a hex id); else the part between the values' common prefix and
    suffix, widened to whole tokens and anchored on the literal text around it. ``(None, None)`` when no
    mask makes every value the same (not all strings, or the whole text varies): leave the value out."""
    texts = [v for v in values if isinstance(v, str)]
    distinct = list(dict.fromkeys(texts))
    if len(texts) != len(values) or len(distinct) < 2 or max(len(t) for t in distinct) > _MAX_MASKED_TEXT:
        return None, None
    masks: list[str] = []
    looks: list[str] = []
    for other in distinct[1:]:
        rule = suggest(Difference(path, "changed", distinct[0], other), method, tool)
        if rule is None or rule.mask is None:
            break
        if rule.mask not in masks:
            masks.append(rule.mask)
            looks.extend(x for x in rule.origin.split(" and ") if x and x not in looks)
    else:
        joined = masks[0] if len(masks) == 1 else "|".join(f"(?:{m})" for m in masks)
        if _all_equal_masked(joined, distinct):
            return joined, " and ".join(looks) or None
    mask = _between(distinct)
    if mask is not None and _all_equal_masked(mask, distinct):
        return mask, "a varying part of the text"
    return None, None


def _between(texts: Sequence[str]) -> str | None:
    """The mask of what varies between the common prefix and the common suffix of ``texts``."""
    shortest = min(len(t) for t in texts)
    start = 0
    while start < shortest and all(t[start] == texts[0][start] for t in texts):
        start += 1
    end = 0  # characters of common suffix
    while end < shortest - start and all(t[len(t) - 1 - end] == texts[0][len(texts[0]) - 1 - end] for t in texts):
        end += 1
    first = texts[0]
    # widen to whole tokens: a timestamp's common "12:0" belongs to what varies
    while start > 0 and _TOKEN.match(first[start - 1]):
        start -= 1
    while end > 0 and _TOKEN.match(first[len(first) - end]):
        end -= 1
    if start == 0 and end == 0:
        return None  # the whole text varies
    middles = [t[start:len(t) - end] for t in texts]
    if all(re.fullmatch(r"\d+", m) for m in middles):
        body = r"\d+"
    elif all(re.fullmatch(r"[0-9a-fA-F]+", m) for m in middles):
        body = r"[0-9a-fA-F]+"
    elif all(re.fullmatch(r"[\w.:+\-]+", m) for m in middles):
        body = r"[\w.:+\-]+"
    else:
        body = r"[\s\S]+?" if end else r"[\s\S]+"
    left = first[max(0, start - _CONTEXT):start]
    right = first[len(first) - end:len(first) - end + _CONTEXT] if end else ""
    before = f"(?<={re.escape(left)})" if left else r"\A"
    after = f"(?={re.escape(right)})" if right else r"\Z"
    return before + body + after


# -- the noise file -------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseEntry:
    """One learned path: where (``server``, ``method``, ``tool``, ``path``), what is left out (``mask``: a
    regular expression, None: the whole value) and what was seen (``varied`` of ``samples`` live answers
    differed from the recording, ``looks`` like, a redacted ``example``)."""

    path: str
    method: str | None = None
    tool: str | None = None
    server: str | None = None
    mask: str | None = None
    varied: int = 0
    samples: int = 0
    looks: str | None = None
    example: Any = None

    def to_json(self) -> dict[str, Any]:
        """The entry as the noise file holds it (members that say nothing are left out)."""
        out: dict[str, Any] = {"server": self.server, "method": self.method, "tool": self.tool, "path": self.path,
                               "varied": self.varied, "samples": self.samples, "mask": self.mask,
                               "looks": self.looks, "example": self.example}
        return {k: v for k, v in out.items() if v is not None}

    def rule(self, origin: str) -> CompareRule:
        """The compare rule that leaves this noise out."""
        return CompareRule(self.path, self.method, self.tool, self.mask, origin)


@dataclass
class LearnedNoise:
    """What a sampled replay learned: the entries, for the server the recording names, and the samples
    taken per side (``{"target": K, "baseline": B}``; the recording is one more baseline sample)."""

    server: str | None
    samples: dict[str, int]
    entries: list[NoiseEntry]

    def merged(self, other: LearnedNoise) -> LearnedNoise:
        """This and ``other`` (another session or recording) as one: the same place counts both."""
        by_key: dict[tuple[Any, ...], NoiseEntry] = {}
        for e in self.entries + other.entries:
            key = (e.server, e.method, e.tool, e.path)
            was = by_key.get(key)
            by_key[key] = e if was is None else NoiseEntry(
                e.path, e.method, e.tool, e.server, was.mask if was.mask == e.mask else None,
                was.varied + e.varied, was.samples + e.samples, was.looks if was.mask == e.mask else None,
                was.example)
        samples = {k: max(self.samples.get(k, 0), other.samples.get(k, 0)) for k in {*self.samples, *other.samples}}
        return LearnedNoise(self.server if self.server == other.server else None, samples, list(by_key.values()))


def noise_document(learned: LearnedNoise, *, recording: str | None = None) -> dict[str, Any]:
    """The noise file's document for ``learned`` (``recording``: the file it was learned from)."""
    about = {"server": learned.server, "recording": recording,
             "samples": {"target": learned.samples.get(TARGET, 0),
                         "baseline": learned.samples.get(BASELINE, 0) + 1}}  # + the recording
    return {"version": 1, "kind": NOISE_KIND, "learned": {k: v for k, v in about.items() if v is not None},
            "noise": [e.to_json() for e in learned.entries]}


@dataclass(frozen=True)
class Noise:
    """A noise file, read: its entries, and where it came from (for messages)."""

    source: str
    entries: tuple[NoiseEntry, ...]

    def servers(self) -> list[str]:
        """The servers the file names (an entry without one is for any server)."""
        return sorted({e.server for e in self.entries if e.server is not None})

    def rules_for(self, server: str | None) -> CompareRules:
        """The compare rules for the recording of ``server``: its entries and those for any server; every
        entry when the recording names no server."""
        chosen = [(i, e) for i, e in enumerate(self.entries, 1)
                  if server is None or e.server is None or e.server == server]
        return CompareRules([e.rule(f"{self.source} entry {i}") for i, e in chosen])


def load_noise(path: str | Path) -> Noise:
    """The noise file at ``path`` (see the module doc); one InputError line when it cannot be used."""
    shown = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the noise file: {exc.strerror or exc}", path=shown) from None
    try:
        doc = jsonio.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        reason = jsonio.error_reason(exc) if not isinstance(exc, RecursionError) else "nested too deeply"
        raise InputError(f"not a noise file (JSON, as --learn-noise writes it): {reason}", path=shown) from None
    return parse_noise(doc, source=shown)


def _shown(value: Any) -> str:
    try:
        text = jsonio.dumps_str(value)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= 80 else text[:79] + "…"


def parse_noise(doc: Any, *, source: str = "noise") -> Noise:
    """A noise file's entries from its parsed document."""
    if not isinstance(doc, dict):
        raise InputError(f"a noise file is an object with a noise list, not {jsonio.type_name(doc)}", path=source)
    if doc.get("kind", NOISE_KIND) != NOISE_KIND:
        raise InputError(f"kind {_shown(doc.get('kind'))} is not {NOISE_KIND!r} (is this a noise file?)", path=source)
    version = doc.get("version", 1)
    if type(version) is not int or version not in _VERSIONS:
        raise InputError(f"version {_shown(version)} is not one this mcpreel reads (1)", path=source)
    entries = doc.get("noise")
    if not isinstance(entries, list):
        raise InputError(f"noise is a list of entries, not {jsonio.type_name(entries)}", path=source)
    out = []
    for i, raw in enumerate(entries, 1):
        try:
            entry = _entry(raw)
            CompareRules([entry.rule("")])
        except (ValueError, UsageError) as exc:
            raise InputError(f"entry {i}: {str(exc)[:300]}", path=source) from None
        out.append(entry)
    return Noise(source, tuple(out))


def _entry(raw: Any) -> NoiseEntry:
    if not isinstance(raw, dict):
        raise ValueError(f"an entry is an object with a path, not {jsonio.type_name(raw)}")
    for key in raw:
        if key not in _FIELDS:
            raise ValueError(f"unknown member {_shown(str(key))} (an entry has {', '.join(_FIELDS)})")
    if "path" not in raw:
        raise ValueError("an entry needs a path (a JSONPath like $.result.content[0].text)")
    if not isinstance(raw["path"], str):
        raise ValueError(f"path is a string, not {_shown(raw['path'])}")
    for key in ("server", "method", "tool", "mask", "looks", "note"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ValueError(f"{key} is a string, not {_shown(raw[key])}")
    for key in ("varied", "samples"):
        if key in raw and (type(raw[key]) is not int or raw[key] < 0):
            raise ValueError(f"{key} is a count (a whole number, 0 or more), not {_shown(raw[key])}")
    return NoiseEntry(path=raw["path"], method=raw.get("method"), tool=raw.get("tool"), server=raw.get("server"),
                      mask=raw.get("mask"), varied=raw.get("varied", 0), samples=raw.get("samples", 0),
                      looks=raw.get("looks"), example=raw.get("example"))


# -- the recording's server -----------------------------------------------------------------------

#: messages read from the start of a recording to find the server's name
#: where a 2026-07-28 server names itself: in its answers' ``_meta``
_META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_NAME_WITHIN = 200


def server_name_of(messages: Iterable[Any]) -> str | None:
    """The ``serverInfo`` name the recording's server gave (in its ``initialize`` answer, or the ``_meta`` of
    a 2026-07-28 answer such as ``server/discover``), looked for in the first messages; None when none names it."""
    for n, msg in enumerate(messages):
        if n >= _NAME_WITHIN:
            break
        members = msg.members() if hasattr(msg, "members") else []
        for member in members:
            result = member.get("result") if isinstance(member, dict) else None
            if not isinstance(result, dict):
                continue
            meta = result.get("_meta")
            for info in (result.get("serverInfo"), meta.get(_META_SERVER_INFO) if isinstance(meta, dict) else None):
                if isinstance(info, dict) and isinstance(info.get("name"), str):
                    return str(info["name"])
    return None
