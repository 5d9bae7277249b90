"""Issue 40, item 4: on the loopback-TCP control channel (Windows, and systems that cannot tell a Unix
socket's peer) silent connections are capped per uid: eight that another user's process opens and never
speaks on do not lock the owner out, and eight of the owner's own only cost the oldest its place."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpreel._infra import platform
from mcpreel.control import server as control_server
from mcpreel.control.client import ControlClient
from mcpreel.control.server import ControlServer


def _hello_within(where: Path, seconds: float) -> float:
    t0 = time.monotonic()
    with ControlClient.connect(where, timeout=seconds) as client:
        assert client.hello["type"] == "hello"
    return time.monotonic() - t0


@pytest.mark.timeout(60)
def test_silent_connections_of_another_uid_leave_the_owner_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(platform, "control_auth", lambda: "secret")
    monkeypatch.setattr(control_server, "_AUTH_SECONDS", 30.0)  # the silent ones outlive the test
    strangers: set[int] = set()
    real = platform.tcp_peer_uid

    def owner_of(sock: socket.socket) -> Any:
        return 4242 if sock.getpeername()[1] in strangers else real(sock)

    monkeypatch.setattr(platform, "tcp_peer_uid", owner_of)
    notes: list[str] = []
    server = ControlServer(transport="stdio", directory=tmp_path, note=notes.append)
    silent: list[socket.socket] = []
    try:
        where = server.start()
        assert server.address is not None
        for _ in range(3 * control_server._AUTH_AT_ONCE):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            strangers.add(sock.getsockname()[1])
            sock.connect(tuple(server.address))
            silent.append(sock)
        for _ in range(3):
            assert _hello_within(where, 10) < 5  # not behind the 24 silent ones of uid 4242
        # the stranger's oldest 16 were closed as its newer ones came; its newest 8 still wait
        deadline = time.monotonic() + 10
        while sum("more from uid 4242" in n for n in notes) < 2 * control_server._AUTH_AT_ONCE:
            assert time.monotonic() < deadline, notes
            time.sleep(0.05)
        assert not any("uid 4242" not in n and "gave no secret" in n for n in notes), notes
    finally:
        for sock in silent:
            sock.close()
        server.close()


@pytest.mark.timeout(60)
def test_eight_silent_connections_do_not_lock_the_owner_out(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # as the issue found it: 8 silent local connections (the owner's uid, or a stranger where the system
    # cannot tell uids): the owner's viewer still gets hello at once, the oldest silent one gives way
    monkeypatch.setattr(platform, "control_auth", lambda: "secret")
    monkeypatch.setattr(control_server, "_AUTH_SECONDS", 30.0)
    server = ControlServer(transport="stdio", directory=tmp_path)
    silent: list[socket.socket] = []
    try:
        where = server.start()
        assert server.address is not None
        silent = [socket.create_connection(tuple(server.address), timeout=5)
                  for _ in range(control_server._AUTH_AT_ONCE)]
        assert _hello_within(where, 10) < 5
    finally:
        for sock in silent:
            sock.close()
        server.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/net/tcp is Linux's")
def test_the_peer_uid_of_a_loopback_connection_is_known_on_linux() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        client = socket.create_connection(listener.getsockname(), timeout=5)
        conn, _ = listener.accept()
        try:
            assert platform.tcp_peer_uid(conn) == os.getuid()
        finally:
            conn.close()
            client.close()
    finally:
        listener.close()
