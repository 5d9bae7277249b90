"""The test's side of a cassette: how a test reaches a cassette-backed MCP server, and what went wrong.

:func:`cassette_server` plans the run at once, so a corrupt cassette fails before the test starts
(and stays byte-identical), then:

- stdio: it gives the argv of ``python -m mcpreel serve CASSETTE --record-mode MODE --report R
  [--target-command CMD]`` — the test's client launches it (its own child, as MCP clients want), as
  many times as it likes;
- HTTP: it starts that process on 127.0.0.1 with a port the system picks, waits (bounded) for the
  ``ready`` event in the report, and gives the URL; :meth:`CassetteServer.close` stops it (SIGTERM,
  SIGKILL past a bound; on Linux it also dies with the test process).

Afterwards :meth:`CassetteServer.problems` reads the report: every request the cassette could not
answer (with the closest recorded request and how it differs), a recording that broke off, an error.
The serving process does the work (:mod:`mcpreel.cassette.run`); this side only launches and listens.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpreel._infra import platform
from mcpreel.cassette.mode import RecordMode
from mcpreel.cassette.report import read_report
from mcpreel.clients.process import ServerStartError, spawn, stop, with_environ
from mcpreel.errors import TransportError, UsageError

__all__ = ["CassetteServer", "CassetteSetup", "cassette_server"]

#: the serving process: this interpreter running mcpreel's command line
MCPREEL = [sys.executable, "-m", "mcpreel"]


class CassetteServer:
    """A cassette-backed MCP server for one test.

    stdio: launch :attr:`argv` (or :meth:`stdio_parameters` for the SDK's ``stdio_client``) with
    :attr:`env` and :attr:`cwd`. HTTP: connect to :attr:`url`. Then :meth:`close` and :meth:`problems`.
    """

    def __init__(self, *, cassette: Path, mode: RecordMode, plan: Any, transport: str, argv: list[str],
                 env: dict[str, str], cwd: str | None, workdir: Path, report: Path):
        self.cassette = cassette
        self.mode = mode
        self.plan = plan
        self.transport = transport
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.url: str | None = None
        self._workdir = workdir
        self._report = report
        self._log = workdir / "server.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._died: int | None = None  # exit code of an HTTP server that ended before it was stopped
        self._final: list[dict[str, Any]] | None = None
        self._log_tail = ""
        #: record mode none and no cassette: an empty one is served, and any request the test makes fails
        self.missing = False

    # -- what a client needs --------------------------------------------------------------------
    @property
    def command(self) -> str:
        """The program a client starts (MCP configs take a command and its arguments apart)."""
        return self.argv[0]

    @property
    def args(self) -> list[str]:
        """The arguments of :attr:`command`."""
        return self.argv[1:]

    @property
    def exit_code(self) -> int | None:
        """How the HTTP serving process ended (1: requests missed, as ``--on-miss fail``); None for stdio."""
        return self._proc.returncode if self._proc is not None else None

    @property
    def action(self) -> str:
        """``record`` or ``replay``: what the plan said when the server was made."""
        return str(self.plan.action)

    def stdio_parameters(self, *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
                         **kwargs: Any) -> Any:
        """The official SDK's ``StdioServerParameters`` for :attr:`argv` (stdio only).

        ``env`` is laid over :attr:`env` (the test's environment and the marker's ``env``), not instead of
        it, so a variable the test adds does not cost the real server the rest; ``cwd`` replaces :attr:`cwd`.
        """
        if self.transport != "stdio":
            raise UsageError(f"this cassette is served over {self.transport}: connect to {self.url}")
        try:
            from mcp import StdioServerParameters  # the project's own SDK, 1.x or 2.x: both have it
        except ImportError as exc:
            raise UsageError("stdio_parameters() makes the official MCP SDK's StdioServerParameters: pip install "
                             "mcp (any 1.x or 2.x), or start mcp_server.argv yourself") from exc

        where = os.fspath(cwd) if cwd is not None else self.cwd
        return StdioServerParameters(command=self.command, args=self.args, env={**self.env, **(env or {})},
                                     cwd=where, **kwargs)

    # -- HTTP lifecycle -------------------------------------------------------------------------
    def _start_http(self, env: dict[str, str], timeout: float) -> None:
        with open(self._log, "wb") as log:
            try:
                # in the test's process group (a Ctrl-C stops both), ended with the test process on Linux
                self._proc = spawn(self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                   cwd=self.cwd, group=False, die_with_parent=True)
            except ServerStartError as exc:
                self.close()
                raise TransportError(f"{self.cassette}: cannot start the cassette server: {exc.reason}") from exc.__cause__
        deadline = time.monotonic() + timeout
        while True:
            for event in read_report(self._report):
                if event.get("event") == "ready" and event.get("url"):
                    self.url = str(event["url"])
                    return
                if event.get("event") == "error":
                    self.close()
                    raise TransportError(f"{self.cassette}: the cassette server could not start: {event.get('message')}")
            code = self._proc.poll()
            if code is not None:
                self.close()
                raise TransportError(f"{self.cassette}: the cassette server exited with code {code} before it "
                                     f"listened{self._tail()}")
            if time.monotonic() > deadline:
                self.close()
                raise TransportError(f"{self.cassette}: the cassette server did not listen within {timeout:g} s"
                                     f"{self._tail()}")
            time.sleep(0.02)

    def _tail(self) -> str:
        text = self._log_tail
        if not text:
            try:
                text = self._log.read_text(errors="replace")
            except OSError:
                text = ""
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return f"; it said: {' | '.join(lines[-3:])}" if lines else ""

    def close(self, timeout: float = 15.0) -> None:
        """Stop the HTTP server (a stdio server is its client's to stop) and keep the report's last word."""
        if self._final is not None:
            return
        proc = self._proc
        if proc is not None:
            if proc.poll() is not None:
                self._died = proc.returncode
            else:
                stop(proc, timeout, group=False)
        else:
            self._finish_stdio(timeout)
        try:
            self._log_tail = self._log.read_text(errors="replace") if self._log.exists() else ""
        except OSError:
            self._log_tail = ""
        self._final = read_report(self._report)
        shutil.rmtree(self._workdir, ignore_errors=True)

    def _settle(self, bound: float) -> bool:
        # a stdio serving process saves (or fails to save) its recording just after its client leaves:
        # wait, bounded, for the last word of a run that started, so it is not lost to a race
        deadline = time.monotonic() + bound
        while True:
            events = [e.get("event") for e in read_report(self._report)]
            if not events or events[-1] in ("done", "saved", "not-saved", "error"):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def _finish_stdio(self, timeout: float) -> None:
        """The test is over: a stdio recording is on disk when this returns, whatever the client did.

        A client that closed its server has the recording saved within moments. One that leaves the serving
        process running (pydantic-ai's, past the test and past pytest: the cassette then appeared after
        pytest had ended, saved by an orphan) is told to end it now: SIGTERM, which the serving process hands
        to the real server, so the session ends as when a client ends it, and is saved."""
        if self._settle(2.0) or not self.plan.record or not platform.can_signal_processes():
            if not self.plan.record or not platform.can_signal_processes():
                self._settle(3.0)
            return
        pid = next((e.get("pid") for e in read_report(self._report) if e.get("event") == "plan"), None)
        if not isinstance(pid, int) or pid <= 1:
            self._settle(3.0)
            return
        import signal

        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            return  # gone already: its last word, if any, is in the report
        self._settle(max(timeout, 15.0))

    def __enter__(self) -> CassetteServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what happened --------------------------------------------------------------------------
    def events(self) -> list[dict[str, Any]]:
        """The serving process's report so far (all of it after :meth:`close`)."""
        return list(self._final) if self._final is not None else read_report(self._report)

    def misses(self) -> list[dict[str, Any]]:
        """The misses the serving process reported, as data (for the test's failure message)."""
        return [e for e in self.events() if e.get("event") == "miss"]

    def problems(self) -> list[str]:
        """What should fail the test: misses, a recording that broke off, an error, a server that died."""
        where = f"{self.cassette} (record mode {self.mode})"
        found: list[str] = []
        events = self.events()
        if self.missing:
            # stdio: the serving process ran only if the test's client launched it; HTTP: it always runs
            requests = sum(int(e.get("requests") or 0) for e in events if e.get("event") == "done")
            asked = any(e.get("event") == "miss" for e in events) or requests > 0
            if asked or (self.transport == "stdio" and events):
                return [f"{where}: no such cassette, and the test made MCP requests "
                        "(record mode none replays only: record it with once or all)"]
            return []
        for e in events:
            kind = e.get("event")
            if kind == "miss":
                found.append(_describe_miss(where, e))
            elif kind == "error":
                found.append(f"{where}: the cassette server failed: {e.get('message')}")
            elif kind == "not-saved" and not e.get("clean", False):
                found.append(f"{where}: recording not saved ({e.get('reason')}); the cassette was left as it was")
        if self._proc is not None and not any(e.get("event") == "error" for e in events):
            finished = any(e.get("event") in ("done", "saved", "not-saved") for e in events)
            if self._died is not None:
                found.append(f"{where}: the cassette server exited with code {self._died} during the test"
                             f"{self._tail()}")
            elif not finished and self._final is not None:
                found.append(f"{where}: the cassette server stopped without finishing{self._tail()}")
        return found


def _shown(method: Any, params: Any, width: int = 200) -> str:
    text = json.dumps(params, ensure_ascii=False, sort_keys=True) if params is not None else ""
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{method} {text}".strip()


def _describe_miss(where: str, e: dict[str, Any]) -> str:
    """One miss: the words, then (what the report holds as data) the request, the closest recorded one,
    and each path where they differ, one a line, as pytest lays out a failed comparison."""
    method = e.get("method") or "a request"
    lines = [f"{where}: {method} was not answered from the cassette: {e.get('message')}"]
    if "params" in e:
        lines.append(f"  received: {_shown(method, e.get('params'))}")
    closest = e.get("closest")
    if isinstance(closest, dict):
        lines.append(f"  closest:  {_shown(closest.get('label'), closest.get('params'))}")
        for d in e.get("differences") or []:
            lines.append(f"  differs:  {d}")
    return "\n".join(lines)


def _redaction_key(p: Any, redact: bool, key_dir: str | os.PathLike[str] | None) -> dict[str, str]:
    """The environment that gives the serving process the key of keyed markers (``MCPREEL_REDACT_KEY``):
    created first when the run writes the cassette redacted; nothing when there is no key."""
    from mcpreel.redact.keys import DEFAULT_KEY_FILE, ENV_VAR, load_or_create_key

    where = Path(key_dir) if key_dir is not None else Path.cwd()
    path = Path(os.environ[ENV_VAR]) if os.environ.get(ENV_VAR) else where / DEFAULT_KEY_FILE
    if redact and (p.record or p.on_miss == "forward"):
        load_or_create_key(cwd=where)  # $MCPREEL_REDACT_KEY's file must exist; the default one is made
    return {ENV_VAR: str(path.absolute())} if path.is_file() else {}


def _empty_cassette(workdir: Path) -> Path:
    """A reel with a header and no message: what a missing cassette is replayed as under record mode none."""
    from mcpreel.formats import get_writer
    from mcpreel.model import Session, SessionInfo

    path = workdir / "missing-cassette.jsonl"
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        get_writer("reel")(Session(SessionInfo(label="missing cassette")), out)
    return path


def _stdio_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    # MCP clients start servers with a pared-down environment (the SDK passes HOME, PATH, ... only), and
    # the serving process hands its own on to the real server: give it the test's whole environment, so
    # the server recorded is the one the test would reach (SRV_VERSION=2 pytest records v2, as over HTTP),
    # and the serving process imports the same mcpreel as this one (PYTHONPATH)
    return with_environ(extra)


def _rules_file(rules: str | os.PathLike[str] | list[Any], workdir: Path, recording: bool, transport: str) -> str:
    """The rules file for ``serve --rules``, checked now so a bad one fails the test before it starts
    (inline rules are written to ``workdir``, private to this server)."""
    from mcpreel.rules import RuleSet, load_rules, parse_rules
    from mcpreel.rules.intercept import check_for_recording

    try:
        if isinstance(rules, list):
            source = "the mcp_rules marker's rules"
            ruleset = RuleSet(parse_rules(rules, source=source), source)
            path = workdir / "rules.json"
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
                json.dump(rules, f)
        else:
            path = Path(rules).absolute()
            ruleset = RuleSet(load_rules(path), str(path))
        if recording:
            check_for_recording(ruleset, transport)
    except Exception:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return str(path)


@dataclass(frozen=True)
class CassetteSetup:
    """How a test's cassette is matched, faulted, redacted and tagged (see :func:`cassette_server`).

    ``match``: the mock's match mode. ``start_timeout``: how long an HTTP server may take to come up.
    ``rules``: a rules file, or the rules themselves as a list, for ``serve --rules`` (checked here first).
    ``redact`` and ``key_dir``: see :func:`cassette_server`. ``tags``: ``KEY=VALUE`` pairs written into a
    recording's header (``serve --tag``; ``metadata.tags`` of the cassette).
    """

    match: str = "method-params"
    start_timeout: float = 30.0
    rules: str | os.PathLike[str] | list[Any] | None = None
    redact: bool = True
    key_dir: str | os.PathLike[str] | None = None
    tags: tuple[tuple[str, str], ...] = ()


def cassette_server(
    cassette: str | os.PathLike[str],
    mode: RecordMode | str = RecordMode.ONCE,
    *,
    command: str | Sequence[str] | None = None,
    url: str | None = None,
    transport: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    setup: CassetteSetup | None = None,
) -> CassetteServer:
    """A server for a test, backed by ``cassette`` in record mode ``mode``.

    ``command`` (stdio) or ``url`` (HTTP) is the real server, needed when the mode records or forwards.
    ``transport`` defaults to stdio for a command, and for a URL to what it names (``/sse``: legacy
    SSE, else Streamable HTTP); with neither, stdio. ``env`` is laid over the test's own environment,
    which the serving process (and so the real server it starts) always gets; ``cwd`` defaults to the
    test's working directory. Raises a :class:`~mcpreel.errors.McpreelError` when the cassette is
    corrupt, the mode unknown, the words do not fit, or an HTTP server does not come up in time.
    ``setup`` (:class:`CassetteSetup`): the match mode, rules, redaction and tags.

    ``setup.redact`` (the default): what is written to the cassette (a recording, the answers ``new_episodes``
    adds) is redacted as ``mcpreel redact`` does, with keyed markers, so a cassette can be committed as it
    is. The key is ``$MCPREEL_REDACT_KEY``'s file, else ``.mcpreel/redact.key`` in ``key_dir`` (the pytest
    plugin: the rootdir; default: the working folder), created (0600) when something is to be written.
    Whenever the key exists the serving process is given it, so a replayed request carrying the same
    secret matches the marker, wherever that process runs.
    """
    from mcpreel.cassette.run import TRANSPORTS, check_target, http_transport_for, plan

    setup = setup if setup is not None else CassetteSetup()
    match, rules, redact = setup.match, setup.rules, setup.redact
    if transport is None:
        transport = http_transport_for(url) if url is not None else "stdio"
    if transport not in TRANSPORTS:
        raise UsageError(f"unknown transport {transport!r} (known: {', '.join(TRANSPORTS)})")
    from mcpreel.mock.matcher import MATCH_MODES

    match = match.replace("_", "-")  # mcp-recorder spells it method_params
    if match not in MATCH_MODES:
        raise UsageError(f"unknown match mode {match!r} (known: {', '.join(MATCH_MODES)})")
    path = Path(cassette).absolute()
    missing = RecordMode.parse(mode) is RecordMode.NONE and not path.exists() and not path.is_symlink()
    # record mode none and no cassette: an error only once the test asks for something (a test that makes
    # no MCP call recorded nothing, so it has no cassette to commit): serve an empty one, every request a miss
    workdir = Path(tempfile.mkdtemp(prefix="mcpreel-cassette-"))  # 0700
    served = _empty_cassette(workdir) if missing else path
    try:
        p = plan(served, mode)
        check_target(p, transport, command, url)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    report = workdir / "report.jsonl"
    argv = [*MCPREEL, "serve", str(served), "--record-mode", p.mode.value, "--report", str(report),
            "--match", match]
    try:
        key_env = _redaction_key(p, redact, setup.key_dir)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    if redact and (p.record or p.on_miss == "forward"):
        argv.append("--redact")
    env = {**(env or {}), **key_env}
    if rules is not None:
        argv += ["--rules", _rules_file(rules, workdir, p.record, transport)]
    if p.record:
        for key, value in setup.tags:
            argv += ["--tag", f"{key}={value}"]
    shown_cwd = os.fspath(cwd) if cwd is not None else None
    if transport == "stdio":
        if command is not None:
            argv += ["--target-command", command if isinstance(command, str) else shlex.join(map(str, command))]
        server = CassetteServer(cassette=path, mode=p.mode, plan=p, transport=transport, argv=argv,
                                env=_stdio_env(env), cwd=shown_cwd, workdir=workdir, report=report)
        server.missing = missing
        return server
    argv += ["--transport", transport, "--listen", "127.0.0.1:0"]
    if url is not None:
        argv += ["--target-url", url]
    server = CassetteServer(cassette=path, mode=p.mode, plan=p, transport=transport, argv=argv,
                            env=with_environ(env), cwd=shown_cwd, workdir=workdir, report=report)
    server.missing = missing
    server._start_http(server.env, setup.start_timeout)
    return server
