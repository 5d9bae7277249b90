"""The recording pipeline: the one chain every recorded record passes through, in both recorders.

A recorder (stdio or HTTP) turns what crossed the wire into :class:`~mcpreel.model.Message` records and
hands each to its :class:`Pipeline`; the pipeline calls its addons in order, in the manner of mitmproxy's
addons. An addon is any object with some of these methods (all optional):

- ``started(info)``: the session header (:class:`~mcpreel.model.SessionInfo`) is about to be written;
  an addon may change it in place (redaction replaces secrets in the argv and the URL);
- ``record(rec) -> rec | None``: a record about to be written; return it, a changed copy, or None to
  leave it out of the recording (forwarding is never affected);
- ``recorded(rec)``: a record was written, with its ``seq`` (the session file, a live view, an exporter);
- ``frames(direction, frames, t, first_seq)``: the stdio recorder's fast path wrote these frames (``bytes``:
  a JSON line as it crossed the wire; ``str``: an invalid line's text) with ``seq`` from ``first_seq`` on.
  An addon that has it does not, by its ``recorded`` alone, make the stdio recorder parse every line: it
  gets ``frames`` when the recorder splices bytes, ``recorded`` when it builds records anyway (the control
  server keeps its backlog this way, so a recording nobody watches stays on the fast path);
- ``finished(exit_code, reason)``: the reel got its ``end`` line (always called, also after an error).

Built in (made from the recording's options by :func:`mcpreel.record.addons.default_addons`, the one place
they are made): :class:`Redaction` (``--redact``), :class:`~mcpreel.record.session_file.SessionFileKeeper`
(``--session-file``), the ``--tag`` header fields, live OTLP, the control server. ``record`` hooks run first to last, then the reel is written, then ``recorded``
hooks run first to last. Hooks are called from the recorder's threads (the stdio recorder has one per
direction), so an addon that keeps state guards it. An exception in a hook stops the recording with one
warning; forwarding goes on.

Adding an addon::

    class Tally:
        def __init__(self) -> None:
            self.methods: collections.Counter[str] = collections.Counter()

        def recorded(self, rec: Message) -> None:
            if rec.is_jsonrpc and "method" in rec.raw:
                self.methods[rec.raw["method"]] += 1

    tally = Tally()
    options = RecordOptions(StdioServer(("python", "server.py")), Path("s.jsonl"))   # or an HttpTarget
    record(options, RecordHooks(addons=(tally,)))

The stdio recorder splices each line's bytes into the reel without parsing it; it builds records only
when :attr:`Pipeline.sees_records` (some addon has ``record`` or ``recorded``), so a recording without
addons keeps that fast path. A record whose ``raw`` an addon left as the same object keeps its wire
bytes in the reel.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mcpreel.model import Kind, Message, SessionInfo
from mcpreel.redact import Redactor

__all__ = ["Pipeline", "Redaction"]

#: transport context members that can carry a secret as text or data (a query string, a 401 body, an error page)
_CTX_KEYS = ("path", "data", "body", "forwarded")


def _hooks(addons: Iterable[object], name: str) -> tuple[Callable[..., Any], ...]:
    return tuple(hook for addon in addons if callable(hook := getattr(addon, name, None)))


class Pipeline:
    """The addons of one recording, in order; see the module docstring."""

    def __init__(self, addons: Iterable[object] = ()):
        self.addons = tuple(addons)
        self._started = _hooks(self.addons, "started")
        self._record = _hooks(self.addons, "record")
        self._recorded = _hooks(self.addons, "recorded")
        self._finished = _hooks(self.addons, "finished")
        self._frames = _hooks(self.addons, "frames")
        self._raw = _hooks(self.addons, "raw_recorded")
        #: some addon wants the raw ``bytes`` lines (the control channel's viewers: they show them)
        self.sees_raw = bool(self._raw)
        framed = [a for a in self.addons if callable(getattr(a, "frames", None))]
        #: some addon looks at records: the stdio recorder then parses each line into one
        self.sees_records = bool(self._record or _hooks([a for a in self.addons if a not in framed], "recorded"))
        #: some addon takes the fast path's frames
        self.sees_frames = bool(self._frames)

    def started(self, info: SessionInfo) -> None:
        for hook in self._started:
            hook(info)

    def record(self, rec: Message) -> Message | None:
        """``rec`` through every ``record`` hook; None when one of them left it out."""
        for hook in self._record:
            rec = hook(rec)
            if rec is None:
                return None
        return rec

    def recorded(self, rec: Message) -> None:
        for hook in self._recorded:
            hook(rec)

    def raw_recorded(self, rec: Message) -> None:
        """A raw ``bytes`` line was written (``rec.raw`` its bytes, ``rec.seq`` its line): only to the addons
        that ask for them by name (``raw_recorded``), since holding every byte of a binary stream is no
        ``recorded`` hook's business (a session file would keep them all in memory)."""
        for hook in self._raw:
            hook(rec)

    def frames(self, direction: str, frames: Sequence[bytes | str], t: int, first_seq: int) -> None:
        for hook in self._frames:
            hook(direction, frames, t, first_seq)

    def finished(self, exit_code: int | None, reason: str) -> None:
        for hook in self._finished:
            hook(exit_code, reason)


class Redaction:
    """``--redact``: records and the session header go through one :class:`~mcpreel.redact.Redactor`.

    Redacted: a message's JSON, any text (stderr, an invalid line), the transport context members that
    carry bodies or a query string, and in the header the argv, the URL and the metadata. Headers are the
    HTTP recorder's own business (:mod:`mcpreel.redact.headers`, unless ``--keep-secrets``). Copies, never
    edits: a record nothing was found in is returned as it came. :attr:`total` is what the run replaced.
    """

    def __init__(self, redactor: Redactor):
        self.redactor = redactor

    @property
    def total(self) -> int:
        return self.redactor.total

    def started(self, info: SessionInfo) -> None:
        r = self.redactor
        if info.command:
            info.command = r.command(info.command)
        if info.url:
            info.url = r.text(info.url)
        if info.metadata:
            info.metadata = r.value(info.metadata)

    def record(self, rec: Message) -> Message:
        r = self.redactor
        changes: dict[str, Any] = {}
        if rec.kind == Kind.MESSAGE and rec.raw is not None:
            raw = r.value(rec.raw)
            if raw is not rec.raw:
                changes["raw"] = raw
        if rec.modified and rec.original is not None:  # an intercept edit: the message as it arrived
            original = r.value(rec.original)
            if original is not rec.original:
                changes["original"] = original
        if rec.text is not None:
            text = r.text(rec.text)
            if text != rec.text:
                changes["text"] = text
        ctx = rec.ctx
        if ctx:
            for key in _CTX_KEYS:
                value = ctx.get(key)
                if value is not None:
                    new = r.value(value)
                    if new is not value:
                        ctx = {**ctx, key: new}
            if ctx is not rec.ctx:
                changes["ctx"] = ctx
        return dataclasses.replace(rec, **changes) if changes else rec
