"""``diff A B --html`` and ``replay ... --html``: a comparison as one self-contained page.

It draws what ``diff`` (:class:`~mcpreel.compare.diff.SessionDiff`) or ``replay``
(:class:`~mcpreel.replay.results.ReplayReport`) already found; this module only shows it: the server's
and the tools' differences path by path (diff) or the server's own requests (replay), and every call
with its status and latency on both sides; a call opens to its differences (path, A, B) and to the
request and response of both sides. The JSON of calls that are the same is kept for the first
:data:`SAME_WITH_JSON` only, so a comparison of two long sessions stays small. Same page rules as the
report (:mod:`mcpreel.report.html`): no network, every text escaped, ``textContent`` only, and only the
page's own script and stylesheet allowed to run (:mod:`mcpreel.report.page`).

What changed is marked where it is: a call's differences are paths (``$.result.content[0].text``), and
the lines of the side-by-side JSON those paths lead to are sent with the page (:func:`marked_lines`) and
drawn marked. Tool changes carry the contract class the terminal prints (breaking, dangerous, minor: the
contract check's own classifier, :func:`mcpreel.contract.compare.classify_tool_changes`, run by the
caller). A path is one unbreakable piece of text: a column of paths wraps between paths, never inside one.

A page is made to be shared, so by default (``redact=True``) everything it shows of the recordings (the
requests and responses, the values at each differing path, the replay's target, errors and notes) goes
through the default :class:`~mcpreel.redact.Redactor` (the rules of ``mcpreel redact``); the calls note
says whether it did (``--no-redact`` shows them as recorded).
"""

from __future__ import annotations

from html import escape
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.compare.jsondiff import format_path
from mcpreel.report.page import asset, fill, script_json
from mcpreel.report.svg import plural

__all__ = ["SAME_WITH_JSON", "diff_page", "marked_lines", "replay_page"]

SAME_WITH_JSON = 100


class _Shown:
    """What the page shows of recorded values and texts: through the default redaction, or as they are."""

    def __init__(self, redact: bool):
        self.redactor: Any = None
        if redact:
            from mcpreel.redact import Redactor

            self.redactor = Redactor()

    def value(self, value: Any) -> Any:
        return self.redactor.value(value) if self.redactor is not None and value is not None else value

    def at(self, path: str, value: Any) -> Any:
        """A difference's value, redacted as in its place (the path's last member counts for the key rule)."""
        return self.redactor.value_at(path, value) if self.redactor is not None else value

    def text(self, text: Any) -> Any:
        return self.redactor.text(text) if self.redactor is not None and isinstance(text, str) and text else text

    def note(self) -> str:
        return " Secrets redacted ([REDACTED])." if self.redactor is not None else \
            " Not redacted (--no-redact): secrets are shown."


def _pretty(value: Any, limit: int, shown: _Shown | None = None, paths: list[str] | None = None,
            marks: list[int] | None = None) -> str | None:
    """``value`` as indented JSON (redacted when ``shown`` says so), cut after ``limit`` characters; the
    numbers of its lines that ``paths`` lead to are added to ``marks``."""
    if value is None:
        return None
    if shown is not None:
        value = shown.value(value)
    text = jsonio.dumps_indented(value).decode("utf-8", "replace")
    if paths and marks is not None:
        marks.extend(marked_lines(value, paths, text.count("\n") + 1))
    if len(text) > limit:
        text = text[:limit] + f"\n… cut: {len(text) - limit:,} more characters of {len(text):,}"
    return text


def _line_paths(value: Any, path: str, out: list[tuple[str, bool]]) -> None:
    """The path of each line of ``value`` as indented JSON (one member a line, a container's opening and
    closing lines its own path; an empty container is one line), with whether the line is a leaf."""
    if isinstance(value, dict) and value:
        out.append((path, False))
        for key, member in value.items():
            _line_paths(member, format_path(path, str(key)), out)
        out.append((path, False))
    elif isinstance(value, list) and value:
        out.append((path, False))
        for i, member in enumerate(value):
            _line_paths(member, format_path(path, i), out)
        out.append((path, False))
    else:
        out.append((path, True))


def _within(inner: str, outer: str) -> bool:
    """``inner`` is ``outer`` or a path under it (``$.a.b`` is under ``$.a``; ``$.ab`` is not)."""
    return inner == outer or (inner.startswith(outer) and inner[len(outer)] in ".[")


def marked_lines(value: Any, paths: list[str], line_count: int | None = None) -> list[int]:
    """The 0-based numbers of the lines of ``value``'s indented JSON that a difference at one of ``paths``
    changed: the line of the path itself, every line under it, and a leaf the path goes into (JSON inside
    a text, compared as JSON). ``line_count`` is the text's own count, a check that the walk saw the same
    lines: when it differs nothing is marked rather than the wrong lines."""
    lines: list[tuple[str, bool]] = []
    _line_paths(value, "$", lines)
    if line_count is not None and line_count != len(lines):
        return []
    return [n for n, (path, leaf) in enumerate(lines)
            if any(_within(path, d) or (leaf and _within(d, path)) for d in paths)]


def _short(value: Any, limit: int = 2000) -> str:
    text = jsonio.dumps_str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _diffs(differences: list[Any], shown: _Shown) -> list[dict[str, Any]]:
    out = []
    for d in differences:
        item: dict[str, Any] = {"path": d.path, "kind": d.kind}
        if d.kind != "added":
            item["recorded"] = _short(shown.at(d.path, d.recorded))
        if d.kind != "removed":
            item["new"] = _short(shown.at(d.path, d.new))
        out.append(item)
    return out


def _path(path: str) -> str:
    """A path as one unbreakable piece: a column of paths wraps between them, not inside one."""
    return f'<code class="path">{escape(path)}</code>'


def _path_table(differences: list[Any], table_id: str, shown: _Shown) -> str:
    if not differences:
        return '<p class="empty">No difference.</p>'
    rows = "".join(
        f'<tr class="path"><td>{_path(d["path"])}</td><td>{escape(d["kind"])}</td>'
        f'<td>{escape(d.get("recorded", ""))}</td><td>{escape(d.get("new", ""))}</td></tr>'
        for d in _diffs(differences, shown))
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
        "TITLE": escape(title), "KIND": escape(kind), "FACTS": facts, "CARDS": cards, "SECTIONS": sections,
        "CALLS_SUB": escape(calls_sub), "CALLS_NOTE": escape(note), "KIND_OPTIONS": _options(options),
        "DATA": doc, "JS": asset("compare.js"),
    }
    return fill("compare.html", parts)


def _facts(rows: list[tuple[str, Any]], shown: _Shown) -> str:
    return '<dl class="facts">' + "".join(
        f"<dt>{escape(k)}</dt><dd>{escape(shown.text(str(v)))}</dd>" for k, v in rows if v is not None) + "</dl>"


def _panes(item: dict[str, Any], payload_chars: int, shown: _Shown, a_request: Any, a_response: Any,
           b_request: Any, b_response: Any, request_paths: list[str], response_paths: list[str]) -> None:
    """The four JSON panes of a call, and the lines of each that its differences changed (``*_marks``)."""
    for side, request, response in (("a", a_request, a_response), ("b", b_request, b_response)):
        marks: list[int] = []
        item[f"{side}_request"] = _pretty(request, payload_chars, shown, request_paths, marks)
        item[f"{side}_request_marks"] = marks
        marks = []
        item[f"{side}_response"] = _pretty(response, payload_chars, shown, response_paths, marks)
        item[f"{side}_response_marks"] = marks


_CLASS_ORDER = ("breaking", "dangerous", "minor")


def _tool_of_change(path: str) -> str | None:
    """The tool a contract change is about: its path is ``/tools/NAME/...`` (``~1`` for ``/``, ``~0`` for ``~``)."""
    parts = path.split("/")
    if len(parts) < 3 or parts[1] != "tools":
        return None
    return parts[2].replace("~1", "/").replace("~0", "~")


def _tools_section(result: Any, classes: list[Any] | None, shown: _Shown) -> str:
    """The tools that changed, each with its contract class (the worst of its changes) and its changes as the
    terminal prints them (``breaking  /tools/x/inputSchema/required: ...``), then the paths that differ."""
    if not result.tools:
        return '<p class="empty">No difference.</p>'
    by_tool: dict[str, list[Any]] = {}
    for ch in classes or ():
        name = _tool_of_change(ch.path)
        if name is not None:
            by_tool.setdefault(name, []).append(ch)
    rows = []
    for t in result.tools:
        changes = by_tool.get(t.name, [])
        worst = min((ch.cls for ch in changes), key=_CLASS_ORDER.index, default=None)
        cls_cell = (f'<span class="contract {escape(worst)}">{escape(worst)}</span>' if worst else
                    '<span class="contract none">–</span>')
        said = "".join(f'<li class="change {escape(ch.cls)}"><b>{escape(ch.cls)}</b> {_path(ch.path)}: '
                       f"{escape(shown.text(ch.message))}</li>" for ch in changes)
        paths = "; ".join(f'{_path(d.path)} {escape(shown.text(d.describe(60)[len(d.path) + 2:]))}'
                          for d in t.differences)
        rows.append(f'<tr class="tool" data-contract="{escape(worst or "")}"><td>{_path(t.name)}</td>'
                    f'<td>{escape(t.kind)}</td><td class="contract-cell">{cls_cell}'
                    + (f'<ul class="changes">{said}</ul>' if said else "") + f'</td><td class="paths-cell">{paths}</td></tr>')
    legend = ('<p class="note">The contract class is what the change does to a client that relied on the old tool '
              "(as `mcpreel diff` and `mcpreel contract check` print it): breaking, a call that worked can fail; "
              "dangerous, nothing fails but what the model reads or may assume changed; minor, additions.</p>")
    return ('<table id="tools-diff" class="paths"><thead><tr><th>tool</th><th>change</th><th>contract</th>'
            f'<th>paths</th></tr></thead><tbody>{"".join(rows)}</tbody></table>' + (legend if classes else ""))


def diff_page(result: Any, *, payload_chars: int = 20_000, redact: bool = True, classes: list[Any] | None = None) -> str:
    """The page of a :class:`~mcpreel.compare.diff.SessionDiff` (redacted unless ``redact=False``).

    ``classes`` are the contract changes of the tools (:func:`mcpreel.contract.compare.classify_tool_changes`
    of the two recordings, what the terminal prints as ``tool contract:`` lines): each changed tool shows its
    class. Without them (a caller that did not classify) the column says nothing."""
    shown = _Shown(redact)
    calls = []
    same_kept = 0
    for c in result.calls:
        keep = c.kind != "same" or same_kept < SAME_WITH_JSON
        same_kept += c.kind == "same" and keep
        item: dict[str, Any] = {
            "label": c.label, "method": c.method, "subject": c.subject, "kind": c.kind,
            "status_a": c.status_a, "status_b": c.status_b, "latency_a": c.latency_a, "latency_b": c.latency_b,
            "latency_shift": c.latency_shift, "diffs": _diffs(c.arguments, shown) + _diffs(c.result, shown),
            "a_line": c.a.source if c.a else None, "b_line": c.b.source if c.b else None, "json": keep,
        }
        if keep:
            _panes(item, payload_chars, shown, c.a.recorded_request if c.a else None, c.a.response if c.a else None,
                   c.b.recorded_request if c.b else None, c.b.response if c.b else None,
                   [d.path for d in c.arguments], [d.path for d in c.result])
        calls.append(item)
    counts = {"differences": result.difference_count, "server": len(result.server), "tools": len(result.tools)}
    for c in result.calls:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    counts["latency shifts"] = len(result.latency_shifts)
    facts = _facts([("A (recorded)", result.a), ("B (new)", result.b), ("verdict", result.summary())]
                   + [("note", n) for n in result.notes], shown)
    tools = _tools_section(result, classes, shown)
    sections = (f'<section id="server"><h2>Server <span class="sub">protocol version, capabilities, serverInfo</span></h2>'
                f'{_path_table(result.server + result.server_info, "server-diff", shown)}</section>'
                f'<section id="tools"><h2>Tools <span class="sub">added, removed, changed</span></h2>{tools}</section>')
    changed = len(result.changed_calls)
    note = f"{plural(len(result.calls), 'call')} aligned; {changed:,} differ{'s' if changed == 1 else ''}."
    if same_kept < sum(1 for c in result.calls if c.kind == "same"):
        note += f" The JSON of calls that are the same is kept for the first {SAME_WITH_JSON}."
    note += shown.note()
    title = f"{str(result.a).rsplit('/', 1)[-1]} → {str(result.b).rsplit('/', 1)[-1]}"
    return _page(kind="mcpreel diff", title=title, facts=facts, cards=_cards(counts), sections=sections, calls=calls,
                 note=note, calls_sub="aligned by method, tool and order; click a row for A and B side by side",
                 options=[("differs", "added, removed or changed"), ("all", "all calls"), ("changed", "changed"),
                          ("added", "added (only in B)"), ("removed", "removed (only in A)"), ("same", "same"),
                          ("latency", "latency shift")])


def replay_page(report: Any, *, payload_chars: int = 20_000, redact: bool = True) -> str:
    """The page of a :class:`~mcpreel.replay.results.ReplayReport`: recorded (A) against replayed (B)
    (redacted unless ``redact=False``)."""
    from mcpreel.compare.diff import error_status

    shown = _Shown(redact)
    calls = []
    same_kept = 0
    for r in report.results:
        keep = r.status != "same" or same_kept < SAME_WITH_JSON
        same_kept += r.status == "same" and keep
        b_response = r.response if r.response is not None else ({"error": r.error} if r.error else None)
        item: dict[str, Any] = {
            "label": f"#{r.index} {r.method}" + (f" {r.tool}" if r.tool else ""), "method": r.method,
            "subject": r.tool, "kind": r.status, "status_a": error_status(r.recorded_response),
            "status_b": shown.text(r.error) if r.error and r.response is None else error_status(r.response),
            "latency_a": r.recorded_duration_ms,
            "latency_b": None if r.duration_ms is None else round(r.duration_ms, 1), "latency_shift": False,
            "diffs": _diffs(r.diff, shown), "a_line": r.source, "b_line": None, "json": keep,
            "a_title": f"recorded (record {r.source})" if r.source is not None else "recorded",
            "b_title": "replayed: sent and answered",
        }
        if keep:
            _panes(item, payload_chars, shown, r.original_request, r.recorded_response, r.sent_message, b_response,
                   [], [d.path for d in r.diff])
        calls.append(item)
    counts: dict[str, int] = {"requests": len(report.results)}
    for r in report.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    counts["server requests"] = len(report.server_requests)
    counts["unanswerable server requests"] = len(report.unmatched_server_requests)
    facts = _facts([("session", report.session), ("target", report.target), ("transport", report.transport),
                    ("handshake", report.handshake), ("ended", report.ended), ("verdict", report.summary())]
                   + [("note", n) for n in report.notes], shown)
    if report.server_requests:
        rows = "".join(f'<tr class="server-request"><td>{escape(s.method)}</td>'
                       f'<td>{escape(s.answered_from or "not in the recording: refused")}</td>'
                       f'<td>{escape(shown.text(s.error) or "")}</td></tr>' for s in report.server_requests)
        server = (f'<table id="server-requests" class="paths"><thead><tr><th>method</th><th>answered from</th>'
                  f"<th>error</th></tr></thead><tbody>{rows}</tbody></table>")
    else:
        server = '<p class="empty">The server sent no request of its own.</p>'
    sections = (f'<section id="server"><h2>Server requests <span class="sub">sampling, elicitation, roots: answered '
                f'from the recording</span></h2>{server}</section>')
    note = (f"{plural(len(report.results), 'request')} replayed; "
            f"{sum(1 for r in report.results if r.status != 'same'):,} not the same.")
    if same_kept < counts.get("same", 0):
        note += f" The JSON of requests that are the same is kept for the first {SAME_WITH_JSON}."
    note += shown.note()
    title = f"replay of {str(report.session).rsplit('/', 1)[-1]}"
    return _page(kind="mcpreel replay", title=title, facts=facts, cards=_cards(counts, ("requests", "same", "server requests")),
                 sections=sections, calls=calls, note=note,
                 calls_sub="recorded against replayed; click a row for both side by side",
                 options=[("differs", "changed, flaky, error or unrecorded"), ("all", "all requests"),
                          ("changed", "changed"), ("flaky", "flaky"), ("error", "error"), ("unrecorded", "unrecorded"),
                          ("same", "same")])
