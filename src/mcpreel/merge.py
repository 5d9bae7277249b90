"""Merging sessions of several servers into one file, interleaved by time (``mcpreel merge``).

Seed 004 keeps one server per file and merges "by timestamp in the renderer"; this is that merge, done
once. Each input keeps its own order (lines of one file are not re-sorted: a response never moves before
its request), and the inputs are interleaved by time, ties going to the input named first. A record
without a time takes the last time of its own file. The merge streams: each input is read as it goes.

Every record keeps which file it came from in ``Message.extra["file"]`` (a ``"file"`` member on its
reel line; another producer's line gets the member added to its own object), and the merged header
lists the inputs in ``metadata["merged"]``. A reel keeps both; a format with no place for them says so
(``convert``'s lossy warning names "which file each record came from").

Each source is a server of its own: :func:`select_source` gives one source back as a session (its own
transport, command and URL from the merged header), which ``serve --source`` and ``replay --source`` use;
``serve`` refuses a file of several sources without it, since one mock cannot be several servers. ``seq`` is renumbered for the merged file. Readers of the
merged file correlate per file (:mod:`mcpreel.inspection` does), since each server numbers its own ids.
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcpreel.errors import UsageError
from mcpreel.formats import open_session
from mcpreel.model import SCOPE_KEY, Kind, Message, Session, SessionInfo

__all__ = ["MergeInput", "MergeResult", "ORIGIN_KEY", "merge", "merge_sessions", "merged_sources", "origin_names",
           "select_source"]

#: the member that names a record's source file: the model's scope key (every reader of a merged file asks for it)
ORIGIN_KEY = SCOPE_KEY
_NS = uuid.UUID("0d7c8f61-2b7e-4a0e-9a55-3c1f5b8e9d40")


@dataclass
class MergeInput:
    path: str
    name: str  # what the records carry in "file"
    format: str
    session: Session


@dataclass
class MergeResult:
    inputs: list[MergeInput]
    output: str
    format: str
    records: int
    lost: list[str] = field(default_factory=list)


def origin_names(paths: list[str]) -> list[str]:
    """The names records carry: the file names when they differ, else the paths as given."""
    names = [Path(p).name for p in paths]
    if len(set(names)) == len(names):
        return names
    return [str(p) for p in paths]


def _tagged(session: Session, name: str, index: int) -> Iterator[tuple[tuple[int, int, int], Message]]:
    last = session.info.started if session.info.started is not None else 0
    for pos, msg in enumerate(session):
        if msg.t is not None and msg.t > last:
            last = msg.t
        raw = msg.raw
        if msg.kind == Kind.EVENT and isinstance(raw, dict) and ORIGIN_KEY not in raw:
            raw = {**raw, ORIGIN_KEY: name}
        # built field by field (dataclasses.replace costs four times as much, a quarter of a merge)
        tagged = Message(msg.dir, raw, msg.t, msg.kind, None, msg.ctx, msg.text, msg.modified, msg.original,
                         msg.dropped, msg.source, msg.injected, msg.decided_by,
                         {**msg.extra, ORIGIN_KEY: name} if msg.extra else {ORIGIN_KEY: name})
        yield (last, index, pos), tagged


def _merged_info(inputs: list[MergeInput]) -> SessionInfo:
    infos = [i.session.info for i in inputs]
    transports = {i.transport for i in infos}
    starts = [i.started for i in infos if i.started is not None]
    ends = [i.ended for i in infos if i.ended is not None]
    merged = []
    for item in inputs:
        info = item.session.info
        entry: dict[str, Any] = {"file": item.name, "path": item.path, "format": item.format}
        for key, value in (("label", info.label), ("session", info.id), ("transport", info.transport),
                           ("command", info.command or None), ("url", info.url)):
            if value is not None:
                entry[key] = value
        merged.append(entry)
    ids = "|".join(str(i.id or i.path) for i in infos)
    return SessionInfo(
        id=str(uuid.uuid5(_NS, ids)),
        label="merged: " + ", ".join(i.label or Path(item.path).stem for i, item in zip(infos, inputs, strict=True)),
        transport=transports.pop() if len(transports) == 1 else None,
        started=min(starts) if starts else None,
        ended=max(ends) if len(ends) == len(infos) and ends else None,
        metadata={"merged": merged},
        source_format="merged",
    )


def merge_sessions(inputs: list[MergeInput]) -> Session:
    """One streaming session over ``inputs``, interleaved by time (see the module)."""
    info = _merged_info(inputs)

    def factory() -> Iterator[Message]:
        streams = [_tagged(item.session, item.name, i) for i, item in enumerate(inputs)]
        for _, msg in heapq.merge(*streams, key=lambda pair: pair[0]):
            yield msg

    return Session.streaming(info, factory)


def merge(
    paths: list[str | Path],
    out_path: str | Path,
    *,
    to: str | None = None,
    from_: str = "auto",
    warn: Callable[[str], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> MergeResult:
    """Merge the session files at ``paths`` into ``out_path`` (a reel unless ``to`` or the name says otherwise)."""
    from mcpreel.convert import choose_output_format, write_session

    if len(paths) < 2:
        raise UsageError("merge needs at least two session files")
    resolved = [Path(p).resolve() for p in paths]
    if len(set(resolved)) != len(resolved):
        raise UsageError("the same file is named twice")
    if Path(out_path).resolve() in resolved:
        raise UsageError(f"the output {str(out_path)!r} is one of the inputs; write the merge elsewhere")
    names = origin_names([str(p) for p in paths])
    inputs = []
    done = [0] * len(paths)

    def progress_of(i: int) -> Callable[[int], None] | None:
        if on_progress is None:
            return None
        report = on_progress

        def step(n: int) -> None:  # each input reports its own bytes read; the bar shows their sum
            done[i] = n
            report(sum(done))

        return step

    for i, (path, name) in enumerate(zip(paths, names, strict=True)):
        session, detection = open_session(path, from_ or "auto", on_progress=progress_of(i))
        inputs.append(MergeInput(str(path), name, detection.format, session))
    merged = merge_sessions(inputs)
    choice = choose_output_format(out_path, merged, to)
    features, lost, _ = write_session(merged, out_path, choice.format, warn=warn)
    return MergeResult(inputs, str(out_path), choice.format, features.records, lost)


def merged_sources(session: Session) -> list[str]:
    """The names of a merged session's sources (``metadata["merged"]``), in merge order; [] for any other."""
    merged = (session.info.metadata or {}).get("merged")
    if not isinstance(merged, list):
        return []
    return [e["file"] for e in merged if isinstance(e, dict) and isinstance(e.get("file"), str)]


def select_source(session: Session, name: str, path: str, *, stream: bool = False) -> Session:
    """The records of one source of a merged session, as that source's own session (materialized;
    with ``stream``, a streaming session that reads ``session`` again on each pass, for flat memory).

    Raises :class:`UsageError` naming the sources when ``name`` is none of them.
    """
    names = merged_sources(session)
    if name not in names:
        shown = ", ".join(names) if names else "none: it is not a merged file"
        raise UsageError(f"{path}: --source {name!r}: the file's sources are {shown}")
    entry = next(e for e in session.info.metadata["merged"] if isinstance(e, dict) and e.get("file") == name)
    info = replace(session.info, label=entry.get("label") or name, transport=entry.get("transport"),
                   command=list(entry.get("command") or []), url=entry.get("url"),
                   metadata={k: v for k, v in (session.info.metadata or {}).items() if k != "merged"})

    def records() -> Iterator[Message]:
        return (m for m in session if (m.extra or {}).get(ORIGIN_KEY) == name)

    if stream:
        return Session.streaming(info, records)
    return Session(info, list(records()))
