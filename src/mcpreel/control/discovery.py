"""Where control sockets live, and which proxies are running.

The runtime directory is ``$MCPREEL_RUNTIME_DIR`` if set, else ``$XDG_RUNTIME_DIR/mcpreel/`` when
``XDG_RUNTIME_DIR`` is a directory we own, else ``$TMPDIR/mcpreel/`` when ``TMPDIR`` is a folder only we may
enter (macOS), else ``/tmp/mcpreel-<uid>/`` (:func:`mcpreel._infra.platform.runtime_base`; where there is no
control channel, :func:`running` finds nothing). It is created 0700 and refused
(:class:`~mcpreel.errors.UsageError`, one line) when it exists owned by someone else, is a symlink, or lets
group or others in: the socket's own 0600 mode is the second lock, the directory the first.

Each running proxy makes ``<pid>-<n>.sock`` and beside it ``<pid>-<n>.json`` (0600) describing it (the
``proxy`` object of the ``hello`` line). Where the channel is a loopback TCP socket (no Unix sockets, or
no way to know a socket's peer: :func:`mcpreel._infra.platform.control_auth`) there is no ``.sock``: the
``.json`` names the port (``address``) and ``<pid>-<n>.key`` (0600) holds the run's secret, which a viewer
sends first (:func:`read_secret`); a viewer attaches by the ``.json``'s path. :func:`running` lists them,
dropping (and deleting) stale ones -- a pid that is gone, or a socket that refuses connections -- so a
crashed proxy does not linger in a viewer's list.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import stat
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio, platform
from mcpreel.errors import UsageError

__all__ = ["ENV", "check_dir", "new_endpoint", "read_secret", "remove_endpoint", "runtime_dir", "running",
           "write_info", "write_secret"]

ENV = "MCPREEL_RUNTIME_DIR"
_counter = itertools.count()


def _default_dir() -> Path:
    return platform.runtime_base()


def check_dir(path: Path) -> None:
    """Refuse a runtime directory that is not ours alone (one clear line: which path, which rule)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{path}: the control runtime directory is a symlink; refusing it")
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{path}: the control runtime directory is not a directory")
    if not platform.has_file_modes():
        return  # Windows: no uid, no modes (and no control channel to guard)
    if st.st_uid != platform.user_id():
        raise UsageError(f"{path}: the control runtime directory belongs to uid {st.st_uid}, not to us; refusing it")
    if st.st_mode & 0o077:
        raise UsageError(f"{path}: the control runtime directory is mode {stat.S_IMODE(st.st_mode):04o}; "
                         "it must be 0700 (group and others locked out)")


def runtime_dir(create: bool = True) -> Path:
    """The runtime directory (see the module docstring), created 0700 when ``create``; checked either way."""
    env = os.environ.get(ENV)
    path = Path(env) if env else _default_dir()
    if create:
        try:
            # Windows: %LOCALAPPDATA%\mcpreel\run, its mcpreel folder made too (a profile folder: the user's alone)
            path.mkdir(mode=0o700, parents=bool(env) or not platform.has_file_modes())
        except FileExistsError:
            pass
        except OSError as exc:
            raise UsageError(f"{path}: cannot create the control runtime directory: {exc.strerror or exc}") from exc
    elif not os.path.lexists(path):
        return path
    check_dir(path)
    return path


def new_endpoint(directory: Path | None = None) -> tuple[Path, Path]:
    """A fresh ``(<pid>-<n>.sock, <pid>-<n>.json)`` pair of paths in the runtime directory."""
    directory = directory if directory is not None else runtime_dir()
    pid = os.getpid()
    while True:
        n = next(_counter)
        sock = directory / f"{pid}-{n}.sock"
        info = directory / f"{pid}-{n}.json"
        if not os.path.lexists(sock) and not os.path.lexists(info):
            return sock, info


def write_info(path: Path, info: dict[str, Any]) -> None:
    """Write the description beside the socket, 0600, whole or not at all (a temp file renamed)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | platform.NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(jsonio.dumps(info) + b"\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _key_path(info: Path) -> Path:
    return info.with_suffix(".key")


def write_secret(info: Path, secret: str) -> None:
    """The run's secret beside its description, 0600 (a user-only folder's file on Windows)."""
    write_info(_key_path(info), {"secret": secret})


def read_secret(info: Path) -> str | None:
    """The secret a viewer must send first to the proxy ``info`` describes, or None when it has none."""
    try:
        doc = jsonio.loads(_key_path(info).read_bytes())
    except (OSError, ValueError):
        return None
    secret = doc.get("secret") if isinstance(doc, dict) else None
    return secret if isinstance(secret, str) else None


def remove_endpoint(sock: Path, info: Path) -> None:
    """Remove the proxy's socket, its info file and its secret (a proxy that ended must not be listed)."""
    for p in (sock, info, _key_path(info)):
        with contextlib.suppress(OSError):
            os.unlink(p)


def _pid_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    return platform.pid_alive(pid)


def _answers(sock: str, address: Any = None) -> bool:
    """Whether the proxy's socket takes a connection (its Unix path, or its loopback ``[host, port]``)."""
    tcp = isinstance(address, list) and len(address) == 2
    s = socket.socket(socket.AF_INET if tcp else socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1.0)
    try:
        s.connect((str(address[0]), int(address[1])) if tcp else sock)
        return True
    except (OSError, ValueError, TypeError):
        return False
    finally:
        s.close()


def running(directory: Path | None = None, *, clean: bool = True) -> list[dict[str, Any]]:
    """The running proxies, oldest first: each the ``.json`` description (with ``socket``).

    Stale entries (the pid is gone, the socket is missing or refuses connections, the file is unreadable)
    are left out and, when ``clean``, deleted with their socket.
    """
    if platform.control_unavailable() is not None:
        return []
    if directory is None:
        directory = runtime_dir(create=False)
        if not directory.exists():
            return []
    found: list[dict[str, Any]] = []
    for info_path in sorted(directory.glob("*.json")):
        sock_path = info_path.with_suffix(".sock")
        try:
            info = jsonio.loads(info_path.read_bytes())
        except (OSError, ValueError):
            info = None
        address = info.get("address") if isinstance(info, dict) else None
        ok = (isinstance(info, dict) and _pid_alive(info.get("pid"))
              and (address is not None or os.path.exists(sock_path)) and _answers(str(sock_path), address))
        if not ok:
            if clean:
                remove_endpoint(sock_path, info_path)
            continue
        assert isinstance(info, dict)
        info.setdefault("socket", str(sock_path))
        found.append(info)
    found.sort(key=lambda i: (str(i.get("started") or ""), str(i.get("socket"))))
    return found
