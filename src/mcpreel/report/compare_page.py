"""``diff A B --html`` and ``replay ... --html``: a comparison as one self-contained page.

It draws what ``diff`` (:class:`~mcpreel.compare.diff.SessionDiff`) or ``replay``
(:class:`~mcpreel.replay.verify.ReplayReport`) already found; this module only shows it: the server's
and the tools' differences path by path (diff) or the server's own requests (replay), and every call
with its status and latency on both sides; a call opens to its differences (path, A, B) and to the
request and response of both sides. The JSON of calls that are the same is kept for the first
:data:`SAME_WITH_JSON` only, so a comparison of two long sessions stays small. Same page rules as the
report (:mod:`mcpreel.report.html`): no network, every text escaped, ``textContent`` only, and only the
page's own script and stylesheet allowed to run (:mod:`mcpreel.report.page`).
"""

from __future__ import annotations

from html import escape
from typing import Any

from mcpreel._infra import jsonio
from mcpreel._version import __version__
from mcpreel.report.page import asset, fill, script_json

__all__ = ["SAME_WITH_JSON", "diff_page", "replay_page"]

SAME_WITH_JSON = 100


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


def _options(options: list[tuple[str, str]]) -> str:
    return "".join(f'<option value="{escape(v)}">{escape(t)}</option>' for v, t in options)


def _cards(counts: dict[str, int], good: tuple[str, ...] = ("same",)) -> str:
    return '<div class="cards" id="counts">' + "".join(
        f'<div class="card{" bad" if v and k not in good else ""}" data-count="{escape(k)}"><b>{v:,}</b>'
        f"<span>{escape(k)}</span></div>" for k, v in counts.items()) + "</div>"


def _page(*, kind: str, title: str, facts: str, cards: str, sections: str, calls: list[dict[str, Any]], note: str,
          calls_sub: str, options: list[tuple[str, str]]) -> str:
    doc = script_json({"calls": calls})
    parts = {
        "GENERATOR": escape(f"mcpreel {__version__}"), "TITLE": escape(title), "KIND": escape(kind),
        "CSS": asset("report.css"), "FACTS": facts, "CARDS": cards, "SECTIONS": sections,
        "CALLS_SUB": escape(calls_sub), "CALLS_NOTE": escape(note), "KIND_OPTIONS": _options(options),
        "DATA": doc, "JS": asset("compare.js"),
    }
    return fill("compare.html", parts)


def _facts(rows: list[tuple[str, Any]]) -> str:
    return '<dl class="facts">' + "".join(
        f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in rows if v is not None) + "</dl>"


def diff_page(result: Any, *, payload_chars: int = 20_000) -> str:
    """The page of a :class:`~mcpreel.compare.diff.SessionDiff`."""
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
    facts = _facts([("A (recorded)", result.a), ("B (new)", result.b), ("verdict", result.summary())]
                   + [("note", n) for n in result.notes])
    tools = ('<p class="empty">No difference.</p>' if not result.tools else
             '<table id="tools-diff" class="paths"><thead><tr><th>tool</th><th>change</th><th>paths</th></tr></thead><tbody>'
             + "".join(f'<tr class="tool"><td>{escape(t.name)}</td><td>{escape(t.kind)}</td><td>'
                       + escape("; ".join(d.describe(60) for d in t.differences)) + "</td></tr>" for t in result.tools)
             + "</tbody></table>")
    sections = (f'<section id="server"><h2>Server <span class="sub">protocol version, capabilities, serverInfo</span></h2>'
                f'{_path_table(result.server + result.server_info, "server-diff")}</section>'
                f'<section id="tools"><h2>Tools <span class="sub">added, removed, changed</span></h2>{tools}</section>')
    note = f"{len(result.calls):,} calls aligned; {len(result.changed_calls):,} differ."
    if same_kept < sum(1 for c in result.calls if c.kind == "same"):
        note += f" The JSON of calls that are the same is kept for the first {SAME_WITH_JSON}."
    title = f"{str(result.a).rsplit('/', 1)[-1]} → {str(result.b).rsplit('/', 1)[-1]}"
    return _page(kind="mcpreel diff", title=title, facts=facts, cards=_cards(counts), sections=sections, calls=calls,
                 note=note, calls_sub="aligned by method, tool and order; click a row for A and B side by side",
                 options=[("differs", "added, removed or changed"), ("all", "all calls"), ("changed", "changed"),
                          ("added", "added (only in B)"), ("removed", "removed (only in A)"), ("same", "same"),
                          ("latency", "latency shift")])


def replay_page(report: Any, *, payload_chars: int = 20_000) -> str:
    """The page of a :class:`~mcpreel.replay.verify.ReplayReport`: recorded (A) against replayed (B)."""
    from mcpreel.compare.diff import error_status

    calls = []
    same_kept = 0
    for r in report.results:
        keep = r.status != "same" or same_kept < SAME_WITH_JSON
        same_kept += r.status == "same" and keep
        b_response = r.response if r.response is not None else ({"error": r.error} if r.error else None)
        item: dict[str, Any] = {
            "label": f"#{r.index} {r.method}" + (f" {r.tool}" if r.tool else ""), "method": r.method,
            "subject": r.tool, "kind": r.status, "status_a": error_status(r.recorded_response),
            "status_b": r.error if r.error and r.response is None else error_status(r.response),
            "latency_a": r.recorded_duration_ms,
            "latency_b": None if r.duration_ms is None else round(r.duration_ms, 1), "latency_shift": False,
            "diffs": _diffs(r.diff), "a_line": r.source, "b_line": None, "json": keep,
            "a_title": f"recorded (record {r.source})" if r.source is not None else "recorded",
            "b_title": "replayed: sent and answered",
        }
        if keep:
            item.update(a_request=_pretty(r.original_request, payload_chars),
                        a_response=_pretty(r.recorded_response, payload_chars),
                        b_request=_pretty(r.sent_message, payload_chars),
                        b_response=_pretty(b_response, payload_chars))
        calls.append(item)
    counts: dict[str, int] = {"requests": len(report.results)}
    for r in report.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    counts["server requests"] = len(report.server_requests)
    counts["unanswerable server requests"] = len(report.unmatched_server_requests)
    facts = _facts([("session", report.session), ("target", report.target), ("transport", report.transport),
                    ("handshake", report.handshake), ("ended", report.ended), ("verdict", report.summary())]
                   + [("note", n) for n in report.notes])
    if report.server_requests:
        rows = "".join(f'<tr class="server-request"><td>{escape(s.method)}</td>'
                       f'<td>{escape(s.answered_from or "not in the recording: refused")}</td>'
                       f'<td>{escape(s.error or "")}</td></tr>' for s in report.server_requests)
        server = (f'<table id="server-requests" class="paths"><thead><tr><th>method</th><th>answered from</th>'
                  f"<th>error</th></tr></thead><tbody>{rows}</tbody></table>")
    else:
        server = '<p class="empty">The server sent no request of its own.</p>'
    sections = (f'<section id="server"><h2>Server requests <span class="sub">sampling, elicitation, roots: answered '
                f'from the recording</span></h2>{server}</section>')
    note = f"{len(report.results):,} requests replayed; {sum(1 for r in report.results if r.status != 'same'):,} not the same."
    if same_kept < counts.get("same", 0):
        note += f" The JSON of requests that are the same is kept for the first {SAME_WITH_JSON}."
    title = f"replay of {str(report.session).rsplit('/', 1)[-1]}"
    return _page(kind="mcpreel replay", title=title, facts=facts, cards=_cards(counts, ("requests", "same", "server requests")),
                 sections=sections, calls=calls, note=note,
                 calls_sub="recorded against replayed; click a row for both side by side",
                 options=[("differs", "different, error or unrecorded"), ("all", "all requests"),
                          ("different", "different"), ("error", "error"), ("unrecorded", "unrecorded"),
                          ("same", "same")])
