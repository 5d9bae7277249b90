"""``mcpreel wrap`` / ``mcpreel unwrap``: put the recorder between the user's MCP clients and their servers."""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.records import options_record
from mcpreel.errors import DifferenceFound, McpreelError, ProblemsReported, UsageError


@dataclass(frozen=True)
class FileArgs:
    """What :func:`file_options` said, as one record (:func:`mcpreel.cli.records.options_record`): which
    client config files ``wrap`` and ``unwrap`` work on, and whether they only show the diff."""

    clients: tuple[str, ...]
    configs: tuple[str, ...]
    home: str | None
    project: str
    dry_run: bool
    all_: bool


@dataclass(frozen=True)
class WrapArgs:
    """What ``wrap``'s own options said, as one record."""

    list_: bool
    sessions_dir: str | None
    redact: bool
    http_port: int | None
    mcpreel_cmd: str | None
    absolute_paths: bool
    add_corpus_server: bool
    corpus_db: str | None


def file_options(fn):
    """The options that choose which client config files ``wrap`` and ``unwrap`` look at (one copy for both)."""
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


def documents(home: str | None, project: str, clients: tuple[str, ...], configs: tuple[str, ...],
              problems: list[str]) -> list[Any]:
    """The config documents to work on; a file that cannot be read (or a link that is not followed) is one
    line in ``problems``, and the others go on. Claude Code's per-project servers in ``~/.claude.json``
    are a document of their own each (a view of the same file)."""
    from mcpreel.clientconfig import ConfigDocument, candidate_files, shape_for
    from mcpreel.clientconfig.document import local_scopes

    home_dir = Path(home).expanduser() if home else Path.home()
    project_dir = Path(project).resolve()
    if configs:
        files = []
        for c in configs:
            p = Path(c)
            if not p.is_file():
                problems.append(f"{c}: no such file")
                continue
            files.append(shape_for(p, p.read_bytes().decode("utf-8", "replace")))
    else:
        files = [f for f in candidate_files(home_dir, project_dir)
                 if (f.path.is_file() or f.path.is_symlink()) and (not clients or f.client in clients)]
    docs = []
    for f in files:
        try:
            doc = ConfigDocument.load(_follow_link(f, project_dir))
            views = local_scopes(doc)
        except McpreelError as exc:
            problems.append(f"{exc} (skipped)")
            continue
        docs.append(doc)
        docs += [ConfigDocument(view, doc.text) for view in views]
    return docs


def _follow_link(file: Any, project_dir: Path) -> Any:
    """A config that is a symbolic link: its target is read and written (the link stays a link); a project's
    link that leads outside the project is not followed."""
    from dataclasses import replace

    from mcpreel.errors import InputError

    if not file.path.is_symlink():
        return file
    try:
        target = file.path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise InputError("a symbolic link that leads nowhere", path=str(file.path)) from exc
    if file.scope == "project" and not target.is_relative_to(project_dir):
        raise InputError(f"a symbolic link to {target}, outside the project: not followed", path=str(file.path))
    if not target.is_file():
        raise InputError(f"a symbolic link to {target}, which is not a file", path=str(file.path))
    output.info(f"{file.path} is a symbolic link: its target {target} is edited, the link kept")
    return replace(file, path=target)


def _portable(doc: Any, home_dir: Path) -> bool:
    """Is this a file people commit (a project's .mcp.json, .vscode/mcp.json, ...)? Then no path of this
    machine goes into it unless asked. A file given with --config is one unless it is a user file."""
    from mcpreel.clientconfig import candidate_files

    if doc.file.scope == "project":
        return True
    if doc.file.scope != "given":
        return False
    users = {f.path.resolve() for f in candidate_files(home_dir) if f.scope == "user"}
    return doc.file.path.resolve() not in users


def _report(problems: list[str]) -> None:
    for line in problems:
        output.error(line)


def _show_list(docs, problems: list[str]) -> None:
    from mcpreel.clientconfig import describe
    from mcpreel.clientconfig.wrapping import http_record_argv, proxy_url, refusal, shown

    if not docs and not problems:
        output.info("no MCP client config found (try --home, --project or --config)")
    for doc in docs:
        try:
            servers = describe(doc)
        except McpreelError as exc:
            problems.append(f"{exc} (skipped)")
            continue
        click.echo(shown(f"{doc.file.label}  {doc.file.path}"))
        if not servers:
            click.echo("  (no servers)")
        for s in servers:
            mark = "wrapped" if s.wrapped else ""
            if s.transport == "stdio" and not s.wrapped and refusal(s.name, s.entry) is not None:
                mark = "refused"
            click.echo(f"  {shown(s.name):<24} {shown(s.transport):<16} {mark:<8} {shown(s.target)}")
            if s.transport in ("sse", "streamable-http") and not s.wrapped:
                click.echo(shown(f"  {'':<24} record it: {shlex.join(http_record_argv(s))}; client URL: {proxy_url(s)}"))


@click.command("wrap", epilog=examples(
    "mcpreel wrap --list",
    "mcpreel wrap --all --dry-run",
    "mcpreel wrap --add-corpus-server --client claude-code --client cursor",
))
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
              help="How clients start mcpreel [default: this installation's mcpreel, absolute path; in a project's "
                   "file (.mcp.json, .vscode/mcp.json, ...): mcpreel, found on PATH].")
@click.option("--absolute-paths", is_flag=True,
              help="In a project's file too, write this machine's paths (mcpreel's, the sessions folder's); by "
                   "default a file people commit gets `mcpreel` and ~/.mcpreel/sessions/... instead.")
@click.option("--add-corpus-server", is_flag=True,
              help="Instead of wrapping: add mcpreel's corpus server (`mcpreel mcp-server`) to the chosen clients' "
                   "files, so their agent can ask the corpus (`wrap` never records it).")
@click.option("--corpus-db", metavar="FILE", help="With --add-corpus-server: the index it reads [default: mcpreel "
                                                  "mcp-server's, ~/.mcpreel/corpus.duckdb].")
@click.pass_context
@output.run_command
@options_record(FileArgs, "files")
@options_record(WrapArgs)
def wrap_command(ctx: click.Context, names: tuple[str, ...], files: FileArgs, args: WrapArgs) -> None:
    """Make MCP clients start their stdio servers through `mcpreel record`.

    Each changed file is backed up next to itself once (FILE.mcpreel-backup); FILE.mcpreel-wrap.json
    keeps what `mcpreel unwrap` needs to restore every entry exactly. HTTP servers are listed with the
    `mcpreel record` command to run and the URL to give the client instead. A project's file (usually
    committed) gets no path of this machine unless --absolute-paths. A file that cannot be read, or a
    server that cannot be wrapped as it is written, is one line each; the others go on (exit 2 at the end).
    """
    from mcpreel.clientconfig import plan_wrap
    from mcpreel.clientconfig.wrapping import default_mcpreel_argv

    home, dry_run, all_ = files.home, files.dry_run, files.all_
    sessions_dir, http_port, mcpreel_cmd = args.sessions_dir, args.http_port, args.mcpreel_cmd
    problems: list[str] = []
    docs = documents(home, files.project, files.clients, files.configs, problems)
    if args.list_:
        _show_list(docs, problems)
        _report(problems)
        if problems:
            raise ProblemsReported()
        return
    if not docs and not problems:
        raise UsageError("no MCP client config found (try --home, --project or --config)")
    if args.add_corpus_server:
        _add_corpus_server(docs, names, args, dry_run, problems)
        return
    if args.corpus_db is not None:
        raise UsageError("--corpus-db goes with --add-corpus-server")
    home_dir = Path(home).expanduser() if home else Path.home()
    given_root = Path(sessions_dir).expanduser() if sessions_dir else None
    machine_root = given_root.resolve() if given_root else home_dir.absolute() / ".mcpreel" / "sessions"
    machine_argv = shlex.split(mcpreel_cmd) if mcpreel_cmd else default_mcpreel_argv()
    portable_argv = shlex.split(mcpreel_cmd) if mcpreel_cmd else ["mcpreel"]
    # ~ is expanded by `mcpreel record --out-dir` on whichever machine the client runs it
    portable_root = Path(sessions_dir) if sessions_dir else Path("~/.mcpreel/sessions")
    edits: list[Any] = []
    states: dict[Path, Any] = {}
    for d in docs:
        portable = _portable(d, home_dir) and not args.absolute_paths
        try:
            d = _after_earlier_views(d, edits)
            edits.append(plan_wrap(d, names, all_=all_, mcpreel_argv=portable_argv if portable else machine_argv,
                                   sessions_root=portable_root if portable else machine_root, redact=args.redact,
                                   http_port=http_port, state=states.get(d.file.path)))
        except McpreelError as exc:
            problems.append(f"{exc} (skipped)")
            continue
        states[d.file.path] = edits[-1].state
        if portable and edits[-1].changed and not mcpreel_cmd and shutil.which("mcpreel") is None:
            edits[-1].notes.append("mcpreel is not on this PATH: the client may not find it (--absolute-paths "
                                   "writes this installation's path)")
        if http_port is not None:
            http_port += sum(1 for n in edits[-1].notes if "now points at" in n)
    _finish(edits, names, dry_run, problems)
    _report(problems)
    if problems:
        raise ProblemsReported()


def _add_corpus_server(docs: list[Any], names: tuple[str, ...], args: WrapArgs, dry_run: bool,
                       problems: list[str]) -> None:
    """``wrap --add-corpus-server``: the corpus server added to each file found (``--client`` picks them)."""
    from mcpreel.clientconfig.wrapping import default_mcpreel_argv, plan_add_corpus_server

    if names:
        raise UsageError("--add-corpus-server adds one server of its own: it takes no server names")
    argv = shlex.split(args.mcpreel_cmd) if args.mcpreel_cmd else default_mcpreel_argv()
    edits: list[Any] = []
    for d in docs:
        try:
            edits.append(plan_add_corpus_server(_after_earlier_views(d, edits), mcpreel_argv=argv, db=args.corpus_db))
        except McpreelError as exc:
            problems.append(f"{exc} (skipped)")
    _finish(edits, (), dry_run, problems)
    _report(problems)
    if problems:
        raise ProblemsReported()


def _after_earlier_views(doc: Any, edits: list[Any]) -> Any:
    """A view of a file an earlier edit changed (``~/.claude.json`` and its per-project servers) is planned
    on the text that edit left, so the two land in one write."""
    from mcpreel.clientconfig import ConfigDocument

    earlier = [e for e in edits if e.path == doc.file.path]
    return ConfigDocument(doc.file, earlier[-1].new_text) if earlier else doc


#: what a note says was done -> what a dry run says it would do
_WOULD = ((": wrapped; sessions go to ", ": would wrap; sessions would go to "), (": restored", ": would restore"),
          (": now points at ", ": would point at "), ("; forgotten", "; would be forgotten"))


def would(note: str) -> str:
    """A wrap or unwrap note in a dry run's words: nothing was written, so nothing "wrapped"."""
    for done, conditional in _WOULD:
        note = note.replace(done, conditional)
    return note


def _finish(edits, names: tuple[str, ...], dry_run: bool, problems: list[str]) -> int:
    from mcpreel.clientconfig import apply_edit
    from mcpreel.clientconfig.wrapping import merge_edits, shown

    seen = {n for e in edits for n in e.changed} | {note.split(":", 1)[0] for e in edits for note in e.notes} \
        | {note.split(":", 1)[0] for e in edits for note in e.refused}
    missing = [n for n in names if n.split(":", 1)[-1] not in seen]
    by_path: dict[Path, list[Any]] = {}
    for e in edits:
        by_path.setdefault(e.path, []).append(e)
        for note in e.notes:
            output.info(shown(f"{e.doc.file.label} {e.path}: {would(note) if dry_run else note}"))
        problems += [shown(f"{e.doc.file.label} {e.path}: {line}") for line in e.refused]
    for path_edits in by_path.values():
        merged = merge_edits(path_edits)
        try:
            if dry_run:
                sys.stdout.write(merged.diff())
            else:
                apply_edit(merged)
        except McpreelError as exc:
            problems.append(str(exc))
    if missing:
        _report(problems)
        raise UsageError(f"no server named {', '.join(missing)} in the files found (see --list)")
    return sum(len(e.changed) for e in edits)


@click.command("unwrap", epilog=examples(
    "mcpreel unwrap  # every entry back exactly as it was",
    "mcpreel unwrap github --client cursor --dry-run",
))
@click.argument("names", nargs=-1)
@file_options
@click.option("--force", is_flag=True, help="Restore the original even where the wrapped entry was edited since.")
@click.pass_context
@output.run_command
@options_record(FileArgs, "files")
def unwrap_command(ctx: click.Context, names: tuple[str, ...], files: FileArgs, force: bool) -> None:
    """Restore the entries `mcpreel wrap` changed, exactly as they were (every server unless named).

    Exit 1 when a wrapped entry was edited since and was left as it is.
    """
    from mcpreel.clientconfig import plan_unwrap

    problems: list[str] = []
    docs = documents(files.home, files.project, files.clients, files.configs, problems)
    edits: list[Any] = []
    states: dict[Path, Any] = {}
    for d in docs:
        try:
            d = _after_earlier_views(d, edits)
            edits.append(plan_unwrap(d, names, all_=files.all_ or not names, force=force,
                                     state=states.get(d.file.path)))
        except McpreelError as exc:
            problems.append(f"{exc} (skipped)")
            continue
        states[d.file.path] = edits[-1].state
    _finish(edits, names, files.dry_run, problems)
    _report(problems)
    left = any("edited since" in note for e in edits for note in e.notes)
    if problems:
        raise ProblemsReported()
    if left:
        raise DifferenceFound()
