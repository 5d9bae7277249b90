"""Shared helpers for the trace tests: write an input, import it, read the events back."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from mcpreel.toolcalls.importer import ImportOptions, import_session


def write_jsonl(path: Path, messages: list[Any]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return path


def run_import(path: Path, fmt: str = "auto", trace_format: str = "assay-v2", out_dir: Path | None = None, **opts: Any):
    """Import ``path``; the trace goes beside it, or into ``out_dir`` (never beside a shared fixture)."""
    warnings: list[str] = []
    if out_dir is None:
        if "fixtures" in path.parts:
            out_dir = Path(tempfile.mkdtemp(prefix="mcpreel-test-"))
        else:
            out_dir = path.parent
    out = out_dir / (path.name + ".trace.jsonl")
    options = ImportOptions(episode_id=opts.pop("episode_id", "ep"), **opts)
    report, detection, target = import_session(path, out, format=fmt, trace_format=trace_format,
                                               options=options, warn=warnings.append)
    raw = target.read_bytes()
    events = [json.loads(line) for line in raw.splitlines()]
    return events, report, warnings, raw


def projection(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The T1 projection: what must be equal across encodings of one session."""
    start = events[0]
    return {
        "prompt": start["input"]["prompt"],
        "steps": [(e["idx"], e["kind"], e["name"], e["meta"].get("jsonrpc_id")) for e in events if e["type"] == "step"],
        "calls": [(e["step_id"], e["tool_name"], e["args"], e["result"], e["error"]) for e in events if e["type"] == "tool_call"],
        "final_output": events[-1]["final_output"],
    }


def call(i: Any, name: str = "t", args: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args or {}}}


def ok(i: Any, result: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": result if result is not None else {"content": [{"type": "text", "text": str(i)}]}}


def err(i: Any, code: int = -32602, message: str = "bad") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "error": {"code": code, "message": message}}
