"""``mcpreel tui [FILE]``: browse a session file, or watch (and steer) a recording proxy live."""

from __future__ import annotations

import sys

import click

from mcpreel.cli import output
from mcpreel.cli.params import FORMAT_AUTO
from mcpreel.errors import UsageError


@click.command("tui")
@click.argument("path", metavar="[FILE]", required=False, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True,
              help="Input format of FILE; auto sniffs the content.")
@click.option("--attach", metavar="SOCKET", type=click.Path(dir_okay=False),
              help="Attach to the recording proxy at this control socket (without FILE or --attach: the only "
                   "running proxy, or a list to pick from).")
@click.option("--save", "save_path", metavar="PATH", type=click.Path(dir_okay=False),
              help="Where `s` saves [default: <name>-saved.jsonl in the current folder].")
@click.option("--save-format", default="reel", show_default=True, metavar="FORMAT",
              help="The format `s` saves in (any writable format; `e` asks).")
@click.option("--filter", "filter_text", default="", metavar="TOKENS",
              help="Start with this filter (method:… tool:… dir:out|in status:error|ok id:… text:…).")
@output.run_command
def tui_command(path: str | None, fmt: str, attach: str | None, save_path: str | None, save_format: str,
                filter_text: str) -> None:
    """A terminal viewer: a session file as a browsable list, or a running proxy live.

    \b
      mcpreel tui session.jsonl              # any readable format
      mcpreel tui                            # attach to the running proxy (or pick one)
      mcpreel tui --attach /run/user/1000/mcpreel/123-0.sock
    """
    from mcpreel.formats import canonical_name

    save_format = canonical_name(save_format)
    if path and attach:
        raise UsageError("give a FILE or --attach, not both")
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        raise UsageError("mcpreel tui needs a terminal (stdin and stdout); for a file's rows use mcpreel inspect")
    from mcpreel.tui.app import FileFeed, ViewerApp

    if path:
        from mcpreel.formats import open_session

        session, _ = open_session(path, fmt)
        app = ViewerApp(FileFeed(session), session.info, title=path, save_path=save_path, save_format=save_format,
                        filter_text=filter_text)
    else:
        from mcpreel.tui.live import live_app

        app = live_app(attach, save_path=save_path, save_format=save_format, filter_text=filter_text)
    app.run()
    if app.error is not None:
        raise app.error
    if app.return_code:
        sys.exit(app.return_code)
