"""``mcpreel tui [FILE]``: browse a session file, or watch (and steer) a recording proxy live."""

from __future__ import annotations

import sys

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO, SESSION_FILE
from mcpreel.errors import UsageError


@click.command("tui", epilog=examples(
    "mcpreel tui session.jsonl --at 42  # any readable format; --at: the record mcpreel calls names",
    "mcpreel tui  # attach to the running proxy (or pick one)",
    "mcpreel tui session.jsonl --filter 'dir:c2s status:error'",
))
@click.argument("path", metavar="[SESSION]", required=False, type=SESSION_FILE)
@click.option("--format", "fmt", type=FORMAT_AUTO, default="auto", show_default=True,
              help="Input format of FILE; auto sniffs the content.")
@click.option("--attach", metavar="SOCKET", type=click.Path(dir_okay=False),
              help="Attach to the recording proxy at this control socket (without FILE or --attach: the only "
                   "running proxy, or a list to pick from).")
@click.option("--save", "save_path", metavar="PATH", type=click.Path(dir_okay=False),
              help="Where `s` saves [default: <name>-saved.jsonl in the current folder].")
@click.option("--save-format", default="auto", show_default=True, metavar="FORMAT",
              help="The format `s` saves in (any writable format; auto: from the file name's ending; `e` asks).")
@click.option("--filter", "filter_text", default="", metavar="TOKENS",
              help="Start with this filter (method:… tool:… dir:c2s|s2c status:error|ok id:… text:…; mcpreel help filters).")
@click.option("--at", type=click.IntRange(min=0), default=None, metavar="N",
              help="Start with the cursor on record N of FILE (0-based, as the viewer numbers them and "
                   "`mcpreel calls` names them).")
@output.run_command
def tui_command(path: str | None, fmt: str, attach: str | None, save_path: str | None, save_format: str,
                filter_text: str, at: int | None) -> None:
    """A terminal viewer: a session file as a browsable list, or a running proxy live (--attach SOCKET:
    the control socket a recording names on stderr)."""
    from mcpreel.formats import FORMATS, canonical_name, writer_names

    save_format = canonical_name(save_format) if save_format != "auto" else save_format
    if save_format != "auto" and not FORMATS[save_format].writes:
        raise UsageError(f"--save-format {save_format}: can be read but not written (writable: {', '.join(writer_names())})")
    if path and attach:
        raise UsageError("give a FILE or --attach, not both")
    if at is not None and not path:
        raise UsageError("--at N needs a FILE (a live proxy's records are still arriving)")
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        raise UsageError("mcpreel tui needs a terminal (stdin and stdout); for a file's rows use mcpreel inspect")
    if not path:
        from mcpreel._infra.platform import control_unavailable

        if (unavailable := control_unavailable()) is not None:  # Windows: said before loading the viewer
            raise UsageError(f"{unavailable}; give a FILE to browse")
    from mcpreel.tui.app import FileFeed, ViewerApp

    if path:
        from mcpreel.formats import open_session

        session, _ = open_session(path, fmt)
        app = ViewerApp(FileFeed(session), session.info, title=path, save_path=save_path, save_format=save_format,
                        filter_text=filter_text, at=at)
    else:
        from mcpreel.tui.live import live_app

        app = live_app(attach or choose_proxy(), save_path=save_path, save_format=save_format,
                       filter_text=filter_text)
    app.run()
    if app.error is not None:
        raise app.error
    output.finish(app.return_code)


def choose_proxy() -> str:
    """The control socket of the only running proxy, or of the one the person picks from a numbered list."""
    from mcpreel.control.discovery import running

    found = running()
    if not found:
        raise UsageError("no running mcpreel proxy to attach to (start one with mcpreel record), "
                         "or give a FILE to browse")
    if len(found) == 1:
        return str(found[0]["socket"])
    for n, proxy in enumerate(found, 1):
        target = proxy.get("target")
        shown = " ".join(map(str, target)) if isinstance(target, list) else str(target)
        click.echo(f"{n}. pid {proxy.get('pid')} {proxy.get('transport')} {shown} (since {proxy.get('started')}) "
                   f"-> {proxy.get('reel')}", err=True)
    number = click.prompt("attach to", type=click.IntRange(1, len(found)), err=True)
    return str(found[number - 1]["socket"])
