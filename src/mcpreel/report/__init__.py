"""``mcpreel report``: a session as one self-contained HTML page, to look at rather than read.

:func:`collect` (:mod:`mcpreel.report.data`) reads a session once, streaming, into what the page shows;
:func:`render` (:mod:`mcpreel.report.html`) writes the page: header, counts, latency per method and
activity over time as inline SVG, calls per tool, a filterable, sortable table of calls whose rows open
to the request's and the response's JSON, and the client ⇄ server sequence. A big session keeps its
counts and charts whole and the detail of a bounded part (:class:`~mcpreel.report.data.ReportLimits`).
"""

from __future__ import annotations

import os

from mcpreel.model import Session
from mcpreel.report.data import ReportData, ReportLimits, collect
from mcpreel.report.html import render

__all__ = ["ReportLimits", "ReportData", "collect", "render", "write_report"]


def write_report(session: Session, out: str | os.PathLike[str], limits: ReportLimits | None = None, *,
                 redact: bool = True) -> ReportData:
    """Write the report of ``session`` to ``out`` (atomically, mode 0600) and return its data; redacted
    unless ``redact=False`` (see :func:`~mcpreel.report.data.collect`)."""
    from mcpreel._infra.fileio import atomic_output

    data = collect(session, limits, redact=redact)
    page = render(data).encode("utf-8", "replace")
    with atomic_output(out) as fh:
        fh.write(page)
    return data
