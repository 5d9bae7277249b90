"""What a diff of two recordings found: its options, and the changes it lists (server, tools, calls).

These records sit below both the streaming comparison (:mod:`mcpreel.compare.stream`, which fills them)
and :mod:`mcpreel.compare.diff` (which collects them for callers that want every call at once), so the
two do not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpreel._infra.nesting import cut_repr
from mcpreel.compare.jsondiff import Difference
from mcpreel.compare.normalize import IgnorePath
from mcpreel.operations.cassette import Turn

__all__ = ["WINDOW", "CallChange", "DiffOptions", "SessionDiff", "ToolChange", "error_status", "latency_shifted"]

#: default bound on waiting requests and on pending unpaired calls, per side
WINDOW = 10_000


@dataclass
class DiffOptions:
    ignore_paths: list[IgnorePath] = field(default_factory=list)
    latency_factor: float = 2.0
    latency_min_ms: int = 50
    fail_on_latency: bool = False
    window: int = WINDOW  # calls held waiting for their counterpart or answer, per side (see compare.stream)


@dataclass
class ToolChange:
    name: str
    kind: str  # added | removed | changed
    differences: list[Difference] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The change as ``--json`` and the HTML page carry it (its differences path by path)."""
        return {"name": self.name, "kind": self.kind, "differences": [d.to_json() for d in self.differences]}


@dataclass
class CallChange:
    method: str
    subject: str | None
    ordinal: int  # 1-based among the calls of the same method and subject
    kind: str  # added | removed | changed | same
    a: Turn | None = None
    b: Turn | None = None
    arguments: list[Difference] = field(default_factory=list)
    result: list[Difference] = field(default_factory=list)
    status_a: str | None = None
    status_b: str | None = None
    latency_shift: bool = False

    @property
    def label(self) -> str:
        """How a person finds the call again: ``tools/call echo #2`` (method, what it named, its ordinal)."""
        name = f" {self.subject}" if self.subject else ""
        return f"{self.method}{name} #{self.ordinal}"

    @property
    def latency_a(self) -> int | None:
        """A's latency for this call (None when A made no such call or never had an answer)."""
        return self.a.latency_ms if self.a is not None else None

    @property
    def latency_b(self) -> int | None:
        """B's latency for this call (None when B made no such call or never had an answer)."""
        return self.b.latency_ms if self.b is not None else None

    def to_json(self) -> dict[str, Any]:
        """The call as ``--json`` carries it: the lines in each file, so a reader can open the records that differ."""
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
    # set by the stream (whose calls are handed out, not kept): calls by kind, latency shifts, and the
    # shifts of same calls (differences under fail_on_latency)
    counted: dict[str, int] | None = None
    latency_shift_count: int = 0
    latency_differences: int = 0

    @property
    def changed_calls(self) -> list[CallChange]:
        """The kept calls that are not the same (what the report lists without ``--all``)."""
        return [c for c in self.calls if c.kind != "same"]

    @property
    def latency_shifts(self) -> list[CallChange]:
        """The kept calls whose latency moved (shown, and differences only under ``fail_on_latency``)."""
        return [c for c in self.calls if c.latency_shift]

    def kinds(self) -> dict[str, int]:
        """Aligned calls by kind: same, changed, added, removed."""
        if self.counted is not None:
            return dict(self.counted)
        kinds = {"same": 0, "changed": 0, "added": 0, "removed": 0}
        for c in self.calls:
            kinds[c.kind] += 1
        return kinds

    @property
    def difference_count(self) -> int:
        """What decides the exit code: server and tool changes, calls changed, added or removed, and latency shifts
        only when asked."""
        kinds = self.kinds()
        n = len(self.server) + len(self.tools) + kinds["changed"] + kinds["added"] + kinds["removed"]
        if self.options.fail_on_latency:
            if self.counted is not None:
                n += self.latency_differences
            else:
                n += sum(1 for c in self.latency_shifts if c.kind == "same")
        return n

    @property
    def exit_code(self) -> int:
        """1 when anything differs, else 0 (CI tells a difference from a run that failed, exit 2)."""
        return 1 if self.difference_count else 0

    def summary(self) -> str:
        """One line: ``0 differences: server 0, tools 0; 500000 calls the same, 0 changed, 0 added, 0 removed``."""
        k = self.kinds()
        text = (f"{self.difference_count} differences: server {len(self.server)}, tools {len(self.tools)}; "
                f"{k['same']} calls the same, {k['changed']} changed, {k['added']} added, {k['removed']} removed")
        shifts = self.latency_shift_count if self.counted is not None else len(self.latency_shifts)
        if shifts:
            text += f", {shifts} latency shifts"
        return text

    def to_json(self) -> dict[str, Any]:
        """The whole comparison as ``--json`` writes it when every call was kept (the library's and the page's form)."""
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
        return f"error {cut_repr(code, 80)}" if code is not None else "error"
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return "isError"
    return "ok"


def latency_shifted(a: int | None, b: int | None, options: DiffOptions) -> bool:
    """Whether a pair's latency moved by both the factor and the floor: a 1 ms -> 3 ms change is noise, not a shift."""
    if a is None or b is None:
        return False
    lo, hi = min(a, b), max(a, b)
    return hi - lo >= options.latency_min_ms and hi >= options.latency_factor * max(lo, 1)
