"""What the mock keeps for one connection's operations that live across messages: tasks and listen streams.

**Tasks** (the 2025-11-25 utility and the 2026-07-28 extension). When a recorded call that created a task
is answered, the connection keeps that task (its id is the recorded one: the id the mock gave). Then:

- ``tasks/get`` answers the recorded polls' answers in order, then the terminal one for as long as the
  client polls; a client that polls more slowly than the recording is not held back: it gets at least the
  status the recording had reached at the same time since the task was created. How many times it polls
  does not matter: fewer polls reach the terminal status at the recorded pace, more repeat it.
- ``tasks/result`` answers the recorded result (at any time: the 2025-11-25 request blocks until the task
  ends, and the recording holds that end);
- ``tasks/cancel`` answers the recorded cancel, or the task with status ``cancelled``; later polls say
  ``cancelled`` and ``tasks/result`` is an error;
- ``tasks/list`` lists the connection's tasks as they stand.

The ``notifications/tasks/status`` the recording has before a poll's answer are sent before it.

**Listen streams** (2026-07-28 ``subscriptions/listen``). A matched listen request is answered as a
stream: its acknowledgement first, then each recorded notification where the recording had it (before
the answer of the client request that was running when it came; right after the acknowledgement when
none was), each tagged with the *live* request's id as its ``subscriptionId``; the stream ends on the
client's ``notifications/cancelled`` (or with the recorded answer, when the server ended it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from mcpreel._infra.correlation import verbatim_key
from mcpreel.operations.facts import (
    META_SUBSCRIPTION_ID,
    TERMINAL_TASK_STATUSES,
    created_task,
    task_id_param,
    task_status_of,
)
from mcpreel.operations.walk import Operation

if TYPE_CHECKING:
    from mcpreel.operations.cassette import Turn

__all__ = ["ServedStreams", "ServedTasks"]

Emit = Callable[[dict[str, Any]], None]
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


class _Task:
    __slots__ = ("op", "created", "t0", "polls", "status", "last", "cancelled")

    def __init__(self, op: Operation, created: dict[str, Any]) -> None:
        self.op = op
        self.created = created  # the recorded answer that created it
        self.t0 = time.monotonic()
        self.polls = 0
        self.status = task_status_of(created) or "working"
        self.last: dict[str, Any] | None = _task_object(created)
        self.cancelled = False


def _task_object(answer: dict[str, Any] | None) -> dict[str, Any] | None:
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return None
    task = result.get("task")
    return dict(task) if isinstance(task, dict) else {k: v for k, v in result.items() if k not in ("result", "error")}


class ServedTasks:
    """One connection's tasks (see the module's docstring)."""

    def __init__(self, recordings: list[list[Turn]]) -> None:
        self.recordings = recordings  # the client turns of the recording (and of each of its sessions)
        self.tasks: dict[tuple[str, Any], _Task] = {}
        self._turn_of: dict[int, Turn] | None = None  # walk exchange -> its turn, built at the first task

    def created(self, turn: Turn) -> None:
        """A recorded call was answered: when it created a task, the connection now has that task."""
        op = turn.operation
        if op is None or op.kind != "task" or turn.role != "call" or turn.response is None:
            return
        task_id = created_task(turn.response)
        if task_id is not None:
            self.tasks[verbatim_key(task_id)] = _Task(op, turn.response)

    def answer(self, message: dict[str, Any], emit: Emit, shape: Callable[[Any, str], Any]) -> bool:
        """Answer a ``tasks/*`` request about a task of this connection; False when it is not one's."""
        method = message.get("method")
        if method == "tasks/list":
            if not self.tasks:
                return False
            listed = [{**(t.last or {}), "status": t.status} for t in self.tasks.values()]
            emit({"jsonrpc": "2.0", "id": message["id"], "result": shape({"tasks": listed}, "tasks/list")})
            return True
        task_id = task_id_param(message)
        task = self.tasks.get(verbatim_key(task_id)) if task_id is not None else None
        if task is None:
            return False
        if method == "tasks/get":
            self._poll(task, message, emit, shape)
        elif method == "tasks/result":
            self._result(task, message, emit, shape)
        elif method == "tasks/cancel":
            self._cancel(task, message, emit, shape)
        else:
            return False
        return True

    def _recorded(self, task: _Task, role: str) -> list[Turn]:
        """The recorded turns of a task in one role (``poll``, ``result``, ``cancel``) that were answered."""
        if self._turn_of is None:
            self._turn_of = {id(t.wire): t for turns in self.recordings for t in turns if t.wire is not None}
        out: list[Turn] = []
        for ex in task.op.exchanges:
            turn = self._turn_of.get(id(ex)) if ex.role == role else None
            if turn is not None and turn.response is not None:
                out.append(turn)
        return out

    def _poll(self, task: _Task, message: dict[str, Any], emit: Emit, shape: Callable[[Any, str], Any]) -> None:
        polls = self._recorded(task, "poll")
        if task.cancelled or not polls:
            now = task.status if task.cancelled else (task.op.task_status or task.status)
            answer: dict[str, Any] = {"jsonrpc": "2.0", "result": {**(task.last or {}), "status": now}}
        else:
            # the recorded answers in order; a slow poller gets at least the status the recording had by now
            elapsed_ms = (time.monotonic() - task.t0) * 1000.0
            start = task.op.t
            by_time = 0
            if start is not None:
                by_time = sum(1 for ex in polls if ex.t_request is not None and ex.t_request - start <= elapsed_ms)
            i = min(max(task.polls, by_time - 1), len(polls) - 1)
            turn = polls[i]
            for step in turn.before:
                if "id" not in step:
                    emit(step)
            answer = turn.response or {}
        task.polls += 1
        if isinstance(answer.get("result"), dict):
            task.last = _task_object(answer) or task.last
            status = task_status_of(answer)
            if status is not None and not task.cancelled:
                task.status = status
        if "result" in answer:
            answer = {**answer, "result": shape(answer["result"], "tasks/get")}
        emit({**answer, "id": message["id"]})

    def _result(self, task: _Task, message: dict[str, Any], emit: Emit, shape: Callable[[Any, str], Any]) -> None:
        if task.cancelled:
            emit({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": "Task cancelled"}})
            return
        results = self._recorded(task, "result")
        if not results:
            polls = self._recorded(task, "poll")
            final = polls[-1].response if polls else None
            emit({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32602, "message": "mcpreel: the recording has no tasks/result of this task",
                "data": {"status": task_status_of(final) if final else task.status}}})
            return
        answer = results[0].response or {}
        if task.status not in TERMINAL_TASK_STATUSES:
            task.status = task.op.task_status or "completed"
        if "result" in answer:
            answer = {**answer, "result": shape(answer["result"], "tools/call")}
        emit({**answer, "id": message["id"]})

    def _cancel(self, task: _Task, message: dict[str, Any], emit: Emit, shape: Callable[[Any, str], Any]) -> None:
        recorded = self._recorded(task, "cancel")
        if task.status in TERMINAL_TASK_STATUSES and not recorded:
            emit({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32602, "message": f"Cannot cancel task: already in terminal status {task.status!r}"}})
            return
        task.cancelled = True
        task.status = "cancelled"
        if recorded:
            answer = recorded[0].response or {}
        else:
            answer = {"jsonrpc": "2.0", "result": {**(task.last or {}), "status": "cancelled"}}
        task.last = {**(task.last or {}), "status": "cancelled"}
        if "result" in answer:
            answer = {**answer, "result": shape(answer["result"], "tasks/cancel")}
        emit({**answer, "id": message["id"]})


class _Stream:
    __slots__ = ("live_id", "emit", "ended")

    def __init__(self, live_id: Any, emit: Emit, ended: asyncio.Future[None]) -> None:
        self.live_id = live_id
        self.emit = emit
        self.ended = ended


class ServedStreams:
    """One connection's open listen streams (see the module's docstring)."""

    def __init__(self, recordings: list[list[Turn]]) -> None:
        self.recordings = recordings  # the client turns of the recording (and of each of its sessions)
        self.open: dict[tuple[str, Any], _Stream] = {}
        #: a recorded client turn -> the stream notifications to send before its answer
        self.before: dict[int, list[tuple[_Stream, dict[str, Any]]]] = {}

    def serve(self, turn: Turn, message: dict[str, Any], emit: Emit,
              answer: Callable[[Turn, Any, Emit], None]) -> Coroutine[Any, Any, None]:
        """Answer a matched listen request as a stream; the coroutine ends when the stream does."""
        live_id = message.get("id")
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        stream = _Stream(live_id, emit, ended)
        self.open[verbatim_key(live_id)] = stream
        op = turn.operation
        notes = list(op.notes) if op is not None else []
        running = self._running_turns(turn)
        for index, note in notes:
            owner = next((t for t, lo, hi in running if lo < index <= hi), None)
            if owner is None or note.get("method") == ACKNOWLEDGED:
                emit(_tagged(note, live_id))
            else:
                self.before.setdefault(id(owner), []).append((stream, note))
        return self._until_ended(turn, stream, answer)

    async def _until_ended(self, turn: Turn, stream: _Stream, answer: Callable[[Turn, Any, Emit], None]) -> None:
        cancelled = turn.wire is not None and turn.wire.cancelled
        try:
            if turn.response is not None and not cancelled:
                await asyncio.sleep(0)  # the server ended it in the recording: its notes first, then the answer
            else:
                await stream.ended  # the client's cancel (or, over HTTP, its closing the stream: cancelled here)
        finally:
            self.open.pop(verbatim_key(stream.live_id), None)
        if turn.response is not None and not cancelled:
            answer(turn, stream.live_id, stream.emit)

    def _running_turns(self, listen: Turn) -> list[tuple[Turn, int, int]]:
        """The recorded client turns (other than the stream) with the record span each was running."""
        out: list[tuple[Turn, int, int]] = []
        # the turns of the recording the stream was matched in (a session of a file counts its own records)
        turns = next((ts for ts in self.recordings if any(t is listen for t in ts)), [])
        for t in turns:
            wire = t.wire
            if t is listen or wire is None or wire.response_index is None:
                continue
            out.append((t, wire.index, wire.response_index))
        return out

    def before_answer(self, turn: Turn) -> None:
        """Send the stream notifications the recording had while ``turn`` was running."""
        pending = self.before.get(id(turn))
        if not pending:
            return
        for stream, note in pending:
            if verbatim_key(stream.live_id) in self.open:
                stream.emit(_tagged(note, stream.live_id))

    def cancelled(self, message: dict[str, Any]) -> None:
        """A client's ``notifications/cancelled``: the stream it names ends."""
        params = message.get("params")
        if not isinstance(params, dict) or "requestId" not in params:
            return
        stream = self.open.get(verbatim_key(params["requestId"]))
        if stream is not None and not stream.ended.done():
            stream.ended.set_result(None)

    def end_all(self) -> None:
        """The client is gone: every stream ends."""
        for stream in list(self.open.values()):
            if not stream.ended.done():
                stream.ended.set_result(None)


def _tagged(note: dict[str, Any], live_id: Any) -> dict[str, Any]:
    params = note.get("params")
    params = dict(params) if isinstance(params, dict) else {}
    meta = params.get("_meta")
    params["_meta"] = {**(meta if isinstance(meta, dict) else {}), META_SUBSCRIPTION_ID: live_id}
    return {**note, "params": params}
