"""``mcpreel diff A B --html``: what changed between two recordings, as one self-contained page.

It draws a :class:`~mcpreel.replay.diff.SessionDiff` (the comparison ``diff`` already makes; this module
only shows it): the server's and the tools' differences path by path, and every aligned call with its
status and latency on both sides; a call opens to its differences (path, A, B) and to the request and
response of A and B side by side. The JSON of calls that are the same is kept for the first
:data:`SAME_WITH_JSON` only, so a diff of two long sessions stays small. Same page rules as the report
(:mod:`mcpreel.report.html`): no network, every text escaped, ``textContent`` only.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from mcpreel import jsonio
from mcpreel._version import __version__
from mcpreel.report.html import _asset

__all__ = ["SAME_WITH_JSON", "diff_page"]

SAME_WITH_JSON = 100
_PLACEHOLDER = re.compile(r"@([A-Z_]+)@")


def _pretty(value: Any, limit: int) -> str | None:
    if value is None:
        return None
    text = jsonio.dumps_indented(value).decode("utf-8", "replace")
    if len(text) > limit:
        text = text[:limit] + f"\n… cut: {len(text) - limit:,} more characters of {len(text):,}"
    return text


def _short(value: Any, limit: int = 2000) -> str:
    text = jsonio.dumps_str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _diffs(differences: list[Any]) -> list[dict[str, Any]]:
    out = []
    for d in differences:
        item: dict[str, Any] = {"path": d.path, "kind": d.kind}
        if d.kind != "added":
            item["recorded"] = _short(d.recorded)
        if d.kind != "removed":
            item["new"] = _short(d.new)
        out.append(item)
    return out


def _path_table(differences: list[Any], table_id: str) -> str:
    if not differences:
        return '<p class="empty">No difference.</p>'
    rows = "".join(
        f'<tr class="path"><td>{escape(d["path"])}</td><td>{escape(d["kind"])}</td>'
        f'<td>{escape(d.get("recorded", ""))}</td><td>{escape(d.get("new", ""))}</td></tr>'
        for d in _diffs(differences))
    return (f'<table id="{table_id}" class="paths"><thead><tr><th>path</th><th>difference</th><th>A (recorded)</th>'
            f"<th>B (new)</th></tr></thead><tbody>{rows}</tbody></table>")


def diff_page(result: Any, *, payload_chars: int = 20_000) -> str:
    """The page of a :class:`~mcpreel.replay.diff.SessionDiff`."""
    calls = []
    same_kept = 0
    for c in result.calls:
        keep = c.kind != "same" or same_kept < SAME_WITH_JSON
        same_kept += c.kind == "same" and keep
        item: dict[str, Any] = {
            "label": c.label, "method": c.method, "subject": c.subject, "kind": c.kind,
            "status_a": c.status_a, "status_b": c.status_b, "latency_a": c.latency_a, "latency_b": c.latency_b,
            "latency_shift": c.latency_shift, "diffs": _diffs(c.arguments) + _diffs(c.result),
            "a_line": c.a.source if c.a else None, "b_line": c.b.source if c.b else None, "json": keep,
        }
        if keep:
            item.update(a_request=_pretty(c.a.recorded_request if c.a else None, payload_chars),
                        a_response=_pretty(c.a.response if c.a else None, payload_chars),
                        b_request=_pretty(c.b.recorded_request if c.b else None, payload_chars),
                        b_response=_pretty(c.b.response if c.b else None, payload_chars))
        calls.append(item)
    counts = {"differences": result.difference_count, "server": len(result.server), "tools": len(result.tools)}
    for c in result.calls:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    counts["latency shifts"] = len(result.latency_shifts)
    cards = "".join(
        f'<div class="card{" bad" if v and k not in ("same",) else ""}" data-count="{escape(k)}"><b>{v:,}</b>'
        f"<span>{escape(k)}</span></div>" for k, v in counts.items())
    facts = (f'<dl class="facts"><dt>A (recorded)</dt><dd>{escape(str(result.a))}</dd>'
             f'<dt>B (new)</dt><dd>{escape(str(result.b))}</dd>'
             f'<dt>verdict</dt><dd>{escape(result.summary())}</dd>'
             + "".join(f"<dt>note</dt><dd>{escape(n)}</dd>" for n in result.notes) + "</dl>")
    tools = ('<p class="empty">No difference.</p>' if not result.tools else
             '<table id="tools-diff" class="paths"><thead><tr><th>tool</th><th>change</th><th>paths</th></tr></thead><tbody>'
             + "".join(f'<tr class="tool"><td>{escape(t.name)}</td><td>{escape(t.kind)}</td><td>'
                       + escape("; ".join(d.describe(60) for d in t.differences)) + "</td></tr>" for t in result.tools)
             + "</tbody></table>")
    note = f"{len(result.calls):,} calls aligned; {len(result.changed_calls):,} differ."
    if same_kept < sum(1 for c in result.calls if c.kind == "same"):
        note += f" The JSON of calls that are the same is kept for the first {SAME_WITH_JSON}."
    doc = jsonio.dumps({"calls": calls}).decode("utf-8").replace("<", "\\u003c")
    title = f"{str(result.a).rsplit('/', 1)[-1]} → {str(result.b).rsplit('/', 1)[-1]}"
    parts = {
        "GENERATOR": escape(f"mcpreel {__version__}"), "TITLE": escape(title), "CSS": _asset("report.css"),
        "FACTS": facts, "CARDS": f'<div class="cards" id="counts">{cards}</div>',
        "SERVER": _path_table(result.server + result.server_info, "server-diff"), "TOOLS": tools,
        "CALLS_NOTE": escape(note), "DATA": doc, "JS": _asset("diff.js"),
    }
    return _PLACEHOLDER.sub(lambda m: parts[m.group(1)], _asset("diff.html"))
