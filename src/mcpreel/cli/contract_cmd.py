"""``mcpreel contract snapshot|check``: keep a server's tool contract in the repository, gate changes in CI."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import click

from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.params import FORMAT_AUTO
from mcpreel.cli.records import options_record
from mcpreel.cli.sources import SourceArgs
from mcpreel.cli.vocabulary import hidden
from mcpreel.errors import InputError

FAIL_ON = ("breaking", "dangerous", "any")
_LEVEL = {"breaking": "error", "dangerous": "warning", "minor": "note"}


def source_options(fn):
    """SOURCE as a recording or a live server: the options ``contract`` and ``audit`` share."""
    for decorate in reversed([
        click.option("--target-command", "command", **hidden("--command"), metavar='"CMD ARGS"',
                     help="A live stdio server to ask instead of a recording."),
        click.option("--target-url", "url", **hidden("--url"), metavar="URL",
                     help="A live HTTP server to ask (SOURCE may also be the URL)."),
        click.option("--transport", type=click.Choice(["auto", "streamable-http", "sse"]), default="auto",
                     show_default=True, help="For a URL: auto is SSE when the path ends in /sse."),
        click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'", help="HTTP header for a URL (repeatable)."),
        click.option("--input-format", "input_format", type=FORMAT_AUTO, default="auto", show_default=True,
                     help="The recording's format."),
        click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
                     help="Seconds a live server has for each answer."),
        click.option("--capabilities", metavar="LIST|JSON", default=None,
                     help="The client capabilities declared to a live server: a comma list of sampling, "
                          "elicitation, roots; 'none'; or a JSON object [default: sampling,elicitation,roots, "
                          "as a usual client declares them: some servers offer tools only to such a client]."),
    ]):
        fn = decorate(fn)
    return fn


@click.group("contract", epilog=examples(
    "mcpreel contract snapshot session.jsonl -o mcp-contract.json",
    "mcpreel contract snapshot --target-command 'python server.py' -o mcp-contract.json",
    "mcpreel contract check mcp-contract.json --target-command 'python server.py' --fail-on dangerous",
))
def contract_group() -> None:
    """A server's tool contract: snapshot it, then check every change against it."""


@contract_group.command("snapshot", epilog=examples(
    "mcpreel contract snapshot session.jsonl -o mcp-contract.json",
    "mcpreel contract snapshot --target-command 'python server.py' -o mcp-contract.json",
    "mcpreel contract snapshot http://127.0.0.1:8000/mcp -H 'Authorization: Bearer TOKEN'",
))
@click.argument("source", required=False)
@source_options
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False), help="Write the contract here [default: stdout].")
@output.run_command
@options_record(SourceArgs, "origin")
def snapshot_command(source: str | None, origin: SourceArgs, out: str | None) -> None:
    """Write the tools, prompts, resources and templates SOURCE offers (a recording or a live server).

    A live server is told the client capabilities of a usual client (``--capabilities`` to choose); the
    command says which it declared."""
    from mcpreel.cli.output import save
    from mcpreel.contract import from_session

    session, name = origin.open(source)
    _say_capabilities(origin, source)
    contract = from_session(session, source=name)
    _one_server(contract, name)
    if not contract.listed:
        raise InputError("holds no tools/list, prompts/list or resources/list answer: nothing to snapshot", path=name)
    data = contract.dumps()
    if out:
        save(out, lambda fh: fh.write(data))
        counts = ", ".join(f"{len(contract.entries(k))} {k}" for k in ("tools", "prompts", "resources", "resourceTemplates")
                           if k in contract.listed)
        output.info(f"contract of {name}: {counts} -> {out}")
    else:
        sys.stdout.write(data.decode("utf-8"))


def _say_capabilities(origin: SourceArgs, source: str | None) -> None:
    """For a live server, which client capabilities it was told (its offer may depend on them)."""
    from mcpreel.cli.sources import is_url

    if origin.command or origin.url or (source and is_url(source)):
        from mcpreel.contract.live import capability_names, parse_capabilities

        output.info(f"declared client capabilities: {capability_names(parse_capabilities(origin.capabilities))}")


def _one_server(contract, name: str) -> None:
    if len(contract.scopes) > 1:
        raise InputError(f"holds {len(contract.scopes)} servers (a merged file: {', '.join(sorted(contract.scopes))}); "
                         "a contract is one server's: give one recording", path=name)


def contract_sarif(diff, contract_path: str, target=None) -> dict:
    """Every change a result located on the contract file; a live server judged is named beside it."""
    from mcpreel.render.sarif import RuleInfo, SarifFinding, sarif_log

    rules: dict[str, RuleInfo] = {}
    findings = []
    for ch in diff.changes:
        rid = f"contract/{ch.rule}"
        rules.setdefault(rid, RuleInfo(rid, f"contract change: {ch.rule.replace('-', ' ')}", _LEVEL[ch.cls]))
        findings.append(SarifFinding(rid, _LEVEL[ch.cls], f"{ch.cls}: {ch.message} at {ch.path}", ch.path,
                                file=contract_path, properties={"class": ch.cls}))
    return sarif_log("contract check", list(rules.values()), findings,
                     properties={"failOn": diff.fail_on, "counts": diff.counts()}, target=target)


@dataclass(frozen=True)
class ContractCheckArgs:
    """What ``contract check``'s own options said, as one record (:func:`mcpreel.cli.records.options_record`)."""

    fail_on: str
    fmt: str
    sarif_path: str | None
    update: bool


@contract_group.command("check", epilog=examples(
    "mcpreel contract check mcp-contract.json --target-command 'python server.py' --fail-on dangerous",
    "mcpreel contract check mcp-contract.json new-session.jsonl --sarif contract.sarif",
    "mcpreel contract check mcp-contract.json http://127.0.0.1:8000/mcp --update",
))
@click.argument("contract_file", metavar="CONTRACT", type=click.Path(dir_okay=False))
@click.argument("source", required=False)
@source_options
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="dangerous", show_default=True,
              help="The least severe class that fails the check (exit 1).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True,
              help="How the report is printed.")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False), help="Also write a SARIF 2.1.0 report here.")
@click.option("--update", is_flag=True, help="Accept the changes: rewrite CONTRACT from SOURCE (exit 0).")
@click.pass_context
@output.run_command
@options_record(SourceArgs, "origin")
@options_record(ContractCheckArgs)
def check_command(ctx: click.Context, contract_file: str, source: str | None, origin: SourceArgs,
                  args: ContractCheckArgs) -> None:
    """Compare SOURCE's offer with CONTRACT; class every change breaking, dangerous or minor.

    Exit 0 when nothing at or above --fail-on changed, 1 when something did, 2 when it could not run.
    """
    from mcpreel._infra import jsonio
    from mcpreel.cli.output import save
    from mcpreel.cli.sources import sarif_target
    from mcpreel.contract import compare, from_session, load_contract

    fail_on, fmt, sarif_path, update = args.fail_on, args.fmt, args.sarif_path, args.update
    command, url = origin.command, origin.url
    old = load_contract(contract_file)
    session, name = origin.open(source)
    _say_capabilities(origin, source)
    new = from_session(session, source=name)
    _one_server(new, name)
    if not new.listed:
        raise InputError("holds no tools/list, prompts/list or resources/list answer: nothing to check", path=name)
    diff = compare(old, new, fail_on=fail_on)
    target = sarif_target(source, command, url) if fmt == "sarif" or sarif_path else None
    if fmt == "json":
        click.echo(jsonio.dumps_str(diff.to_json()))
    elif fmt == "sarif":
        click.echo(jsonio.dumps_indented(contract_sarif(diff, contract_file, target)).decode("utf-8"))
    else:
        failing = set(map(id, diff.failing))
        for ch in diff.changes:
            mark = "FAIL" if id(ch) in failing else "    "
            click.echo(output.printable(f"{mark} {ch.cls:<9} {ch.path}: {ch.message}"))
        click.echo(diff.summary())
    if sarif_path:
        save(sarif_path, lambda fh: fh.write(jsonio.dumps_indented(contract_sarif(diff, contract_file, target))))
    if update:
        save(contract_file, lambda fh: fh.write(new.dumps()))
        output.info(f"contract updated from {name} -> {contract_file}")
        return
    output.finish(diff.exit_code)
