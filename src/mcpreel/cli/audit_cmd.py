"""``mcpreel audit``: the safety lint over a recording or a live server, rules as data."""

from __future__ import annotations

from dataclasses import dataclass

import click

from mcpreel.cli import output
from mcpreel.cli.contract_cmd import source_options
from mcpreel.cli.helptext import examples
from mcpreel.cli.records import options_record
from mcpreel.cli.sources import SourceArgs
from mcpreel.errors import DifferenceFound


def audit_sarif(report, artifact: str | None, target=None) -> dict:
    """The audit as a SARIF log, so code-scanning tools show the findings where the session came from."""
    from mcpreel.render.sarif import RuleInfo, SarifFinding, sarif_log

    rules = [RuleInfo(r.id, r.message, r.level, help=f"{r.name} ({r.kind})") for r in report.rules]
    findings = [SarifFinding(f.rule, f.level, f"{f.message}" + (f": {f.excerpt}" if f.excerpt else ""), f.path,
                        file=artifact, properties={k: v for k, v in (("record", f.record), ("server", f.server),
                                                                    ("name", f.name)) if v is not None})
                for f in report.findings]
    return sarif_log("audit", rules, findings, properties={"counts": report.counts()}, target=target)


@dataclass(frozen=True)
class AuditArgs:
    """What ``audit``'s own options said, as one record (:func:`mcpreel.cli.records.options_record`)."""

    rule_files: tuple[str, ...]
    disable: tuple[str, ...]
    fail_on: str
    fmt: str
    sarif_path: str | None
    list_rules: bool


@click.command("audit", epilog=examples(
    "mcpreel audit session.jsonl",
    "mcpreel audit --target-command 'npx -y @modelcontextprotocol/server-everything' --format sarif",
    "mcpreel audit session.jsonl --disable MCPA006 --sarif audit.sarif",
))
@click.argument("source", required=False)
@source_options
@click.option("--rules", "rule_files", multiple=True, type=click.Path(dir_okay=False),
              help="More rules (JSON, the shape of the built-in rules.json); a rule with a known id replaces it.")
@click.option("--disable", multiple=True, metavar="RULE_ID", help="Leave this rule out (repeatable).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "note"]), default="error", show_default=True,
              help="The least severe finding that fails the audit (exit 1).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True)
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False), help="Also write a SARIF 2.1.0 report here.")
@click.option("--list-rules", is_flag=True, help="Print the rules in force and exit.")
@click.pass_context
@output.run_command
@options_record(SourceArgs, "origin")
@options_record(AuditArgs)
def audit_command(ctx: click.Context, source: str | None, origin: SourceArgs, args: AuditArgs) -> None:
    """Flag what should worry a user of this server: injection-shaped text, tools that change mid-session,
    duplicate or shadowing tool names, secrets in traffic, destructive tools without annotations.

    Exit 0 when nothing at or above --fail-on was found, 1 when something was, 2 when it could not run.
    """
    from mcpreel._infra import jsonio
    from mcpreel.audit import audit_session, builtin_rules, load_rules, merge_rules
    from mcpreel.cli.output import save
    from mcpreel.cli.sources import sarif_target

    fmt, sarif_path = args.fmt, args.sarif_path
    extra = [r for path in args.rule_files for r in load_rules(path)]
    rules = merge_rules(builtin_rules(), extra, args.disable)
    if args.list_rules:
        for r in rules:
            click.echo(f"{r.id}  {r.level:<7} {r.kind:<24} {r.name}")
        return
    session, name = origin.open(source)
    report = audit_session(session, rules)
    artifact = source if source and not source.startswith(("http://", "https://")) else None
    target = sarif_target(source, origin.command, origin.url) if fmt == "sarif" or sarif_path else None
    if fmt == "json":
        click.echo(jsonio.dumps_str(report.to_json()))
    elif fmt == "sarif":
        click.echo(jsonio.dumps_indented(audit_sarif(report, artifact, target)).decode("utf-8"))
    else:
        for f in report.findings:
            where = f" (record {f.record})" if f.record is not None else ""
            click.echo(f"{f.level.upper():<7} {f.rule} {f.path}{where}: {f.message}")
            if f.excerpt:
                click.echo(f"        {f.excerpt}")
        c = report.counts()
        click.echo(f"{name}: {report.tools_seen} tools, {report.calls_seen} calls; "
                   f"{c['error']} errors, {c['warning']} warnings, {c['note']} notes")
    if sarif_path:
        save(sarif_path, lambda fh: fh.write(jsonio.dumps_indented(audit_sarif(report, artifact, target))))
    if report.failing(args.fail_on):
        raise DifferenceFound()
