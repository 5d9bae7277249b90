"""``mcpreel redact IN OUT``'s library call: a session file redacted into another, format kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcpreel.redact.engine import Redactor
from mcpreel.redact.rules import Rules

__all__ = ["RedactResult", "redact_file"]


@dataclass
class RedactResult:
    input: str
    output: str
    format: str
    total: int
    counts: dict[str, int] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    #: the user's rules that replaced nothing in the whole file (see :meth:`Redactor.unmatched`)
    unmatched: list[str] = field(default_factory=list)
    #: raw ``bytes`` lines written redacted (:func:`mcpreel.record.raw_redact.redact_raw_lines`)
    raw_redacted: int = 0


def redact_file(
    in_path: str | Path,
    out_path: str | Path,
    *,
    rules: Rules | None = None,
    from_: str = "auto",
    to: str | None = None,
    key: bytes | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> RedactResult:
    """Redact a session file into ``out_path`` (atomically, mode 0600).

    The output keeps the input's format unless ``to`` is given (or the input format cannot be
    written: then the output file's name decides, as in ``convert``). ``key`` (bytes) makes the markers
    keyed (``[REDACTED:rule:1a2b3c4d]``, :mod:`mcpreel.redact.keys`); without it every secret becomes
    the rules' plain marker. The counts are the model's: the same whatever the output format.
    """
    from mcpreel.convert import choose_output_format, write_session
    from mcpreel.formats import FORMATS, open_session

    session, detection = open_session(in_path, from_ or "auto", on_progress=on_progress)
    if to in (None, "", "auto"):
        fmt = detection.format if FORMATS[detection.format].writes else choose_output_format(out_path, session).format
    else:
        fmt = choose_output_format(out_path, session, to).format
    if key is not None:
        rules = replace(rules or Rules(), key=key)
    from mcpreel.record.raw_redact import redact_raw_lines

    redactor = Redactor(rules)
    # raw bytes lines (a stdio pipe that was not JSON lines, HTTP/2 frames) are rewritten the way the recorder
    # rewrites them: credential headers in header blocks, the text rule on the rest
    redacted, raw = redact_raw_lines(redactor.session(session), redactor)
    _, lost, _ = write_session(redacted, out_path, fmt)
    return RedactResult(str(in_path), str(out_path), fmt, redactor.total, dict(redactor.counts), lost,
                        redactor.unmatched(), raw["pieces"])
