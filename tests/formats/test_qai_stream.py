"""Issue 13: a big qai file is read as a stream (formats/_jsondoc.py), into the very model the
whole-document parse gives, with the same one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpreel.errors import FormatError, InputError
from mcpreel.formats import _jsondoc, qai
from mcpreel.formats._source import Source
from mcpreel.formats.sniff import detect

from ..conftest import FIXTURES, needs_shared

ROOT = Path(__file__).resolve().parents[2]


def _msg(i: int, payload: Any = None, **more: Any) -> dict[str, Any]:
    return {"proxy_id": f"p{i}", "sequence": i, "timestamp": f"2026-11-20T21:46:46.{i:03d}123+00:00",
            "direction": "client_to_server" if i % 2 == 0 else "server_to_client", "transport": "stdio",
            "jsonrpc_id": i, "method": None, "correlated_id": None, "modified": False,
            "payload": payload if payload is not None else {"jsonrpc": "2.0", "id": i, "result": {"content": [
                {"type": "text", "text": "}, {\"a\": [1]} ]"}, {"type": "text", "text": "x"}]}}, **more}


def _doc(messages: list[Any]) -> dict[str, Any]:
    return {"id": "s1", "started_at": "2026-11-20T21:46:46.000000+00:00", "transport": "stdio",
            "server_command": "python 'my server.py'", "server_url": None, "messages": messages,
            "metadata": {"k": [1, {"v": None}]}, "label": "lab", "exit_code": 3}


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """(streamed, whole): the session read as a stream and as one document, each fully iterated."""
    monkeypatch.setattr(qai, "STREAM_FROM", 0)
    streamed = qai.read(Source(path))
    assert streamed.is_streaming
    monkeypatch.setattr(qai, "STREAM_FROM", 1 << 60)
    whole = qai.read(Source(path))
    assert not whole.is_streaming
    return streamed, whole


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    streamed, whole = _both(path, monkeypatch)
    assert streamed.info == whole.info
    assert list(streamed) == whole.messages
    assert list(streamed) == whole.messages  # each pass reads the file again


@needs_shared
@pytest.mark.parametrize("path", sorted((FIXTURES / "qai").glob("*.json")), ids=lambda p: p.name)
@pytest.mark.parametrize("block", [7, 1 << 20], ids=["7-byte blocks", "1 MiB blocks"])
def test_every_fixture_streams_into_the_same_model(path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(_jsondoc, "_BLOCK", block)  # 7: every string, number and element cut by a block end
    _same(path, monkeypatch)


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for i in range(depth):
        value = {"n": [value, {"i": i}], "tail": {"z": i}}
    return value


ODD_PAYLOADS = {
    "many inner objects": {"jsonrpc": "2.0", "id": 1, "result": {"items": [{"a": {"b": i}} for i in range(40)]}},
    "deep": {"jsonrpc": "2.0", "id": 1, "result": _deep(30)},
    "big int": {"jsonrpc": "2.0", "id": 12345678901234567890123, "result": {"n": 1.5}},
    "strings with brackets": {"jsonrpc": "2.0", "id": 1, "result": {"s": "}\n    },\n    {", "t": "\\\"}]"}},
}


@pytest.mark.parametrize("indent", [None, 2, 4], ids=["compact", "indent2", "indent4"])
@pytest.mark.parametrize("payload", list(ODD_PAYLOADS), ids=list(ODD_PAYLOADS))
@pytest.mark.parametrize("block", [5, 1 << 20], ids=["5-byte blocks", "1 MiB blocks"])
def test_odd_elements_stream_into_the_same_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 payload: str, indent: int | None, block: int) -> None:
    monkeypatch.setattr(_jsondoc, "_BLOCK", block)
    path = tmp_path / "s.qai.json"
    messages = [_msg(0), _msg(1, ODD_PAYLOADS[payload]), _msg(2), _msg(3, ODD_PAYLOADS[payload], ctx={"x": {}})]
    path.write_text(json.dumps(_doc(messages), indent=indent))
    _same(path, monkeypatch)


@pytest.mark.parametrize("text", [
    # NaN and a lone surrogate: orjson refuses them, the faithful parse reads them
    '{"id": "s", "messages": [{"direction": "client_to_server", "payload": {"id": NaN}}, '
    '{"direction": "server_to_client", "payload": {"s": "\\ud800"}}], "metadata": {}}',
    # a BOM, a duplicate member (the last wins, in the first's place), members after the array
    '\ufeff {"id": "a", "metadata": {"x": 1}, "messages": [], "id": "b", "ended_at": 1763675206000}',
    # an element that is not an object comes out as the same error
    '{"messages": [{"direction": "client_to_server", "payload": {}}, 7]}',
    '{"messages": [{"direction": "client_to_server", "payload": {}}, {"direction": "up", "payload": {}}]}',
])
def test_unusual_documents_stream_into_the_same_model_or_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               text: str) -> None:
    path = tmp_path / "s.qai.json"
    path.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(qai, "STREAM_FROM", 0)
    streamed = qai.read(Source(path))
    assert streamed.is_streaming
    monkeypatch.setattr(qai, "STREAM_FROM", 1 << 60)
    try:
        whole = qai.read(Source(path))
    except FormatError as exc:  # the whole parse refuses at once; the stream when it meets the element
        with pytest.raises(FormatError) as got:
            list(streamed)
        assert str(got.value) == str(exc)
    else:
        assert streamed.info == whole.info
        assert list(streamed) == whole.messages


@pytest.mark.parametrize("cut", ["truncated", "trailing", "twice", "no array", "syntax"])
def test_damaged_documents_raise_the_whole_document_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          cut: str) -> None:
    text = json.dumps(_doc([_msg(i) for i in range(20)]), indent=2)
    text = {
        "truncated": text[: len(text) // 2],
        "trailing": text + "{}",
        "twice": text[:-1] + ', "messages": [1]}',
        "no array": text.replace('"messages": [', '"messages": {"a": [', 1).replace('],\n  "metadata"', ']},\n  "metadata"'),
        "syntax": text.replace('"sequence": 7', '"sequence": 7,,'),
    }[cut]
    path = tmp_path / "s.qai.json"
    path.write_text(text)
    assert _jsondoc.scan(Source(path), "messages") is None  # the stream declines: the whole parse decides
    errors = []
    for stream_from in (0, 1 << 60):
        monkeypatch.setattr(qai, "STREAM_FROM", stream_from)
        with pytest.raises((FormatError, InputError)) as got:
            qai.read(Source(path)).messages  # noqa: B018
        errors.append(str(got.value))
    assert errors[0] == errors[1]  # "twice" is valid JSON: its last "messages", [1], is refused the same


def test_a_big_file_is_sniffed_and_read_without_parsing_the_document(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.qai.json"
    path.write_text(json.dumps(_doc([_msg(i) for i in range(50)]), indent=2))
    monkeypatch.setattr(qai, "STREAM_FROM", 0)
    source = Source(path)
    assert detect(source).format == "qai"
    session = qai.read(source)
    assert len(list(session)) == 50
    assert session.info.label == "lab" and session.info.metadata == {"k": [1, {"v": None}]}
    monkeypatch.setattr(Source, "document", lambda self: pytest.fail("the whole document was parsed"))
    assert detect(Source(path)).format == "qai"


def test_an_error_mid_stream_is_one_line_and_leaves_no_output(tmp_path: Path) -> None:
    messages = [_msg(i) for i in range(12_000)]  # past STREAM_FROM: the CLI reads it as a stream
    del messages[9_000]["payload"]
    path = tmp_path / "bad.qai.json"
    path.write_text(json.dumps(_doc(messages), indent=2))
    assert path.stat().st_size > qai.STREAM_FROM
    out = tmp_path / "out.reel.jsonl"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "convert", str(path), str(out)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {path}: qai message 9001 has no payload"]
    assert not out.exists()


@pytest.mark.parametrize("block", [3, 1 << 20], ids=["3-byte blocks", "1 MiB blocks"])
def test_a_layout_that_changes_midway_streams_into_the_same_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  block: int) -> None:
    # indented elements, then several on one line, then one closing at another indent: the "}" at an
    # element's own indent is tried while it works, and the candidate ends take over when it does not
    monkeypatch.setattr(_jsondoc, "_BLOCK", block)
    ms = [_msg(i, ODD_PAYLOADS["many inner objects"] if i == 4 else None) for i in range(8)]
    body = ",\n  ".join(json.dumps(m, indent=2).replace("\n", "\n  ") for m in ms[:3])
    body += ",\n  " + ", ".join(json.dumps(m) for m in ms[3:6])
    body += ",\n  " + json.dumps(ms[6], indent=1) + " ,\n  " + json.dumps(ms[7], indent=2).replace("\n", "\n  ")
    path = tmp_path / "s.qai.json"
    path.write_text('{"id": "s", "transport": "stdio", "messages": [\n  ' + body + '\n], "metadata": {"a": 1}}')
    _same(path, monkeypatch)
