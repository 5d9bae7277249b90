"""Issue 34's real servers, each with the requests a user's program makes of it, recorded by the official
SDK's default client through ``mcpreel record`` (stdio, or the recording proxy over Streamable HTTP), and
replayed: what the noise tests (``test_noise_real_peers.py``) and ``bench/replay_noise.py`` share.

A :class:`Peer` names a server and how to reach it; :func:`record` makes its recording in an era
(``auto``: the SDK's default, 2026-07-28 where the server speaks it; ``legacy``: the handshake era);
:func:`replay` runs ``mcpreel replay`` against it with any options and returns its exit code and JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import LISTEN127, free_port
from tests.replay import real_servers as rs
from tests.replay.e2e_helpers import MCPREEL, PEERS, Background

PY = sys.executable
VARYING = f"{PY} {PEERS / 'varying_server.py'}"
CLIENT = PEERS / "script_client.py"


@dataclass
class Peer:
    """A real server: ``stdio`` its command (a string), or ``http`` the argv of a process serving
    Streamable HTTP on ``$PORT`` (``{port}`` in it is replaced); ``script`` what the client asks of it."""

    name: str
    script: dict[str, Any]
    stdio: str | None = None
    http: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)


def time_peer(command: str) -> Peer:
    """mcp-server-time: the time now (it varies) and a conversion (it does not)."""
    return Peer("mcp-server-time", {"calls": [
        ["get_current_time", {"timezone": "UTC"}],
        ["get_current_time", {"timezone": "Europe/Paris"}],
        ["convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}]]},
        stdio=command)


def git_peer(command: str, repo: Path) -> Peer:
    """mcp-server-git on ``repo``: status, log, show (the 2025 release wrote a Python object's address in it)."""
    where = {"repo_path": str(repo)}
    return Peer("mcp-server-git", {"calls": [["git_status", where], ["git_log", where],
                                             ["git_show", {**where, "revision": "HEAD"}],
                                             ["git_branch", {**where, "branch_type": "local"}]]},
                stdio=f"{command} --repository {repo}")


def everything_peer(js: Path, transport: str = "stdio") -> Peer:
    """server-everything: echo and a sum (stable), a resource reference and a resource read whose text says
    when it was created (it varies)."""
    script = {"list": ["tools", "resources"],
              "calls": [["echo", {"message": "hi"}], ["get-sum", {"a": 2, "b": 3}],
                        ["get-resource-reference", {"resourceType": "Text", "resourceId": 1}]],
              "resources": ["demo://resource/dynamic/text/1"]}
    if transport == "stdio":
        return Peer("server-everything", script, stdio=f"node {js} stdio")
    return Peer("server-everything (HTTP)", script, http=["node", "--require", str(LISTEN127), str(js),
                                                            "streamableHttp"])


def varying_peer(transport: str = "stdio") -> Peer:
    """Our own server: a timestamp, an id, a random pick, all three inside a text, and a sum that never varies."""
    script = {"list": ["tools", "resources"], "resources": ["varying://status"],
              "calls": [["now", {}], ["new_id", {}], ["pick", {}], ["report", {}], ["add", {"a": 2, "b": 3}]]}
    if transport == "stdio":
        return Peer("varying", script, stdio=VARYING)
    return Peer("varying (HTTP)", script, http=[PY, str(PEERS / "varying_server.py"), "streamable-http", "{port}"])


def git_repo(where: Path) -> Path:
    """A repository of two commits (the git server's subject), made by the test."""
    repo = where / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, timeout=60)
    (repo / "a.txt").write_text("a\n")
    subprocess.run(["git", "add", "a.txt"], cwd=repo, env=env, check=True, timeout=60)
    subprocess.run(["git", "commit", "-q", "-m", "second"], cwd=repo, env=env, check=True, timeout=60)
    return repo


@contextmanager
def serving(peer: Peer) -> Iterator[str]:
    """Where to reach ``peer``: its stdio command as it is, or the URL of its HTTP process (started, then stopped)."""
    if peer.http is None:
        assert peer.stdio is not None
        yield peer.stdio
        return
    port = free_port()
    argv = [a.replace("{port}", str(port)) for a in peer.http]
    server = Background(argv, port=port, env={**peer.env, "PORT": str(port)}, timeout=60)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.stop()


def target_args(where: str) -> list[str]:
    """``replay``'s options for a stdio command or a URL."""
    return ["--target-url", where] if where.startswith("http") else ["--target-command", where]


def _client(mode: str, target: str, script: dict[str, Any], era: str, timeout: float) -> dict[str, Any]:
    proc = subprocess.run([PY, str(CLIENT), mode, target, json.dumps(script), "--era", era], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def record(peer: Peer, where: str, out: Path, era: str = "auto", timeout: float = 120) -> dict[str, Any]:
    """Record ``peer`` (reached at ``where``, from :func:`serving`) with the SDK's default client in ``era``."""
    if not where.startswith("http"):
        recorder = " ".join([*MCPREEL, "record", "-q", "--out", str(out), "--", where])
        got = _client("stdio", recorder, peer.script, era, timeout)
    else:
        port = free_port()
        proxy = Background([*MCPREEL, "record", "-q", "--transport", "streamable-http", "--target-url", where,
                            "--listen", f"127.0.0.1:{port}", "-o", str(out)], port=port, timeout=60)
        try:
            got = _client("streamable-http", f"http://127.0.0.1:{port}/mcp", peer.script, era, timeout)
        finally:
            code, err = proxy.stop()
        assert code == 0, err
    assert out.is_file()
    return got


def replay(recording: Path, where: str, *options: str, timeout: float = 600) -> tuple[int, dict[str, Any], str]:
    """``mcpreel replay`` of ``recording`` against ``where`` with ``options``: (exit code, its JSON, its text)."""
    fd, name = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        proc = subprocess.run([*MCPREEL, "replay", str(recording), *target_args(where), *options, "-o", name],
                              capture_output=True, text=True, timeout=timeout)
        text = Path(name).read_text()
        doc = json.loads(text) if text.strip() else {}
    finally:
        os.unlink(name)
    return proc.returncode, doc, proc.stdout + proc.stderr


def changed(doc: dict[str, Any]) -> list[str]:
    """The requests a replay judged ``changed``, as ``method tool``."""
    return [f"{r.get('method')} {r.get('tool') or ''}".strip() for r in doc.get("results", [])
            if r.get("status") == "changed"]


__all__ = ["Peer", "changed", "everything_peer", "git_peer", "git_repo", "record", "replay", "rs", "serving",
           "target_args", "time_peer", "varying_peer"]
