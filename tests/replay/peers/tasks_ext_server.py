"""An SDK ``MCPServer`` (mcp 2.3, the 2026-07-28 era) with the MCP Tasks extension written from its
specification (``io.modelcontextprotocol/tasks``, SEP-2663; no SDK ships it for Python): the spec's own
example flow. ``hello_world`` answers with a task (``resultType: "task"``); the task goes
``input_required`` and lists an elicitation in ``tasks/get``'s ``inputRequests``; the client answers it
with ``tasks/update`` (``inputResponses``); the task then completes with "Hello, NAME!".

    python tasks_ext_server.py [--changed] [streamable-http PORT]

``--changed``: the greeting says "Hi" (the regression a replay must name). stdio by default.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from datetime import UTC, datetime
from typing import Any

from mcp.server import MCPServer
from mcp.server.extension import Extension, MethodBinding
from mcp_types import RequestParams

EXTENSION = "io.modelcontextprotocol/tasks"
CHANGED = "--changed" in sys.argv
STAGE_S = 0.2  # how long each step of the work takes
NAME_REQUEST = {"method": "elicitation/create",
                "params": {"mode": "form", "message": "Please enter your name.",
                           "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                               "required": ["name"]}}}


class TaskParams(RequestParams):
    taskId: str  # the wire name


class UpdateParams(TaskParams):
    inputResponses: dict[str, Any]


class _Task:
    def __init__(self) -> None:
        self.id = uuid.uuid4().hex
        self.status = "working"
        self.created = self.updated = datetime.now(UTC).isoformat()
        self.name: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.result: dict[str, Any] | None = None

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {"taskId": self.id, "status": self.status, "createdAt": self.created,
                               "lastUpdatedAt": self.updated, "ttlMs": 60000, "pollIntervalMs": 100}
        if self.status == "input_required":
            out["inputRequests"] = {"name": NAME_REQUEST}
        if self.status == "completed":
            out["result"] = self.result
        return out

    def move(self, status: str) -> None:
        self.status = status
        self.updated = datetime.now(UTC).isoformat()


TASKS: dict[str, _Task] = {}
RUNNING: set[asyncio.Task[None]] = set()


async def _work(task: _Task) -> None:
    await asyncio.sleep(STAGE_S)
    task.move("input_required")
    name = await task.name
    task.move("working")
    await asyncio.sleep(STAGE_S)
    greeting = f"{'Hi' if CHANGED else 'Hello'}, {name}!"
    task.result = {"content": [{"type": "text", "text": greeting}], "structuredContent": {"result": greeting},
                   "isError": False}
    task.move("completed")


def _declared(params: Any) -> bool:
    """Whether the request's client declared the extension (a task goes only to such a client)."""
    meta = getattr(params, "meta", None) or {}
    caps = meta.get("io.modelcontextprotocol/clientCapabilities") if isinstance(meta, dict) else None
    return isinstance(caps, dict) and EXTENSION in (caps.get("extensions") or {})


class Tasks(Extension):
    identifier = EXTENSION

    def methods(self) -> list[MethodBinding]:
        return [MethodBinding("tasks/get", TaskParams, self.get), MethodBinding("tasks/update", UpdateParams, self.update)]

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        if params.name != "hello_world" or not _declared(params):
            return await call_next(ctx)
        task = _Task()
        TASKS[task.id] = task
        runner = asyncio.get_running_loop().create_task(_work(task))
        RUNNING.add(runner)
        runner.add_done_callback(RUNNING.discard)
        return {"resultType": "task", **task.state()}

    async def get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        task = TASKS.get(params.taskId)
        if task is None:
            raise ValueError("Failed to retrieve task: Task not found")
        return {"resultType": "complete", **task.state()}

    async def update(self, ctx: Any, params: UpdateParams) -> dict[str, Any]:
        task = TASKS.get(params.taskId)
        if task is None:
            raise ValueError("Task not found")
        answer = params.inputResponses.get("name")
        if task.status == "input_required" and isinstance(answer, dict) and not task.name.done():
            content = answer.get("content") if answer.get("action") == "accept" else None
            task.name.set_result(str((content or {}).get("name") or "stranger"))
        return {"resultType": "complete"}


mcp = MCPServer("tasks-ext-peer", log_level="WARNING", extensions=[Tasks()])


@mcp.tool()
def hello_world() -> str:
    """Greets whoever the client names (run as a task: see the Tasks extension)."""
    return "Hello, world!"  # what a client without the extension gets


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--changed"]
    if args and args[0] == "streamable-http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(args[1]))
    else:
        mcp.run()
