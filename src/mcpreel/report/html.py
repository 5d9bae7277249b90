"""One self-contained HTML file from :class:`~mcpreel.report.data.ReportData`.

The page is the template in ``assets/report.html`` with its stylesheet, its script, the charts (inline
SVG, :mod:`mcpreel.report.svg`) and the data (one JSON document in a ``<script type="application/json">``
block) written into it: no fonts, scripts or images are fetched, and the page's Content-Security-Policy
(``default-src 'none'``) forbids it any request at all, so it opens from disk, from a CI artifact, offline.

What the session said is untrusted text: everything from it is HTML-escaped here, ``<`` is escaped
inside the JSON block so no message can close the script, and the script puts text in with
``textContent`` only. Behind that, the policy lets only the page's own script and stylesheet run, by their
hashes (:mod:`mcpreel.report.page`), so markup that got past an escape anyway is inert.
"""

from __future__ import annotations

import re
import shlex
from html import escape
from typing import Any

from mcpreel.report.data import ReportData
from mcpreel.report.page import asset, fill, script_json
from mcpreel.report.svg import activity_chart, fmt_ms, latency_chart, plural

__all__ = ["render"]

def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    from mcpreel._infra.timeutil import in_range, iso_from_ms

    return iso_from_ms(ms) if in_range(ms) else str(ms)


def _facts(data: ReportData) -> str:
    h = data.header
    k2a = data.k2a
    if k2a.get("visible"):
        named = [n for n, key in (("resource_metadata", "resource_metadata_visible"), ("scope", "scope_challenge_visible"))
                 if k2a.get(key)]
        k2a_text = f'<span class="k2a-yes">401 challenge seen</span> (WWW-Authenticate names {", ".join(named)})'
    else:
        k2a_text = "no 401 challenge seen"
    producer = None
    if isinstance(h.producer, dict):
        name, version = h.producer.get("name"), h.producer.get("version")
        producer = " ".join(str(x) for x in (name, version) if x is not None) or None
    end = None
    if h.exit_code is not None or h.end_reason:
        end = ", ".join(x for x in (f"exit code {h.exit_code}" if h.exit_code is not None else None, h.end_reason) if x)
    rows: list[tuple[str, str | None, bool]] = [
        ("file", h.path, False),
        ("format", h.format, False),
        ("transport", h.transport, False),
        ("server command", shlex.join(h.command) if h.command else None, False),
        ("server URL", h.url, False),
        ("client", data.client, False),
        ("server", data.server, False),
        ("protocol era", data.era, False),
        ("protocol version", data.protocol_version, False),
        ("session id", h.id, False),
        ("sessions in the file", str(data.sessions), False),
        ("started", _iso(h.started), False),
        ("ended", _iso(h.ended), False),
        ("duration", fmt_ms(h.duration_ms) if h.duration_ms is not None else None, False),
        ("end", end, False),
        ("recorded by", producer, False),
        ("authorization (K2-A)", k2a_text, True),
    ]
    out = ['<dl class="facts">']
    for name, value, markup in rows:
        if value is None or value == "":
            continue
        out.append(f"<dt>{escape(name)}</dt><dd>{value if markup else escape(value)}</dd>")
    for note in h.notes:
        out.append(f"<dt>note</dt><dd>{escape(note)}</dd>")
    out.append("</dl>")
    return "".join(out)


def _cards(data: ReportData) -> str:
    c = data.counts
    items = [("messages", c.get("messages", 0), False), ("requests", c.get("requests", 0), False),
             ("notifications", c.get("notifications", 0), False), ("responses", c.get("responses", 0), False),
             ("JSON-RPC errors", c.get("errors", 0), True), ("isError results", c.get("is_errors", 0), True),
             ("unanswered", c.get("unanswered", 0), True), ("orphan responses", c.get("orphans", 0), True),
             ("stderr lines", c.get("stderr", 0), False), ("invalid frames", c.get("invalid", 0), True),
             ("transport events", c.get("transport", 0), False), ("batches", c.get("batches", 0), False),
             ("edited", c.get("modified", 0), False), ("dropped", c.get("dropped", 0), True)]
    out = ['<div class="cards" id="counts">']
    for name, value, bad in items:
        if value == 0 and name not in ("messages", "requests", "JSON-RPC errors", "isError results", "unanswered"):
            continue
        cls = "card bad" if bad and value else "card"
        key = re.sub(r"[^a-z]+", "-", name.lower()).strip("-")
        out.append(f'<div class="{cls}" data-count="{key}"><b>{value:,}</b><span>{escape(name)}</span></div>')
    out.append("</div>")
    return "".join(out)


def _tools(data: ReportData) -> str:
    if not data.tools:
        return '<p class="empty">No tools/call in this session.</p>'
    out = ['<table id="tools-table" class="sortable"><thead><tr><th>tool</th><th class="num">calls</th>'
           '<th class="num">JSON-RPC errors</th><th class="num">isError</th><th class="num">unanswered</th>'
           '<th class="num">p50</th><th class="num">p95</th><th class="num">max</th></tr></thead><tbody>']
    for name, s in data.tools.items():
        failed = s.errors or s.is_errors or s.unanswered
        mx = data.tool_max.get(name)
        cells = [(name, escape(name), ""), (s.calls, f"{s.calls:,}", "num"), (s.errors, str(s.errors), "num"),
                 (s.is_errors, str(s.is_errors), "num"), (s.unanswered, str(s.unanswered), "num"),
                 (s.p50_ms, fmt_ms(s.p50_ms), "num"), (s.p95_ms, fmt_ms(s.p95_ms), "num"), (mx, fmt_ms(mx), "num")]
        row = "".join(f'<td class="{cls}" data-v="{escape(str(v if v is not None else ""))}">{text}</td>'
                      for v, text, cls in cells)
        out.append(f'<tr class="tool{" failed" if failed else ""}" data-tool="{escape(name)}">{row}</tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _calls_note(data: ReportData) -> str:
    shown, total, lim = len(data.calls), data.calls_total, data.limits
    if shown >= total:
        text = "The only call." if total == 1 else f"All {plural(total, 'call')}."
    else:
        text = (f"{shown:,} of {plural(total, 'call')} in detail: the first {lim.detail:,}, the {lim.detail:,} slowest and "
                f"every failed or unanswered call")
        if data.failures_total > lim.max_errors:
            text += f" (the first {lim.max_errors:,} of {data.failures_total:,})"
        text += ". The tables and charts above count all of them."
    text += " Secrets redacted ([REDACTED])." if data.redacted else " Not redacted (--no-redact): secrets are shown."
    return escape(text)


def _sequence_note(data: ReportData) -> str:
    records = data.counts.get("records", 0)
    if data.timeline_omitted:
        return escape(f"The first {data.limits.timeline:,} of {plural(records, 'record')}; "
                      f"{data.timeline_omitted:,} more are summarised in the counts, charts and calls above.")
    return escape("The only record." if records == 1 else f"All {plural(records, 'record')}.")


def _data_json(data: ReportData) -> str:
    doc: dict[str, Any] = {"calls": data.calls, "timeline": data.timeline, "calls_total": data.calls_total}
    return script_json(doc)


def render(data: ReportData) -> str:
    """The whole page, as text."""
    h = data.header
    title = h.label or (h.path.rsplit("/", 1)[-1] if h.path else None) or h.id or "MCP session"
    parts = {
        "TITLE": escape(title),
        "FACTS": _facts(data),
        "CARDS": _cards(data),
        "LATENCY": latency_chart(data.latency),
        "ACTIVITY": activity_chart(data.activity),
        "TOOLS": _tools(data),
        "CALLS_NOTE": _calls_note(data),
        "SEQUENCE_NOTE": _sequence_note(data),
        "DATA": _data_json(data),
        "JS": asset("report.js"),
    }
    return fill("report.html", parts)
