"""The docs' "Judged by the official conformance suite" tables, made by running the suite (never by hand).

For each requirement set and server (the 2025-11-25 scenarios of ``@modelcontextprotocol/conformance``
0.1.16 against server-everything and the official SDK's MCPServer; the 2026-07-28 requirements of
0.2.0-alpha.12 against the MCPServer) the
suite's server scenarios run against the server itself, through ``mcpreel record --transport
streamable-http`` and against ``mcpreel serve`` of that recording (:mod:`tests.conformance.suite`, the same
runs the tests make). The tables go into docs/explanation/conformance.md between the ``conformance-table`` markers.

    python bench/conformance_table.py [--page docs/explanation/conformance.md] [--era "2025-11-25 everything" ...] [--check]

``--check`` writes nothing and exits 1 when a scenario's verdict through mcpreel differs from the direct
one other than as the written exceptions say. Needs ``make peers`` (Node 22 and both suite releases).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.conformance.suite import ERAS, EXCEPTIONS, LEGS, Judgement, judge, missing_peers  # noqa: E402

START = "<!-- conformance-table:start (bench/conformance_table.py writes this part) -->"
END = "<!-- conformance-table:end -->"


def _cell(judged: Judgement, leg: str, scenario: str) -> str:
    verdict = judged.runs[leg].get(scenario)
    if verdict is None:
        return "absent"
    mark = "✓" if verdict.passed else "✗"
    text = f"{mark} {verdict.checks_passed}/{verdict.checks_passed + verdict.checks_failed}"
    direct = judged.runs["direct"].get(scenario)
    if leg != "direct" and direct is not None and direct.passed != verdict.passed:
        text = f"**{text}**"
    return text


def table(judged: Judgement) -> list[str]:
    era = judged.era
    notes: list[str] = []
    command = " ".join(("server", *era.suite_args))
    lines = [f"#### {era.name}, {era.server}: `@modelcontextprotocol/conformance@{era.suite_version} {command}` against "
             f"{era.server_label}", "", "| scenario | direct | recorded (through `mcpreel record`) | served (`mcpreel serve` of it) |",
             "|---|---|---|---|"]
    for scenario in judged.scenarios():
        name = scenario
        if (era.key, scenario) in EXCEPTIONS:
            notes.append(f"{len(notes) + 1}. `{scenario}`: {EXCEPTIONS[(era.key, scenario)]}.")
            name = f"{scenario} ({len(notes)})"
        lines.append(f"| {name} | " + " | ".join(_cell(judged, leg, scenario) for leg in LEGS) + " |")
    totals = []
    for leg in LEGS:
        runs = judged.runs[leg].values()
        totals.append(f"{sum(v.passed for v in runs)} of {len(runs)} scenarios pass")
    lines.append("| **total** | " + " | ".join(totals) + " |")
    same = [s for s in judged.scenarios() if all(s not in judged.differences(leg) for leg in ("recorded", "served"))]
    lines += ["", f"{len(same)} of {len(judged.scenarios())} scenarios get the direct verdict both through the proxy "
              f"and from the mock; the mock missed {judged.served_misses()} of the suite's requests."]
    if notes:
        lines += ["", *notes]
    return lines


def unexplained(judged: Judgement) -> list[str]:
    out = []
    for leg in ("recorded", "served"):
        for scenario, (a, b) in judged.differences(leg).items():
            if (judged.era.key, scenario) not in EXCEPTIONS:
                out.append(f"{judged.era.key} {leg} {scenario}: direct {a.describe() if a else 'absent'}, "
                           f"{leg} {b.describe() if b else 'absent'}")
    return out


def write_readme(readme: Path, body: list[str]) -> None:
    text = readme.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{readme}: the conformance-table markers are missing")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = head + START + "\n" + "\n".join(body) + "\n" + END + tail
    tmp = readme.with_name(readme.name + ".tmp")
    tmp.write_text(new)
    os.replace(tmp, readme)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--page", "--readme", dest="readme", type=Path,
                        default=ROOT / "docs" / "explanation" / "conformance.md",
                        help="the page whose conformance-table markers get the tables")
    parser.add_argument("--era", action="append", choices=sorted(ERAS), help="a requirement set and server "
                        "(repeatable; default: all)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 on an unexplained difference")
    args = parser.parse_args()
    body: list[str] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mcpreel-conformance-") as tmp:
        for name in args.era or sorted(ERAS):
            era = ERAS[name]
            why = missing_peers(era)
            if why is not None:
                raise SystemExit(f"cannot judge {name}: {why}")
            judged = judge(era, Path(tmp) / name.replace(" ", "-"))
            problems += unexplained(judged)
            body += [*table(judged), ""]
            print(f"{name}: {len(judged.scenarios())} scenarios judged", file=sys.stderr)
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    body.append(f"Made by `python bench/conformance_table.py` on {when}; a cell is the scenario's verdict and its "
                "checks passed of all; a bold cell differs from the direct verdict.")
    for line in problems:
        print(f"differs: {line}", file=sys.stderr)
    if args.check:
        return 1 if problems else 0
    write_readme(args.readme, body)
    print(f"wrote the conformance tables into {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
