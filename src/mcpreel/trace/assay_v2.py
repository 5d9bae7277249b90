"""The Assay V2 trace writer: JSONL, compact, members in the contract's order, every field written."""

from __future__ import annotations

from typing import Any, BinaryIO

import orjson

from mcpreel import jsonio

NAME = "assay-v2"
LOSSES = "everything but tool semantics (steps, tool calls, final output)"


class AssayV2Sink:
    """Writes each event as one line the moment the normalizer reports it."""

    def __init__(self, out: BinaryIO, episode_id: str, prompt: str, test_id: str | None = None):
        self.out = out
        self.episode_id = episode_id
        self.prompt = prompt
        self.test_id = test_id
        self._start_pos = out.tell() if out.seekable() else None
        self._write = out.write

    def _line(self, obj: dict[str, Any]) -> None:
        try:
            self._write(orjson.dumps(obj) + b"\n")
        except TypeError:
            self._write(jsonio.dumps(obj) + b"\n")

    def reset(self) -> None:
        if self._start_pos is None:
            raise RuntimeError("cannot restart a trace on an unseekable output")
        self.out.seek(self._start_pos)
        self.out.truncate()

    def start(self, ts: int, discovery: dict[str, Any]) -> None:
        meta: dict[str, Any] = {"source": "mcp_import", "episode_id": self.episode_id, "mcp": {"authorization_discovery": discovery}}
        if self.test_id is not None:
            meta["test_id"] = self.test_id
        self._line({"type": "episode_start", "episode_id": self.episode_id, "timestamp": ts,
                    "input": {"prompt": self.prompt}, "meta": meta})

    def step(self, ts: int, idx: int, name: str, content: str | None, meta: dict[str, Any],
             call_id: str | None, args: Any, is_call: bool) -> None:
        self._line({"type": "step", "episode_id": self.episode_id, "step_id": f"step_{idx:03d}", "idx": idx,
                    "timestamp": ts, "kind": "tool", "name": name, "content": content, "content_sha256": None,
                    "truncations": [], "meta": meta})

    def call(self, ts: int, idx: int, name: str, args: Any, result: Any, error: str | None,
             call_id: str | None, response: dict[str, Any] | None) -> None:
        self._line({"type": "tool_call", "episode_id": self.episode_id, "step_id": f"step_{idx:03d}", "timestamp": ts,
                    "tool_name": name, "call_index": 0, "args": args, "args_sha256": None, "result": result,
                    "result_sha256": None, "error": error, "truncations": []})

    def end(self, ts: int, final_output: str | None) -> None:
        self._line({"type": "episode_end", "episode_id": self.episode_id, "timestamp": ts, "outcome": None,
                    "final_output": final_output})
