"""One name per concept on every verb (issue 29): a walk over click's command tree.

Every option every verb shows is held to :data:`mcpreel.cli.vocabulary.CONCEPTS`: a visible spelling that
is a known synonym of a concept's one name fails (unless another tool's surface spells it so, in
:data:`~mcpreel.cli.vocabulary.SPELLED_BY_OTHERS`); a concept with a short form shows both; each hidden
alias still parses to the same parameter and never appears on a help page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest

from mcpreel.cli import COMMANDS, cli
from mcpreel.cli.vocabulary import CONCEPTS, SPELLED_BY_OTHERS, AliasedOption, hidden

#: metavars of a session file given as an argument that say less than SESSION does
VAGUE_SESSION_METAVARS = {"FILE", "[FILE]", "FILE...", "PATH", "[PATH]", "INPUT", "REEL", "RECORDING"}


def walk(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, cmd
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            assert sub is not None, f"{' '.join((*path, name))}: listed but not found"
            yield from walk(sub, (*path, name))


def shown_names(option: click.Option) -> list[str]:
    aliases = option.aliases if isinstance(option, AliasedOption) else ()
    return [o for o in (*option.opts, *option.secondary_opts) if o not in aliases]


def vocabulary_problems(root: click.Command) -> list[str]:
    """What the walk finds wrong, one line each (empty: every verb uses the one names)."""
    problems = []
    for path, cmd in walk(root):
        where = " ".join(path)
        for param in cmd.params:
            if isinstance(param, click.Argument):
                if param.name in ("path", "session", "inputs") and param.make_metavar(click.Context(cmd)) in \
                        VAGUE_SESSION_METAVARS:
                    problems.append(f"{where} {param.name}: a session file's metavar is SESSION")
                continue
            if not isinstance(param, click.Option) or param.hidden:
                continue
            names = shown_names(param)
            for concept in CONCEPTS:
                for name in names:
                    if name in concept.synonyms and (where, name) not in SPELLED_BY_OTHERS:
                        problems.append(f"{where} {name}: {concept.what} is {concept.name} (keep {name} as a "
                                        f"hidden alias)")
                if concept.name in names and concept.short and concept.short not in names:
                    problems.append(f"{where} {concept.name}: shown without its short form {concept.short}")
                shown = param.make_metavar(click.Context(cmd))
                if concept.name in names and concept.metavar and shown != concept.metavar:
                    problems.append(f"{where} {concept.name}: its value is shown {concept.metavar}, not {shown}")
    return problems


def help_pages() -> Iterator[tuple[str, str]]:
    for path, cmd in walk(cli):
        ctx = click.Context(cmd, info_name=" ".join(("mcpreel", *path)), terminal_width=200, max_content_width=200)
        yield " ".join(path) or "mcpreel", cmd.get_help(ctx)


def test_every_verb_says_each_concept_by_its_one_name():
    assert vocabulary_problems(cli) == []


def test_the_walk_reaches_every_registered_verb():
    reached = {path[0] for path, _ in walk(cli) if path}
    assert set(COMMANDS) <= reached


def test_the_walk_finds_a_planted_synonym_and_a_short_form_left_out():
    @click.group()
    def root() -> None: ...

    @root.command("fetch")
    @click.option("--out")  # the old spelling, shown
    @click.option("--target-url", "url", **hidden("--url"), metavar="URL")  # the one name, its alias hidden: fine
    @click.option("--output", "other")  # the one name without -o
    @click.option("--target-command", "cmd", metavar="CMD")  # its value shown another way
    @click.argument("path", metavar="FILE")
    def fetch(out, url, other, cmd, path) -> None: ...

    problems = vocabulary_problems(root)
    assert len(problems) == 4, problems
    assert any('--target-command: its value is shown "CMD ARGS", not CMD' in p for p in problems)
    assert any(p.startswith("fetch --out: the file (or folder) a verb writes is --output") for p in problems)
    assert any("--output: shown without its short form -o" in p for p in problems)
    assert any("path: a session file's metavar is SESSION" in p for p in problems)


@pytest.mark.parametrize(("where", "page"), list(help_pages()), ids=lambda v: v if len(v) < 40 else "")
def test_no_help_page_teaches_an_old_name(where, page):
    """The aliases parse, but no help page (options or text) names one: a reader learns one word."""
    allowed = {name for (path, name) in SPELLED_BY_OTHERS if path == where}
    for concept in CONCEPTS:
        for synonym in concept.synonyms:
            if synonym in allowed:
                continue
            assert not re.search(rf"(?<![\w-]){re.escape(synonym)}(?![\w-])", page), (where, synonym)


ALIASES_PARSE = [
    # (argv, parameter, value): the old spellings, still understood
    (["record", "--out", "s.jsonl", "--", "srv"], "out", "s.jsonl"),
    (["record", "--transport", "sse", "--target", "http://h/sse"], "target", "http://h/sse"),
    (["record", "-o", "s.jsonl", "--", "srv"], "out", "s.jsonl"),
    (["check", "--command", "python s.py"], "command", "python s.py"),
    (["check", "--target-command", "python s.py", "--out", "r.txt"], "out", "r.txt"),
    (["contract", "snapshot", "--command", "python s.py"], "command", "python s.py"),
    (["contract", "check", "c.json", "--url", "http://h/mcp"], "url", "http://h/mcp"),
    (["audit", "--target-url", "http://h/mcp", "-H", "A: b"], "headers", ("A: b",)),
    (["report", "s.jsonl", "--out", "r.html"], "out", "r.html"),
    (["export", "otlp", "s.jsonl", "--out", "spans.jsonl"], "out", "spans.jsonl"),
    (["import", "s.json", "--out-trace", "t.jsonl"], "out_trace", "t.jsonl"),
    (["trace", "import-mcp", "--input", "s.json", "--out-trace", "t.jsonl"], "out_trace", "t.jsonl"),
    (["demo", "--out", "d"], "out_dir", "d"),
    (["replay", "s.jsonl", "--target-url", "http://h/mcp", "-o", "r.json", "-H", "A: b"], "out_json", "r.json"),
    (["proxy", "start", "--target-command", "python s.py", "--out", "s.jsonl"], "out", "s.jsonl"),
    (["serve", "s.jsonl", "--port", "0"], "port", 0),
    (["demo-server", "--host", "0.0.0.0"], "host", "0.0.0.0"),
]


def leaf_context(argv: list[str]) -> click.Context:
    """The context ``mcpreel ARGV`` would run its verb in: parsed by the verb's own parser, not invoked
    (the groups on the way take no options of their own)."""
    ctx = click.Context(cli, info_name="mcpreel")
    cmd: click.Command = cli
    rest = list(argv)
    while isinstance(cmd, click.Group):
        name, rest = rest[0], rest[1:]
        sub = cmd.get_command(ctx, name)
        assert sub is not None, f"no verb {name!r}"
        ctx = click.Context(sub, info_name=name, parent=ctx) if isinstance(sub, click.Group) else \
            sub.make_context(name, rest, parent=ctx)
        cmd = sub
    return ctx


@pytest.mark.parametrize(("argv", "name", "value"), ALIASES_PARSE, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_an_old_spelling_still_parses_to_the_same_parameter(argv, name, value):
    assert leaf_context(argv).params[name] == value


def test_an_error_names_the_one_name_not_the_alias():
    with pytest.raises(click.UsageError) as caught:
        leaf_context(["trace", "import-mcp", "--input", "s.json"])
    assert "'-o' / '--output'" in caught.value.format_message()
    assert "--out-trace" not in caught.value.format_message()


@pytest.mark.parametrize(("argv", "bound"), [
    ([], "127.0.0.1 8000"),
    (["--listen", "9000"], "127.0.0.1 9000"),
    (["--listen", ":0"], "127.0.0.1 0"),
    (["--listen", "[::1]:7"], "::1 7"),
    (["--port", "0"], "127.0.0.1 0"),  # the old spellings: each replaces its part of --listen
    (["--host", "0.0.0.0"], "0.0.0.0 8000"),
    (["--listen", "localhost:1", "--port", "2"], "localhost 2"),
])
def test_listen_is_where_serve_and_demo_server_bind_and_host_and_port_still_work(argv, bound):
    from click.testing import CliRunner

    from mcpreel.cli.listen_options import listen_options

    @click.command()
    @listen_options(8000)
    def bind(host: str, port: int) -> None:
        click.echo(f"{host} {port}")

    result = CliRunner().invoke(bind, argv)
    assert result.exit_code == 0 and result.output.strip() == bound, result.output


def test_a_bad_listen_address_is_one_usage_line():
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["demo-server", "--transport", "streamable-http", "--listen", "host:port"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for '--listen': HOST:PORT with a port from 0 to 65535, got 'host:port'" in result.output
