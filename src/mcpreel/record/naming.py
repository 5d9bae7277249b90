"""Default names for a recording: a short label from the server command, a file name from label and time.

An IDE starts one proxy per server, often several in the same second, so the default file name must
be unique without the user's help: ``./mcpreel-sessions/<label>-<UTC time>.jsonl``, with ``-2``, ``-3``...
added when that name is taken.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from mcpreel._infra.fileio import PRIVATE_MODE, refuse_symlink
from mcpreel.errors import UsageError

__all__ = ["DEFAULT_DIR", "check_writable", "claim", "claim_reel", "default_label", "default_out_path"]

DEFAULT_DIR = "mcpreel-sessions"

#: launchers whose first real argument names the server better than they do
_LAUNCHERS = frozenset(
    {"python", "python3", "py", "node", "nodejs", "npx", "uv", "uvx", "pipx", "deno", "bun", "bunx", "pnpm",
     "yarn", "npm", "ruby", "java", "env", "sh", "bash", "docker", "podman"}
)
_LAUNCHER_WORDS = frozenset({"run", "exec", "dlx", "-m", "tool"})
#: script names that say nothing (``.../server-everything/dist/index.js``): the package folder does
_GENERIC_STEMS = frozenset({"index", "main", "__main__", "server", "cli", "app", "run", "start"})
_BUILD_DIRS = frozenset({"dist", "build", "lib", "src", "bin", "out", "node_modules", "esm", "cjs"})
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _clean(word: str) -> str:
    return _UNSAFE.sub("-", word).strip("-.") or "session"


def default_label(command: Sequence[str] = (), url: str | None = None) -> str:
    """``python my_server.py`` -> ``my_server``; ``npx -y @scope/server-x /srv`` -> ``server-x``; a URL -> its host."""
    if url:
        parts = urlsplit(url)
        host = parts.hostname or "http"
        try:
            port = parts.port
        except ValueError:  # a port out of range: the label is only a name, the URL is checked elsewhere
            port = None
        return _clean(f"{host}-{port}" if port else host)
    if not command:
        return "session"
    first = os.path.basename(command[0])
    base = re.sub(r"(\.exe|[0-9.]+)$", "", first)
    if base not in _LAUNCHERS and first not in _LAUNCHERS:
        return _clean(Path(first).stem if "." in first else first)
    for arg in command[1:]:
        if arg.startswith("-") or arg in _LAUNCHER_WORDS or "=" in arg:
            continue
        segments = arg.rstrip("/").split("/")
        name = segments[-1]
        name = name.split("@", 1)[0] if not name.startswith("@") else name
        for suffix in (".py", ".js", ".mjs", ".cjs", ".ts", ".jar"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        if name in _GENERIC_STEMS:
            folder = next((p for p in reversed(segments[:-1]) if p and p not in _BUILD_DIRS and p != "."), None)
            name = folder or name
        return _clean(name)
    return _clean(first)


def _create_exclusive(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def default_out_path(label: str, *, directory: str | os.PathLike[str] = DEFAULT_DIR, now: float | None = None) -> Path:
    """Claim a new reel path: ``<directory>/<label>-<YYYYmmddTHHMMSSZ>[-N].jsonl``, created empty (mode 0600).

    Creating it exclusively is what makes two proxies started in the same second get two files.
    """
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        candidate = folder / f"{_clean(label)}-{stamp}.jsonl"
        n = 2
        while not _create_exclusive(candidate):
            candidate = folder / f"{_clean(label)}-{stamp}-{n}.jsonl"
            n += 1
    except OSError as exc:  # a read-only folder, a file in the way: one line, before anything starts
        raise UsageError(f"{folder}: cannot write the session there: {exc.strerror or exc} (record elsewhere "
                         f"with -o FILE)") from exc
    return candidate


def claim(path: str | os.PathLike[str]) -> Path:
    """Make ``path`` a new, empty, private file: an existing file there is replaced, not appended to.

    The reel writer appends (that is what makes it crash-safe), so an old session left at ``--out``
    would otherwise get a second session glued to its end. A symbolic link there is refused
    (:func:`~mcpreel._infra.fileio.refuse_symlink`), neither followed nor replaced.
    """
    target = Path(path)
    refuse_symlink(target)
    if target.is_dir():
        raise IsADirectoryError(21, "is a directory", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    if not _create_exclusive(target):
        if target.stat().st_size == 0 and (target.stat().st_mode & 0o777) == PRIVATE_MODE:
            return target  # claimed by default_out_path a moment ago
        target.unlink()
        if not _create_exclusive(target):
            raise FileExistsError(17, "appeared while being replaced", str(target))
    return target


def _reel_tail(target: Path) -> int | None:
    """The next ``seq`` of the reel at ``target`` (its meta line first), or None when it is no reel.

    A torn last line (a recorder killed mid-write) is cut off first: it was never a whole record, and a
    new session glued to it would make the line before the new meta line unreadable.
    """
    from mcpreel._infra import jsonio

    with open(target, "rb+") as fh:
        first = fh.readline(1 << 20)
        try:
            meta = jsonio.loads(first)
        except (ValueError, UnicodeDecodeError):
            return None
        if not (isinstance(meta, dict) and meta.get("type") == "meta" and "v" in meta):
            return None
        size = fh.seek(0, os.SEEK_END)
        back = min(size, 1 << 20)
        fh.seek(size - back)
        tail = fh.read(back)
        if not tail.endswith(b"\n"):
            cut = tail.rfind(b"\n")
            fh.truncate(size - back + cut + 1 if cut >= 0 else len(first))
            tail = tail[: cut + 1] if cut >= 0 else b""
    for line in reversed(tail.splitlines()):
        try:
            obj = jsonio.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(obj, dict) and type(obj.get("seq")) is int:
            return int(obj["seq"]) + 1
    return 0


def claim_reel(path: str | os.PathLike[str]) -> tuple[Path, int]:
    """The reel ``record --out`` writes and the first ``seq`` to give: an existing reel is appended to.

    A client that starts its server once per tool call (langchain-mcp-adapters) runs ``mcpreel record
    --out X`` again and again: each run adds a session to X (a new meta line, seqs counting on; readers
    split the sessions again, :mod:`mcpreel.operations.sessions`), and none is lost. A missing or empty file is
    claimed as :func:`claim` does; an existing file that is not a reel is refused, never replaced.
    """
    target = Path(path)
    if target.is_symlink() or not target.is_file() or target.stat().st_size == 0:
        return claim(target), 0
    try:
        nxt = _reel_tail(target)
    except OSError as exc:
        raise UsageError(f"{os.fspath(path)}: cannot append to the recording: {exc.strerror or exc}") from exc
    if nxt is None:
        raise UsageError(f"{os.fspath(path)}: exists and is not a reel; record appends sessions to a reel and "
                         "replaces nothing else: give another --output or remove the file")
    return target, nxt


def check_writable(path: str | os.PathLike[str], what: str) -> None:
    """A :class:`UsageError` now when a file could not be put at ``path`` later; touches nothing.

    A session file or an envelope is written when the recording ends, perhaps hours later: a place that
    is a folder, or under a file, is a mistake in the command, to be said before anything starts.
    ``what`` names the file in the message (``session file``, ``envelope``).
    """
    target = Path(path)
    refuse_symlink(target)
    folder = target.parent
    while not folder.exists() and folder != folder.parent:  # missing folders are made when it is written
        folder = folder.parent
    if target.is_dir():
        why = "it is a directory"
    elif not folder.is_dir():
        why = f"{folder} is not a directory"
    elif not os.access(folder, os.W_OK | os.X_OK):
        why = f"permission denied in {folder}"
    else:
        return
    raise UsageError(f"{os.fspath(path)}: cannot write the {what}: {why}")
