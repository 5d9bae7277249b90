"""Converting a session between formats (``mcpreel convert``), and saying what the target drops.

Every format reads into and writes from the one session model, so a conversion is: open (sniffing the
input format unless given), choose the output format (from ``--to``, else from the output file's name),
write atomically (mode 0600, no half-written file on error). :func:`write_session` is the second half
alone, for callers that already hold a session (the proxy's ``export``, ``merge``, ``redact``).

What a lossy target drops is computed from the session, not just declared: each format module says
which features it ``KEEPS`` (times, directions, transport context, edits, drops, stderr, invalid frames,
transport-only events, other producers' lines, the session header), the records are counted as they
are written, and :class:`ConvertResult.lost` names what this session had that the target cannot hold
(``"3 stderr lines"``). Converting a session without stderr to qai therefore warns about nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel._infra.fileio import atomic_output
from mcpreel.errors import UsageError
from mcpreel.formats import FORMATS, canonical_name, format_for_name, get_writer, open_session, writer_names
from mcpreel.formats._foreign import STASH_KEYS
from mcpreel.formats.sniff import Detection
from mcpreel.model import SCOPE_KEY, Kind, Message, Session

__all__ = ["ConvertResult", "Features", "OutputChoice", "choose_output_format", "convert", "write_session"]

_TRACES = ("assay-v2", "simple")


@dataclass
class Features:
    """What a session holds that some formats cannot keep (counted while it is written)."""

    records: int = 0
    messages: int = 0
    time: int = 0
    direction: int = 0
    ctx: int = 0
    edits: int = 0
    drops: int = 0
    stderr: int = 0
    invalid: int = 0
    transport: int = 0
    event: int = 0
    #: raw ``bytes`` records (a stdio pipe that was not newline-delimited JSON: HTTP/2, binary)
    raw: int = 0
    #: records with another recorder's own members (pids, flags), by stash (formats._foreign.STASH_KEYS)
    foreign: dict[str, int] = field(default_factory=dict)
    header: bool = False
    #: records of a merged file that name their source file (``Message.extra["file"]``, :mod:`mcpreel.merge`)
    sources: int = 0

    def count(self, msg: Message) -> None:
        """Note what one record carries that a writer may drop, so the warning names only what this session loses."""
        self.records += 1
        extra = msg.extra
        if extra:
            if type(extra.get(SCOPE_KEY)) is str:
                self.sources += 1
            if not STASH_KEYS.isdisjoint(extra):
                for key in STASH_KEYS.intersection(extra):
                    self.foreign[key] = self.foreign.get(key, 0) + 1
        kind = msg.kind
        if kind == "message":  # Kind.MESSAGE, compared without the attribute lookup (a million times)
            self.messages += 1
            if msg.t is not None:
                self.time += 1
            if msg.dir is not None:
                self.direction += 1
            if msg.ctx:
                self.ctx += 1
            if msg.modified:
                self.edits += 1
            if msg.dropped:
                self.drops += 1
        elif kind == Kind.STDERR:
            self.stderr += 1
        elif kind == Kind.INVALID:
            self.invalid += 1
        elif kind == Kind.TRANSPORT:
            self.transport += 1
        elif kind == Kind.BYTES:
            self.raw += 1
        else:
            self.event += 1

    def lost(self, keeps: frozenset[str]) -> list[str]:
        """What of this session a format that keeps ``keeps`` drops, in words (empty: nothing)."""
        out = []

        def n(count: int, one: str, many: str | None = None) -> str:
            return f"{count} {one if count == 1 else (many or one + 's')}"

        if self.header and "header" not in keeps:
            out.append("the session header (id, command or URL, start and end)")
        if self.time and "time" not in keeps:
            out.append(f"message times ({n(self.time, 'message')})")
        if self.direction and "direction" not in keeps:
            out.append("directions (guessed again from the methods when read)")
        if self.ctx and "ctx" not in keeps:
            out.append(f"transport context ({n(self.ctx, 'message')})")
        if self.edits and "edits" not in keeps:
            out.append(f"the originals of {n(self.edits, 'edited message')}")
        if self.drops and "drops" not in keeps:
            out.append(n(self.drops, "dropped message"))
        if self.stderr and "stderr" not in keeps:
            out.append(n(self.stderr, "stderr line"))
        if self.invalid and "invalid" not in keeps:
            out.append(n(self.invalid, "invalid frame"))
        if self.transport and "transport" not in keeps:
            out.append(n(self.transport, "transport-only event"))
        if self.raw and "bytes" not in keeps:
            out.append(f"{n(self.raw, 'raw byte chunk')} (what crossed a stdio pipe outside JSON lines: HTTP/2 "
                       "frames, binary; kept only by a reel)")
        if self.event and "event" not in keeps:
            out.append(n(self.event, "line of another producer", "lines of another producer"))
        if self.sources and "source" not in keeps:
            out.append(f"which file each record came from ({n(self.sources, 'record')} of a merged file; "
                       "kept only by a reel)")
        lost_foreign = sum(c for key, c in self.foreign.items() if "foreign" not in keeps and f"foreign:{key}" not in keeps)
        if lost_foreign:
            out.append(f"the source recorder's own members of {n(lost_foreign, 'record')} (kept only by a reel)")
        return out


@dataclass(frozen=True)
class OutputChoice:
    format: str
    reason: str
    obvious: bool = True


@dataclass
class ConvertResult:
    """What a conversion did. ``lost`` is empty when the target kept everything the session had."""

    input: str
    output: str
    detection: Detection | None
    output_choice: OutputChoice
    features: Features = field(default_factory=Features)
    lost: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    report: Any = None  # the trace writers' ImportReport
    notes: list[str] = field(default_factory=list)  # what the reader noticed ("holds no MCP messages", ...)

    @property
    def to(self) -> str:
        """The format written (the one asked for, or the one the output name chose)."""
        return self.output_choice.format

    def lost_line(self) -> str | None:
        """The one warning line naming what a lossy target dropped (None when nothing was)."""
        if not self.lost:
            return None
        return f"writing {self.to} drops {', '.join(self.lost)}"


def choose_output_format(path: str | Path, session: Session | None = None, to: str | None = None) -> OutputChoice:
    """The output format: ``to`` when given, else from the file's name (and the session's transport).

    The names are the format table's (:data:`mcpreel.formats.FORMATS`, each row's ``extensions``).
    """
    if to not in (None, "", "auto"):
        name = canonical_name(to)
        if not FORMATS[name].writes:
            raise UsageError(f"format {name!r} can be read but not written (writable: {', '.join(writer_names())})")
        return OutputChoice(name, "given")
    match = format_for_name(path, session.info.transport if session is not None else None)
    if match is None:
        raise UsageError(f"cannot tell the output format from the name {str(path)!r}; pass --to "
                         f"(writable: {', '.join(writer_names())})")
    return OutputChoice(match.format, match.reason, match.obvious)


def _counting(session: Session, features: Features) -> Session:
    """The same session, counting its records the first time they are read (writers may read twice)."""
    if not session.is_streaming:
        for msg in session.messages:
            features.count(msg)
        return session
    state = {"done": False}

    def factory() -> Iterator[Message]:
        count = None if state["done"] else features.count
        for msg in session:
            if count is not None:
                count(msg)
            yield msg
        state["done"] = True

    return Session.streaming(session.info, factory)


def _lines(path: str | Path) -> int:
    """The number of lines in ``path`` (read in chunks): a trace writer's record count.

    The normalizer may restart a trace it already began (an unsorted input), so counting as it writes
    would count twice; the finished file is the truth.
    """
    n = 0
    last = b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


def _secret_headers_out(headers: Any) -> Any:
    """``headers`` with the values of the secret ones (Authorization, cookies, API keys) replaced by the
    marker; the same object when there is nothing to replace."""
    from mcpreel.redact.headers import is_secret_header
    from mcpreel.redact.secrets import MARKER

    if not isinstance(headers, dict) or not any(is_secret_header(k) and v != MARKER for k, v in headers.items()):
        return headers
    return {k: (MARKER if is_secret_header(k) else v) for k, v in headers.items()}


def _without_url_secrets(session: Session) -> Session:
    """The session with the secret query parameters of its URL and of every record's ``ctx.path`` /
    ``ctx.url`` redacted (:func:`mcpreel.redact.urls.redact_url`), URLs in its metadata too, and the secret
    HTTP headers of every record's context, lazily: what ``record`` does to what it writes, done to what
    another tool wrote (a cassette's ``server_url?api_key=…``) or a reel recorded with ``--keep-secrets``."""
    from dataclasses import replace

    from mcpreel.redact.urls import redact_url, redact_urls_in_value

    info = session.info
    if info.url:
        info.url = redact_url(info.url)
    if info.label:  # a recorder names an HTTP session after its URL
        info.label = redact_urls_in_value(info.label)
    if info.metadata:
        info.metadata = redact_urls_in_value(info.metadata)
    if info.extra:
        info.extra = redact_urls_in_value(info.extra)
    if info.headers:
        info.headers = _secret_headers_out(info.headers)

    def clean(msg: Message) -> Message:
        ctx = msg.ctx
        if not ctx:
            return msg
        new = ctx
        for key in ("path", "url"):
            value = new.get(key)
            if isinstance(value, str) and "?" in value:
                red = redact_url(value)
                if red is not value:
                    new = {**new, key: red}
        headers = new.get("headers")
        if headers:
            clean_headers = _secret_headers_out(headers)
            if clean_headers is not headers:
                new = {**new, "headers": clean_headers}
        return msg if new is ctx else replace(msg, ctx=new)

    if not session.is_streaming:
        return Session(session.info, [clean(m) for m in session.messages])

    def cleaned() -> Iterator[Message]:
        for msg in session:
            yield clean(msg) if msg.ctx else msg  # most records have no ctx: no call for them

    # the reader's fast lane of payloads is kept: its blocks carry no transport context, so no URL
    return Session.streaming(session.info, cleaned, session.wire_lane)


def _has_header(session: Session) -> bool:
    info = session.info
    return bool(info.id or info.command or info.url or info.started is not None)


def write_session(
    session: Session,
    out_path: str | Path,
    to: str,
    *,
    warn: Callable[[str], None] | None = None,
    writer_options: dict[str, Any] | None = None,
) -> tuple[Features, list[str], Any]:
    """Write ``session`` to ``out_path`` as ``to`` (atomically, mode 0600).

    Returns what the session held, what the format dropped of it (in words), and the writer's own
    return value (the trace writers give their import report).
    """
    name = canonical_name(to)
    writer = get_writer(name)
    module = FORMATS[name].load()
    features = Features(header=_has_header(session))
    kwargs = dict(writer_options or {})
    if getattr(module, "SHARED", False) and kwargs.pop("redact", True):
        from mcpreel.redact import Redactor

        session = Redactor().session(session)  # a format for publishing (STS, ATIF): redacted like every shared output
    if name in _TRACES:
        # a trace keeps tool semantics only, whatever the session held; the normalizer reads the
        # session through its own fast lane, so it is not counted record by record
        if warn is not None:
            kwargs["warn"] = warn
        with atomic_output(out_path) as fh:
            value = writer(session, fh, **kwargs)
        features.records = _lines(out_path)  # what was written: one JSON line a trace record
        return features, [module.LOSSES], value
    counted = _counting(session, features)
    with atomic_output(out_path) as fh:
        value = writer(counted, fh, **kwargs)
    keeps = getattr(module, "KEEPS", None)
    if keeps is None:
        losses = getattr(module, "LOSSES", "")
        lost = [losses] if losses else []
    else:
        lost = features.lost(keeps)
    if isinstance(value, list):
        # a writer that drops some records of a kind it otherwise keeps names them (the HTTP envelope:
        # transport-only events, but not a 202 that had no body)
        lost.extend(value)
    return features, lost, value


def convert(
    in_path: str | Path,
    out_path: str | Path,
    from_: str = "auto",
    to: str | None = None,
    *,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    keep_secrets: bool = False,
) -> ConvertResult:
    """Read ``in_path`` (``from_`` or sniffed), write ``out_path`` as ``to`` (or chosen from its name).

    Secret query parameters in the session's URLs (``?api_key=…``) are redacted unless ``keep_secrets``.
    A writer's own options (none of the CLI's formats takes one) go through :func:`write_session`.

    Raises :class:`~mcpreel.errors.InputError` for input that breaks its format's rules and
    :class:`~mcpreel.errors.UsageError` for an impossible target (a stdio session as an HTTP envelope, a
    read-only format); in both cases no output file is left behind.
    """
    session, detection = open_session(in_path, from_ or "auto", strict=strict, on_progress=on_progress)
    if not keep_secrets:
        session = _without_url_secrets(session)
    choice = choose_output_format(out_path, session, to)
    warnings: list[str] = []

    def _warn(text: str) -> None:
        warnings.append(text)
        if warn is not None:
            warn(text)

    features, lost, value = write_session(session, out_path, choice.format, warn=_warn)
    return ConvertResult(str(in_path), str(out_path), detection, choice, features, lost, warnings, value,
                         list(session.info.notes))
