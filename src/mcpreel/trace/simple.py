"""The simple trace of seed 001: one ``tool_call`` line per call and one ``tool_result`` per answer."""

from __future__ import annotations

from typing import Any, BinaryIO

from mcpreel import jsonio
from mcpreel.timeutil import iso_from_ms

NAME = "simple"
LOSSES = "everything but tool calls and their results"


class SimpleSink:
    def __init__(self, out: BinaryIO, *_: Any, **__: Any):
        self.out = out
        self._start_pos = out.tell() if out.seekable() else None

    def reset(self) -> None:
        if self._start_pos is None:
            raise RuntimeError("cannot restart a trace on an unseekable output")
        self.out.seek(self._start_pos)
        self.out.truncate()

    def start(self, ts: int, discovery: dict[str, Any]) -> None:
        pass

    def step(self, ts: int, idx: int, name: str, content: str | None, meta: dict[str, Any],
             call_id: str | None, args: Any, is_call: bool) -> None:
        if is_call:
            self.out.write(jsonio.dumps({"type": "tool_call", "id": call_id, "tool": name, "arguments": args,
                                         "timestamp": iso_from_ms(ts)}) + b"\n")

    def call(self, ts: int, idx: int, name: str, args: Any, result: Any, error: str | None,
             call_id: str | None, response: dict[str, Any] | None) -> None:
        if response is None:
            return  # unanswered, or a call without an id: no result was said
        line: dict[str, Any] = {"type": "tool_result", "id": call_id}
        if error == "mcp_error":
            line["error"] = response.get("error")
        else:
            line["result"] = result
        line["timestamp"] = iso_from_ms(ts)
        self.out.write(jsonio.dumps(line) + b"\n")

    def end(self, ts: int, final_output: str | None) -> None:
        pass
