"""A server run as a subprocess, spoken to over its stdin/stdout (one JSON-RPC message per line).

The child is started and stopped by :mod:`mcpreel.clients.process`: our environment (plus ``env``),
its own process group, and a clean shutdown (stdin closed first, as a well-behaved server exits on
EOF, then SIGTERM to the group after ``grace`` seconds, then SIGKILL). Its stderr lines are handed out
as ``Kind.STDERR`` records, so a caller can show the last one when the server dies
(:meth:`StdioTransport.dead_reason`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.clients.base import Transport
from mcpreel.clients.process import ServerStartError, spawn_async, stop_async, wait_async, with_environ
from mcpreel.errors import TransportError
from mcpreel.model import Kind

__all__ = ["StdioTransport"]

_LINE_LIMIT = 1 << 28  # a single message may be large (images, file contents)
#: how a start failure is put when the system's words are longer than needed
_SHORT_REASONS: dict[type[BaseException | None], str] = {FileNotFoundError: "not found", PermissionError: "permission denied"}


class StdioTransport(Transport):
    """A client of a server started as a child process, speaking newline-delimited JSON on its stdin and stdout."""
    name = "stdio"

    def __init__(self, argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                 grace: float = 2.0, inherit_env: bool = True):
        super().__init__()
        if not argv:
            raise TransportError("no server command given")
        self.argv = list(argv)
        self.env = env
        #: False: ``env`` is the child's whole environment, not additions to ours
        self.inherit_env = inherit_env
        self.cwd = cwd
        self.grace = grace
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail: list[str] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._write_lock = asyncio.Lock()

    @property
    def returncode(self) -> int | None:
        """The server process's exit code (None while it runs or before it started)."""
        return self.proc.returncode if self.proc is not None else None

    async def start(self) -> None:
        try:
            self.proc = await spawn_async(self.argv, env=with_environ(self.env) if self.inherit_env else self.env, cwd=self.cwd, limit=_LINE_LIMIT)
        except ServerStartError as exc:
            # for replay and forwarding a server that cannot start is one that cannot be reached (exit 2)
            why = _SHORT_REASONS.get(type(exc.__cause__), exc.reason)
            raise TransportError(f"cannot start server command {self.argv[0]!r}: {why}") from exc.__cause__
        self._tasks = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]

    async def _read_stdout(self) -> None:
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        out = proc.stdout
        try:
            while True:
                try:
                    line = await out.readline()
                except ValueError:  # a line beyond the limit
                    self._deliver_text(Kind.INVALID, "<a line longer than 256 MiB was skipped>")
                    continue
                if not line:
                    break
                stripped = line.strip()
                if not stripped:
                    continue
                try:
                    raw = jsonio.loads(stripped)
                except (ValueError, UnicodeDecodeError, RecursionError):
                    # the line as the server wrote it (its indentation kept), for a caller that quotes it
                    self._deliver_text(Kind.INVALID, line.rstrip(b"\r\n").decode("utf-8", "replace"))
                    continue
                self._deliver_json(raw)
        finally:
            code = await wait_async(proc, 1.0)
            self.ended = f"the server exited (exit code {code})" if code is not None else "the server closed its stdout"
            self._finish(self.ended)

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        err = self.proc.stderr
        while True:
            try:
                line = await err.readline()
            except ValueError:
                continue
            if not line:
                return
            text = line.rstrip(b"\r\n").decode("utf-8", "replace")
            self.stderr_tail = (self.stderr_tail + [text])[-20:]
            self._deliver_text(Kind.STDERR, text)

    async def send(self, message: Any) -> None:
        await self.send_bytes(jsonio.dumps(message) + b"\n")

    async def send_bytes(self, data: bytes) -> None:
        """Write bytes as they are (one or more complete lines)."""
        proc = self.proc
        if proc is None or proc.stdin is None:
            raise TransportError("the server is not running")
        async with self._write_lock:
            try:
                proc.stdin.write(data)
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as exc:
                # the pipe breaks as the server dies, before it is reaped and its last stderr line
                # read: wait for both, so the error says how it ended
                await self.wait_gone()
                raise TransportError(self.dead_reason()) from exc

    async def wait_gone(self, timeout: float = 1.0) -> None:
        """Give a server on its way out ``timeout`` seconds to exit, and its last stderr lines half a
        second to be read, so what says how it ended is complete."""
        if self.proc is not None:
            await wait_async(self.proc, timeout)
        if len(self._tasks) > 1:
            await asyncio.wait(self._tasks[1:], timeout=0.5)

    def dead_reason(self) -> str:
        """One line saying how the server went away, with its last stderr line."""
        code = self.returncode
        why = f"the server exited (exit code {code})" if code is not None else "the server closed its stdin"
        last = next((ln for ln in reversed(self.stderr_tail) if ln.strip()), None)
        return f"{why}; its last stderr line: {last.strip()[:200]}" if last else why

    async def close(self) -> None:
        proc = self.proc
        if proc is not None:
            await stop_async(proc, self.grace)
        for task in self._tasks:
            if not task.done():
                task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        self._finish("closed")
