"""The help that teaches: verbs grouped by what a person wants to do, examples, and ``mcpreel help TOPIC``.

- :data:`SECTIONS` orders ``mcpreel --help``: record, look, convert, verify, serve, CI, configure; a verb
  that no section names is listed under "Other" (so a new verb is never hidden, only unsorted).
- :func:`examples` makes the epilog every verb's help ends with: two or three command lines a person can
  paste. ``tests/cli/test_help.py`` parses each with the command line's own parser, so an example that
  names a renamed or removed option fails a test instead of a reader.
- :data:`TOPICS` are the short texts of ``mcpreel help formats|filters|rules|eras|names``, each pointing to
  the README section that says more.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

__all__ = ["SECTIONS", "TOPICS", "examples", "topic_text"]

#: the sections of ``mcpreel --help``, in order: (title, ((verb, its one line), ...)); the lines fit 80 columns
SECTIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Record", (
        ("record", "record a session: run it where the client starts its server"),
        ("proxy", "record, inspect, export, replay in qai's words (seed 003)"),
    )),
    ("Look", (
        ("inspect", "a session's rows, errors, unanswered calls and latencies"),
        ("tui", "browse a session, or watch a live proxy and hold its messages"),
        ("report", "a session as one self-contained HTML page"),
        ("index", "index many session files (for sessions, show, query)"),
        ("sessions", "find indexed sessions: by server, tool, failure, client, time"),
        ("show", "one indexed operation: its request and its answer"),
        ("query", "SQL on the index of many sessions"),
    )),
    ("Convert", (
        ("convert", "a session file in another format (mcpreel help formats)"),
        ("import", "a session as a normalized tool-call trace (Assay V2)"),
        ("trace", "import-mcp: the importer in assay's words"),
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
        ("demo", "the whole tour on the demo server, in about 4 s"),
    )),
    ("CI", (
        ("contract", "snapshot a server's tools; class every later change"),
        ("audit", "a safety lint of a recording or a live server"),
    )),
    ("Configure", (
        ("wrap", "make your MCP clients record every session they have"),
        ("unwrap", "put the clients' server entries back as they were"),
        ("help", "what a word means: formats, filters, rules, eras, names"),
    )),
)


def examples(*lines: str) -> str:
    """An epilog of command lines, kept as written (``\\b``: click does not rewrap it). A line may end in
    ``  # a comment``; the test that runs the examples drops it."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def _formats() -> str:
    from mcpreel.formats import FORMATS

    rows = []
    for spec in FORMATS.values():
        rw = "read/write" if spec.reads and spec.writes else "read" if spec.reads else "write"
        aliases = f" (also: {', '.join(spec.aliases)})" if spec.aliases else ""
        head = f"  {spec.name:<20} {rw:<11}"
        rows.append(textwrap.fill(f"{spec.description}{aliases}", width=100, initial_indent=head,
                                  subsequent_indent=" " * len(head), break_on_hyphens=False))
    return "\n".join([
        "Session formats (--format, --from, --to take these names; auto sniffs a file's content and picks an",
        "output format from its name: .jsonl reel, .qai.json/.json qai, .har har, .trace.jsonl assay-v2):",
        "",
        *rows,
        "",
        "  mcpreel convert session.qai.json session.jsonl",
        "  mcpreel convert session.jsonl capture.har --to har",
        "",
        "More: README, 'Convert, inspect, merge, redact' (what each format keeps, other recorders' files).",
    ])


def _filters() -> str:
    from mcpreel.control.filters import KEYS

    return "\n".join([
        "Filter tokens: record --intercept FILTER, the viewer's / (mcpreel tui --filter) and --rules `match`.",
        f"Keys: {', '.join(KEYS)}.",
        "Different keys must all match (AND); the same key twice matches either (OR).",
        "",
        "  method:tools/call          the JSON-RPC method",
        "  tool:search                params.name of a tools/call",
        "  dir:c2s | dir:s2c          client -> server | server -> client (also: dir:out | dir:in, as",
        "                             mcpsnoop says it: out is what goes out to the server)",
        "  kind:request               request, response or notification",
        "  status:error | status:ok   a failed (error or isError) / a successful response",
        "  id:7                       the JSON-RPC id, compared as text",
        "  text:WORDS, bare words     a substring of the message's JSON, any case",
        "",
        "  mcpreel record --intercept 'dir:c2s tool:search' -o s.jsonl -- python my_server.py",
        "  mcpreel tui session.jsonl --filter 'status:error'",
        "",
        "A reel file stores the direction as \"dir\": \"in\" (into the server, c2s) or \"out\" (s2c): the file",
        "format keeps its words; everything mcpreel shows says c2s/s2c (C→S/S→C in lists).",
        "More: README, 'Watch live, hold, edit, drop (the control channel)'.",
    ])


def _rules() -> str:
    return "\n".join([
        "Fault injection rules (--rules FILE on record, proxy start and serve): a JSON or YAML file of rules",
        "tried in order; the first that matches (filter tokens in `match`) and is not spent acts:",
        "delay, rewrite (a JSONPath and a value), drop, fail (a JSON-RPC error), close, timeout, malformed.",
        "Every action is recorded with decided_by rules:NAME; a bad file is one line naming the rule.",
        "",
        "  mcpreel serve session.jsonl --rules faults.yaml",
        "  mcpreel record --rules faults.yaml -o s.jsonl -- python my_server.py",
        "",
        "Other rules files: `mcpreel redact --rules` (what to redact) and `mcpreel audit --rules` (lint rules).",
        "More: README, 'Fault injection: rules without a person'.",
    ])


def _eras() -> str:
    from mcpreel.eras import LEGACY, LEGACY_PROTOCOLS, MODERN, MODERN_PROTOCOL, era_name

    return "\n".join([
        "MCP has two protocol eras; every verb names them with the same words (the values of --era):",
        "",
        f"  {LEGACY:<8} {era_name(LEGACY)}: initialize, then requests on that connection",
        f"           (protocol versions {', '.join(LEGACY_PROTOCOLS)})",
        f"  {MODERN:<8} {era_name(MODERN)}: no handshake; server/discover, and every request",
        f"           carries its protocol plumbing in params._meta (protocol version {MODERN_PROTOCOL})",
        "  auto     each session in its own era (replay), each era the server answers (check)",
        "",
        "  mcpreel replay session.jsonl --target-command 'python server.py' --era modern",
        "  mcpreel check http://127.0.0.1:8000/mcp --era legacy",
        "",
        "A recording of one era replays and serves in the other: the client side is translated.",
        "More: README, 'Check a server; the demo' (Both protocol eras) and 'One reading of a session'.",
    ])


def _names() -> str:
    from mcpreel.cli.vocabulary import CONCEPTS

    rows = [f"  {(c.short + '/' if c.short else '') + c.name:<22} {c.what}" for c in CONCEPTS]
    return "\n".join([
        "One name per concept on every verb (older spellings still work, hidden from --help):",
        "",
        *rows,
        "  SESSION                a session file given as an argument (any readable format)",
        "",
        "Directions are c2s (client -> server) and s2c (server -> client); eras: mcpreel help eras.",
    ])


#: ``mcpreel help TOPIC`` -> the text's maker (made on demand: formats reads the format table)
TOPICS: dict[str, Callable[[], str]] = {
    "formats": _formats,
    "filters": _filters,
    "rules": _rules,
    "eras": _eras,
    "names": _names,
}


def topic_text(name: str) -> str:
    return TOPICS[name]()
