"""Shared helpers of the formats tests: the real fixture files, reading, writing, the T1 projection."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from mcpreel._infra import jsonio
from mcpreel._infra.fileio import atomic_output
from mcpreel.formats import Source, get_reader, get_writer, open_session
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.toolcalls.assay_v2 import AssayV2Sink
from mcpreel.toolcalls.normalize import normalize
from tests.conftest import FIXTURES, NO_SHARED

_SUFFIXES = (".json", ".jsonl", ".yaml", ".vcr")
#: files beside the sessions that are not sessions: the Assay corpus manifest and MCP-VCR's JSON schema
_NOT_SESSIONS = ("__MANIFEST.json", "transcript-schema-v1.json")


def fixture_files() -> list[Path]:
    """Every session file other tools wrote (not files a test run may have left beside them); none without
    ../shared (the tests over them are marked ``needs_shared``)."""
    out = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix in _SUFFIXES and not path.name.endswith(".trace.jsonl") \
                and not path.name.endswith(_NOT_SESSIONS):
            out.append(path)
    return out


def fixture(rel: str) -> Path:
    """A spec fixture by its path under ``../shared/fixtures``; skips the test in a clone without them."""
    if not FIXTURES.is_dir():
        pytest.skip(NO_SHARED)
    return FIXTURES / rel


def read(path: Path | str, fmt: str = "auto") -> Session:
    session, _ = open_session(path, fmt)
    return session.materialize()


def write(session: Session, path: Path, fmt: str, **kw: Any) -> Path:
    with atomic_output(path) as fh:
        get_writer(fmt)(session, fh, **kw)
    return path


def read_as(path: Path, fmt: str) -> Session:
    return get_reader(fmt)(Source(path)).materialize()


def t1(session: Session) -> dict[str, Any]:
    """The T1 projection of the import contract: what must not change when a session changes format."""
    buf = io.BytesIO()
    normalize(session, AssayV2Sink(buf, "ep", "<mcp:session>"))
    steps, calls, final = [], [], None
    prompt = None
    for line in buf.getvalue().splitlines():
        ev = jsonio.loads(line)
        if ev["type"] == "episode_start":
            prompt = ev["input"]["prompt"]
        elif ev["type"] == "step":
            steps.append((ev["idx"], ev["kind"], ev["name"], ev["meta"].get("jsonrpc_id")))
        elif ev["type"] == "tool_call":
            calls.append((ev["step_id"], ev["tool_name"], ev["args"], ev["result"], ev["error"]))
        elif ev["type"] == "episode_end":
            final = ev["final_output"]
    return {"prompt": prompt, "steps": steps, "calls": calls, "final_output": final}


def wire(session: Session) -> list[tuple[Any, ...]]:
    """What crossed the wire, as a round trip must keep it: kind, direction, payload, ms time, edits, drops."""
    out = []
    for m in session:
        if m.kind == Kind.MESSAGE:
            out.append(("message", m.dir, m.raw, m.t, m.modified, m.original if m.modified else None, m.dropped))
        else:
            out.append((m.kind, m.dir if m.kind != Kind.STDERR else None, m.raw if m.kind == Kind.EVENT else None,
                        m.t, m.text, m.ctx if m.kind == Kind.TRANSPORT else None))
    return out


def messages_only(session: Session) -> list[tuple[Any, ...]]:
    return [w for w in wire(session) if w[0] == "message"]


def session_of(*records: Message, transport: str | None = "stdio", **info: Any) -> Session:
    return Session(SessionInfo(transport=transport, **info), list(records))


def req(d: str, rid: Any, method: str, t: int | None = None, **params: Any) -> Message:
    raw: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params:
        raw["params"] = params
    return Message(d, raw, t)


def note(d: str, method: str, t: int | None = None, **params: Any) -> Message:
    raw: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params:
        raw["params"] = params
    return Message(d, raw, t)


def resp(d: str, rid: Any, result: Any = None, t: int | None = None, error: Any = None) -> Message:
    raw: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
    if error is not None:
        raw["error"] = error
    else:
        raw["result"] = result if result is not None else {}
    return Message(d, raw, t)


def assert_same_wire(back: list[tuple[Any, ...]], source: list[tuple[Any, ...]]) -> None:
    """``back == source``, where a record the source had no time for may have gained one (a reel line
    always carries ``t``: the writer gives it the last known time)."""
    assert len(back) == len(source)
    for i, (b, s) in enumerate(zip(back, source, strict=True)):
        t_index = 3
        if s[t_index] is None:
            b = b[:t_index] + (None,) + b[t_index + 1:]
        assert b == s, f"record {i} differs: {b!r} != {s!r}"
