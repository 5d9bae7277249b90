"""The help that teaches: verbs grouped by what a person wants to do, examples, and ``mcpreel help TOPIC``.

- :data:`SECTIONS` orders ``mcpreel --help``: record, look, convert, verify, serve, CI, configure; a verb
  that no section names is listed under "Other" (so a new verb is never hidden, only unsorted).
- :func:`examples` makes the epilog every verb's help ends with: two or three command lines a person can
  paste. ``tests/cli/test_help.py`` parses each with the command line's own parser, so an example that
  names a renamed or removed option fails a test instead of a reader.
- :data:`TOPICS` are the pages of ``mcpreel help TOPIC``: Markdown files shipped inside the package
  (``mcpreel/cli/topics/*.md``), which are also the docs site's reference pages (``tools/mkdocs_hooks.py``
  serves them as ``reference/TOPIC.md``), so the site and the terminal say the same words and cannot drift.
  A page may hold ``<!-- mcpreel:NAME -->`` markers for text made from the code (:data:`GENERATED`: the
  format table, the one names); both readers fill them in the same way (:func:`expand`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from importlib import resources

__all__ = ["GENERATED", "SECTIONS", "TOPICS", "TOPIC_NAMES", "examples", "expand", "topic_markdown", "topic_text"]

#: the sections of ``mcpreel --help``, in order: (title, ((verb, its one line), ...)); the lines fit 80 columns
SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Record", (
        ("record", "record a session: run it where the client starts its server"),
        ("proxy", "record, inspect, export, replay with qai session files"),
    )),
    ("Look", (
        ("inspect", "a session's rows, errors, unanswered calls and latencies"),
        ("tui", "browse a session, or watch a live proxy and hold its messages"),
        ("report", "a session as one self-contained HTML page"),
        ("index", "index many session files (for sessions, show, query)"),
        ("calls", "find indexed calls: failed, slow, by tool, server, time (--since yesterday)"),
        ("sessions", "find indexed sessions: by server, tool, failure, client, time"),
        ("show", "one indexed operation: its request and its answer"),
        ("query", "SQL on the index of many sessions"),
    )),
    ("Convert", (
        ("convert", "a session file in another format (mcpreel help formats)"),
        ("import", "a session as a normalized tool-call trace (Assay V2)"),
        ("trace", "import-mcp: the importer under Assay's command name"),
        ("merge", "several servers' sessions in one file, interleaved by time"),
        ("redact", "a copy of a session with its secrets replaced"),
        ("export", "otlp: a session as OpenTelemetry spans; parquet: the index as Parquet"),
    )),
    ("Verify", (
        ("replay", "re-send a recording to a server and compare every answer"),
        ("diff", "what changed between two recordings"),
        ("check", "does a live server follow MCP's rules (both eras)"),
    )),
    ("Serve", (
        ("serve", "a recording as an MCP server: a mock, a cassette"),
        ("demo-server", "mcpreel's demo MCP server (stdio or HTTP)"),
        ("mcp-server", "the corpus index as an MCP server, for an agent"),
        ("demo", "the whole tour on the demo server, in about 4 s"),
    )),
    ("CI", (
        ("contract", "snapshot a server's tools; class every later change"),
        ("audit", "a safety lint of a recording or a live server"),
    )),
    ("Configure", (
        ("wrap", "make your MCP clients record every session they have"),
        ("unwrap", "put the clients' server entries back as they were"),
        ("help", "the reference pages in the terminal: formats, eras, glossary"),
        ("completion", "the shell's Tab completion script (bash, zsh, fish)"),
    )),
)


def examples(*lines: str) -> str:
    """An epilog of command lines, kept as written (``\\b``: click does not rewrap it). A line may end in
    ``  # a comment``; the test that runs the examples drops it."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def _formats_table() -> str:
    """Every format name the readers and writers answer to, from the format table itself."""
    from mcpreel.formats import FORMATS

    rows = ["| name | reads / writes | what it is |", "|---|---|---|"]
    for spec in FORMATS.values():
        rw = "read / write" if spec.reads and spec.writes else "read" if spec.reads else "write"
        aliases = f" (also: {', '.join(f'`{a}`' for a in spec.aliases)})" if spec.aliases else ""
        rows.append(f"| `{spec.name}` | {rw} | {spec.description.replace('|', '/')}{aliases} |")
    return "\n".join(rows)


def _filter_keys() -> str:
    from mcpreel.control.filters import KEYS

    return ", ".join(f"`{key}`" for key in KEYS)


def _names_table() -> str:
    """The one spelling of each concept on every verb (``cli/vocabulary.py``)."""
    from mcpreel.cli.vocabulary import CONCEPTS

    rows = ["| option | what it names |", "|---|---|"]
    for c in CONCEPTS:
        name = f"`{c.short}` / `{c.name}`" if c.short else f"`{c.name}`"
        rows.append(f"| {name} | {c.what} |")
    rows.append("| `SESSION` | a session file given as an argument (any readable format) |")
    return "\n".join(rows)


def _eras_table() -> str:
    from mcpreel.eras import LEGACY, LEGACY_PROTOCOLS, MODERN, MODERN_PROTOCOL, era_name

    return "\n".join([
        "| `--era` | what every verb calls it | protocol versions |",
        "|---|---|---|",
        f"| `{LEGACY}` | {era_name(LEGACY)} | {', '.join(LEGACY_PROTOCOLS)} |",
        f"| `{MODERN}` | {era_name(MODERN)} | {MODERN_PROTOCOL} |",
        "| `auto` | each session in its own era (`replay`), each era the server answers (`check`) | |",
    ])


#: ``<!-- mcpreel:NAME -->`` in a page -> what the code makes in its place (the site and ``help`` alike)
GENERATED: dict[str, Callable[[], str]] = {
    "formats-table": _formats_table,
    "filter-keys": _filter_keys,
    "names-table": _names_table,
    "eras-table": _eras_table,
}

#: markers only the site fills in (from files outside the package); the terminal shows this line in their place
SITE_ONLY: dict[str, str] = {
    "action-inputs": "Every input, its meaning and its default: `action.yml` in the repository (and the docs site).",
    "cli-reference": "Every verb's help: `mcpreel VERB --help`.",
}

_MARKER = re.compile(r"<!-- mcpreel:([a-z-]+) -->")


def expand(markdown: str, extra: dict[str, Callable[[], str]] | None = None) -> str:
    """A page with each marker replaced by what :data:`GENERATED` (or ``extra``) makes; an unknown marker is
    a ``KeyError``, so a misspelled one fails the docs build and the tests instead of vanishing."""
    makers: dict[str, Callable[[], str]] = {name: partial(str, line) for name, line in SITE_ONLY.items()}
    makers.update(GENERATED)
    makers.update(extra or {})
    return _MARKER.sub(lambda m: makers[m.group(1)]().rstrip("\n"), markdown)


#: the topics, in the order ``mcpreel help`` lists them; each is ``topics/NAME.md`` in this package
TOPIC_NAMES: tuple[str, ...] = (
    "formats", "filters", "rules", "eras", "names", "exit-codes", "exposure", "reel", "compare", "corpus",
    "pytest", "action", "platforms", "glossary",
)


def topic_markdown(name: str) -> str:
    """The page of topic ``name`` as the site renders it (markers filled in), read from the package's data, so
    an installed wheel has it."""
    return expand(resources.files("mcpreel.cli").joinpath("topics", f"{name}.md").read_text(encoding="utf-8"))


_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _terminal_link(match: re.Match[str]) -> str:
    """A link as a terminal shows it: the text, then where it leads (a page of the docs, by its path)."""
    text, target = match.group(1), match.group(2)
    if target.startswith(("http://", "https://")):
        return f"{text} ({target})"
    page, _, anchor = target.partition("#")
    if not page:
        return text  # a heading of this same page
    where = page if page.startswith("../") else f"reference/{page}"
    where = where.removeprefix("../")
    return f"{text} (docs/{where}{'#' + anchor if anchor else ''})"


def topic_text(name: str) -> str:
    """``mcpreel help NAME``: the page's Markdown, its links spelled out as paths under ``docs/``."""
    return _LINK.sub(_terminal_link, topic_markdown(name))


#: ``mcpreel help TOPIC`` -> the text's maker (made on demand: formats reads the format table)
TOPICS: dict[str, Callable[[], str]] = {name: partial(topic_text, name) for name in TOPIC_NAMES}
