"""Issue 28 item 14: what a viewer injects or edits in is JSON-RPC, and JSON: no ``NaN``/``Infinity``
anywhere, a request's id a string or an integer. Before, an injected message with a NaN id was sent on."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpreel.control import protocol
from mcpreel.control.server import ControlServer


class Port:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def inject(self, direction: str, message: Any) -> None:
        self.sent.append((direction, message))


def ask(path: Path, line: bytes) -> dict[str, Any]:
    """Send one raw control line (as a script would) and read the answer to its ref."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(path))
        f = s.makefile("rb")
        assert json.loads(f.readline())["type"] == "hello"
        s.sendall(line + b"\n")
        while True:
            obj = json.loads(f.readline())
            if obj.get("ref") == 1:
                return obj  # type: ignore[no-any-return]


@pytest.mark.parametrize(("message", "why"), [
    (b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', "$.id is NaN, which is not JSON"),
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":[1,Infinity]}}}',
     "$.params.arguments.n[1] is Infinity, which is not JSON"),
    (b'{"jsonrpc":"2.0","id":-Infinity,"result":{}}', "$.id is -Infinity"),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', '"id" must be a string or an integer, got 1.5'),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', '"id" must be a string or an integer, got null'),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', '"id" must be a string or an integer'),
    (b'{"jsonrpc":"2.0","id":[1],"result":{}}', '"id" must be a string, an integer or null'),
])
def test_an_injected_message_that_is_not_json_rpc_is_refused_with_a_clear_answer(tmp_path: Path, message: bytes,
                                                                                  why: str) -> None:
    server = ControlServer(transport="stdio", directory=tmp_path)
    port = Port()
    server.attach(port)
    server.start()
    try:
        line = b'{"type":"inject","ref":1,"direction":"client_to_server","message":' + message + b"}"
        answer = ask(server.socket_path, line)  # type: ignore[arg-type]
        assert answer["type"] == "error", answer
        assert answer["message"].startswith("the injected message is not valid JSON-RPC: ")
        assert why in answer["message"], answer["message"]
        assert port.sent == []  # nothing was sent on
        ok = ask(server.socket_path, b'{"type":"inject","ref":1,"direction":"client_to_server",'  # type: ignore[arg-type]
                                     b'"message":{"jsonrpc":"2.0","id":"a","method":"ping"}}')
        assert ok == {"type": "ok", "ref": 1} and len(port.sent) == 1
    finally:
        server.close()


def test_an_edit_or_a_drop_error_with_nan_is_refused() -> None:
    nan = json.loads("NaN")
    with pytest.raises(protocol.CommandError, match=r"edited message is not valid JSON-RPC: \$\.params\.x is NaN"):
        protocol.parse_command({"type": "decide", "hold": "h1", "action": "edit",
                                "message": {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"x": nan}}})
    with pytest.raises(protocol.CommandError, match=r"error\.data.*Infinity"):
        protocol.parse_command({"type": "decide", "hold": "h1", "action": "drop",
                                "error": {"code": 1, "message": "no", "data": [float("inf")]}})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20)


@given(params=st.dictionaries(st.text(max_size=5), json_values, max_size=4),
       bad=st.sampled_from([float("nan"), float("inf"), float("-inf")]), where=st.integers(0, 3))
def test_a_non_finite_number_anywhere_is_refused(params: dict[str, Any], bad: float, where: int) -> None:
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    assert protocol.validate_message(msg) is None  # finite JSON throughout: valid
    node: Any = params
    for _ in range(where):  # somewhere inside
        node = node.setdefault("nested-key", {}) if isinstance(node, dict) else node
    node["the-bad-one"] = [bad]
    assert "which is not JSON" in (protocol.validate_message(msg) or "")
