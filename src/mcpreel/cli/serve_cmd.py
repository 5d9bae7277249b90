"""``mcpreel serve``: a recording becomes an MCP server (stdio, Streamable HTTP or legacy SSE)."""

from __future__ import annotations

import click

from mcpreel.cli import output
from mcpreel.cli.params import FORMAT_AUTO
from mcpreel.errors import DifferenceFound


@click.command("serve")
@click.argument("session", type=click.Path(dir_okay=False))
@click.option("--transport", type=click.Choice(["stdio", "streamable-http", "sse"]), default="stdio",
              show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (HTTP).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (HTTP); 0 picks a free one.")
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True, help="The session's format.")
@click.option("--match", "match", type=click.Choice(["method-params", "sequential", "strict"]),
              default="method-params", show_default=True,
              help="method-params: method + params without volatile _meta; strict: exact params; "
                   "sequential: recorded order.")
@click.option("--no-repeat", is_flag=True, help="Do not repeat the last answer once a request's answers are used up.")
@click.option("--on-miss", type=click.Choice(["error", "fail", "forward"]), default="error", show_default=True,
              help="error: answer with a JSON-RPC error; fail: the same, and exit 1 at the end; "
                   "forward: ask the live --target-… server and add its answer to the recording.")
@click.option("--target-command", metavar="CMD", help="With --on-miss forward: the live server command.")
@click.option("--target-url", metavar="URL", help="With --on-miss forward: the live server URL.")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="Accept requests from this non-loopback Origin (HTTP; repeatable).")
@click.option("--answer-timeout", type=click.FloatRange(min=0.01), default=10.0, show_default=True,
              help="Seconds a recorded server request waits for the client's answer.")
@output.run_command
def serve_command(session: str, transport: str, host: str, port: int, fmt: str, match: str, no_repeat: bool,
                  on_miss: str, target_command: str | None, target_url: str | None,
                  allow_origins: tuple[str, ...], answer_timeout: float) -> None:
    """Serve a recorded session as an MCP server (a mock for testing clients)."""
    from mcpreel.replay import Mock, MockOptions, serve_file

    if transport != "stdio" and host not in ("127.0.0.1", "localhost", "::1"):
        output.warning(f"listening on {host}: the recording is served to anyone who can reach it")

    def ready(mock: Mock, where: str) -> None:
        n = len(mock.cassette.exchanges)
        output.info(f"serving {session} ({n} recorded requests, match {match}) on {where}")

    options = MockOptions(match=match, repeat=not no_repeat, on_miss=on_miss, answer_timeout=answer_timeout)
    mock = serve_file(session, transport=transport, host=host, port=port, format=fmt, options=options,
                      forward_command=target_command, forward_url=target_url, allow_origins=allow_origins,
                      on_event=lambda line: output.info(f"serve: {line}"), on_ready=ready)
    stats = mock.stats
    output.info(f"served {stats.requests} requests: {stats.answered} answered from the recording, "
                f"{len(stats.misses)} missed, {stats.forwarded} forwarded")
    if mock.failed:
        raise DifferenceFound(f"{len(stats.misses)} requests were not in the recording (--on-miss fail)")
