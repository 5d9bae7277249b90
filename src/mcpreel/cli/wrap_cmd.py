"""``mcpreel wrap`` / ``mcpreel unwrap``: put the recorder between the user's MCP clients and their servers."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from mcpreel.cli import output
from mcpreel.errors import UsageError


def file_options(fn):
    from mcpreel.clientconfig import CLIENTS

    for decorate in reversed([
        click.option("--client", "clients", multiple=True, type=click.Choice(sorted(CLIENTS)),
                     help="Only this client's files (repeatable)."),
        click.option("--config", "configs", multiple=True, type=click.Path(dir_okay=False),
                     help="A config file of a known shape anywhere (repeatable); replaces the search."),
        click.option("--home", type=click.Path(file_okay=False), envvar="MCPREEL_CONFIG_HOME",
                     help="The home folder to search [env MCPREEL_CONFIG_HOME; default: ~]."),
        click.option("--project", type=click.Path(file_okay=False), default=".", show_default=True,
                     help="The project folder whose .mcp.json, .vscode/mcp.json, ... are searched."),
        click.option("--dry-run", is_flag=True, help="Print the diff; write nothing."),
        click.option("--all", "all_", is_flag=True, help="Every server of the files found."),
    ]):
        fn = decorate(fn)
    return fn


def documents(home: str | None, project: str, clients: tuple[str, ...], configs: tuple[str, ...]):
    from mcpreel.clientconfig import ConfigDocument, candidate_files, shape_for

    if configs:
        docs = []
        for c in configs:
            p = Path(c)
            if not p.is_file():
                raise UsageError(f"{c}: no such file")
            text = p.read_bytes().decode("utf-8", "replace")
            docs.append(ConfigDocument.load(shape_for(p, text)))
        return docs
    home_dir = Path(home).expanduser() if home else Path.home()
    files = candidate_files(home_dir, Path(project).resolve())
    return [ConfigDocument.load(f) for f in files if f.path.is_file() and (not clients or f.client in clients)]


def _show_list(docs) -> None:
    from mcpreel.clientconfig import describe
    from mcpreel.clientconfig.wrapping import http_record_argv, proxy_url

    if not docs:
        output.info("no MCP client config found (try --home, --project or --config)")
    for doc in docs:
        click.echo(f"{doc.file.label}  {doc.file.path}")
        servers = describe(doc)
        if not servers:
            click.echo("  (no servers)")
        for s in servers:
            mark = "wrapped" if s.wrapped else ""
            click.echo(f"  {s.name:<24} {s.transport:<16} {mark:<8} {s.target}")
            if s.transport in ("sse", "streamable-http") and not s.wrapped:
                click.echo(f"  {'':<24} record it: {shlex.join(http_record_argv(s))}; client URL: {proxy_url(s)}")


@click.command("wrap")
@click.argument("names", nargs=-1)
@file_options
@click.option("--list", "list_", is_flag=True, help="List the clients' servers and whether they are wrapped.")
@click.option("--sessions-dir", type=click.Path(file_okay=False),
              help="Where recordings go, one folder per client and server [default: ~/.mcpreel/sessions].")
@click.option("--redact", is_flag=True, help="Record with secrets redacted (record --redact).")
@click.option("--http", "http_port", type=click.IntRange(1, 65535), default=None, is_flag=False, flag_value=8765,
              metavar="[PORT]", help="Also point the chosen HTTP servers at a recording proxy on 127.0.0.1:PORT "
                                     "(8765, counting up); prints the `mcpreel record` command that starts it.")
@click.option("--mcpreel", "mcpreel_cmd", metavar="'CMD'",
              help="How clients start mcpreel [default: this installation's mcpreel, absolute path].")
@output.run_command
def wrap_command(names: tuple[str, ...], clients: tuple[str, ...], configs: tuple[str, ...], home: str | None,
                 project: str, dry_run: bool, all_: bool, list_: bool, sessions_dir: str | None, redact: bool,
                 http_port: int | None, mcpreel_cmd: str | None) -> None:
    """Make MCP clients start their stdio servers through `mcpreel record`.

    \b
      mcpreel wrap --list
      mcpreel wrap --all --dry-run
      mcpreel wrap github filesystem --client claude-desktop

    Each changed file is backed up next to itself once (FILE.mcpreel-backup); FILE.mcpreel-wrap.json
    keeps what `mcpreel unwrap` needs to restore every entry exactly. HTTP servers are listed with the
    `mcpreel record` command to run and the URL to give the client instead.
    """
    from mcpreel.clientconfig import plan_wrap
    from mcpreel.clientconfig.wrapping import default_mcpreel_argv

    docs = documents(home, project, clients, configs)
    if list_:
        _show_list(docs)
        return
    if not docs:
        raise UsageError("no MCP client config found (try --home, --project or --config)")
    home_dir = Path(home).expanduser() if home else Path.home()
    root = Path(sessions_dir).expanduser().resolve() if sessions_dir else home_dir / ".mcpreel" / "sessions"
    argv = shlex.split(mcpreel_cmd) if mcpreel_cmd else default_mcpreel_argv()
    edits = []
    for d in docs:
        edits.append(plan_wrap(d, names, all_=all_, mcpreel_argv=argv, sessions_root=root, redact=redact,
                               http_port=http_port))
        if http_port is not None:
            http_port += sum(1 for n in edits[-1].notes if "now points at" in n)
    _finish(edits, names, dry_run)


def _finish(edits, names: tuple[str, ...], dry_run: bool) -> int:
    from mcpreel.clientconfig import apply_edit

    seen = {n for e in edits for n in e.changed} | {note.split(":", 1)[0] for e in edits for note in e.notes}
    missing = [n for n in names if n.split(":", 1)[-1] not in seen]
    for e in edits:
        for note in e.notes:
            output.info(f"{e.doc.file.label} {e.path}: {note}")
        if dry_run:
            sys.stdout.write(e.diff())
        else:
            apply_edit(e)
    if missing:
        raise UsageError(f"no server named {', '.join(missing)} in the files found (see --list)")
    return sum(len(e.changed) for e in edits)


@click.command("unwrap")
@click.argument("names", nargs=-1)
@file_options
@click.option("--force", is_flag=True, help="Restore the original even where the wrapped entry was edited since.")
@click.pass_context
@output.run_command
def unwrap_command(ctx: click.Context, names: tuple[str, ...], clients: tuple[str, ...], configs: tuple[str, ...],
                   home: str | None, project: str, dry_run: bool, all_: bool, force: bool) -> None:
    """Restore the entries `mcpreel wrap` changed, exactly as they were (every server unless named).

    Exit 1 when a wrapped entry was edited since and was left as it is.
    """
    from mcpreel.clientconfig import plan_unwrap

    docs = documents(home, project, clients, configs)
    edits = [plan_unwrap(d, names, all_=all_ or not names, force=force) for d in docs]
    _finish(edits, names, dry_run)
    left = any("edited since" in note for e in edits for note in e.notes)
    ctx.exit(1 if left else 0)
