"""pytest plugin: give a test an MCP server backed by a cassette (registered as the ``mcpreel`` pytest11 entry point).

    @pytest.mark.mcp_cassette(command=[sys.executable, "server.py"])      # or url="http://127.0.0.1:8000/mcp"
    def test_tools(mcp_server):
        params = mcp_server.stdio_parameters()     # StdioServerParameters for the SDK's stdio_client
        ...                                          # HTTP: mcp_server.url

The marker: ``mcp_cassette(path=None, *, command=None, url=None, transport=None, record_mode=None,
env=None, cwd=None, match=None, redact=True, tags=None)``. ``path`` defaults to ``cassettes/<module>/<test>.jsonl``
beside the test file; a relative ``path`` is taken from the test file's folder. ``record_mode`` defaults to
``once``; ``--mcp-record-mode`` overrides every marker (``--mcp-record-mode none`` in CI: nothing is
recorded there, and a missing cassette fails the test that makes an MCP request; a test that makes none
recorded nothing, so it has no cassette, and passes).

The ``mcp_server`` fixture is a :class:`mcpreel.cassette.server.CassetteServer`: for stdio an argv
(``argv``, ``command``/``args``/``env``/``cwd``, ``stdio_parameters()``) that the test's client launches;
for HTTP the ``url`` of a server started for the test and stopped when the test's body ends. Then every
request the cassette could not answer fails the test (the test's own failure, not an extra ERROR at
teardown), with the closest recorded request and how it differs; so does a recording that broke off or
could not be saved (the cassette is then left as it was, and the failure names it and why).

Fault injection: ``@pytest.mark.mcp_rules("rules.yaml")`` (a rules file, relative to the test file's folder,
as ``mcpreel serve --rules`` reads it) or ``@pytest.mark.mcp_rules([{"name": "slow", "match": {"tool":
"search"}, "delay": 2}])`` (the rules themselves) puts rules between the test's client and the cassette:
when it is replayed they act on the mock's traffic (delay, rewrite, drop, timeout, error, malformed,
close); when it is recorded, on the recording proxy's (``timeout`` and ``malformed`` are then refused), and
the cassette records each action with ``decided_by: "rules:NAME"``. A bad rules file fails the test at
setup, in one line naming the file, the rule and what is wrong.

What the plugin writes to a cassette is redacted as ``mcpreel redact`` does, with keyed markers (the key:
``$MCPREEL_REDACT_KEY``'s file, else ``.mcpreel/redact.key`` in pytest's rootdir, created 0600 on first
use), so the cassette can be committed as it is and a replayed request carrying the same secret still
matches. ``@pytest.mark.mcp_cassette(redact=False)`` (one test) or ``--mcp-no-redact`` (every test)
writes it as recorded.

Tags: ``--mcp-tag KEY=VALUE`` (repeatable, every test of the run) and the marker's ``tags={"KEY": "VALUE"}``
go into the header of a cassette that is recorded (``metadata.tags``, as ``mcpreel record --tag`` writes).

The ``mcp_session`` fixture (async tests: ``@pytest.mark.anyio``, anyio's pytest plugin, which the SDK
brings, or pytest-asyncio in auto mode) hands the test the official SDK's ``ClientSession``, connected to
the ``mcp_server`` over its transport (stdio, Streamable HTTP or the legacy HTTP+SSE one) and through its
handshake in the test's era: the marker's ``era="auto"`` (the default, the SDK's own: 2026-07-28 to a modern
server), ``"legacy"`` (the initialize handshake) or ``"modern"``. The SDK is the project's own (2.x; 1.x
speaks only the legacy era); without it the test fails in one line saying what to install. A miss fails
the test that made it while its session is still open (the serving process reports a miss before it
answers the client), its first line naming the request and the cassette; only what the closing decides (a
recording not saved) comes at teardown, and a handshake that fails stops the test at setup, in one line.

Loaded in every pytest run where mcpreel is installed, so it imports nothing heavy until a test asks.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpreel.cassette.mode import RecordMode
from mcpreel.errors import McpreelError, UsageError

__all__ = ["cassette_path", "mcp_server", "mcp_session"]

_MARKER = "mcp_cassette"
_RULES_MARKER = "mcp_rules"
_MARKER_KEYS = frozenset({"path", "command", "url", "transport", "record_mode", "env", "cwd", "match", "redact",
                          "tags", "era"})
_ERAS = ("auto", "legacy", "modern")
_SDK_MISSING = "mcp_session needs the official MCP Python SDK: pip install mcp (2.x for every era; 1.x: legacy)"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_DEST = "mcpreel_record_mode"
_FLAG = "--mcp-record-mode"
_NO_REDACT = "mcpreel_no_redact"
_TAGS = "mcpreel_tags"


def _record_mode_help() -> str:
    return (f"record mode for every @pytest.mark.{_MARKER} test, overriding the markers "
            f"({', '.join(RecordMode.values())}; default: the marker's, else once)")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcpreel", "MCP cassettes (mcpreel)")
    group.addoption("--mcpreel-record-mode", action="store", dest=_DEST, default=None, choices=RecordMode.values(),
                    metavar="MODE", help=_record_mode_help() + f"; the same as {_FLAG} (where no other plugin has that name)")
    group.addoption("--mcp-no-redact", "--mcpreel-no-redact", action="store_true", dest=_NO_REDACT, default=False,
                    help="write cassettes as recorded, secrets and all (default: redacted as `mcpreel redact` "
                         "does, with keyed markers; one test: @pytest.mark.mcp_cassette(redact=False))")
    group.addoption("--mcp-tag", "--mcpreel-tag", action="append", dest=_TAGS, default=[], metavar="KEY=VALUE",
                    help="a tag written into the header of every cassette this run records (metadata.tags, as "
                         "`mcpreel record --tag`; repeatable; a marker's tags={...} add to them)")


def _taken(parser: pytest.Parser, flag: str) -> bool:
    try:
        options = [o for g in parser._groups for o in g.options] + list(parser._anonymous.options)
        return any(flag in o.names() for o in options)
    except AttributeError:  # pytest's insides moved: assume the name is free, as it usually is
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    # --mcp-record-mode is added once every installed plugin has added its options: mcp-recorder's
    # plugin registers the same name (with other modes), and two plugins cannot share one; when it is
    # taken, --mcpreel-record-mode is the way to say it
    if not _taken(parser, _FLAG):
        parser.getgroup("mcpreel").addoption(_FLAG, action="store", dest=_DEST, default=None,
                                             choices=RecordMode.values(), metavar="MODE", help=_record_mode_help())


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_MARKER}(path=None, *, command=None, url=None, transport=None, record_mode=None, env=None, cwd=None, "
        "match=None, redact=True, tags=None, era='auto'): back the mcp_server fixture (and mcp_session, in era) with a cassette file, recorded from the real MCP "
        "server (a stdio command or a URL) as the record mode says, its secrets redacted unless redact=False",
    )
    config.addinivalue_line(
        "markers",
        f"{_RULES_MARKER}(rules): fault injection for the mcp_server fixture: a rules file (relative to the test "
        "file's folder) or a list of rules, as `mcpreel serve --rules` takes them",
    )


def _safe(name: str) -> str:
    return _UNSAFE.sub("-", name).strip("-.") or "test"


def cassette_path(node: pytest.Item, given: str | Path | None = None) -> Path:
    """Where a test's cassette lives: ``given`` (relative to the test file's folder) or
    ``cassettes/<module>/<test>.jsonl`` beside the test file."""
    folder = Path(node.path).parent
    if given is not None:
        path = Path(given)
        return path if path.is_absolute() else folder / path
    name = node.name
    cls = getattr(node, "cls", None)
    if cls is not None:
        name = f"{cls.__name__}.{name}"
    return folder / "cassettes" / _safe(Path(node.path).stem) / f"{_safe(name)}.jsonl"


def _marker_options(node: pytest.Item) -> dict[str, Any]:
    marker = node.get_closest_marker(_MARKER)
    if marker is None:
        return {}
    options = dict(marker.kwargs)
    unknown = sorted(set(options) - _MARKER_KEYS)
    if unknown:
        raise UsageError(f"@pytest.mark.{_MARKER}: unknown argument(s) {', '.join(unknown)} "
                                f"(known: {', '.join(sorted(_MARKER_KEYS))})")
    if marker.args:
        if len(marker.args) > 1 or "path" in options:
            raise UsageError(f"@pytest.mark.{_MARKER} takes one positional argument, the cassette path")
        options["path"] = marker.args[0]
    if options.get("era", "auto") not in _ERAS:
        raise UsageError(f"@pytest.mark.{_MARKER}: era={options['era']!r}: give one of {', '.join(_ERAS)}")
    return options


def _redact_option(request: pytest.FixtureRequest, options: dict[str, Any]) -> bool:
    """Redact what is written unless ``--mcp-no-redact`` or the marker's ``redact=False`` says not to."""
    redact = options.get("redact", True)
    if not isinstance(redact, bool):
        raise UsageError(f"@pytest.mark.{_MARKER}: redact is True or False, not {redact!r}")
    return redact and not request.config.getoption(_NO_REDACT)


def _tags_option(request: pytest.FixtureRequest, options: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """``--mcp-tag KEY=VALUE`` of the run, then the marker's ``tags={...}`` (a key in both: the marker's)."""
    from mcpreel.record.options import parse_tags

    tags = dict(parse_tags(request.config.getoption(_TAGS) or [], "--mcp-tag"))
    given = options.get("tags")
    if given is not None:
        if not isinstance(given, dict) or not all(isinstance(k, str) and k and isinstance(v, str)
                                                  for k, v in given.items()):
            raise UsageError(f"@pytest.mark.{_MARKER}: tags is a dict of str to str, not {given!r}")
        tags.update(given)
    return tuple(tags.items())


def _rules_option(node: pytest.Item) -> str | Path | list[Any] | None:
    marker = node.get_closest_marker(_RULES_MARKER)
    if marker is None:
        return None
    if len(marker.args) != 1 or marker.kwargs:
        raise UsageError(f"@pytest.mark.{_RULES_MARKER} takes one argument: a rules file or a list of rules")
    given = marker.args[0]
    if isinstance(given, list):
        return given
    if isinstance(given, (str, Path)):
        path = Path(given)
        return path if path.is_absolute() else Path(node.path).parent / path
    raise UsageError(f"@pytest.mark.{_RULES_MARKER}: a rules file or a list of rules, not {type(given).__name__}")


@pytest.fixture
def mcp_server(request: pytest.FixtureRequest) -> Iterator[Any]:
    """An MCP server backed by the test's cassette (see :mod:`mcpreel.cassette.pytest_plugin`)."""
    from mcpreel.cassette.server import CassetteSetup, cassette_server

    failure = None
    try:
        options = _marker_options(request.node)
        mode = request.config.getoption(_DEST) or options.get("record_mode") or RecordMode.ONCE
        setup = CassetteSetup(match=options.get("match") or "method-params", rules=_rules_option(request.node),
                              redact=_redact_option(request, options), key_dir=request.config.rootpath,
                              tags=_tags_option(request, options))
        server = cassette_server(
            cassette_path(request.node, options.get("path")), mode, command=options.get("command"),
            url=options.get("url"), transport=options.get("transport"), env=options.get("env"),
            cwd=options.get("cwd"), setup=setup,
        )
    except McpreelError as exc:
        failure = f"mcp_cassette: {exc}"
    if failure is not None:
        pytest.fail(failure, pytrace=False)  # outside the except: one line, no chained traceback
    try:
        yield server
    finally:
        server.close()
    if request.node.stash.get(_REPORTED, False):
        return  # already the test's own failure: an ERROR at teardown would only say it again
    problems = _problems(server)
    if problems:
        pytest.fail(problems, pytrace=False)


_REPORTED = pytest.StashKey[bool]()


@pytest.fixture
async def mcp_session(mcp_server: Any, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """The official SDK's ``ClientSession``, connected to ``mcp_server`` (stdio, Streamable HTTP or legacy
    SSE) in the marker's ``era`` (see :mod:`mcpreel.cassette.pytest_plugin`); closed when the test ends."""
    era = _marker_options(request.node).get("era", "auto")  # checked already, by mcp_server's setup
    try:
        import mcp
    except ImportError:
        pytest.fail(_SDK_MISSING, pytrace=False)
    connect = _sdk2_session if hasattr(mcp, "Client") else _sdk1_session  # 1.x: the handshake era only
    async with AsyncExitStack() as stack:
        failure = None
        try:
            session = await stack.enter_async_context(connect(mcp_server, era))
        except Exception as exc:  # the handshake the cassette could not answer: say which request, not how
            problems = _problems(mcp_server)
            if problems is None:
                raise
            request.node.stash[_REPORTED] = True
            headline = _miss_headline(mcp_server, request.config.rootpath)
            failure = "\n".join(filter(None, (headline, problems, f"(the handshake then failed: {_first_line(exc)})")))
        if failure is not None:
            pytest.fail(failure, pytrace=False)  # outside the except: one line, no chained traceback
        yield session


def _first_line(exc: BaseException) -> str:
    """An exception in one line: its type and first line (an exception group: its first leaf's)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    said = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {said[0] if said else ''}"


def _transport(server: Any, errlog: Any, *, sdk1: bool = False) -> Any:
    """The SDK's client transport for the cassette server: its stdio argv, its SSE stream, or its URL."""
    if server.transport == "stdio":
        from mcp.client.stdio import stdio_client

        return stdio_client(server.stdio_parameters(), errlog=errlog)
    if server.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(server.url)
    if not sdk1:
        return server.url  # the SDK 2.x's Client takes a URL as Streamable HTTP
    from mcp.client.streamable_http import streamablehttp_client  # type: ignore[attr-defined,unused-ignore]

    return streamablehttp_client(server.url)


@asynccontextmanager
async def _sdk2_session(server: Any, era: str) -> AsyncIterator[Any]:
    """The SDK 2.x's ``Client`` session in ``era``, over whichever transport the cassette is served on."""
    import mcp

    from mcpreel.eras import MODERN_PROTOCOL

    with tempfile.TemporaryFile("w+") as errlog:  # pytest's captured sys.stderr has no file descriptor
        async with mcp.Client(_transport(server, errlog), mode=MODERN_PROTOCOL if era == "modern" else era) as client:
            yield client.session


@asynccontextmanager
async def _sdk1_session(server: Any, era: str) -> AsyncIterator[Any]:
    """The 1.x SDK's ``ClientSession`` over stdio, Streamable HTTP or SSE, after the initialize handshake."""
    if era == "modern":
        pytest.fail("mcp_session: era='modern' needs the MCP SDK 2.x: pip install 'mcp>=2.3'", pytrace=False)
    from mcp import ClientSession

    with tempfile.TemporaryFile("w+") as errlog:
        async with _transport(server, errlog, sdk1=True) as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            yield session


def _problems(server: Any) -> str | None:
    problems = server.problems()
    if problems and server.misses() and server.mode in (RecordMode.ONCE, RecordMode.NONE):
        problems.append("(to add what the cassette lacks from the real server: --mcp-record-mode new_episodes; "
                        "to record it again: all)")
    return "\n".join(problems) if problems else None


def _miss_headline(server: Any, rootdir: Path) -> str | None:
    """The failure's first line, the one pytest's short summary shows: the request that missed (its method
    and the tool, prompt or resource it named) and the cassette, relative to the rootdir where it is inside."""
    misses = server.misses()
    if not misses:
        return None
    first = misses[0]
    params = first.get("params") if isinstance(first.get("params"), dict) else {}
    named = params.get("name") or params.get("uri")
    request = " ".join(str(part) for part in (first.get("method") or "a request", named) if part)
    cassette = Path(server.cassette)
    shown = cassette.relative_to(rootdir) if cassette.is_relative_to(rootdir) else cassette
    more = f" (and {len(misses) - 1} more)" if len(misses) > 1 else ""
    if server.missing:
        return f"{request}{more}: no cassette {shown} to answer it (record mode {server.mode})"
    return f"{request}{more} was not answered from the cassette {shown} (record mode {server.mode})"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    # what went wrong with the cassette is the test's failure, reported when the test's own outcome is,
    # so a recording that was not saved fails the test that made it and ``pytest -x`` stops there
    outcome = yield
    if call.when != "call":
        return
    server = getattr(item, "funcargs", {}).get("mcp_server")
    if server is None or not hasattr(server, "problems"):
        return
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped:
        return
    if "mcp_session" not in getattr(item, "fixturenames", ()):
        server.close()  # an HTTP recording is saved when its server stops; a stdio one once its client left
    # else its client is connected until teardown: what the serving process reported so far (a miss is
    # reported before the client is answered, so every miss of the test's own requests is there)
    problems = _problems(server)
    if problems is None:
        return
    item.stash[_REPORTED] = True
    headline = _miss_headline(server, item.config.rootpath)
    lines = ([headline] if headline else []) + [f"E   {line}" for line in problems.splitlines()]
    if report.failed and call.excinfo is not None:
        # the client's error is the miss seen from the other side: one line of it, not its traceback
        lines.append(f"E   (the test then failed: {_first_line(call.excinfo.value)})")
    report.outcome = "failed"
    report.longrepr = "\n".join(lines)
