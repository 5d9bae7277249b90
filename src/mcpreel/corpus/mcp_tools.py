"""The corpus server's MCP face: :class:`~mcpreel.corpus.mcp_server.CorpusTools` as tools of the official
SDK's ``MCPServer``, on stdio or Streamable HTTP.

Why the SDK and not mcpreel's own serving code: the SDK's ``MCPServer`` speaks both protocol eras (the
2026-07-28 ``server/discover`` era and the ``initialize`` handshake, one per connection), derives each
tool's ``inputSchema`` and ``outputSchema`` from its signature and validates both; mcpreel's own code is a
recorder and a mock, not a server of tools. The SDK stays off the proxy's wire path: only this server and
the demo server run on it. This module imports the SDK at its top, so it is imported only when the server
runs (``mcpreel mcp-server`` says what to install when it is missing).

Every tool is annotated read-only, idempotent and closed-world (``mcpreel check`` calls such tools), and
answers with ``structuredContent`` (its ``outputSchema``) and the same JSON as one ``text`` item; a
failure (no such operation, a refused query) is an ``isError`` result whose text is JSON too,
``{"error": "..."}``: the one line the command line would print.
"""

# No `from __future__ import annotations` here: the SDK reads the tools' annotations (Annotated[..., Field])
# from the functions, which are defined inside build_server.

import functools
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from mcpreel._infra import jsonio
from mcpreel._version import __version__
from mcpreel.corpus.mcp_server import VERDICTS, CorpusServerOptions, CorpusTools, check_index
from mcpreel.errors import McpreelError
from mcpreel.serving.listen import Listener
from mcpreel.serving.origin import OriginGuard, RequestPolicy

__all__ = ["INSTRUCTIONS", "build_server", "http_app", "run"]

INSTRUCTIONS = (
    "mcpreel's corpus: every recorded MCP session indexed (which client, which server, each operation's "
    "method, tool, status, latency, and where it is in its file). Start with find_sessions (filters: "
    "server_name, tool, client, since/until, failed) or query_corpus (read-only SQL; describe_corpus lists "
    "the tables and columns). show_operation reads one operation's requests and answers back from its file "
    "(redacted). replay_runs and replay_results give the verdicts of `mcpreel replay --db` runs; "
    "tool_definitions shows how a tool's definition changed over time. Every row says which file and line "
    "to open (`open`: FILE:LINE)."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False,
                             destructive_hint=False)
_OPEN = "where to open it: FILE:LINE (the session file, and the line of what the row is about)"


# -- what the tools answer (their outputSchema) -----------------------------------------------------------


class SessionRow(TypedDict, total=False):
    file: Annotated[str, Field(description="the session file's absolute path")]
    line: Annotated[int | None, Field(description="the line to open: the first failed operation (failed), the "
                                                  "tool's first call (tool), else the session's first record")]
    open: Annotated[str | None, Field(description=_OPEN)]
    session: Annotated[int, Field(description="the client session in its file, 1-based")]
    start: Annotated[str | None, Field(description="when it started (UTC)")]
    client: Annotated[str | None, Field(description="clientInfo.name")]
    server: Annotated[str | None, Field(description="serverInfo.name")]
    era: Annotated[str | None, Field(description="modern (2026-07-28), legacy (initialize handshake) or unknown")]
    operations: int | None
    failed: Annotated[int | None, Field(description="operations that failed (a JSON-RPC error or isError)")]
    unanswered: int | None
    operation: Annotated[int | None, Field(description="the id of the matching operation, for show_operation")]


class SessionsOut(TypedDict):
    sessions: list[SessionRow]
    count: int
    more: Annotated[bool, Field(description="more sessions matched than limit: narrow the filters or raise it")]


class Message(TypedDict, total=False):
    line: Annotated[int | None, Field(description="its line (or entry) in the session file")]
    open: Annotated[str | None, Field(description=_OPEN)]
    index: int | None
    dir: Annotated[str | None, Field(description="in (client to server) or out (server to client)")]
    role: Annotated[str | None, Field(description="call, round (a retry), poll, result, cancel, server (a request "
                                                   "of the server it caused), or answer")]
    method: str | None
    message: Annotated[Any, Field(description="the JSON-RPC message as recorded (redacted unless the server was "
                                              "started with --no-redact); null when cut")]
    excerpt: Annotated[str, Field(description="the start of a message too long to quote whole (cut: true)")]
    cut: bool


class OperationOut(TypedDict):
    operation: Annotated[dict[str, Any], Field(description="its row of the operations table")]
    messages: list[Message]
    notifications: Annotated[int, Field(description="notifications that belonged to it (progress, ...)")]
    redacted: bool
    open: Annotated[str | None, Field(description=_OPEN)]


class QueryOut(TypedDict):
    columns: list[str]
    rows: Annotated[list[dict[str, Any]], Field(description="one object per row, a member per column; a row with "
                                                            "a file and a line column also has `open`")]
    row_count: int
    more: Annotated[bool, Field(description="the query had more rows than max_rows")]
    max_rows: int


class Column(TypedDict):
    name: str
    type: str
    doc: str


class Table(TypedDict):
    name: str
    doc: str
    rows: int
    columns: list[Column]


class DescribeOut(TypedDict):
    db: Annotated[str, Field(description="the index database")]
    tables: list[Table]
    first_session_ms: Annotated[int | None, Field(description="the first session's start (epoch ms)")]
    last_session_ms: Annotated[int | None, Field(description="the last session's start (epoch ms)")]
    replay_runs: int
    redacted: Annotated[bool, Field(description="whether show_operation redacts secrets")]
    max_rows: Annotated[int, Field(description="the most rows any answer holds")]


class RunRow(TypedDict, total=False):
    run_id: str
    run_ms: int | None
    started: Annotated[str | None, Field(description="when the run started (UTC)")]
    target: Annotated[str | None, Field(description="the server replayed against: its URL or command")]
    baseline: Annotated[str | None, Field(description="what answers were compared with: recording, or a server")]
    sessions: int
    requests: int
    same: int
    changed: int
    flaky: int
    error: int
    unrecorded: int


class RunsOut(TypedDict):
    runs: list[RunRow]
    count: int
    more: bool


class ReplayRow(TypedDict, total=False):
    file: str
    line: Annotated[int | None, Field(description="the session's first line in its file")]
    open: Annotated[str | None, Field(description=_OPEN)]
    session: int
    request: Annotated[int | None, Field(description="its number in its session's replay (1-based)")]
    method: str | None
    tool: str | None
    verdict: Annotated[str, Field(description="same, changed, flaky, error or unrecorded")]
    paths: Annotated[Any, Field(description="the answer's paths that differed")]
    recorded_ms: float | None
    replayed_ms: float | None
    error: str | None
    target: str | None
    baseline: str | None


class ReplayOut(TypedDict, total=False):
    run_id: str | None
    requests: list[ReplayRow]
    count: int
    more: bool
    note: str


class Definition(TypedDict, total=False):
    server_name: str | None
    hash: Annotated[str, Field(description="SHA-256 of the definition: a new hash is a changed definition")]
    description: str | None
    first_seen_ms: int | None
    last_seen_ms: int | None
    first_seen: str | None
    last_seen: str | None
    sessions: Annotated[int, Field(description="sessions whose tools/list answer had this definition")]
    files: int
    file: str
    line: Annotated[int | None, Field(description="the tools/list answer where it was first seen")]
    open: Annotated[str | None, Field(description=_OPEN)]


class DefinitionsOut(TypedDict, total=False):
    name: str
    definitions: list[Definition]
    count: int
    changed: Annotated[bool, Field(description="a server gave this tool more than one definition")]
    similar: Annotated[list[str], Field(description="tool names like it, when none is named so")]


# -- the server ------------------------------------------------------------------------------------------


def _answer(work: Callable[[], dict[str, Any]]) -> CallToolResult:
    """The tool's answer: structured content and the same compact JSON as text; a mcpreel error as an
    ``isError`` result, its one line as ``{"error": ...}``."""
    try:
        data = work()
    except McpreelError as exc:
        return CallToolResult(content=[TextContent(type="text", text=jsonio.dumps_str({"error": str(exc)}))],
                              is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=jsonio.dumps_str(data))], structured_content=data)


def build_server(options: CorpusServerOptions) -> MCPServer:
    """The corpus server (an ``MCPServer``), its tools registered on the index ``options`` names."""
    tools = CorpusTools(options)
    mcp = MCPServer("mcpreel-corpus", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    register = functools.partial(mcp.tool, annotations=_READ_ONLY, structured_output=True)

    @register(title="Describe the corpus")
    def describe_corpus() -> Annotated[CallToolResult, DescribeOut]:
        """The corpus index's tables (files, sessions, operations, tools, replays), every column with what it
        means, how many rows each has and the time span of the sessions. Read it before writing SQL for
        query_corpus."""
        return _answer(tools.describe)

    @register(title="Find sessions")
    def find_sessions(
        server_name: Annotated[str | None, Field(description="the server's name (serverInfo.name), case-insensitive; "
                                                             "* is a wildcard")] = None,
        tool: Annotated[str | None, Field(description="only sessions that called this tool")] = None,
        client: Annotated[str | None, Field(description="the client's name (clientInfo.name), case-insensitive; "
                                                        "* is a wildcard")] = None,
        since: Annotated[str | None, Field(description="started at or after: 30m, 2h, 2d, 1w, today, yesterday, "
                                                       "a date or an ISO time")] = None,
        until: Annotated[str | None, Field(description="started before (same forms as since)")] = None,
        failed: Annotated[bool, Field(description="only sessions with a failed operation (a JSON-RPC error or a "
                                                  "tool result with isError)")] = False,
        limit: Annotated[int, Field(ge=1, le=options.max_rows, description="the most sessions returned")] = 20,
    ) -> Annotated[CallToolResult, SessionsOut]:
        """Find recorded MCP client sessions, newest first, by server, tool, client, time and failure. Each
        session says which file and line to open (the first failed operation's line with failed, the tool's
        first call with tool) and the matching operation's id for show_operation."""
        return _answer(lambda: tools.find_sessions(server_name=server_name, tool=tool, client=client, since=since,
                                                   until=until, failed=failed, limit=limit))

    @register(title="Show an operation")
    def show_operation(
        id: Annotated[int, Field(ge=1, description="the operation's id: `operation` in find_sessions, `id` in the "
                                                   "operations table")],
    ) -> Annotated[CallToolResult, OperationOut]:
        """Show one operation (a request and its answer, with its retries, polls and the server's requests it
        caused) as recorded: its index row, then each JSON-RPC message with its line in the session file.
        Secrets are redacted. A file changed since it was indexed is refused (index it again)."""
        return _answer(lambda: tools.show_operation(id))

    @register(title="Query the corpus (read-only SQL)")
    def query_corpus(
        sql: Annotated[str, Field(description="one SQL query in DuckDB's dialect on the tables files, sessions, "
                                              "operations, tools, replays (describe_corpus lists their columns); "
                                              "times are epoch milliseconds, day is a DATE")],
        max_rows: Annotated[int, Field(ge=1, le=options.max_rows, description="the most rows returned")] = 100,
    ) -> Annotated[CallToolResult, QueryOut]:
        """Run a read-only SQL query on the corpus index: it can read the index's tables only (no file, no
        extension, no write). Rows that name a file and a line also say where to open them. Example: SELECT
        id, file, request_line, tool, message FROM operations WHERE failed ORDER BY start_ms DESC LIMIT 20."""
        return _answer(lambda: tools.query(sql, max_rows))

    @register(title="List replay runs")
    def replay_runs(
        since: Annotated[str | None, Field(description="runs started at or after: 2d, 1w, a date or an ISO "
                                                       "time")] = None,
        limit: Annotated[int, Field(ge=1, le=options.max_rows, description="the most runs returned")] = 20,
    ) -> Annotated[CallToolResult, RunsOut]:
        """List the fleet replay runs kept in the corpus (`mcpreel replay --db`), newest first: the server
        replayed against, the baseline, and how many requests were same, changed, flaky, error, unrecorded."""
        return _answer(lambda: tools.replay_runs(since=since, limit=limit))

    @register(title="Read a replay run's results")
    def replay_results(
        run_id: Annotated[str | None, Field(description="the run (replay_runs); the newest when not given")] = None,
        tool: Annotated[str | None, Field(description="only this tool's requests (* is a wildcard)")] = None,
        verdict: Annotated[str | None, Field(description=f"only this verdict: {', '.join(VERDICTS)}")] = None,
        limit: Annotated[int, Field(ge=1, le=options.max_rows, description="the most requests returned")] = 50,
    ) -> Annotated[CallToolResult, ReplayOut]:
        """Read one fleet replay run's requests: each request's verdict, the answer paths that differed, the
        recorded and replayed latency, why it failed, and the session file to open."""
        return _answer(lambda: tools.replay_results(run_id=run_id, tool=tool, verdict=verdict, limit=limit))

    @register(title="A tool's definitions over time")
    def tool_definitions(
        name: Annotated[str, Field(description="the tool's name, exactly")],
        server_name: Annotated[str | None, Field(description="only this server's (serverInfo.name; * is a "
                                                             "wildcard)")] = None,
    ) -> Annotated[CallToolResult, DefinitionsOut]:
        """How a tool's definition changed over time: each distinct definition (description, schema,
        annotations) the recorded sessions saw, when first and last seen, by how many sessions, and the
        tools/list answer to open where it was first seen."""
        return _answer(lambda: tools.tool_definitions(name, server_name))

    return mcp


def http_app(options: CorpusServerOptions, listener: Listener) -> OriginGuard:
    """The Streamable HTTP app (``/mcp``) behind mcpreel's one ``Origin``/``Host`` policy
    (:mod:`mcpreel.serving.origin`; the SDK's own check is off, as on the demo server)."""
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = build_server(options).streamable_http_app(host=listener.host, transport_security=security)
    return OriginGuard(app, RequestPolicy(listener.allow_origins, listener.host,
                                          allow_hosts=tuple(listener.allow_hosts)))


def url_of(listener: Listener, port: int) -> str:
    """The URL a client is given."""
    host = f"[{listener.host}]" if ":" in listener.host else listener.host
    return f"http://{host}:{port}/mcp"


def run(options: CorpusServerOptions, listener: Listener | None, ready: Callable[[str], None] | None) -> None:
    """Serve until stdin closes (stdio) or a signal (HTTP): on stdin/stdout when ``listener`` is None or
    stdio, else Streamable HTTP on its address (``/mcp``); ``ready`` gets the URL once HTTP listens. The
    index is checked first (:func:`~mcpreel.corpus.mcp_server.check_index`)."""
    check_index(options)
    if listener is None or listener.transport == "stdio":
        import anyio

        from mcpreel.demo.server import run_stdio  # answers a line that is no JSON-RPC message, as JSON-RPC asks

        anyio.run(run_stdio, build_server(options))
        return
    from mcpreel.serving.loop import Server

    server = Server(http_app(options, listener), listener.host, listener.port, limits=listener.limits)
    server.run(ready=None if ready is None else lambda h, p: ready(url_of(listener, p)))
