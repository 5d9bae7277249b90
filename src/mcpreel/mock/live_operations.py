"""What the mock keeps for one connection's operations that live across messages: tasks and listen streams.

**Tasks** (the 2025-11-25 utility and the 2026-07-28 extension). When a recorded call that created a task
is answered, the connection keeps that task (its id is the recorded one: the id the mock gave). Then:

- ``tasks/get`` answers the recorded polls' answers in order, then the terminal one for as long as the
  client polls; a client that polls more slowly than the recording is not held back: it gets at least the
  status the recording had reached at the same time since the task was created. How many times it polls
  does not matter: fewer polls reach the terminal status at the recorded pace, more repeat it.
- ``tasks/result`` answers the recorded result (at any time: the 2025-11-25 request blocks until the task
  ends, and the recording holds that end);
- a task that needed input does so again. 2025-11-25: the server requests the recording has the server
  send about the task while a ``tasks/*`` request waited (the elicitation a ``tasks/result`` asked while
  the task was ``input_required`` brings) are sent to the client before that request's answer, and their
  answers awaited (at most ``MockOptions.answer_timeout`` each); 2026-07-28 extension: the recorded
  ``tasks/get`` answer carries its ``inputRequests``, and the client answers them with ``tasks/update``
  (matched against the recorded one). Until that input came, polls hold at the recorded
  ``input_required`` (a real server waits for it too), whatever the time; what the client never got to
  see stays counted as not sent (:attr:`ServedTasks.pending`), so ``serve`` can say so;
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
from collections.abc import Awaitable, Callable, Coroutine
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
#: sends a recorded server request to the client and awaits its answer (None: none came)
Ask = Callable[[dict[str, Any], Emit], Awaitable[Any]]
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


class _Task:
    __slots__ = ("op", "created", "t0", "polls", "status", "last", "cancelled", "sent", "asks", "awaits_update")

    def __init__(self, op: Operation, created: dict[str, Any]) -> None:
        self.op = op
        self.created = created  # the recorded answer that created it
        self.t0 = time.monotonic()
        self.polls = 0
        self.status = task_status_of(created) or "working"
        self.last: dict[str, Any] | None = _task_object(created)
        self.cancelled = False
        self.sent: set[int] = set()  # the recorded server requests (id of the step) already sent
        self.asks: set[int] = set()  # those a tasks/result brings (2025-11-25: the input the task waits for)
        self.awaits_update = False  # 2026 extension: the recording answers input with a tasks/update

    @property
    def input_open(self) -> bool:
        """The recording has the task wait for input the client has not given yet."""
        return self.awaits_update or bool(self.asks - self.sent)


def _input_requests_of(answer: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The ``inputRequests`` of a 2026 extension ``tasks/get`` answer (status ``input_required``)."""
    result = answer.get("result") if isinstance(answer, dict) else None
    asked = result.get("inputRequests") if isinstance(result, dict) else None
    return {k: v for k, v in asked.items() if isinstance(v, dict)} if isinstance(asked, dict) else {}


def _task_object(answer: dict[str, Any] | None) -> dict[str, Any] | None:
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return None
    task = result.get("task")
    return dict(task) if isinstance(task, dict) else {k: v for k, v in result.items() if k not in ("result", "error")}


class ServedTasks:
    """One connection's tasks (see the module's docstring)."""

    def __init__(self, recordings: list[list[Turn]], pending: dict[tuple[int, int, str], str] | None = None,
                 on_sent: Callable[[], None] | None = None) -> None:
        self.recordings = recordings  # the client turns of the recording (and of each of its sessions)
        # live wire: the tasks this connection's live client holds, by task id (the recording's own tasks
        # were joined by the one reading, operations/; this pairs the live client's polls with them)
        self.tasks: dict[tuple[str, Any], _Task] = {}
        self._turn_of: dict[int, Turn] | None = None  # walk exchange -> its turn, built at the first task
        #: the recorded server requests (and 2026 input requests) of this connection's tasks not sent yet:
        #: (connection, step, input key) -> what it was; shared by a mock's connections
        self.pending: dict[tuple[int, int, str], str] = pending if pending is not None else {}
        self.on_sent = on_sent or (lambda: None)  # a 2026 input request reached the client (in a tasks/get)

    def created(self, turn: Turn) -> None:
        """A recorded call was answered: when it created a task, the connection now has that task (and the
        input the recording has it ask is owed to the client)."""
        op = turn.operation
        if op is None or op.kind != "task" or turn.role != "call" or turn.response is None:
            return
        task_id = created_task(turn.response)
        if task_id is None:
            return
        task = self.tasks[verbatim_key(task_id)] = _Task(op, turn.response)
        for t in self._turns(task):
            task.awaits_update = task.awaits_update or t.role == "update"
            for step in t.before:
                if "id" in step:
                    if t.role == "result":
                        task.asks.add(id(step))
                    self.pending[(id(self), id(step), "")] = f"{step.get('method')} of task {task_id!r}"
            for key, request in _input_requests_of(t.response).items():
                self.pending.setdefault((id(self), id(task.op), key), f"{request.get('method')} of task {task_id!r} "
                                                                  f"(input request {key!r})")

    def updated(self, message: dict[str, Any]) -> None:
        """A client's ``tasks/update`` the recording answered: the input its task waited for came."""
        task_id = task_id_param(message)
        task = self.tasks.get(verbatim_key(task_id)) if task_id is not None else None
        if task is not None:
            task.awaits_update = False

    def answer(self, message: dict[str, Any], emit: Emit, shape: Callable[[Any, str], Any],
               ask: Ask | None = None) -> bool | Coroutine[Any, Any, None]:
        """Answer a ``tasks/*`` request about a task of this connection; False when it is not one's. A
        coroutine when the recording has the server ask the client something first (``ask`` sends it):
        run it to finish the answer."""
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
            return self._poll(task, message, emit, shape, ask)
        if method == "tasks/result":
            return self._result(task, message, emit, shape, ask)
        if method == "tasks/cancel":
            self._cancel(task, message, emit, shape)
            return True
        return False

    def _turns(self, task: _Task) -> list[Turn]:
        """The recorded turns of a task, in order."""
        if self._turn_of is None:
            self._turn_of = {id(t.wire): t for turns in self.recordings for t in turns if t.wire is not None}
        return [t for t in (self._turn_of.get(id(ex)) for ex in task.op.exchanges) if t is not None]

    def _then(self, task: _Task, turn: Turn | None, emit: Emit, ask: Ask | None,
              finish: Callable[[], None]) -> bool | Coroutine[Any, Any, None]:
        """Say what the recording has the server say before ``turn``'s answer, then ``finish`` (the answer):
        at once, or (when it asks the client something not asked yet) as a coroutine that awaits each answer."""
        steps = turn.before if turn is not None else []
        if ask is not None and any("id" in step and id(step) not in task.sent for step in steps):
            return self._asking(task, steps, emit, ask, finish)
        for step in steps:
            if "id" not in step:
                emit(step)
        finish()
        return True

    async def _asking(self, task: _Task, steps: list[dict[str, Any]], emit: Emit, ask: Ask,
                      finish: Callable[[], None]) -> None:
        for step in steps:
            if "id" not in step:
                emit(step)
            elif id(step) not in task.sent:
                task.sent.add(id(step))
                self.pending.pop((id(self), id(step), ""), None)
                await ask(step, emit)
        finish()

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

    def _poll(self, task: _Task, message: dict[str, Any], emit: Emit, shape: Callable[[Any, str], Any],
              ask: Ask | None) -> bool | Coroutine[Any, Any, None]:
        polls = self._recorded(task, "poll")
        turn: Turn | None = None
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
            if task.input_open:  # no further than the recorded input_required until the input came
                held = next((j for j, t in enumerate(polls) if task_status_of(t.response or {}) == "input_required"), None)
                if held is not None:
                    i = min(i, held)
            turn = polls[i]
            answer = turn.response or {}
            for key in _input_requests_of(answer):
                if self.pending.pop((id(self), id(task.op), key), None) is not None:  # the client now sees it
                    self.on_sent()
        return self._then(task, turn, emit, ask, lambda: self._poll_answer(task, answer, message, emit, shape))

    def _poll_answer(self, task: _Task, answer: dict[str, Any], message: dict[str, Any], emit: Emit,
                     shape: Callable[[Any, str], Any]) -> None:
        task.polls += 1
        if isinstance(answer.get("result"), dict):
            task.last = _task_object(answer) or task.last
            status = task_status_of(answer)
            if status is not None and not task.cancelled:
                task.status = status
        if "result" in answer:
            answer = {**answer, "result": shape(answer["result"], "tasks/get")}
        emit({**answer, "id": message["id"]})

    def _result(self, task: _Task, message: dict[str, Any], emit: Emit, shape: Callable[[Any, str], Any],
                ask: Ask | None) -> bool | Coroutine[Any, Any, None]:
        if task.cancelled:
            emit({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": "Task cancelled"}})
            return True
        results = self._recorded(task, "result")
        if not results:
            polls = self._recorded(task, "poll")
            final = polls[-1].response if polls else None
            emit({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32602, "message": "mcpreel: the recording has no tasks/result of this task",
                "data": {"status": task_status_of(final) if final else task.status}}})
            return True

        def finish() -> None:
            answer = results[0].response or {}
            if task.status not in TERMINAL_TASK_STATUSES:
                task.status = task.op.task_status or "completed"
            if "result" in answer:
                answer = {**answer, "result": shape(answer["result"], "tools/call")}
            emit({**answer, "id": message["id"]})

        return self._then(task, results[0], emit, ask, finish)

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
        # live wire: the listen streams open on this connection, by the id the live client gave them
        # (its notifications/cancelled names that id); the recording's streams are the one reading's
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
