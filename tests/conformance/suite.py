"""The official MCP conformance suite as a judge of the recording proxy and the mock.

npm ``@modelcontextprotocol/conformance`` (installed by ``make peers``: 0.1.16 for the 2025-11-25 scenarios,
0.2.0-alpha.12 for ``--requirements 2026-07-28``, run on Node 22 from the npm registry) runs its server
scenarios three times per era:

* **direct**: against the real server;
* **recorded**: through ``mcpreel record --transport streamable-http`` in front of that server;
* **served**: against ``mcpreel serve`` of the reel the recorded run wrote.

A faithful proxy and a faithful mock get, scenario by scenario, the verdict the server gets. Where they
do not and that is by design, :data:`EXCEPTIONS` says so and why. The tests
(``tests/conformance/test_conformance_suite.py``) and the docs' tables (``bench/conformance_table.py``: docs/explanation/conformance.md)
both run :func:`judge`.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / ".peers"
#: Node 22 from the npm registry (the suite uses fs.globSync; the system node may be older)
NODE22 = PEERS / "node22" / "node_modules" / ".bin" / "node"
_SUITE_JS = Path("node_modules") / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
EVERYTHING_JS = PEERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
LISTEN127 = ROOT / "tests" / "peers" / "listen127.cjs"
SDK_SERVER = ROOT / "tests" / "peers" / "sdk_server.py"
#: FastMCP 4 in its own virtualenv (make peers), and the server the tests run with it
FASTMCP_PYTHON = PEERS / "fastmcp" / "bin" / "python"
FASTMCP_SERVER = ROOT / "tests" / "peers" / "fastmcp_server.py"

#: the three runs of one era, in the order they are made (served reads what recorded wrote)
LEGS = ("direct", "recorded", "served")


@dataclass(frozen=True)
class Era:
    """One requirement set: which suite judges which real server."""

    name: str  # the spec revision the scenarios are of
    suite_dir: str  # under .peers
    suite_version: str
    suite_args: tuple[str, ...]
    server: str  # "everything" or "sdk"
    server_label: str

    @property
    def suite_js(self) -> Path:
        return PEERS / self.suite_dir / _SUITE_JS

    @property
    def key(self) -> str:
        """Which requirement set judges which server: ``2025-11-25 everything``."""
        return f"{self.name} {self.server}"


_EVERYTHING = "server-everything 2026.8.31 (npm, Streamable HTTP)"
_SDK = "the official Python SDK 2.3's MCPServer (tests/peers/sdk_server.py, Streamable HTTP)"
_FASTMCP = "FastMCP 4 (tests/peers/fastmcp_server.py, Streamable HTTP)"
_ERAS = (
    Era("2025-11-25", "conformance-0.1", "0.1.16", (), "everything", _EVERYTHING),
    Era("2025-11-25", "conformance-0.1", "0.1.16", (), "sdk", _SDK),
    Era("2025-11-25", "conformance-0.1", "0.1.16", (), "fastmcp", _FASTMCP),
    Era("2026-07-28", "conformance-0.2", "0.2.0-alpha.12", ("--requirements", "2026-07-28"), "sdk", _SDK),
    Era("2026-07-28", "conformance-0.2", "0.2.0-alpha.12", ("--requirements", "2026-07-28"), "fastmcp", _FASTMCP),
)
#: every judged pairing, by :attr:`Era.key` (server-everything does not speak 2026-07-28: see docs/explanation/conformance.md)
ERAS = {era.key: era for era in _ERAS}

_REBINDING = ("mcpreel's listeners bind 127.0.0.1 and refuse a Host that is not a loopback name (421), so the "
              "suite's rebinding probe is refused by mcpreel before it reaches the server; {server}, which does not "
              "refuse it, fails the scenario directly")
#: (era key, scenario) -> why mcpreel's verdict differs from the server's, by design (recorded and served alike)
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("2025-11-25 everything", "dns-rebinding-protection"): _REBINDING.format(server="server-everything"),
    ("2025-11-25 fastmcp", "dns-rebinding-protection"): _REBINDING.format(server="FastMCP"),
    ("2026-07-28 fastmcp", "dns-rebinding-protection"): _REBINDING.format(server="FastMCP"),
}


def missing_peers(era: Era) -> str | None:
    """Why this era cannot be judged here (None: it can): what ``make peers`` did not install."""
    if not NODE22.exists():
        return f"Node 22 is not installed at {NODE22} (make peers: npm install node@22)"
    if not era.suite_js.is_file():
        return f"the conformance suite {era.suite_version} is not installed at {era.suite_js} (make peers)"
    if era.server == "everything" and not EVERYTHING_JS.is_file():
        return f"server-everything is not installed at {EVERYTHING_JS} (make peers)"
    if era.server == "fastmcp" and not FASTMCP_PYTHON.exists():
        return f"FastMCP is not installed in {FASTMCP_PYTHON.parent.parent} (make peers: pip install fastmcp)"
    return None


@dataclass
class Verdict:
    """One scenario's line of the suite's ``=== SUMMARY ===``."""

    passed: bool
    checks_passed: int
    checks_failed: int

    def describe(self) -> str:
        return f"{'pass' if self.passed else 'FAIL'} ({self.checks_passed}/{self.checks_passed + self.checks_failed})"


_LINE = re.compile(r"^([✓✗])\s+(\S+):\s+(\d+) passed, (\d+) failed\s*$")


def parse_summary(text: str) -> dict[str, Verdict]:
    """The scenario verdicts of a suite run's output: the lines of its ``=== SUMMARY ===`` block up to
    ``Total:`` (the "not scored" list after it repeats scenarios without counts and is not read)."""
    start = text.rfind("=== SUMMARY ===")
    if start < 0:
        raise ValueError("the conformance suite printed no === SUMMARY === block")
    out: dict[str, Verdict] = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("Total:"):
            break
        m = _LINE.match(line.strip())
        if m:
            out[m.group(2)] = Verdict(m.group(1) == "✓", int(m.group(3)), int(m.group(4)))
    if not out:
        raise ValueError("the conformance suite's summary holds no scenario line")
    return out


@dataclass
class Judgement:
    """What the suite said of one era's server, directly, through the proxy, and of the mock."""

    era: Era
    runs: dict[str, dict[str, Verdict]] = field(default_factory=dict)  # leg -> scenario -> verdict
    outputs: dict[str, str] = field(default_factory=dict)  # leg -> the suite's whole output
    serve_log: str = ""
    record_log: str = ""
    reel: Path | None = None  # what mcpreel record wrote (and serve served)

    def scenarios(self) -> list[str]:
        return list(self.runs["direct"])

    def differences(self, leg: str) -> dict[str, tuple[Verdict | None, Verdict | None]]:
        """Scenarios whose verdict in ``leg`` is not the direct one (excepted ones included)."""
        direct, other = self.runs["direct"], self.runs[leg]
        out: dict[str, tuple[Verdict | None, Verdict | None]] = {}
        for name in dict.fromkeys([*direct, *other]):
            a, b = direct.get(name), other.get(name)
            if a is None or b is None or a.passed != b.passed:
                out[name] = (a, b)
        return out

    def served_misses(self) -> int | None:
        m = re.search(r"served \d+ requests: \d+ answered from the recording, (\d+) missed", self.serve_log)
        return int(m.group(1)) if m else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{proc.args!r} did not listen on 127.0.0.1:{port} within {timeout:g} s")


@contextlib.contextmanager
def _process(args: list[str], port: int, log: Path, *, env: dict[str, str] | None = None,
             stop: int = signal.SIGTERM) -> Iterator[subprocess.Popen[bytes]]:
    """A child that listens on ``port``; stopped with ``stop`` (then killed) when the block ends."""
    with open(log, "wb") as fh:
        proc = subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            _wait_port(port, proc)
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(stop)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _mcpreel_env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@contextlib.contextmanager
def real_server(era: Era, log: Path) -> Iterator[str]:
    """The era's real server on a free loopback port; yields its MCP URL."""
    port = free_port()
    if era.server == "everything":
        env = {**os.environ, "PORT": str(port)}
        args = ["node", "--require", str(LISTEN127), str(EVERYTHING_JS), "streamableHttp"]
    elif era.server == "fastmcp":
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # its own virtualenv, its own packages
        args = [str(FASTMCP_PYTHON), str(FASTMCP_SERVER), str(port)]
    else:
        env = dict(os.environ)
        args = [sys.executable, str(SDK_SERVER), "streamable-http", str(port)]
    with _process(args, port, log, env=env):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def recording_proxy(target: str, reel: Path, log: Path) -> Iterator[str]:
    """``mcpreel record --transport streamable-http`` in front of ``target``; the reel is whole once the
    block ends (the recorder is stopped with SIGINT, as a person's Ctrl+C)."""
    port = free_port()
    args = [sys.executable, "-m", "mcpreel", "record", "--transport", "streamable-http", "--target", target,
            "--listen", f"127.0.0.1:{port}", "--out", str(reel), "--no-control"]
    with _process(args, port, log, env=_mcpreel_env(), stop=signal.SIGINT):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def mock_server(reel: Path, log: Path) -> Iterator[str]:
    """``mcpreel serve`` of ``reel`` over Streamable HTTP; its log says how many requests it missed."""
    port = free_port()
    args = [sys.executable, "-m", "mcpreel", "serve", str(reel), "--transport", "streamable-http",
            "--port", str(port)]
    with _process(args, port, log, env=_mcpreel_env(), stop=signal.SIGINT):
        yield f"http://127.0.0.1:{port}/mcp"


def run_suite(era: Era, url: str, *, timeout: float = 300.0) -> str:
    """The suite's server scenarios against ``url``; its whole output (exit 1 only says a check failed)."""
    proc = subprocess.run([str(NODE22), str(era.suite_js), "server", "--url", url, *era.suite_args],
                          capture_output=True, timeout=timeout, cwd=ROOT)
    return proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")


def judge(era: Era, workdir: Path) -> Judgement:
    """Run the era's scenarios direct, recorded and served; the reel is ``workdir/recorded.jsonl``."""
    workdir.mkdir(parents=True, exist_ok=True)
    reel = workdir / "recorded.jsonl"
    got = Judgement(era, reel=reel)
    with real_server(era, workdir / "server.log") as url:
        got.outputs["direct"] = run_suite(era, url)
        with recording_proxy(url, reel, workdir / "record.log") as proxied:
            got.outputs["recorded"] = run_suite(era, proxied)
    got.record_log = (workdir / "record.log").read_text(errors="replace")
    with mock_server(reel, workdir / "serve.log") as served:
        got.outputs["served"] = run_suite(era, served)
    got.serve_log = (workdir / "serve.log").read_text(errors="replace")
    for leg in LEGS:
        got.runs[leg] = parse_summary(got.outputs[leg])
    return got
