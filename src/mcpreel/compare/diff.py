"""Two recordings compared: what the server offers and how it answered, side by side.

- **server**: the ``initialize`` answers (protocol version and capabilities are differences; a
  changed ``serverInfo`` is shown but is not one, since every release changes it);
- **tools**: the ``tools/list`` results (every page and every call folded into one set per side):
  tools added, removed, or changed (path-level: description, schemas, annotations);
- **calls**: requests aligned by method and what they name (the tool, prompt or resource), then by
  order: the n-th ``tools/call`` of ``echo`` in A against the n-th in B. A call only one side made is
  added or removed; a pair differs in its arguments, its result (compared like replay compares:
  ``_meta`` and ids left out, JSON text compared as JSON, ``ignore_paths`` removed) or its error
  status (``ok``, ``isError``, ``error <code>``, ``no response``);
- **latency**: a pair whose latency moved by at least ``latency_factor`` times and ``latency_min_ms``
  milliseconds. Timing is noisy, so a shift is reported but is a difference only with
  ``fail_on_latency``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpreel.compare.jsondiff import Difference, diff
from mcpreel.compare.normalize import IgnorePath, comparable, strip_volatile_meta
from mcpreel.exchanges import Exchange, build
from mcpreel.model import Session

__all__ = ["CallChange", "DiffOptions", "SessionDiff", "ToolChange", "diff_sessions", "error_status"]

_NOT_CALLS = frozenset({"initialize", "tools/list", "ping"})


@dataclass
class DiffOptions:
    ignore_paths: list[IgnorePath] = field(default_factory=list)
    latency_factor: float = 2.0
    latency_min_ms: int = 50
    fail_on_latency: bool = False


@dataclass
class ToolChange:
    name: str
    kind: str  # added | removed | changed
    differences: list[Difference] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "differences": [d.to_json() for d in self.differences]}


@dataclass
class CallChange:
    method: str
    subject: str | None
    ordinal: int  # 1-based among the calls of the same method and subject
    kind: str  # added | removed | changed | same
    a: Exchange | None = None
    b: Exchange | None = None
    arguments: list[Difference] = field(default_factory=list)
    result: list[Difference] = field(default_factory=list)
    status_a: str | None = None
    status_b: str | None = None
    latency_shift: bool = False

    @property
    def label(self) -> str:
        name = f" {self.subject}" if self.subject else ""
        return f"{self.method}{name} #{self.ordinal}"

    @property
    def latency_a(self) -> int | None:
        return self.a.latency_ms if self.a is not None else None

    @property
    def latency_b(self) -> int | None:
        return self.b.latency_ms if self.b is not None else None

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method, "subject": self.subject, "ordinal": self.ordinal, "kind": self.kind,
            "a_line": self.a.source if self.a else None, "b_line": self.b.source if self.b else None,
            "arguments": [d.to_json() for d in self.arguments], "result": [d.to_json() for d in self.result],
            "status_a": self.status_a, "status_b": self.status_b,
            "latency_ms_a": self.latency_a, "latency_ms_b": self.latency_b, "latency_shift": self.latency_shift,
        }


@dataclass
class SessionDiff:
    a: str | None
    b: str | None
    options: DiffOptions
    server: list[Difference] = field(default_factory=list)  # protocol version, capabilities
    server_info: list[Difference] = field(default_factory=list)  # serverInfo (shown, not counted)
    tools: list[ToolChange] = field(default_factory=list)
    calls: list[CallChange] = field(default_factory=list)
    tools_listed: tuple[bool, bool] = (False, False)
    notes: list[str] = field(default_factory=list)  # what the readers noticed ("A: holds no MCP messages")

    @property
    def changed_calls(self) -> list[CallChange]:
        return [c for c in self.calls if c.kind != "same"]

    @property
    def latency_shifts(self) -> list[CallChange]:
        return [c for c in self.calls if c.latency_shift]

    @property
    def difference_count(self) -> int:
        n = len(self.server) + len(self.tools) + len(self.changed_calls)
        if self.options.fail_on_latency:
            n += sum(1 for c in self.latency_shifts if c.kind == "same")
        return n

    @property
    def exit_code(self) -> int:
        return 1 if self.difference_count else 0

    def summary(self) -> str:
        kinds: dict[str, int] = {}
        for c in self.changed_calls:
            kinds[c.kind] = kinds.get(c.kind, 0) + 1
        calls = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none changed"
        text = (f"{self.difference_count} differences: server {len(self.server)}, tools {len(self.tools)}, "
                f"calls {len(self.calls)} aligned ({calls})")
        if self.latency_shifts:
            text += f", {len(self.latency_shifts)} latency shifts"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a, "b": self.b, "differences": self.difference_count, "ok": self.exit_code == 0,
            "server": [d.to_json() for d in self.server],
            "server_info": [d.to_json() for d in self.server_info],
            "tools": [t.to_json() for t in self.tools],
            "calls": [c.to_json() for c in self.calls],
            "latency_shifts": [c.label for c in self.latency_shifts],
            "notes": self.notes,
        }


def error_status(response: dict[str, Any] | None) -> str:
    """``ok``, ``isError``, ``error <code>`` or ``no response``."""
    if response is None:
        return "no response"
    if "error" in response:
        err = response["error"]
        code = err.get("code") if isinstance(err, dict) else None
        return f"error {code}" if code is not None else "error"
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return "isError"
    return "ok"


def _tools(exchanges: list[Exchange]) -> tuple[bool, dict[str, Any]]:
    tools: dict[str, Any] = {}
    listed = False
    for ex in exchanges:
        if ex.method != "tools/list" or ex.response is None:
            continue
        result = ex.response.get("result")
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            continue
        listed = True
        for tool in result["tools"]:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                tools[tool["name"]] = comparable({"result": tool})["result"]
    return listed, tools


def _init_result(exchanges: list[Exchange]) -> dict[str, Any] | None:
    for ex in exchanges:
        if ex.method == "initialize" and ex.response is not None and isinstance(ex.response.get("result"), dict):
            return ex.response["result"]
    return None


def _groups(exchanges: list[Exchange]) -> dict[tuple[str, str | None], list[Exchange]]:
    groups: dict[tuple[str, str | None], list[Exchange]] = {}
    for ex in exchanges:
        if ex.method in _NOT_CALLS or not ex.method:
            continue
        groups.setdefault((ex.method, ex.subject), []).append(ex)
    return groups


def _shifted(a: int | None, b: int | None, options: DiffOptions) -> bool:
    if a is None or b is None:
        return False
    lo, hi = min(a, b), max(a, b)
    return hi - lo >= options.latency_min_ms and hi >= options.latency_factor * max(lo, 1)


def diff_sessions(a: Session, b: Session, options: DiffOptions | None = None) -> SessionDiff:
    options = options or DiffOptions()
    ca, cb = build(a), build(b)
    out = SessionDiff(a.info.path, b.info.path, options)

    ia, ib = _init_result(ca.exchanges), _init_result(cb.exchanges)
    if ia is not None and ib is not None:
        for key in ("protocolVersion", "capabilities"):
            out.server += diff(comparable({"result": ia.get(key)})["result"],
                               comparable({"result": ib.get(key)})["result"], f"$.{key}")
        out.server_info = diff(ia.get("serverInfo"), ib.get("serverInfo"), "$.serverInfo")

    listed_a, tools_a = _tools(ca.exchanges)
    listed_b, tools_b = _tools(cb.exchanges)
    out.tools_listed = (listed_a, listed_b)
    if listed_a and listed_b:
        for name, tool in tools_a.items():
            if name not in tools_b:
                out.tools.append(ToolChange(name, "removed"))
            else:
                found = diff(tool, tools_b[name])
                if found:
                    out.tools.append(ToolChange(name, "changed", found))
        out.tools += [ToolChange(name, "added") for name in tools_b if name not in tools_a]

    ga, gb = _groups(ca.exchanges), _groups(cb.exchanges)
    for group in list(ga) + [k for k in gb if k not in ga]:
        la, lb = ga.get(group, []), gb.get(group, [])
        for i in range(max(len(la), len(lb))):
            xa = la[i] if i < len(la) else None
            xb = lb[i] if i < len(lb) else None
            change = CallChange(group[0], group[1], i + 1, "same", xa, xb)
            if xa is None or xb is None:
                change.kind = "added" if xa is None else "removed"
            else:
                change.arguments = diff(strip_volatile_meta(xa.request.get("params") or {}),
                                        strip_volatile_meta(xb.request.get("params") or {}), "$.params")
                change.status_a, change.status_b = error_status(xa.response), error_status(xb.response)
                if xa.response is not None and xb.response is not None:
                    change.result = diff(comparable(xa.response, options.ignore_paths),
                                         comparable(xb.response, options.ignore_paths))
                if change.arguments or change.result or change.status_a != change.status_b:
                    change.kind = "changed"
                change.latency_shift = _shifted(xa.latency_ms, xb.latency_ms, options)
            out.calls.append(change)
    return out
