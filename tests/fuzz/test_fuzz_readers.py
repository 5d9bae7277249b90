"""Fuzz every reader through the CLI: mutated fixtures end in exit 0, or exit 2 with one line and no output.

Issue 12 found 752 tracebacks by mutating the public fixtures; this keeps that class away. Each example
takes one fixture of one format family from ``../shared/fixtures``, damages it (a field's type changed, a
member or element deleted, a lone surrogate, a huge number, a truncation, bytes flipped) and runs one verb
on it in-process (the verb's own code past click's parsing, one input in a thousand through the whole
command line: :mod:`tests.fuzz.harness`): ``import``, ``inspect`` or ``convert`` to one writer.

``MCPREEL_FUZZ_N`` sets the inputs per family (``make fuzz N=100000``); the default keeps ``make test``
quick and derandomized (so a CI run never fails on a case no one can replay), the big run is random and
names the seed of each failing input. ``MCPREEL_FUZZ_REPORT`` names a file that gets one JSON line per family
with the cases run and their verdicts.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, needs_shared
from tests.fuzz.harness import Draw, count, damage_site, fuzz, run_cli, scratch, seed_of

pytestmark = needs_shared

N = count(200)
WRITERS = ("reel", "jsonrpc", "inspector", "streamable-http", "http-sse", "qai", "mcp-recorder",
           "mcp-cassette-pypi", "har", "assay-v2", "simple")
VERBS = ("import", "inspect", *(f"convert:{w}" for w in WRITERS))
#: values that a field's type is changed to: every JSON type, the extremes and the text UTF-8 cannot hold
ODD_VALUES: list[Any] = [None, True, 0, -1, 1.5, 10**30, -(10**30), 1e308, "", "x", "\ud800", "a\udc00b",
                         "http://[]:8000", "9999-99-99T99:99:99Z", [], [1], {}, {"a": None}]


def _families() -> dict[str, list[Path]]:
    """Fixture files by format family: a folder of ``fixtures`` (``hub/<tool>`` for the hub's)."""
    out: dict[str, list[Path]] = {}
    if not FIXTURES.is_dir():
        return out
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix == ".md":
            continue
        rel = path.relative_to(FIXTURES).parts
        family = "/".join(rel[:2]) if rel[0] == "hub" and len(rel) > 2 else rel[0]
        out.setdefault(family, []).append(path)
    return out


FAMILIES = _families()


def _parse(data: bytes) -> tuple[str, Any] | None:
    """The fixture as JSON (one document) or JSONL (a list of documents), or None when it is neither."""
    try:
        return "json", json.loads(data)
    except ValueError:
        pass
    try:
        return "jsonl", [json.loads(line) for line in data.splitlines() if line.strip()]
    except ValueError:
        return None


def _nodes(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a member or element of ``doc`` (the root excluded)."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        out.append((*path, key))
        out.extend(_nodes(value, (*path, key)))
    return out


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def mutated(d: Draw, files: list[Path]) -> bytes:
    """A fixture with one kind of damage: 1-3 values' types changed or members deleted, a truncation, or
    flipped bytes."""
    seed = seed_of(d, d.pick(files), _parse, _nodes)
    data = seed.data
    how = d.pick(["type", "type", "type", "delete", "delete", "truncate", "bytes"] if seed.kind else ["truncate", "bytes"])
    if how == "truncate":
        return data[:d.int(0, max(0, len(data) - 1))]
    if how == "bytes":
        out = bytearray(data)
        for _ in range(d.int(1, 4)):
            if not out:
                break
            out[d.int(0, len(out) - 1)] = d.int(0, 255)
        return bytes(out)
    doc = seed.doc()
    for _ in range(d.int(1, 3)):
        site = damage_site(d, doc, seed.paths)
        if site is None:
            break
        parent, key, _ = site
        if how == "delete":
            del parent[key]
        else:
            # a copy: a shared [] put in two places (or into itself) would change ODD_VALUES between inputs
            parent[key] = odd_value(d)
    if seed.kind == "json":
        return json.dumps(doc).encode()
    return b"".join(json.dumps(line).encode() + b"\n" for line in doc)


def odd_value(d: Draw) -> Any:
    """A value of :data:`ODD_VALUES` (a copy), a short text or an integer."""
    which = d.int(0, 3)
    if which == 0:
        return d.text(6)
    if which == 1:
        return d.integer()
    return copy.deepcopy(d.pick(ODD_VALUES))


def _run(data: bytes, name: str, verb: str) -> str:
    box = scratch()
    src = box.case / name
    src.write_bytes(data)
    out = box.case / "out"
    if verb == "import":
        args = ["import", str(src), "--out-trace", str(out)]
    elif verb == "inspect":
        args = ["inspect", str(src)]
    else:
        args = ["convert", str(src), str(out), "--to", verb.split(":", 1)[1]]
    code = run_cli(args, box.case, {name})
    assert code != 2 or not out.exists(), f"{verb} left {out.name} behind after exit 2"
    return f"exit {code}"


@pytest.mark.parametrize("family", sorted(FAMILIES) or ["(no fixtures)"])
def test_damaged_fixtures_exit_0_or_one_line_exit_2(family: str) -> None:
    files = FAMILIES[family]

    def make(d: Draw) -> dict[str, Any]:
        return {"data": mutated(d, files), "verb": d.pick(VERBS), "name": "in" + d.pick([".json", ".jsonl", ""])}

    fuzz(family, make, _run, N)
