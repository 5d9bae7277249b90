"""Each verb's options under headings, the common ones first: one helper for every verb.

``record --help`` lists 25 options; in one block, the two a person needs first (where the server is,
where the session goes) are lost among the HTTP listener's limits. Click has no option groups, so a
verb's help is drawn by :func:`format_grouped` (installed on each verb as the group loads it:
:func:`install`): the headings and their flags come from :data:`GROUPS`, in order; an option no heading
names goes under "Other options" (``--help`` among them), so a new option is never lost from the help.
A verb :data:`GROUPS` does not name keeps click's one "Options" block.
"""

from __future__ import annotations

import functools

import click

__all__ = ["GROUPS", "format_grouped", "install"]

Groups = tuple[tuple[str, tuple[str, ...]], ...]

_HTTP_LISTENER = ("--listen", "--allow-origin", "--allow-host", "--max-body", "--max-header", "--header-timeout")

#: verb -> (heading, its flags) in the order shown; the first heading holds what most calls need
GROUPS: dict[str, Groups] = {
    "record": (
        ("Target (the server: a command after --, or a URL)", ("command", "--transport", "--target-url")),
        ("Output", ("--output", "--out-dir", "--label", "--session-file", "--save-every", "--tag", "--envelope")),
        ("HTTP listener", _HTTP_LISTENER),
        ("Redaction", ("--redact", "--keep-secrets")),
        ("Live view", ("--tui", "--quiet", "--intercept", "--intercept-timeout", "--no-control", "--otlp-endpoint")),
        ("Faults", ("--rules",)),
    ),
    "replay": (
        ("Target (the server replayed against)", ("--target-command", "--target-url", "--transport", "--header",
                                                  "--timeout", "--era")),
        ("What to replay", ("--format", "--session", "--source", "--all", "--db", "--server-name", "--tool",
                            "--client", "--since", "--failed")),
        ("Comparing", ("--ignore-path", "--compare-rules", "--noise", "--learn-noise", "--fail-on", "--original",
                       "--repeat", "--baseline-command", "--baseline-url")),
        ("Output", ("--output", "--junit", "--html", "--redact")),
        ("Running", ("--pace", "--jobs", "--executor", "--ray-address")),
    ),
    "serve": (
        ("Serving", ("--transport", "--listen", "--format", "--source", "--match", "--no-repeat", "--on-miss",
                     "--answer-timeout")),
        ("Real server (misses, record mode)", ("--target-command", "--target-url", "--record-mode")),
        ("Output", ("--report", "--tag", "--redact")),
        ("HTTP listener", _HTTP_LISTENER[1:]),
        ("Faults", ("--rules",)),
    ),
    "demo-server": (
        ("Serving", ("--transport", "--listen")),
        ("HTTP listener", _HTTP_LISTENER[1:]),
    ),
    "diff": (
        ("Comparing", ("--format", "--ignore-path", "--all", "--latency-factor", "--latency-min-ms",
                       "--fail-on-latency")),
        ("Output", ("--json", "--junit", "--html", "--sarif", "--redact")),
    ),
    "check": (
        ("Target", ("--target-command", "--header", "--timeout", "--era")),
        ("Checks", ("--profile", "--call", "--call-all", "--no-call", "--strict")),
        ("Output", ("--format", "--output", "--sarif")),
    ),
    "calls": (
        ("Which calls", ("--failed", "--since", "--until", "--tool", "--server-name", "--method", "--slower-than",
                         "--limit")),
        ("Output", ("--db", "--json")),
    ),
    "sessions": (
        ("Which sessions", ("--failed", "--since", "--until", "--server-name", "--tool", "--client", "--limit")),
        ("Output", ("--db", "--format")),
    ),
    "wrap": (
        ("Which client", ("--client", "--config", "--project", "--home", "--all", "--list")),
        ("What is written", ("--dry-run", "--sessions-dir", "--redact", "--http", "--mcpreel", "--absolute-paths")),
        ("The corpus server", ("--add-corpus-server", "--corpus-db")),
    ),
}


def _flags(param: click.Parameter) -> set[str]:
    return set(param.opts) | set(getattr(param, "secondary_opts", ()))


def format_grouped(cmd: click.Command, groups: Groups, ctx: click.Context, formatter: click.HelpFormatter) -> None:
    """``cmd``'s options as :data:`GROUPS` heads them (see the module's doc), in place of click's block."""
    records: list[tuple[set[str], tuple[str, str]]] = []
    for param in cmd.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is not None:
            records.append((_flags(param), record))
    placed: set[int] = set()
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    for heading, flags in groups:
        rows = []
        for flag in flags:
            for i, (names, record) in enumerate(records):
                if i not in placed and flag in names:
                    placed.add(i)
                    rows.append(record)
        sections.append((heading, rows))
    sections.append(("Other options", [r for i, (_, r) in enumerate(records) if i not in placed]))
    for heading, rows in sections:
        if rows:
            with formatter.section(heading):
                formatter.write_dl(rows)


def install(cmd: click.Command, name: str) -> click.Command:
    """Draw ``cmd``'s help with headings when :data:`GROUPS` names the verb ``name`` (else as click does)."""
    groups = GROUPS.get(name)
    if groups is not None and not isinstance(cmd, click.Group):
        setattr(cmd, "format_options", functools.partial(format_grouped, cmd, groups))  # noqa: B010
    return cmd


def flags_of(cmd: click.Command) -> list[set[str]]:
    """The flags of each of ``cmd``'s shown options (what a test checks every heading covers)."""
    return [_flags(p) for p in cmd.params if isinstance(p, click.Option) and not p.hidden]
