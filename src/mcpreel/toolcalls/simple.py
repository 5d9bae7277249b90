"""The simple trace of seed 001: one ``tool_call`` line per call and one ``tool_result`` per answer."""

from __future__ import annotations

from typing import Any, BinaryIO

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import iso_from_ms


class SimpleSink:
    def __init__(self, out: BinaryIO, *_: Any, **__: Any):
        self.out = out
        self._start_pos = out.tell() if out.seekable() else None

    def _line(self, obj: dict[str, Any]) -> None:
        self.out.write(jsonio.dumps(obj) + b"\n")

    def reset(self) -> None:
        if self._start_pos is None:
            raise RuntimeError("cannot restart a trace on an unseekable output")
        self.out.seek(self._start_pos)
        self.out.truncate()

    def start(self, ts: int, discovery: dict[str, Any]) -> None:
        pass

    def call_step(self, ts: int, idx: int, name: str, rid: str | None, args: Any) -> None:
        self._line({"type": "tool_call", "id": rid, "tool": name, "arguments": args, "timestamp": iso_from_ms(ts)})

    def list_step(self, ts: int, idx: int) -> None:
        pass

    def list_result_step(self, ts: int, idx: int, content: str) -> None:
        pass

    def call_result(self, ts: int, idx: int, name: str, args: Any, result: Any, rid: str) -> None:
        self._line({"type": "tool_result", "id": rid, "result": result, "timestamp": iso_from_ms(ts)})

    def call_error(self, ts: int, idx: int, name: str, args: Any, error: Any, rid: str) -> None:
        self._line({"type": "tool_result", "id": rid, "error": error, "timestamp": iso_from_ms(ts)})

    def call_unanswered(self, ts: int, idx: int, name: str, args: Any, rid: str) -> None:
        pass  # nothing was said back

    def call_uncorrelated(self, ts: int, idx: int, name: str, args: Any) -> None:
        pass

    def end(self, ts: int, final_output: str | None) -> None:
        pass
