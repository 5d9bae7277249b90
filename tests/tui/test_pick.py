"""``mcpreel tui`` without a file: the only running proxy is attached, several are listed to pick from."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import click
import pytest

from mcpreel.cli.tui_cmd import choose_proxy
from mcpreel.errors import UsageError


def _proxy(directory: Path, n: int, target: list[str]) -> tuple[socket.socket, str]:
    path = directory / f"{os.getpid()}-{n}.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    info = {"version": 1, "pid": os.getpid(), "socket": str(path), "transport": "stdio", "target": target,
            "listen": None, "reel": f"r{n}.jsonl", "started": f"2026-11-24T00:00:0{n}Z", "intercept": None}
    (directory / f"{os.getpid()}-{n}.json").write_text(json.dumps(info))
    return listener, str(path)


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "rt"
    directory.mkdir(mode=0o700)
    monkeypatch.setenv("MCPREEL_RUNTIME_DIR", str(directory))
    return directory


def test_no_proxy_is_one_clear_error(runtime: Path):
    with pytest.raises(UsageError, match="no running mcpreel proxy to attach to"):
        choose_proxy()


def test_the_only_proxy_is_attached_without_asking(runtime: Path, monkeypatch: pytest.MonkeyPatch):
    listener, path = _proxy(runtime, 0, ["srv"])
    monkeypatch.setattr(click, "prompt", lambda *a, **k: pytest.fail("asked"))
    try:
        assert choose_proxy() == path
    finally:
        listener.close()


def test_several_proxies_are_listed_and_one_is_picked(runtime: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    first, _ = _proxy(runtime, 0, ["one-server"])
    second, path = _proxy(runtime, 1, ["two-server", "--flag"])
    monkeypatch.setattr(click, "prompt", lambda text, type, err: 2)
    try:
        assert choose_proxy() == path
    finally:
        first.close()
        second.close()
    listed = capsys.readouterr().err
    assert "1. pid" in listed and "one-server" in listed and "2. pid" in listed and "two-server --flag" in listed
