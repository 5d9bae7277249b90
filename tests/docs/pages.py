"""Where the docs live, for the tests that hold the docs to the code (issue 39: a short README and a site).

The README is the front page; the site's pages are ``docs/**/*.md`` and the reference pages that double as
``mcpreel help TOPIC`` (``src/mcpreel/cli/topics/*.md``, shown on the site as ``reference/TOPIC.md``). A test
that reads what the docs say about something reads it here, by the page that says it.
"""

from __future__ import annotations

from pathlib import Path

from mcpreel.cli.helptext import TOPIC_NAMES, topic_markdown

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
TOPICS = ROOT / "src" / "mcpreel" / "cli" / "topics"


def topic(name: str) -> str:
    """A reference page as the site renders it and ``mcpreel help NAME`` reads it (its markers filled in)."""
    return topic_markdown(name)


def page(rel: str) -> str:
    """A page of the site by its path under ``docs/`` (``guides/replay-in-ci.md``); a topic's
    ``reference/NAME.md`` is read from the package, where it lives."""
    name = rel.removeprefix("reference/").removesuffix(".md")
    if rel.startswith("reference/") and name in TOPIC_NAMES:
        return topic(name)
    return (DOCS / rel).read_text(encoding="utf-8")


def all_pages() -> dict[str, str]:
    """Every page a reader may open: ``README.md``, each ``docs/`` page by its path there, each topic as
    ``reference/NAME.md`` (with its markers filled in)."""
    pages = {"README.md": README.read_text(encoding="utf-8")}
    for path in sorted(DOCS.rglob("*.md")):
        pages[path.relative_to(DOCS).as_posix()] = path.read_text(encoding="utf-8")
    for name in TOPIC_NAMES:
        pages[f"reference/{name}.md"] = topic(name)
    return pages


def docs_text() -> str:
    """All of the docs as one text, for a test that pins a sentence wherever it is said."""
    return "\n\n".join(all_pages().values())


def command_lines(text: str, languages: tuple[str, ...] = ("sh",)) -> list[str]:
    """The ``mcpreel ...`` lines of a page's code blocks in ``languages`` (a line continued with ``\\`` joined;
    blocks indented inside a tab or a list count too)."""
    lines, block, pending = [], False, ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("```"):
            block = not block and stripped[3:].strip() in languages
            continue
        if not block:
            continue
        joined = pending + stripped
        if joined.endswith("\\"):
            pending = joined[:-1] + " "
            continue
        pending = ""
        if joined.startswith("mcpreel "):
            lines.append(joined)
    return lines
