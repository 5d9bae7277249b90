"""An output path that is a symbolic link is refused with one line (exit 2), never written through.

A link planted where a recording goes would otherwise receive the session (or lose its target to our
copy); the link and its target are left exactly as they were.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpreel._infra.fileio import atomic_output, open_private_append
from mcpreel.errors import UsageError
from tests.conftest import FIXTURES, needs_shared

MCPREEL = [sys.executable, "-m", "mcpreel"]
SERVER = Path(__file__).parents[1] / "record" / "stdio" / "servers" / "raw_server.py"


def _link(tmp_path: Path) -> tuple[Path, Path]:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    os.chmod(victim, 0o644)
    link = tmp_path / "out.jsonl"
    link.symlink_to(victim)
    return link, victim


def _untouched(link: Path, victim: Path) -> None:
    assert link.is_symlink() and os.readlink(link) == str(victim)
    assert victim.read_bytes() == b"precious\n"
    assert (victim.stat().st_mode & 0o777) == 0o644
    assert [p.name for p in link.parent.iterdir() if p.name.endswith(".part")] == []


def test_atomic_output_refuses_a_link(tmp_path: Path) -> None:
    link, victim = _link(tmp_path)
    with pytest.raises(UsageError, match="refusing to write through a symbolic link"), atomic_output(link) as fh:
        fh.write(b"session")
    _untouched(link, victim)


def test_atomic_output_refuses_a_link_planted_while_writing(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    os.chmod(victim, 0o644)
    out = tmp_path / "out.jsonl"
    with pytest.raises(UsageError, match="symbolic link"), atomic_output(out) as fh:
        fh.write(b"session")
        out.symlink_to(victim)
    _untouched(out, victim)


def test_a_dangling_link_is_refused_too(tmp_path: Path) -> None:
    link = tmp_path / "out.jsonl"
    link.symlink_to(tmp_path / "nowhere" / "created-by-us")
    with pytest.raises(UsageError, match="symbolic link"):
        open_private_append(link)
    assert not (tmp_path / "nowhere").exists()


def test_append_refuses_a_link(tmp_path: Path) -> None:
    link, victim = _link(tmp_path)
    with pytest.raises(UsageError, match="symbolic link"):
        open_private_append(link)
    _untouched(link, victim)


def _one_line_exit_2(r: subprocess.CompletedProcess[str], link: Path) -> None:
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{link}: refusing to write through a symbolic link" in r.stderr


def test_record_stdio_refuses_a_linked_out(tmp_path: Path) -> None:
    link, victim = _link(tmp_path)
    r = subprocess.run([*MCPREEL, "record", "--out", str(link), "--", sys.executable, str(SERVER)],
                       input="", capture_output=True, text=True, timeout=60)
    _one_line_exit_2(r, link)
    _untouched(link, victim)


def test_record_http_refuses_a_linked_out(tmp_path: Path) -> None:
    link, victim = _link(tmp_path)
    r = subprocess.run([*MCPREEL, "record", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                        "--listen", "127.0.0.1:0", "--out", str(link)],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    _one_line_exit_2(r, link)
    _untouched(link, victim)


def test_record_http_library_refuses_a_linked_out_before_binding(tmp_path: Path) -> None:
    from mcpreel.record import HttpTarget, RecordHooks, RecordOptions, record
    from mcpreel.record.http_proxy import ProxyConfig

    link, victim = _link(tmp_path)
    with pytest.raises(UsageError, match="symbolic link"):  # (were it not refused: stopped at once)
        record(RecordOptions(HttpTarget(ProxyConfig("streamable-http", "http://127.0.0.1:9/mcp"), port=0), link),
               RecordHooks(handle_signals=False, on_server=lambda server: server.stop()))
    _untouched(link, victim)


def test_record_refuses_a_linked_session_file(tmp_path: Path) -> None:
    link, victim = _link(tmp_path)
    r = subprocess.run([*MCPREEL, "record", "--out", str(tmp_path / "r.jsonl"), "--session-file", str(link),
                        "--", sys.executable, str(SERVER)],
                       input="", capture_output=True, text=True, timeout=60)
    _one_line_exit_2(r, link)
    _untouched(link, victim)


@needs_shared
def test_convert_refuses_a_linked_output(tmp_path: Path) -> None:
    link, victim = _link(tmp_path)
    r = subprocess.run([*MCPREEL, "convert", str(FIXTURES / "qai" / "qai_session_fastmcp.json"), str(link),
                        "--to", "reel"], capture_output=True, text=True, timeout=60)
    _one_line_exit_2(r, link)
    _untouched(link, victim)
