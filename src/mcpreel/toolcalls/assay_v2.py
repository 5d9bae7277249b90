"""The Assay V2 trace writer: JSONL, compact, members in the contract's order, every field written.

Lines are built from byte templates: only the variable parts go through the JSON encoder. At a
gigabyte, this writer and the normalizer are the whole cost of an import beyond parsing.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from orjson import dumps as _orjson_dumps

from mcpreel._infra import jsonio
from mcpreel.toolcalls.normalize import TraceSink

_STEP_CALL = (b'{"type":"step","episode_id":%s,"step_id":"step_%03d","idx":%d,"timestamp":%d,"kind":"tool","name":%s,'
              b'"content":null,"content_sha256":null,"truncations":[],"meta":{"jsonrpc_id":%s}}\n')
#: a call the proxy dropped (it never reached the server): its step says so in its meta
_STEP_DROPPED = _STEP_CALL.replace(b'"meta":{"jsonrpc_id":%s}', b'"meta":{"jsonrpc_id":%s,"dropped":true}')
_STEP_OTHER = (b'{"type":"step","episode_id":%s,"step_id":"step_%03d","idx":%d,"timestamp":%d,"kind":"tool","name":%s,'
               b'"content":%s,"content_sha256":null,"truncations":[],"meta":{}}\n')
_TOOL_CALL = (b'{"type":"tool_call","episode_id":%s,"step_id":"step_%03d","timestamp":%d,"tool_name":%s,"call_index":0,'
              b'"args":%s,"args_sha256":null,"result":%s,"result_sha256":null,"error":%s,"truncations":[]}\n')
_NULL = b"null"
_MCP_ERROR = b'"mcp_error"'
_TIMEOUT = b'"timeout/no_response"'


def _dumps(value: Any) -> bytes:
    try:
        return _orjson_dumps(value)
    except TypeError:
        return jsonio.dumps(value)


class AssayV2Sink(TraceSink):
    """Writes the Assay V2 trace: an episode of steps and tool calls, built from pre-encoded templates because it is
    the import's hot path."""
    def __init__(self, out: BinaryIO, episode_id: str, prompt: str, test_id: str | None = None):
        self.out = out
        self.episode_id = episode_id
        self.prompt = prompt
        self.test_id = test_id
        self._ep = jsonio.dumps(episode_id)
        ep = self._ep.replace(b"%", b"%%")
        # the episode id is the same on every line: bake it into the templates once
        self._step_call = _STEP_CALL.replace(b"%s", ep, 1)
        self._tool_call = _TOOL_CALL.replace(b"%s", ep, 1)
        self._start_pos = out.tell() if out.seekable() else None
        self._write = out.write
        self._names: dict[str, bytes] = {}

    def _name(self, name: str) -> bytes:
        b = self._names.get(name)
        if b is None:
            b = jsonio.dumps(name)
            if len(self._names) < 65536:
                self._names[name] = b
        return b

    def reset(self) -> None:
        if self._start_pos is None:
            raise RuntimeError("cannot restart a trace on an unseekable output")
        self.out.seek(self._start_pos)
        self.out.truncate()

    def start(self, ts: int, discovery: dict[str, Any]) -> None:
        meta: dict[str, Any] = {"source": "mcp_import", "episode_id": self.episode_id, "mcp": {"authorization_discovery": discovery}}
        if self.test_id is not None:
            meta["test_id"] = self.test_id
        self._write(jsonio.dumps({"type": "episode_start", "episode_id": self.episode_id, "timestamp": ts,
                                  "input": {"prompt": self.prompt}, "meta": meta}) + b"\n")

    def call_step(self, ts: int, idx: int, name: str, rid: str | None, args: Any, *, dropped: bool = False) -> None:
        nb = self._names.get(name) or self._name(name)
        try:
            rb = _orjson_dumps(rid)
        except TypeError:
            rb = jsonio.dumps(rid)
        if dropped:
            self._write(_STEP_DROPPED % (self._ep, idx, idx, ts, nb, rb))
            return
        self._write(self._step_call % (idx, idx, ts, nb, rb))

    def list_step(self, ts: int, idx: int) -> None:
        self._write(_STEP_OTHER % (self._ep, idx, idx, ts, b'"tools/list"', b'"{}"'))

    def list_result_step(self, ts: int, idx: int, content: str) -> None:
        self._write(_STEP_OTHER % (self._ep, idx, idx, ts, b'"tools/list.result"', _dumps(content)))

    def call_result(self, ts: int, idx: int, name: str, args: Any, result: Any, rid: str) -> None:
        nb = self._names.get(name) or self._name(name)
        try:
            line = self._tool_call % (idx, ts, nb, _orjson_dumps(args), _orjson_dumps(result), _NULL)
        except TypeError:
            line = self._tool_call % (idx, ts, nb, jsonio.dumps(args), jsonio.dumps(result), _NULL)
        self._write(line)

    def call_error(self, ts: int, idx: int, name: str, args: Any, error: Any, rid: str) -> None:
        self._write(_TOOL_CALL % (self._ep, idx, ts, self._name(name), _dumps(args), _dumps({"error": error}), _MCP_ERROR))

    def call_unanswered(self, ts: int, idx: int, name: str, args: Any, rid: str) -> None:
        self._write(_TOOL_CALL % (self._ep, idx, ts, self._name(name), _dumps(args), _NULL, _TIMEOUT))

    def call_uncorrelated(self, ts: int, idx: int, name: str, args: Any) -> None:
        self._write(_TOOL_CALL % (self._ep, idx, ts, self._name(name), _dumps(args), _NULL, _NULL))

    def end(self, ts: int, final_output: str | None) -> None:
        self._write(jsonio.dumps({"type": "episode_end", "episode_id": self.episode_id, "timestamp": ts, "outcome": None,
                                  "final_output": final_output}) + b"\n")
