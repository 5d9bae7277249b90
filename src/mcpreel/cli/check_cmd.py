"""``mcpreel check URL`` / ``mcpreel check --target-command "CMD"``: run spec 05's checks against a live server."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mcpreel._infra import jsonio
from mcpreel.cli import output
from mcpreel.cli.helptext import examples
from mcpreel.cli.records import options_record
from mcpreel.cli.vocabulary import hidden

if TYPE_CHECKING:
    from rich.console import Console

_PROFILES = click.Choice(["strict-sse", "mcp", "sse"])
_ERAS = click.Choice(["auto", "legacy", "modern"])
_FORMATS = click.Choice(["text", "json", "junit"])


class CallsParam(click.ParamType):
    """``--call '{"tool": {...args}}'`` (or ``@file.json``): a JSON object of tool name -> arguments."""

    name = "json"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        text = str(value)
        if text.startswith("@"):
            try:
                text = Path(text[1:]).read_text(encoding="utf-8")
            except OSError as exc:
                self.fail(f"cannot read {text[1:]}: {exc.strerror}", param, ctx)
        try:
            doc = jsonio.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            self.fail(f"not JSON: {jsonio.error_reason(exc)}", param, ctx)
        if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
            self.fail('expected a JSON object of tool name -> arguments object, e.g. {"echo": {"text": "hi"}}',
                      param, ctx)
        return doc


def _text_console() -> Console:
    """The table's console: the terminal, or when piped one that never breaks a line (rich drops the colours)."""
    from rich.console import Console

    console = Console(highlight=False)
    return console if console.is_terminal else output.console()


@dataclass(frozen=True)
class CheckArgs:
    """What ``check``'s options said, as one record (:func:`mcpreel.cli.records.options_record`): the fields
    are the click parameter names, so a new option is a decorator line and a field here."""

    command: str | None
    profile: str
    era: str
    calls: tuple[dict[str, Any], ...]
    call_all: bool
    no_call: bool
    fmt: str
    timeout: float
    headers: tuple[str, ...]
    strict: bool
    out: str | None
    sarif_path: str | None


@click.command("check", epilog=examples(
    "mcpreel check http://127.0.0.1:8000/mcp --profile mcp",
    "mcpreel check --target-command \"python my_server.py\" --profile mcp --era legacy",
    "mcpreel check http://127.0.0.1:8000/mcp -H 'Authorization: Bearer TOKEN' --format junit -o check.xml",
))
@click.argument("url", required=False)
@click.option("--target-command", "command", **hidden("--command"), metavar='"CMD ARGS"',
              help="Check a stdio server started by CMD (HTTP-only checks are skipped).")
@click.option("--profile", type=_PROFILES, default="strict-sse", show_default=True,
              help="strict-sse: the strict HTTP-SSE format (SSE responses, JSON in text; 'sse' for short); "
                   "mcp: what the MCP spec allows.")
@click.option("--era", type=_ERAS, default="auto", show_default=True,
              help="Protocol era: legacy (initialize handshake), modern (2026-07-28: server/discover), "
                   "auto (each one the server answers).")
@click.option("--call", "calls", type=CallsParam(), multiple=True,
              help='Call these tools with these arguments: \'{"tool": {...}}\' or @file.json (repeatable).')
@click.option("--call-all", is_flag=True,
              help="Call every tool, also those not annotated readOnlyHint: true (they may change things).")
@click.option("--no-call", is_flag=True, help="Call no tool (except those given with --call).")
@click.option("--format", "fmt", type=_FORMATS, default="text", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds to wait for each answer.")
@click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
              help="An HTTP header sent on every request, e.g. 'Authorization: Bearer …' (repeatable).")
@click.option("--strict", is_flag=True, help="Count warnings as failures (exit 1).")
@click.option("-o", "--output", "out", **hidden("--out"), type=click.Path(dir_okay=False),
              help="Also write the report to this file.")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False),
              help="Also write a SARIF 2.1.0 report here (failed checks as errors, warnings as warnings).")
@output.run_command
@options_record(CheckArgs)
def check_command(url: str | None, args: CheckArgs) -> None:
    """Check a live MCP server against the strict SSE format and MCP's rules.

    URL is a Streamable HTTP endpoint (…/mcp) or a legacy HTTP+SSE stream (…/sse). By default only tools
    annotated readOnlyHint: true are called (--call-all, --call to call others), and what the report
    quotes of their answers is redacted. Exit 0 when nothing failed, 1 when a check failed, 2 when the server could not be reached.
    """
    from mcpreel.check import CheckOptions, run_check
    from mcpreel.clients.headers import parse_headers
    from mcpreel.errors import UsageError
    from mcpreel.render import check as render

    command, calls, call_all, no_call, fmt, out = args.command, args.calls, args.call_all, args.no_call, args.fmt, args.out
    if (url is None) == (command is None):
        raise UsageError("give a server URL or --target-command \"CMD\" (one of them)")
    merged: dict[str, Any] = {}
    for c in calls:
        merged.update(c)
    if call_all and no_call:
        raise UsageError("--call-all and --no-call contradict each other: give one")
    options = CheckOptions(profile=args.profile, era=args.era, calls=merged, call_all=call_all, no_call=no_call,
                           timeout=args.timeout, headers=parse_headers(args.headers), strict=args.strict)
    report = run_check(url, command=command, options=options)
    doc = render.to_json(report) if fmt == "json" else render.to_junit(report) if fmt == "junit" else None
    if doc is not None:
        click.echo(doc, nl=False)
    else:
        output.show(render.renderables(report), _text_console())
    if out:
        output.save_text(out, doc if doc is not None else "\n".join(render.plain_lines(report)) + "\n")
        output.info(f"report written to {out}")
    if args.sarif_path:
        from mcpreel.cli.output import save

        save(args.sarif_path, lambda fh: fh.write(jsonio.dumps_indented(_check_sarif(report, url, command))))
    output.finish(report.exit_code)


def _check_sarif(report: Any, url: str | None = None, command: str | None = None) -> dict[str, Any]:
    """Failed checks are errors, warnings are warnings; passed and skipped checks are rules without results;
    every result is located at the server (its URL or command: :func:`~mcpreel.cli.sources.sarif_target`)."""
    from mcpreel.cli.sources import sarif_target
    from mcpreel.render.sarif import RuleInfo, SarifFinding, sarif_log

    levels = {"fail": "error", "warn": "warning"}
    rules: dict[str, RuleInfo] = {}
    findings = []
    for r in report.results:
        rid = f"check/{r.id}"
        rules.setdefault(rid, RuleInfo(rid, r.title, "error", help=r.fix))
        level = levels.get(str(r.status).lower())
        if level:
            findings.append(SarifFinding(rid, level, r.summary or r.title, f"/checks/{r.id}",
                                    properties={"status": r.status, **({"issue": r.issue} if r.issue else {})}))
    return sarif_log("check", list(rules.values()), findings,
                     properties={"target": report.target, "counts": report.counts()},
                     target=sarif_target(None, command, url))
