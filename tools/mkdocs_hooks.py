"""MkDocs hooks (``mkdocs.yml``: ``hooks``): the site's pages that come from the code.

- ``reference/TOPIC.md`` for every ``mcpreel help TOPIC``: the Markdown files shipped in the package
  (``src/mcpreel/cli/topics/``) are served as the reference pages, so the site and the terminal read one file.
- Every page's ``<!-- mcpreel:NAME -->`` markers are filled in by the command line's own code
  (``mcpreel.cli.helptext.expand``): the format table, the one names, every verb's ``--help``, the
  Action's inputs from ``action.yml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from mkdocs.structure.files import File, Files

from mcpreel.cli.help_cmd import cli_reference
from mcpreel.cli.helptext import TOPIC_NAMES, expand

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ROOT / "src" / "mcpreel" / "cli" / "topics"


def on_files(files: Files, config: Any) -> Files:
    """Add the topic pages as ``reference/NAME.md`` (a page of that name under ``docs/`` too is refused)."""
    for name in TOPIC_NAMES:
        uri = f"reference/{name}.md"
        if files.get_file_from_path(uri) is not None:
            raise ValueError(f"docs/{uri} and src/mcpreel/cli/topics/{name}.md: one page, two sources")
        files.append(File.generated(config, uri, abs_src_path=str(TOPICS / f"{name}.md")))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Markers filled in from the code (an unknown one fails the build)."""
    return expand(markdown, {"cli-reference": cli_reference, "action-inputs": action_inputs})


def action_inputs() -> str:
    """The Action's inputs and outputs as ``action.yml`` declares them (its one source)."""
    doc = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    rows = ["| input | default | meaning |", "|---|---|---|"]
    for name, spec in doc.get("inputs", {}).items():
        default = "(required)" if spec.get("required") else f"`{spec.get('default', '')}`"
        rows.append(f"| `{name}` | {default} | {' '.join(str(spec.get('description', '')).split()).replace('|', '/')} |")
    rows += ["", "| output | meaning |", "|---|---|"]
    for name, spec in doc.get("outputs", {}).items():
        rows.append(f"| `{name}` | {' '.join(str(spec.get('description', '')).split()).replace('|', '/')} |")
    return "\n".join(rows)
