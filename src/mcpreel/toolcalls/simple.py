"""The simple trace of seed 001: one ``tool_call`` line per call and one ``tool_result`` per answer.

The two lines of nearly every call are built from byte templates (only the variable parts go through
the encoder); a value orjson cannot encode sends its line down the general path (:meth:`SimpleSink._line`),
which gives the bytes the whole line would have had.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from orjson import dumps as _orjson_dumps

from mcpreel._infra import jsonio
from mcpreel._infra.timeutil import iso_from_ms
from mcpreel.toolcalls.normalize import TraceSink

_TOOL_CALL = b'{"type":"tool_call","id":%s,"tool":%s,"arguments":%s,"timestamp":%s}\n'
_TOOL_RESULT = b'{"type":"tool_result","id":%s,"result":%s,"timestamp":%s}\n'


class SimpleSink(TraceSink):
    """Writes the simple trace: one ``tool_call`` and one ``tool_result`` line per call; every other event is left
    out."""
    def __init__(self, out: BinaryIO, *_: Any, **__: Any):
        self.out = out
        self._start_pos = out.tell() if out.seekable() else None
        self._write = out.write

    def _line(self, obj: dict[str, Any]) -> None:
        self.out.write(jsonio.dumps(obj) + b"\n")

    def reset(self) -> None:
        if self._start_pos is None:
            raise RuntimeError("cannot restart a trace on an unseekable output")
        self.out.seek(self._start_pos)
        self.out.truncate()

    def start(self, ts: int, discovery: dict[str, Any]) -> None:
        pass

    def call_step(self, ts: int, idx: int, name: str, rid: str | None, args: Any, *, dropped: bool = False) -> None:
        stamp = iso_from_ms(ts)
        if dropped:  # the proxy dropped it: the call as the client asked it, marked (it never reached the server)
            self._line({"type": "tool_call", "id": rid, "tool": name, "arguments": args, "timestamp": stamp,
                        "dropped": True})
            return
        try:
            line = _TOOL_CALL % (_orjson_dumps(rid), _orjson_dumps(name), _orjson_dumps(args), _orjson_dumps(stamp))
        except TypeError:
            self._line({"type": "tool_call", "id": rid, "tool": name, "arguments": args, "timestamp": stamp})
            return
        self._write(line)

    def list_step(self, ts: int, idx: int) -> None:
        pass

    def list_result_step(self, ts: int, idx: int, content: str) -> None:
        pass

    def call_result(self, ts: int, idx: int, name: str, args: Any, result: Any, rid: str) -> None:
        stamp = iso_from_ms(ts)
        try:
            line = _TOOL_RESULT % (_orjson_dumps(rid), _orjson_dumps(result), _orjson_dumps(stamp))
        except TypeError:
            self._line({"type": "tool_result", "id": rid, "result": result, "timestamp": stamp})
            return
        self._write(line)

    def call_error(self, ts: int, idx: int, name: str, args: Any, error: Any, rid: str) -> None:
        self._line({"type": "tool_result", "id": rid, "error": error, "timestamp": iso_from_ms(ts)})

    def call_unanswered(self, ts: int, idx: int, name: str, args: Any, rid: str) -> None:
        pass  # nothing was said back

    def call_uncorrelated(self, ts: int, idx: int, name: str, args: Any) -> None:
        pass

    def end(self, ts: int, final_output: str | None) -> None:
        pass
