"""Run the audit's rules over one session (a recording, or a live server's answers).

One pass over the records: list answers give the definitions (tools, prompts, resources), ``tools/call``
requests their arguments and answers their results. Every finding names its rule, the evidence path
(``/tools/search/description``, ``/calls/fetch/result/content/0/text``), the record it came from (the
line or entry of the input, as the format numbers them) and an excerpt.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpreel.audit.rules import AuditRule
from mcpreel.drafts import OUTPUTS_FIELD
from mcpreel.model import SCOPE_KEY, Session
from mcpreel.operations.walk import walk

__all__ = ["AuditReport", "Finding", "audit_session"]

EXCERPT = 160


@dataclass(frozen=True)
class Finding:
    rule: str
    name: str
    level: str
    message: str
    path: str
    record: int | None = None
    excerpt: str = ""
    server: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The finding as ``--format json`` and SARIF carry it; members without a value are left out."""
        out: dict[str, Any] = {"rule": self.rule, "name": self.name, "level": self.level, "message": self.message,
                               "path": self.path}
        if self.record is not None:
            out["record"] = self.record
        if self.excerpt:
            out["excerpt"] = self.excerpt
        if self.server:
            out["server"] = self.server
        return out


@dataclass
class AuditReport:
    findings: list[Finding] = field(default_factory=list)
    rules: list[AuditRule] = field(default_factory=list)
    tools_seen: int = 0
    calls_seen: int = 0

    def counts(self) -> dict[str, int]:
        """Findings by level, for the summary line."""
        out = {"error": 0, "warning": 0, "note": 0}
        for f in self.findings:
            out[f.level] += 1
        return out

    def failing(self, fail_on: str) -> list[Finding]:
        """The findings at or above ``fail_on`` (``error``, ``warning`` or ``note``): what makes the audit exit 1."""
        levels = {"error": ("error",), "warning": ("error", "warning"), "note": ("error", "warning", "note")}[fail_on]
        return [f for f in self.findings if f.level in levels]

    def to_json(self) -> dict[str, Any]:
        """The whole report as ``--format json`` writes it."""
        return {"counts": self.counts(), "toolsSeen": self.tools_seen, "callsSeen": self.calls_seen,
                "findings": [f.to_json() for f in self.findings]}


def _esc(name: str) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")


def _excerpt(text: str, m: re.Match[str] | None = None) -> str:
    if m is None:
        return text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")
    start = max(0, m.start() - 40)
    end = min(len(text), m.end() + 40)
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _strings(value: Any, path: str) -> Iterator[tuple[str, str, str | None]]:
    """(path, string, member name) of every string in a JSON value, in document order.

    Iterative: a value may be nested as deep as the readers accept (1024 levels), past Python's
    recursion limit for a recursive walk.
    """
    stack: list[tuple[Any, str, str | None]] = [(value, path, None)]
    while stack:
        node, at, name = stack.pop()
        if isinstance(node, str):
            yield at, node, name
        elif isinstance(node, dict):
            stack.extend((v, f"{at}/{_esc(k)}", k if isinstance(v, str) else None)
                         for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, f"{at}/{i}", None) for i, v in reversed(list(enumerate(node))))


def _param_descriptions(schema: Any, path: str) -> Iterator[tuple[str, str]]:
    if not isinstance(schema, dict):
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            p = f"{path}/properties/{_esc(name)}"
            if isinstance(sub, dict) and isinstance(sub.get("description"), str):
                yield f"{p}/description", sub["description"]
            yield from _param_descriptions(sub, p)
    if isinstance(schema.get("items"), dict):
        yield from _param_descriptions(schema["items"], f"{path}/items")


def _result_texts(result: Any, path: str) -> Iterator[tuple[str, str, str | None]]:
    if not isinstance(result, dict):
        return
    content = result.get("content")
    if isinstance(content, list):
        for i, item in enumerate(content):
            if isinstance(item, dict):
                if isinstance(item.get("text"), str):
                    yield f"{path}/content/{i}/text", item["text"], None
                res = item.get("resource")
                if isinstance(res, dict) and isinstance(res.get("text"), str):
                    yield f"{path}/content/{i}/resource/text", res["text"], None
    if "structuredContent" in result:
        yield from _strings(result["structuredContent"], f"{path}/structuredContent")
    outputs = result.get(OUTPUTS_FIELD)  # SEP-3279's result variants: each audience's copy is read too
    if isinstance(outputs, list):
        for i, output in enumerate(outputs):
            if isinstance(output, dict) and output is not result:
                yield from _result_texts({k: v for k, v in output.items() if k != OUTPUTS_FIELD},
                                         f"{path}/{OUTPUTS_FIELD}/{i}")


def _looks_secret(m: re.Match[str], group: int, rule: AuditRule) -> bool:
    """A redaction pattern's match that is not already redacted and, when the rule asks, holds a digit
    (prose such as "token contract" matches the bearer shape; real credentials have digits)."""
    from mcpreel.redact import MARKER

    value = m.group(group) if group else m.group(0)
    if not value or MARKER in m.group(0):
        return False
    return not rule.require_digit or "PRIVATE KEY" in value or any(ch.isdigit() for ch in value)


def _norm_name(name: str) -> str:
    return re.sub(r"[-_.\s]", "", name.lower())


class _Auditor:
    def __init__(self, rules: list[AuditRule]) -> None:
        self.rules = rules
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, str, str]] = set()
        self.tools: dict[Any, dict[str, tuple[dict[str, Any], int | None]]] = {}  # scope -> name -> (def, record)
        self.calls = 0

    def add(self, rule: AuditRule, path: str, record: int | None, excerpt: str = "", message: str | None = None,
            server: Any = None) -> None:
        key = (rule.id, path, excerpt)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append(Finding(rule.id, rule.name, rule.level, message or rule.message, path, record, excerpt,
                                     server if isinstance(server, str) else None))

    def texts(self, target: str, items: Sequence[tuple[str, str, str | None]], record: int | None, scope: Any) -> None:
        from mcpreel.redact import DEFAULT_PATTERNS, MARKER, is_secret_key

        for rule in self.rules:
            if target not in rule.targets:
                continue
            for path, text, key in items:
                if rule.kind == "pattern":
                    for rx in rule.patterns:
                        m = rx.search(text)
                        if m:
                            self.add(rule, path, record, _excerpt(text, m), server=scope)
                            break
                elif rule.kind == "secret":
                    if key is not None and text and text != MARKER and is_secret_key(key) and target == "tool.arguments":
                        self.add(rule, path, record, f"{key}=…", f"{rule.message}: a value under the secret key {key!r}",
                                 server=scope)
                        continue
                    for pat in DEFAULT_PATTERNS:
                        if pat.name in rule.exclude:
                            continue
                        m = next((m for m in pat.regex.finditer(text) if _looks_secret(m, pat.group, rule)), None)
                        if m is not None:
                            # the excerpt names the pattern, never the secret itself
                            self.add(rule, path, record, f"({pat.name})", f"{rule.message}: {pat.name}", server=scope)
                            break

    # -- the records ---------------------------------------------------------------------------------
    def tool_list(self, tools: list[Any], record: int | None, scope: Any) -> None:
        known = self.tools.setdefault(scope, {})
        in_this: dict[str, int] = {}
        for tool in tools:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            name = tool["name"]
            definition = {k: v for k, v in tool.items() if k != "_meta"}
            base = f"/tools/{_esc(name)}"
            in_this[name] = in_this.get(name, 0) + 1
            if in_this[name] == 2:
                for rule in self._kind("duplicate-tool"):
                    self.add(rule, base, record, name, f"{rule.message}: {name!r} listed twice in one answer", scope)
            if name in known and known[name][0] != definition:
                for rule in self._kind("definition-drift"):
                    changed = sorted(k for k in set(known[name][0]) | set(definition)
                                     if known[name][0].get(k) != definition.get(k))
                    self.add(rule, base, record, ", ".join(changed),
                             f"{rule.message}: {name!r} changed {', '.join(changed)} (first listed at record "
                             f"{known[name][1]})", scope)
            known[name] = (definition, record)
            if isinstance(tool.get("description"), str):
                self.texts("tool.description", [(f"{base}/description", tool["description"], None)], record, scope)
            params = [(p, t, None) for p, t in _param_descriptions(tool.get("inputSchema"), f"{base}/inputSchema")]
            self.texts("tool.parameter.description", params, record, scope)

    def other_list(self, method: str, result: dict[str, Any], record: int | None, scope: Any) -> None:
        if method == "prompts/list" and isinstance(result.get("prompts"), list):
            items = []
            for p in result["prompts"]:
                if isinstance(p, dict) and isinstance(p.get("name"), str):
                    base = f"/prompts/{_esc(p['name'])}"
                    if isinstance(p.get("description"), str):
                        items.append((f"{base}/description", p["description"], None))
                    for a in p.get("arguments") or []:
                        if isinstance(a, dict) and isinstance(a.get("description"), str):
                            items.append((f"{base}/arguments/{_esc(str(a.get('name')))}/description", a["description"], None))
            self.texts("prompt.description", items, record, scope)
        elif method == "resources/list" and isinstance(result.get("resources"), list):
            items = [(f"/resources/{_esc(r.get('uri', '?'))}/description", r["description"], None)
                     for r in result["resources"] if isinstance(r, dict) and isinstance(r.get("description"), str)]
            self.texts("resource.description", items, record, scope)

    def finish(self) -> None:
        groups: dict[str, set[tuple[Any, str]]] = {}
        for scope, tools in self.tools.items():
            for name in tools:
                groups.setdefault(_norm_name(name), set()).add((scope, name))
        for rule in self._kind("duplicate-tool"):
            for members in groups.values():
                if len(members) < 2:
                    continue
                ordered = sorted(members, key=lambda m: (str(m[0]), m[1]))
                names = {n for _, n in ordered}
                what = "the same name on" if len(names) == 1 else "shadowing names on"
                where = ", ".join(f"{n!r} ({s or 'this server'})" for s, n in ordered)
                scope, name = ordered[-1]
                self.add(rule, f"/tools/{_esc(name)}", self.tools[scope][name][1], where,
                         f"{rule.message}: {what} {len(ordered)} entries: {where}", scope)
        for rule in self._kind("destructive-unannotated"):
            for scope, tools in self.tools.items():
                for name, (definition, record) in tools.items():
                    ann = definition.get("annotations")
                    ann = ann if isinstance(ann, dict) else {}
                    if "readOnlyHint" in ann or "destructiveHint" in ann:
                        continue
                    if any(rx.search(name) for rx in rule.name_patterns):
                        self.add(rule, f"/tools/{_esc(name)}/annotations", record, name, server=scope)

    def _kind(self, kind: str) -> list[AuditRule]:
        return [r for r in self.rules if r.kind == kind]


def audit_session(session: Session, rules: list[AuditRule]) -> AuditReport:
    """Audit what ``session`` carried, read through the one walk (:mod:`mcpreel.operations`): answers pair
    with their requests within a client session; a task's ``tasks/result`` is its tool call's result."""
    a = _Auditor(rules)
    for step in walk(session):
        kind = step.kind
        if kind != "request" and kind != "response":
            continue
        m = step.msg
        ex = step.exchange
        if m is None or ex is None or m.dropped or m.dir is None:
            continue
        record = m.source if m.source is not None else step.index
        scope = m.extra.get(SCOPE_KEY) if m.extra else None
        if kind == "request":
            if ex.method == "tools/call":
                params = ex.params if isinstance(ex.params, dict) else {}
                tool = params.get("name") if isinstance(params.get("name"), str) else None
                a.calls += 1
                args = params.get("arguments")
                a.texts("tool.arguments", list(_strings(args, f"/calls/{_esc(tool or '?')}/arguments")), record, scope)
            continue
        if ex.dropped or ex.response is None or not isinstance(ex.response.get("result"), dict):
            continue
        result = ex.response["result"]
        method = ex.method
        op = ex.operation
        if ex.role == "result" and op is not None and op.method == "tools/call":
            method = "tools/call"  # a task's result is its creating call's tool result
        if method == "tools/list" and isinstance(result.get("tools"), list):
            a.tool_list(result["tools"], record, scope)
        elif method == "tools/call":
            tool = op.target if op is not None else ex.target
            a.texts("tool.result", list(_result_texts(result, f"/calls/{_esc(tool or '?')}/result")), record, scope)
        else:
            a.other_list(method, result, record, scope)
    a.finish()
    order = {"error": 0, "warning": 1, "note": 2}
    a.findings.sort(key=lambda f: (order[f.level], f.rule, f.path))
    return AuditReport(a.findings, rules, sum(len(t) for t in a.tools.values()), a.calls)
