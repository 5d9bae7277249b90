"""The GitHub Action's release step: move its major tag (``v1``) to the current commit, once ``action.yml`` is valid.

    python tools/action_tag.py [--tag v1] [--dry-run]        # make action-tag [TAG=v1] [DRY_RUN=1]
    git push --force origin v1                                # then publish it (it says so)

Why a script: workflows say ``uses: mcpreel/mcpreel@v1``, and a tag is not something a reviewed commit can
carry, so the step that makes ``@v1`` mean "this commit" has to be one anyone can re-run and get the same.
It refuses, in one line and exit 2, leaving every tag as it was, when:

- ``action.yml`` is not a valid composite Action (a name and description; ``runs.using: composite`` with
  steps; each input and output described; every ``inputs.X`` a step reads declared and every declared input
  read; each script a ``run`` step names present and valid bash);
- ``action.yml`` or ``.github/actions/`` has uncommitted changes (the tag would name a commit without them);
- the tag is not a major version tag (``vN``).

Then ``git tag --force --annotate TAG HEAD`` (moved if it existed, made if not), and it prints what moved
and the push command; pushing is left to the person releasing. ``--dry-run`` checks and says what it would do.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: the major tag the docs' ``uses: mcpreel/mcpreel@v1`` names
DEFAULT_TAG = "v1"
#: what is released with the tag: an uncommitted change here would not be in the tagged commit
ACTION_FILES = ("action.yml", ".github/actions")
_SCRIPT = re.compile(r"\.github/actions/scripts/([\w.-]+\.sh)")


class Refused(Exception):
    """The tag cannot be moved: the one line that says why."""


def check_action(root: Path) -> list[str]:
    """What is wrong with ``root/action.yml`` as a composite Action, one line each (empty: valid)."""
    path = root / "action.yml"
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return [f"{path}: cannot read it: {exc.strerror or exc}"]
    except yaml.YAMLError as exc:
        return [f"{path}: not YAML: {' '.join(str(exc).split())}"]
    if not isinstance(doc, dict):
        return [f"{path}: not a mapping of an Action's keys"]
    problems = [f"{path}: `{key}` is missing or empty" for key in ("name", "description")
                if not isinstance(doc.get(key), str) or not doc[key].strip()]
    runs = doc.get("runs") if isinstance(doc.get("runs"), dict) else {}
    steps = runs.get("steps")
    if runs.get("using") != "composite":
        problems.append(f"{path}: runs.using is {runs.get('using')!r}, not 'composite'")
    if not isinstance(steps, list) or not steps:
        problems.append(f"{path}: runs.steps is missing or empty")
        steps = []
    problems += _check_described(path, doc, "inputs") + _check_described(path, doc, "outputs")
    declared = set(doc.get("inputs") or {}) if isinstance(doc.get("inputs"), dict) else set()
    read: set[str] = set()
    for n, step in enumerate(steps, 1):
        if not isinstance(step, dict):
            problems.append(f"{path}: step {n} is not a mapping")
            continue
        read |= set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", yaml.safe_dump(step)))
        problems += _check_run_step(root, path, n, step)
    problems += [f"{path}: inputs.{name} is read by a step but not declared" for name in sorted(read - declared)]
    problems += [f"{path}: input {name} is declared but no step reads it" for name in sorted(declared - read)]
    return problems


def _check_described(path: Path, doc: dict[str, Any], key: str) -> list[str]:
    given = doc.get(key)
    if given is None:
        return []
    if not isinstance(given, dict):
        return [f"{path}: `{key}` is not a mapping"]
    return [f"{path}: {key}.{name} has no description" for name, spec in given.items()
            if not isinstance(spec, dict) or not str(spec.get("description") or "").strip()]


def _check_run_step(root: Path, path: Path, n: int, step: dict[str, Any]) -> list[str]:
    if "run" not in step:
        return [] if step.get("uses") else [f"{path}: step {n} has neither `run` nor `uses`"]
    if not step.get("shell"):
        return [f"{path}: step {n} runs a command without `shell` (a composite step needs one)"]
    problems = []
    for script in _SCRIPT.findall(str(step["run"])):
        file = root / ".github" / "actions" / "scripts" / script
        if not file.is_file():
            problems.append(f"{path}: step {n} runs {file.relative_to(root)}, which does not exist")
            continue
        syntax = subprocess.run(["bash", "-n", str(file)], capture_output=True, text=True)
        if syntax.returncode != 0:
            said = (syntax.stderr.strip().splitlines() or ["bash -n failed"])[0]
            problems.append(f"{file.relative_to(root)}: not valid bash: {said}")
    return problems


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)


def _commit_of(root: Path, ref: str) -> str | None:
    found = _git(root, "rev-parse", "-q", "--verify", f"{ref}^{{commit}}")
    if found.returncode != 0:
        return None
    return found.stdout.strip() or None


def move_tag(root: Path, tag: str, *, dry_run: bool = False) -> str:
    """Check, then move ``tag`` to HEAD; the line that says what happened (raises :class:`Refused`)."""
    if not re.fullmatch(r"v[1-9][0-9]*", tag):
        raise Refused(f"{tag!r} is not a major version tag (v1, v2, ...): release tags such as v1.4.0 are made by hand")
    problems = check_action(root)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise Refused(f"action.yml is not valid, {tag} left as it was: {problems[0]}{more}")
    head = _commit_of(root, "HEAD")
    if head is None:
        raise Refused(f"{root} is not a git repository with a commit: nothing to tag")
    dirty = _git(root, "status", "--porcelain", "--", *ACTION_FILES).stdout.strip()
    if dirty:
        raise Refused(f"uncommitted changes to the Action ({dirty.splitlines()[0].strip()}): commit them first, "
                      f"or {tag} would name a commit without them")
    before = _commit_of(root, f"refs/tags/{tag}")
    was = f"from {before[:12]}" if before else "(new)"
    if before == head:
        return f"{tag} is already at {head[:12]}: nothing to move"
    if dry_run:
        return f"would move {tag} {was} to {head[:12]} (action.yml is valid)"
    made = _git(root, "tag", "--force", "--annotate", tag, "-m", f"mcpreel Action {tag}: {head[:12]}", head)
    if made.returncode != 0:
        raise Refused(f"git tag {tag} failed: {(made.stderr.strip().splitlines() or ['no reason given'])[-1]}")
    return f"moved {tag} {was} to {head[:12]}; publish it: git push --force origin {tag}"


def main(argv: list[str] | None = None) -> int:
    """The command line: 0 moved (or would), 2 refused, one line either way."""
    parser = argparse.ArgumentParser(description="Move the GitHub Action's major tag to the current commit, once "
                                                 "action.yml is checked (the Action's release step).")
    parser.add_argument("--tag", default=DEFAULT_TAG, help=f"the major tag to move (default: {DEFAULT_TAG})")
    parser.add_argument("--dry-run", action="store_true", help="check and say what would move; move nothing")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this checkout)")
    args = parser.parse_args(argv)
    try:
        print(move_tag(args.root.resolve(), args.tag, dry_run=args.dry_run))
    except Refused as exc:
        print(f"action-tag: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
