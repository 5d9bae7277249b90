"""``mcpreel demo``: the main job, end to end, on the embedded demo server.

1. **stdio, recorded by the proxy.** The official SDK client starts ``mcpreel record --out … --
   mcpreel demo-server`` as its server: the recording proxy runs the demo server and records every line
   both ways while the client drives a real session (initialize, tools/list, six tool calls: a plain
   one, a customer lookup, an ``isError`` result, progress notifications, and a sampling request the
   client answers).
2. **The same session, converted.** The reel is read back and written as a qai session file and as an
   Assay V2 trace, and drawn as the HTML report (``report.html``, as ``mcpreel report`` writes it).
3. **Streamable HTTP, recorded by the HTTP recorder.** The demo server serves Streamable HTTP on a free
   loopback port; the HTTP recorder (:func:`mcpreel.record.record`, an :class:`~mcpreel.record.HttpTarget`) sits in front of it;
   the same client session runs through it; the recorder writes the HTTP transcript envelope.
4. **The check.** ``mcpreel check --profile strict-sse --call-all`` runs against the HTTP demo server (its tools
   are safe to call); the report is saved as text and JSON.

:func:`run_demo` returns a :class:`DemoResult` (the files, the inspect report of the reel, the check
report, what each step did). It never prints: the CLI renders it. A step that cannot run (a part of
mcpreel missing from this build, say) is kept as a problem and the other steps go on.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel.errors import McpreelError, TransportError, UsageError

__all__ = ["DEMO_FILES", "DemoResult", "next_commands", "run_demo"]

#: what the demo leaves in its folder, and what each file is
DEMO_FILES = {
    "reel": ("session.reel.jsonl", "the stdio session recorded by the proxy (mcpreel's reel)"),
    "qai": ("session.qai.json", "the same session as a qai session file"),
    "trace": ("session.trace.jsonl", "the same session as an Assay V2 trace"),
    "report": ("report.html", "the same session as a page to open in a browser (mcpreel report)"),
    "envelope": ("session.http.json", "the Streamable HTTP run as an HTTP transcript envelope"),
    "http-reel": ("session-http.reel.jsonl", "the Streamable HTTP run as the HTTP recorder's reel"),
    "check-text": ("check-report.txt", "mcpreel check --profile strict-sse of the demo server"),
    "check-json": ("check-report.json", "the same check report as JSON"),
}

#: ``KEY=VALUE`` tags for the recordings' headers, in order
Tags = tuple[tuple[str, str], ...]

#: the most one recorded session may take (it takes about a second): a stuck step fails, the demo goes on
STEP_SECONDS = 20

QUESTION = "In one word: what does a flight recorder keep?"
CANNED_ANSWER = "Everything."


@dataclass
class DemoResult:
    out_dir: Path
    files: dict[str, Path] = field(default_factory=dict)  # DEMO_FILES key -> path written
    steps: list[str] = field(default_factory=list)  # what happened, one line each
    problems: list[str] = field(default_factory=list)  # steps that could not run, and why
    inspect_report: Any = None  # mcpreel.inspection.Report of the reel
    check_report: Any = None  # mcpreel.check.CheckReport
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems and (self.check_report is None or not self.check_report.failed)


# -- the client session both runs drive -------------------------------------------------------------


async def drive_session(read: Any, write: Any, said: Callable[[str], None]) -> None:
    """A real client session with the official SDK (legacy era: ``ClientSession.initialize``)."""
    from mcp import ClientSession
    from mcp.types import CallToolResult, CreateMessageResult, TextContent

    progressed: list[float] = []
    sampled: list[str] = []

    def text_of(result: CallToolResult) -> str:
        first = result.content[0]
        assert isinstance(first, TextContent)  # the demo server's tools answer in text
        return first.text

    # the SDK's callback protocols name their parameters: these keep the names
    async def sampling(context: Any, params: Any) -> CreateMessageResult:
        first = params.messages[0].content if params.messages else None
        sampled.append(getattr(first, "text", "") or "")
        return CreateMessageResult(role="assistant", model="mcpreel-demo-client",
                                   content=TextContent(type="text", text=CANNED_ANSWER))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.append(progress)

    async with ClientSession(read, write, sampling_callback=sampling) as s:
        init = await s.initialize()
        said(f"initialize -> {init.server_info.name} {init.server_info.version}, protocol {init.protocol_version}")
        tools = (await s.list_tools()).tools
        said(f"tools/list -> {len(tools)} tools: {', '.join(t.name for t in tools)}")
        r = await s.call_tool("echo", {"text": "hello from mcpreel"})
        said(f"tools/call echo -> {text_of(r)}")
        r = await s.call_tool("lookup_customer", {"customer_id": "cust_123"})
        said(f"tools/call lookup_customer -> {text_of(r)}")
        r = await s.call_tool("divide", {"a": 1, "b": 0})
        said(f"tools/call divide by zero -> isError={r.is_error}")
        r = await s.call_tool("countdown", {"steps": 3, "delay_ms": 20}, progress_callback=on_progress)
        said(f"tools/call countdown -> {len(progressed)} progress notifications")
        r = await s.call_tool("ask_llm", {"question": QUESTION})
        said(f"tools/call ask_llm -> the server asked the client to sample ({len(sampled)} request), "
             f"answer {text_of(r)}")


# -- the steps --------------------------------------------------------------------------------------


def _python_module(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcpreel", *args]


def record_stdio_run(reel: Path, said: Callable[[str], None], tags: Tags = ()) -> None:
    """Step 1: the SDK client starts the recording proxy, which starts the demo server."""
    import anyio
    from mcp import StdioServerParameters, stdio_client

    tag_words = [word for key, value in tags for word in ("--tag", f"{key}={value}")]
    command = _python_module("record", "--quiet", "--out", str(reel), "--label", "mcpreel-demo", *tag_words, "--",
                             *_python_module("demo-server"))
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV")}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def main() -> None:
        with tempfile.TemporaryFile() as errlog:
            try:
                with anyio.fail_after(STEP_SECONDS):
                    # the SDK types errlog TextIO; it only hands it to the child as its stderr
                    async with stdio_client(params, errlog=errlog) as (read, write):  # type: ignore[arg-type]
                        await drive_session(read, write, said)
            except Exception as exc:
                errlog.seek(0)
                tail = errlog.read().decode("utf-8", "replace").strip().splitlines()[-3:]
                said_tail = f" ({' / '.join(tail)})" if tail else ""
                raise TransportError(f"the stdio run failed: {_why(exc)}{said_tail}") from exc

    anyio.run(main)
    # the proxy finishes its reel as it exits, just after the client closes it
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not _has_end_line(reel):
        time.sleep(0.05)


def _has_end_line(reel: Path) -> bool:
    try:
        with open(reel, "rb") as fh:
            fh.seek(max(0, reel.stat().st_size - 4096))
            tail = fh.read().strip().splitlines()
    except OSError:
        return False
    return bool(tail) and b'"type":"end"' in tail[-1].replace(b" ", b"")


def _why(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return f"no end within {STEP_SECONDS} s"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def convert_reel(reel: Path, qai: Path, trace: Path, said: Callable[[str], None]) -> Any:
    """Step 2: the reel read back, written as qai and as an Assay V2 trace. Returns the session."""
    from mcpreel._infra.fileio import atomic_output
    from mcpreel.formats import get_writer, open_session
    from mcpreel.toolcalls.importer import ImportOptions, write_trace

    session, _ = open_session(reel, "reel")
    session.materialize()
    said(f"read the reel back: {len(session.messages)} records")
    writer = get_writer("qai")
    with atomic_output(qai) as fh:
        writer(session, fh)
    said(f"wrote it as a qai session file: {qai.name}")
    report = write_trace(session, trace, options=ImportOptions(episode_id="mcpreel-demo", prompt="<mcp:session>"))
    said(f"wrote the Assay V2 trace: {report.tool_calls} tool calls -> {trace.name}")
    return session


def write_demo_report(session: Any, page: Path, said: Callable[[str], None]) -> Path:
    """Step 2, its end: the session as the HTML report (redacted, as ``mcpreel report`` writes it), so the
    first thing to open after the demo is a page."""
    from mcpreel.report import write_report

    data = write_report(session, page)
    said(f"wrote the HTML report: {data.calls_total} calls -> {page.name}")
    return page


def record_http_run(envelope: Path, http_reel: Path, server_url: str, said: Callable[[str], None],
                    tags: Tags = ()) -> None:
    """Step 3: the same client session over Streamable HTTP, through the HTTP recorder."""
    import anyio
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from mcpreel.record import HttpTarget, RecordHooks, RecordOptions, record
    from mcpreel.record.http_proxy import ProxyConfig

    box: dict[str, Any] = {}
    ready = threading.Event()

    def on_ready(url: str) -> None:
        box["url"] = url
        ready.set()

    def recorder() -> None:
        try:
            options = RecordOptions(HttpTarget(ProxyConfig("streamable-http", server_url), "127.0.0.1", 0, envelope),
                                    http_reel, label="mcpreel-demo-http", tags=tuple(tags))
            box["result"] = record(options, RecordHooks(ready=on_ready, handle_signals=False,
                                                        on_server=lambda server: box.__setitem__("server", server)))
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
            ready.set()

    thread = threading.Thread(target=recorder, name="mcpreel-demo-http-recorder", daemon=True)
    thread.start()
    if not ready.wait(15) or "error" in box:
        raise TransportError(f"the HTTP recorder did not start: {_why(box['error']) if 'error' in box else 'timeout'}")
    said(f"HTTP recorder on {box['url']} in front of the demo server at {server_url}")

    async def main() -> None:
        with anyio.fail_after(STEP_SECONDS):
            async with httpx2.AsyncClient(timeout=STEP_SECONDS) as http:
                async with streamable_http_client(box["url"], http_client=http) as (read, write, *_):
                    await drive_session(read, write, said)

    try:
        anyio.run(main)
    except Exception as exc:
        raise TransportError(f"the Streamable HTTP run failed: {_why(exc)}") from exc
    finally:
        server = box.get("server")
        if server is not None:
            server.stop()
        thread.join(15)
    if "error" in box:
        raise TransportError(f"the HTTP recorder failed: {_why(box['error'])}")
    said(f"the HTTP recorder wrote the envelope: {envelope.name}")


def check_server(server_url: str, text_path: Path, json_path: Path, said: Callable[[str], None]) -> Any:
    """Step 4: ``mcpreel check --profile strict-sse --call-all`` of the HTTP demo server, saved as text and JSON."""
    from mcpreel._infra.fileio import atomic_output
    from mcpreel.check import CheckOptions, run_check
    from mcpreel.render.check import plain_lines, to_json

    report = run_check(server_url, options=CheckOptions(profile="strict-sse", call_all=True))  # our tools are safe
    with atomic_output(text_path) as fh:
        fh.write(("\n".join(plain_lines(report)) + "\n").encode("utf-8"))
    with atomic_output(json_path) as fh:
        fh.write(to_json(report).encode("utf-8"))
    c = report.counts()
    said(f"mcpreel check --profile strict-sse: {c['pass']} pass, {c['fail']} fail, {c['warn']} warn, {c['skip']} skip")
    return report


def next_commands(out_dir: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """The three commands to try once the demo is done, each with what it shows: look at the recording
    call by call, replay it against the server, then record one's own client. (The report page itself is
    a file to open, named with the others.)"""
    import shlex

    reel = shlex.quote(str(Path(out_dir) / DEMO_FILES["reel"][0]))
    return [
        (f"mcpreel tui {reel}", "browse the recording call by call in the terminal"),
        (f'mcpreel replay {reel} --target-command "mcpreel demo-server"', "replay it: does the server still answer the same?"),
        ("mcpreel wrap --all --dry-run", "then record your own client's servers (shows the config change first)"),
    ]


def run_demo(out_dir: str | os.PathLike[str] = "demo-output", *,
             on_step: Callable[[str], None] | None = None, tags: Tags = ()) -> DemoResult:
    """Run the whole demo into ``out_dir``; ``on_step`` hears each step as it happens; ``tags`` go into
    the header of both recordings (``record --tag``)."""
    start = time.monotonic()
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot make the demo folder: {exc.strerror or exc}") from exc
    result = DemoResult(out)
    paths = {key: out / name for key, (name, _) in DEMO_FILES.items()}

    def said(text: str) -> None:
        result.steps.append(text)
        if on_step is not None:
            on_step(text)

    def attempt(what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except (McpreelError, ImportError, OSError) as exc:
            result.problems.append(f"{what}: {_why(exc)}")
            said(f"{what}: FAILED: {_why(exc)}")
            return None

    said("1. stdio: the SDK client -> mcpreel record (the stdio recording proxy) -> mcpreel demo-server")
    for key in ("reel", "http-reel", "report"):
        with contextlib.suppress(OSError):
            paths[key].unlink()  # a stale recording (or its page) must not pass for this run's
    attempt("stdio recording", lambda: record_stdio_run(paths["reel"], said, tags))
    if paths["reel"].is_file():
        result.files["reel"] = paths["reel"]
        said("2. the reel converted")
        session = attempt("conversion", lambda: convert_reel(paths["reel"], paths["qai"], paths["trace"], said))
        if session is not None:
            from mcpreel.inspection import analyze

            result.files["qai"] = paths["qai"]
            result.files["trace"] = paths["trace"]
            result.inspect_report = analyze(session)
            if attempt("report", lambda: write_demo_report(session, paths["report"], said)) is not None:
                result.files["report"] = paths["report"]
    from mcpreel.demo.server import serving

    with serving("streamable-http") as url:
        said("3. Streamable HTTP: the SDK client -> the HTTP recorder -> mcpreel demo-server")
        attempt("HTTP recording", lambda: record_http_run(paths["envelope"], paths["http-reel"], url, said, tags))
        for key in ("envelope", "http-reel"):
            if paths[key].is_file():
                result.files[key] = paths[key]
        said("4. mcpreel check of the demo server")
        report = attempt("check", lambda: check_server(url, paths["check-text"], paths["check-json"], said))
        if report is not None:
            result.check_report = report
            result.files["check-text"] = paths["check-text"]
            result.files["check-json"] = paths["check-json"]
    result.seconds = time.monotonic() - start
    return result
