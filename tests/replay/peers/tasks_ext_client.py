"""The SDK's default ``Client`` (mcp 2.3, 2026-07-28 era) with the MCP Tasks extension's requestor side,
written from its specification through the SDK's client extension interface (``ClientExtension`` claiming
``resultType: "task"``; no SDK ships it for Python): ``call_tool`` gets the task handle, polls
``tasks/get`` at ``pollIntervalMs``, answers the ``inputRequests`` of an ``input_required`` task with
``tasks/update`` (an elicitation asking a name: "Luca"), and returns the result the terminal ``tasks/get``
carries. Prints {"protocol", "text", "statuses", "asked"} as JSON.

    python tasks_ext_client.py stdio CMD ARGS...
    python tasks_ext_client.py http URL
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, ClassVar, Literal

import mcp.client.session
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict, Field, TypeAdapter

EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
DEADLINE_S = 60.0
SEEN: dict[str, Any] = {"statuses": [], "asked": []}
# the SDK gives its server/discover probe 10 s, then falls back to initialize (a second client session in
# the recording); an SDK server can take longer than that just to import on a loaded CI machine
mcp.client.session.DISCOVER_TIMEOUT_SECONDS = 120.0


class TaskCreated(Result):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class TaskParams(RequestParams):
    taskId: str  # the wire name


class UpdateParams(TaskParams):
    inputResponses: dict[str, Any]


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    name_param: ClassVar[str | None] = "taskId"  # the spec's Mcp-Name header over Streamable HTTP


class UpdateTask(Request[UpdateParams, Literal["tasks/update"]]):
    name_param: ClassVar[str | None] = "taskId"


ANY = TypeAdapter(dict[str, Any])


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    """What this client's user answers an input request: an elicitation gets the name "Luca"."""
    SEEN["asked"].append({"method": request.get("method"), "message": (request.get("params") or {}).get("message")})
    if request.get("method") == "elicitation/create":
        return {"action": "accept", "content": {"name": "Luca"}}
    return {"action": "decline"}


async def _resolve(created: TaskCreated, ctx: ClaimContext) -> CallToolResult:
    session = ctx.session
    task_id, status = created.task_id, created.status
    interval = (created.poll_interval_ms or 500) / 1000
    SEEN["statuses"].append(status)
    answered: set[str] = set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE_S
    while loop.time() < deadline:
        await asyncio.sleep(interval)
        got = await session.send_request(GetTask(method="tasks/get", params=TaskParams(taskId=task_id)), ANY)
        status = got["status"]
        SEEN["statuses"].append(status)
        interval = (got.get("pollIntervalMs") or interval * 1000) / 1000
        if status == "completed":
            return CallToolResult.model_validate(got["result"])
        if status in TERMINAL:
            raise RuntimeError(f"task {status}: {got.get('error')}")
        fresh = {k: v for k, v in (got.get("inputRequests") or {}).items() if k not in answered}
        if status == "input_required" and fresh:
            answered.update(fresh)
            responses = {key: _answer(request) for key, request in fresh.items()}
            await session.send_request(UpdateTask(method="tasks/update",
                                                  params=UpdateParams(taskId=task_id, inputResponses=responses)), ANY)
    raise TimeoutError(f"the task did not end within {DEADLINE_S} s (last status {status})")


class Tasks(ClientExtension):
    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskCreated, resolve=_resolve)]


async def main(argv: list[str]) -> dict[str, Any]:
    if argv[0] == "http":
        target: Any = argv[1]
    else:
        target = StdioServerParameters(command=argv[1], args=argv[2:])
    async with Client(target, extensions=[Tasks()]) as client:
        result = await client.call_tool("hello_world", {})
        text = result.content[0].text if result.content else None  # type: ignore[union-attr]
        return {"protocol": client.protocol_version, "text": text, **SEEN}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
