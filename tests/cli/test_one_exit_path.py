"""One exit style: verbs raise, :func:`mcpreel.cli.output.run_command` alone ends the process.

A difference found is ``DifferenceFound`` (exit 1), bad input any other ``McpreelError`` (exit 2, one
line), and the library raises those rather than a bare ``ValueError`` for what a user gave it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mcpreel.cli import output
from mcpreel.errors import DifferenceFound, InputError, McpreelError, ProblemsReported, UsageError

SRC = Path(__file__).resolve().parents[2] / "src" / "mcpreel"
#: the only module that may end the process
EXIT_PATH = "cli/output.py"
#: files another engineer is rewriting this round (their exits move with their branch)
OWNED_ELSEWHERE = {"cli/record_cmd.py": "the recording engineer (issue 27)"}


def _exits(tree: ast.AST) -> list[tuple[int, str]]:
    """Calls of sys.exit / ctx.exit / <anything>.exit(code) on a click context, and raises of SystemExit or
    click's Exit, with their line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "exit":
            owner = node.func.value
            name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
            if name in ("sys", "ctx", "context", "os"):
                found.append((node.lineno, f"{name}.exit"))
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
            if name in ("SystemExit", "Exit"):
                found.append((node.lineno, f"raise {name}"))
    return found


def test_the_scan_finds_each_exit_style():
    code = ("import sys\nsys.exit(1)\ndef f(ctx):\n    ctx.exit(2)\n    raise SystemExit(3)\n"
            "    raise click.exceptions.Exit(1)\n")
    assert sorted(_exits(ast.parse(code))) == [(2, "sys.exit"), (4, "ctx.exit"), (5, "raise SystemExit"),
                                               (6, "raise Exit")]


def test_only_the_one_exit_path_ends_the_process():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == EXIT_PATH or rel in OWNED_ELSEWHERE:
            continue
        for line, what in _exits(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{rel}:{line}: {what}")
    assert not offenders, "verbs raise (DifferenceFound, McpreelError) or call output.finish:\n" + "\n".join(offenders)


def _command(error: BaseException | None = None, code: int | None = None) -> click.Command:
    @click.command()
    @output.run_command
    def verb() -> None:
        click.echo("report")
        if error is not None:
            raise error
        output.finish(code)

    return verb


@pytest.mark.parametrize(("error", "code", "line"), [
    (DifferenceFound(), 1, ""),
    (DifferenceFound("3 requests were not in the recording"), 1, "error: 3 requests were not in the recording\n"),
    (ProblemsReported(), 2, ""),
    (InputError("line 3 is not JSON", path="s.jsonl"), 2, "error: s.jsonl: line 3 is not JSON\n"),
    (UsageError("unknown format 'x'"), 2, "error: unknown format 'x'\n"),
])
def test_an_error_is_one_line_or_none_and_its_exit_code(error, code, line):
    result = CliRunner().invoke(_command(error))
    assert result.exit_code == code
    assert result.stdout == "report\n"
    assert result.stderr == line


@pytest.mark.parametrize(("code", "exit_code"), [(0, 0), (None, 0), (1, 1), (2, 2)])
def test_a_verb_ends_with_its_reports_exit_code_through_finish(code, exit_code):
    result = CliRunner().invoke(_command(code=code))
    assert result.exit_code == exit_code
    assert result.stderr == ""


def test_every_error_of_the_tree_is_a_mcpreel_error_with_exit_2_but_a_difference():
    import mcpreel.errors as errors

    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, Exception)]
    assert all(issubclass(c, McpreelError) for c in classes)
    assert {c.__name__ for c in classes if c.exit_code != 2} == {"DifferenceFound"}
