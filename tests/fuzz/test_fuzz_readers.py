"""Fuzz every reader through the CLI: mutated fixtures end in exit 0, or exit 2 with one line and no output.

Issue 12 found 752 tracebacks by mutating the public fixtures; this keeps that class away. Each example
takes one fixture of one format family from ``../shared/fixtures``, damages it (a field's type changed, a
member or element deleted, a lone surrogate, a huge number, a truncation, bytes flipped) and runs one verb
on it in-process through the CLI's click entry: ``import``, ``inspect`` or ``convert`` to one writer.

``MCPREEL_FUZZ_N`` sets the examples per family (``make fuzz N=100000``); the default keeps ``make test``
quick and derandomized (so a CI run never fails on a case no one can replay), the big run is random.
``MCPREEL_FUZZ_REPORT`` names a file that gets one JSON line per family with the cases that really ran and
their verdicts (hypothesis may stop short of ``max_examples``: the count written down is the one counted).
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.cli import cli
from tests.conftest import FIXTURES, needs_shared

pytestmark = needs_shared

N = int(os.environ.get("MCPREEL_FUZZ_N") or 200)
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


@st.composite
def mutated(draw: st.DrawFn, files: list[Path]) -> bytes:
    data = draw(st.sampled_from(files)).read_bytes()
    parsed = _parse(data)
    how = draw(st.sampled_from(["type", "type", "type", "delete", "delete", "truncate", "bytes"]
                               if parsed else ["truncate", "bytes"]))
    if how == "truncate":
        return data[:draw(st.integers(0, max(0, len(data) - 1)))]
    if how == "bytes":
        data = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            if not data:
                break
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    assert parsed is not None
    kind, doc = parsed
    for _ in range(draw(st.integers(1, 3))):
        paths = _nodes(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _at(doc, path[:-1])
        if how == "delete":
            del parent[path[-1]]
        else:
            # a copy: a shared [] put in two places (or into itself) would change ODD_VALUES between examples
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES) | st.text(max_size=6) | st.integers()))
    if kind == "json":
        return json.dumps(doc).encode()
    return b"".join(json.dumps(line).encode() + b"\n" for line in doc)


def _run(data: bytes, name: str, verb: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / name
        src.write_bytes(data)
        out = Path(tmp) / "out"
        if verb == "import":
            args = ["import", str(src), "--out-trace", str(out)]
        elif verb == "inspect":
            args = ["inspect", str(src)]
        else:
            args = ["convert", str(src), str(out), "--to", verb.split(":", 1)[1]]
        result = CliRunner().invoke(cli, args)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"{verb} on damaged {name}: traceback") from result.exception
        assert result.exit_code in (0, 2), (verb, result.exit_code, result.output[-500:])
        if result.exit_code == 2:
            said = result.stderr.rstrip("\n").split("\n")  # one line: NEL or U+2028 in a quoted value are not breaks
            assert len(said) == 1 and said[0].startswith("error:"), (verb, result.stderr[-500:])
            assert not out.exists(), f"{verb} left {out.name} behind after exit 2"
            assert sorted(p.name for p in Path(tmp).iterdir()) == [name], "a temporary file was left"
        return result.exit_code


@pytest.mark.parametrize("family", sorted(FAMILIES) or ["(no fixtures)"])
def test_damaged_fixtures_exit_0_or_one_line_exit_2(family: str) -> None:
    files = FAMILIES[family]
    verdicts: Counter[str] = Counter()
    started = time.monotonic()

    @settings(max_examples=N, deadline=None, database=None, derandomize="MCPREEL_FUZZ_N" not in os.environ,
              suppress_health_check=list(HealthCheck))
    @given(data=mutated(files), verb=st.sampled_from(VERBS), suffix=st.sampled_from([".json", ".jsonl", ""]))
    def run(data: bytes, verb: str, suffix: str) -> None:
        verdicts[f"exit {_run(data, 'in' + suffix, verb)}"] += 1

    run()
    report = os.environ.get("MCPREEL_FUZZ_REPORT")
    if report:
        line = {"family": family, "cases": sum(verdicts.values()), **dict(sorted(verdicts.items())),
                "tracebacks": 0, "seconds": round(time.monotonic() - started, 1)}
        with open(report, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
