"""Progress folded into tasks (transports-wg ``proposals/0000-tasks-are-progress.md``): a ``Task`` carries
``progress``/``progressTotal`` and ``notifications/progress`` with ``_meta.progressToken`` are gone. A session
built from the draft's own wire example (task status notifications, ``tasks/get`` answers, no progress
notification, no progress token) must read as one operation with its progress, in the walk and in OTLP, the
same way a 2025-11-25 session with progress notifications does."""

from __future__ import annotations

from typing import Any

from mcpreel import drafts
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.operations import operations
from mcpreel.operations.facts import Progress, progress_of
from mcpreel.otel.mapping import spans

T = 1_800_000_000_000
TASK_ID = "bdc2fd8b-442e-40ff-abdb-f33986513750"


def task(status: str, progress: float | None = None, total: float | None = None, text: str | None = None) -> dict:
    out: dict[str, Any] = {"taskId": TASK_ID, "status": status, "createdAt": "2026-01-30T18:22:00Z",
                           "ttl": 30000, "pollInterval": 5000}
    if progress is not None:
        out[drafts.TASK_PROGRESS_FIELD] = progress
    if total is not None:
        out[drafts.TASK_PROGRESS_TOTAL_FIELD] = total
    if text is not None:
        out[drafts.TASK_STATUS_MESSAGE_FIELD] = text
    return out


def session_without_progress_notifications() -> Session:
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "render", "arguments": {}, "task": {"ttl": 30000}}}
    raws = [
        ("in", call),
        ("out", {"jsonrpc": "2.0", "id": 2, "result": {"task": task("working", 0, 7)}}),
        ("out", {"jsonrpc": "2.0", "method": drafts.TASK_STATUS_NOTIFICATION,
                 "params": task("working", 3, 7, "Reticulating splines...")}),
        ("in", {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": TASK_ID}}),
        ("out", {"jsonrpc": "2.0", "id": 3, "result": task("working", 6, 8)}),  # the total may grow
        ("out", {"jsonrpc": "2.0", "method": drafts.TASK_STATUS_NOTIFICATION, "params": task("completed", 8, 8)}),
        ("in", {"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": TASK_ID}}),
        ("out", {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "done"}]}}),
    ]
    return Session(SessionInfo(), [Message(d, raw, T + 100 * i) for i, (d, raw) in enumerate(raws)])


def test_a_task_with_no_progress_notification_is_one_operation_with_its_progress() -> None:
    ops = list(operations(session_without_progress_notifications()))
    assert len(ops) == 1, [(o.method, o.kind) for o in ops]  # the polls and the result are not operations
    op = ops[0]
    assert op.kind == "task" and op.complete and op.status()[0] == "ok" and op.polls == 1
    assert [(p.progress, p.total) for p in op.progress] == [(0, 7), (3, 7), (6, 8), (8, 8)]
    assert {p.via for p in op.progress} == {"task"}
    assert op.progress[1].message == "Reticulating splines..."


def test_both_carriers_read_the_same() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 3, "total": 7, "message": "m"}}
    status = {"jsonrpc": "2.0", "method": drafts.TASK_STATUS_NOTIFICATION,
              "params": {"taskId": "t", "status": "working", "progress": 3, "progressTotal": 7, "statusMessage": "m"}}
    assert progress_of(note) == Progress(3, 7, "m", "notification")
    assert progress_of(status) == Progress(3, 7, "m", "task")
    # a status with no progress reports none; a boolean is not a number
    assert progress_of({"method": drafts.TASK_STATUS_NOTIFICATION, "params": {"taskId": "t", "status": "working"}}) is None
    assert progress_of({"method": "notifications/progress", "params": {"progressToken": 1, "progress": True}}) is None


def test_a_progress_notification_session_still_reads_its_progress() -> None:
    raws = [("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "countdown", "arguments": {}, "_meta": {"progressToken": "p"}}}),
            ("out", {"jsonrpc": "2.0", "method": "notifications/progress",
                     "params": {"progressToken": "p", "progress": 1, "total": 2}}),
            ("out", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})]
    session = Session(SessionInfo(), [Message(d, raw, T + i) for i, (d, raw) in enumerate(raws)])
    (op,) = list(operations(session))
    assert [(p.progress, p.total, p.via) for p in op.progress] == [(1, 2, "notification")]


def test_otlp_reads_a_tasks_progress_as_it_reads_progress_notifications() -> None:
    got = spans(session_without_progress_notifications())
    (span,) = [s for s in got if s.name.startswith("tools/call")]
    progress = [(e.name, e.attributes.get("mcp.progress"), e.attributes.get("mcp.progress.total"))
                for e in span.events if "mcp.progress" in e.attributes]
    assert progress == [(drafts.TASK_STATUS_NOTIFICATION, 3, 7), ("tasks/get", 6, 8),
                        (drafts.TASK_STATUS_NOTIFICATION, 8, 8)], [(e.name, e.attributes) for e in span.events]
    note = next(e for e in span.events if e.attributes.get("mcp.progress") == 3)
    assert note.attributes["mcp.progress.message"] == "Reticulating splines..."
