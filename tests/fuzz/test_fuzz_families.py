"""The fuzz families that found issue 40's 153 tracebacks, which the readers' and loaders' fuzz did not:

- ``stacked``: 2 to 6 damages stacked on one fixture (a type changed, a member deleted, a value nested
  950 to 1,030 levels deep, a lone surrogate, a huge number, a list where an object belongs), then any verb;
- ``splice``: two fixtures of different formats cut and joined (bytes, JSON subtrees, JSON Lines);
- ``wrong-format``: a fixture read as a format it is not (``--format``/``--from``);
- ``encodings``: a fixture re-encoded (UTF-16/32, BOMs, Latin-1) or given bytes UTF-8 cannot hold;
- ``yaml-string-bombs``: MCP-VCR transcripts with a long anchored string aliased many times;
- ``corpus``: folders of damaged files with hostile names read by the indexer and loaded into DuckDB;
- ``otlp``: ``export otlp`` on damaged sessions, and the OTLP it wrote, damaged, read back;
- ``drafts``: the drafts' framings damaged: reels with raw ``bytes`` lines and the ``stdio-v2`` (HTTP/2)
  marker, SSE framing in HTTP envelopes, partial results, task status and subscription lifecycle notes.

Every case runs in-process (the verb's own code past click's parsing, one input in a thousand through the
whole command line; the indexer's own functions for a folder of many damaged files, each an input: see
:mod:`tests.fuzz.harness`) with a per-input limit (``SIGALRM``), and ends in exit 0 (1 where the verb found
something), or exit 2 with one line and nothing left behind. ``make test`` runs :data:`N` cases a family
(fewer than the readers' 200: these verbs cost more; derandomized); ``MCPREEL_FUZZ_N`` and
``MCPREEL_FUZZ_REPORT`` work as in :mod:`tests.fuzz.test_fuzz_readers`.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from mcpreel._infra.yamlload import ALIAS_BYTES
from tests.conftest import FIXTURES, needs_shared
from tests.fuzz.harness import (
    HANG_SECONDS,
    STATE,
    Draw,
    Hang,
    count,
    damage_site,
    fuzz,
    run_cli,
    scratch,
    seed_of,
)
from tests.fuzz.test_fuzz_readers import FAMILIES, ODD_VALUES, _at, _parse

pytestmark = needs_shared

#: cases a family in ``make test`` (the big run sets MCPREEL_FUZZ_N)
N = count(25)
WRITERS = ("reel", "jsonrpc", "inspector", "streamable-http", "http-sse", "qai", "mcp-recorder",
           "mcp-cassette-pypi", "har", "mcp-conformance")
VERBS = ("inspect", "inspect -v", "import", "export otlp", "export otlp content", "redact", "diff", "report",
         "audit", *(f"convert:{w}" for w in WRITERS))
READERS = ("reel", "jsonrpc", "inspector", "streamable-http", "http-sse", "qai", "langchain", "mcp-recorder",
           "mcpspy", "mcp-cassette-npm", "mcp-cassette-pypi", "mcp-vcr", "agent-vcr", "mcpsnoop",
           "inspector-network", "mcp-conformance", "otlp", "glassport")
#: values put where a member was: every JSON type, and the shapes that broke the walks (lists where an
#: object belongs, deep nesting is a damage of its own)
STACK_VALUES: list[Any] = [*ODD_VALUES, ["a", "b"], [{"a": 1}], {"headers": ["x"]}, {"exchange": [1]},
                           "\x1b]52;c;aGk=\x07", "a\rb", "\u2028", 10**40, -(2**63), 2**64]


def _paths(doc: Any, limit: int = 64) -> list[tuple[Any, ...]]:
    """Every path to a member or element of ``doc`` down to ``limit`` levels (iterative: a damage may have
    nested a value 1,000 levels deep, past what a recursive walk of the test itself takes)."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if len(path) >= limit:
            continue
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            out.append((*path, key))
            stack.append((value, (*path, key)))
    return out


def _files() -> list[Path]:
    return [p for family in sorted(FAMILIES) for p in FAMILIES[family]]


def _family_of(path: Path) -> str:
    rel = path.relative_to(FIXTURES).parts
    return "/".join(rel[:2]) if rel[0] == "hub" and len(rel) > 2 else rel[0]


def _deep(depth: int, kind: str) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


def _dump(kind: str, doc: Any) -> bytes:
    if kind == "json":
        return json.dumps(doc).encode("utf-8", "surrogatepass")
    return b"".join(json.dumps(line).encode("utf-8", "surrogatepass") + b"\n" for line in doc)


def _encode(kind: str, doc: Any) -> bytes:
    """``doc`` written back; a value json cannot write (nested past its recursion) written with room."""
    from mcpreel._infra.nesting import recursion_room

    with recursion_room(per_level=3):
        return _dump(kind, doc)


def stacked(d: Draw, files: list[Path]) -> bytes:
    """A fixture with 2 to 6 damages stacked (and now and then its bytes cut or flipped after them)."""
    seed = seed_of(d, d.pick(files), _parse, _paths)
    if seed.kind is None:
        return seed.data[: d.int(0, len(seed.data))]
    doc = seed.doc()
    for _ in range(d.int(2, 6)):
        site = damage_site(d, doc, seed.paths)
        if site is None:
            break
        parent, key, depth = site
        how = d.pick(["type", "type", "delete", "deep", "listify"])
        if how == "delete":
            del parent[key]
        elif how == "deep":
            # under the readers' limit (1,024 a line) by a few levels, or just past it
            parent[key] = _deep(d.int(940, 1030) - depth, d.pick(["list", "dict"]))
        elif how == "listify":
            parent[key] = [parent[key]]
        else:
            parent[key] = copy.deepcopy(d.pick(STACK_VALUES))
    out = _encode(seed.kind, doc)
    if d.int(0, 5) == 0:
        out = out[: d.int(0, len(out))]
    return out


def spliced(d: Draw, files: list[Path]) -> bytes:
    """Two fixtures of different formats made one: cut and joined, a subtree of one in the other, or their
    JSON lines interleaved."""
    a = d.pick(files)
    b = d.pick([p for p in files if _family_of(p) != _family_of(a)])
    sa, sb = seed_of(d, a, _parse, _paths), seed_of(d, b, _parse, _paths)
    da, db = sa.data, sb.data
    how = d.pick(["bytes", "subtree", "lines"])
    if how == "subtree" and sa.kind is not None and sb.kind is not None:
        doc, other = sa.doc(), sb.doc()
        site = damage_site(d, doc, sa.paths)
        where = d.pick(sb.paths) if sb.paths else None
        if site is not None and where is not None:
            site[0][site[1]] = _at(other, where)
            return _encode(sa.kind, doc)
    if how == "lines":
        la, lb = da.splitlines(keepends=True), db.splitlines(keepends=True)
        rng = random.Random(d.integer())
        out = la + lb
        rng.shuffle(out)
        return b"".join(out[: max(1, len(out) // 2)])
    return da[: d.int(0, len(da))] + db[d.int(0, len(db)):]


#: byte sequences UTF-8 cannot hold, or that change a text's meaning to a terminal or a line reader
BAD_BYTES = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00", b"\xef\xbb\xbf", b"\r", b"\x85",
             b"\xe2\x80\xa8", b"\x1b[2J", b"\x1b]52;c;aGk=\x07", b"\\ud800", b"\\udfff\\ud800", b"\xe9"]


def re_encoded(d: Draw, files: list[Path]) -> bytes:
    """A fixture re-encoded (UTF-16/32 with or without a BOM, Latin-1), its lines ended CRLF, a BOM in its
    middle, or bytes UTF-8 cannot hold put in it."""
    data = seed_of(d, d.pick(files), _parse, _paths).data
    how = d.pick(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "insert", "insert", "crlf", "bom-mid"])
    if how == "insert":
        out = bytearray(data)
        for _ in range(d.int(1, 5)):
            at = d.int(0, len(out))
            out[at:at] = d.pick(BAD_BYTES)
        return bytes(out)
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    if how == "bom-mid":
        cut = d.int(0, len(data))
        return data[:cut] + b"\xef\xbb\xbf" + data[cut:]
    text = data.decode("utf-8", "replace")
    if how == "latin-1":
        return text.encode("latin-1", "replace")
    bom = d.bool()
    encoded = text.encode(how)
    if how in ("utf-16", "utf-32") and not bom:
        encoded = encoded[2:] if how == "utf-16" else encoded[4:]
    return encoded


def _args(verb: str, src: Path, out: Path, other: Path) -> list[str]:
    if verb.startswith("inspect"):
        return ["inspect", *verb.split()[1:], str(src)]
    if verb == "import":
        return ["import", str(src), "--out-trace", str(out)]
    if verb.startswith("export otlp"):
        return ["export", "otlp", str(src), "-o", str(out), *(["--include-content"] if "content" in verb else [])]
    if verb == "redact":
        return ["redact", str(src), str(out), "--plain"]
    if verb == "diff":
        return ["diff", str(other), str(src)]
    if verb == "report":
        return ["report", str(src), "-o", str(out)]
    if verb == "audit":
        return ["audit", str(src)]
    return ["convert", str(src), str(out), "--to", verb.split(":", 1)[1]]


def _run_verb(data: bytes, verb: str, suffix: str = ".json", other: Path | None = None,
              forced: list[str] | None = None) -> str:
    tmp = scratch().case
    src, out = tmp / f"in{suffix}", tmp / "out"
    src.write_bytes(data)
    base = other or FIXTURES / "qai" / "qai_session_minimal.json"
    args = _args(verb, src, out, base) + (forced or [])
    started = time.monotonic()
    try:
        code = run_cli(args, tmp, {src.name}, found=True)
    except (AssertionError, Hang) as exc:
        _save(data, suffix, args)
        if time.monotonic() - started >= HANG_SECONDS:
            raise AssertionError(f"{' '.join(args[:2])}: hang (over {HANG_SECONDS} s)") from exc
        raise
    return f"exit {code}"


def _save(data: bytes, suffix: str, args: list[str]) -> None:
    """A failing input kept for its replay when ``MCPREEL_FUZZ_SAVE`` names a folder (with the verb's words)."""
    folder = os.environ.get("MCPREEL_FUZZ_SAVE")
    if folder:
        import hashlib

        name = hashlib.sha256(data).hexdigest()[:16]
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{name}{suffix}").write_bytes(data)
        (Path(folder) / f"{name}.args").write_text(" ".join(a if "/tmp" not in a else "FILE" for a in args))


def _limited(family: str, make: Any, run: Any) -> None:
    """:func:`~tests.fuzz.harness.fuzz` with this module's count."""
    fuzz(family, make, run, N)


# -- the families ------------------------------------------------------------------------------------------


def test_stacked_mutations() -> None:
    files = _files()
    _limited("families/stacked", lambda d: {"data": stacked(d, files), "verb": d.pick(VERBS),
                                            "suffix": d.pick([".json", ".jsonl", ""])}, _run_verb)


def test_splices_across_formats() -> None:
    files = _files()
    _limited("families/splice", lambda d: {"data": spliced(d, files), "verb": d.pick(VERBS),
                                           "suffix": d.pick([".json", ".jsonl"])}, _run_verb)


def test_forced_wrong_formats() -> None:
    files = _files()

    def run(path: Path, reader: str, verb: str) -> str:
        option = "--from" if verb.startswith(("convert", "redact")) else "--format"
        if verb == "diff":
            return _run_verb(path.read_bytes(), "diff", path.suffix, forced=["--format", reader])
        return _run_verb(path.read_bytes(), verb, path.suffix, forced=[option, reader])

    verbs = ("inspect", "inspect -v", "import", "export otlp", "redact", "report", *(f"convert:{w}" for w in WRITERS[:6]))
    _limited("families/wrong-format", lambda d: {"path": d.pick(files), "reader": d.pick(READERS),
                                                 "verb": d.pick(verbs)}, run)


def test_broken_encodings() -> None:
    files = _files()
    _limited("families/encodings", lambda d: {"data": re_encoded(d, files), "verb": d.pick(VERBS),
                                              "suffix": d.pick([".json", ".jsonl", ""])}, _run_verb)


VCR_META = "meta: {version: 1, session_id: s1, server_command: [python, server.py], schema_version: '1.0'}\n"


#: the YAML loader's byte budget: what aliases may add to a document
BOMB_BUDGET = ALIAS_BYTES


def _log_uniform(d: Draw, top: int) -> int:
    """1 to ``top``, as likely in each decade (a long string and many aliases both, and every size between)."""
    return min(top, max(1, round(top ** d.rng.random())))


def string_bomb(d: Draw) -> bytes:
    """An MCP-VCR transcript with a long anchored string aliased many times (few nodes, many bytes), or a
    few times (within the budget), at a place a reader walks. Lengths to 250,000 and alias counts to 2,000,
    each as likely in every decade, cross the 16 MB budget (200 KB x 100 aliases) in about one input in
    ten; now and then the family's first sizes, and 5,000 or 20,000 aliases."""
    length, aliases = _log_uniform(d, 250_000), _log_uniform(d, 2_000)
    if d.int(0, 3) == 0:  # the sizes the family began with (a third of them past the 16 MB byte budget)
        length = d.pick([10, 1000, 100_000, 200_000])
    if d.int(0, 19) == 0:  # many aliases (the reader's measure walks each): 1 in 20, they cost the most
        aliases = d.pick([5000, 20_000])
    over = BOMB_BUDGET // length + 1  # the fewest aliases of this string that cross the byte budget
    if (1 << 20) < length * aliases <= BOMB_BUDGET and d.int(0, 9):
        # a document the budget lets through costs every verb its expanded size (up to 16 MB of text through
        # the redactor's patterns): 9 in 10 of them moved under 1 MB, or just past the budget
        aliases = over + d.int(0, 50) if over <= 20_000 and d.bool() else max(1, (1 << 20) // length)
    where = d.pick(["params", "result", "meta", "key"])
    head = f"big: &big {'x' * length}\nrefs: [{', '.join(['*big'] * aliases)}]\n"
    # where a reader walks, up to 4 of the aliases (1 MB at most once expanded): the budget is measured on
    # the whole document (the ``refs`` list holds them all); what it lets through costs its size to every
    # verb (``inspect`` runs the redactor's patterns over each copy), and a bomb is not a big file
    refs = "[" + ", ".join(["*big"] * min(aliases, 4)) + "]"
    if where == "meta":
        return (VCR_META.replace("version: 1,", f"version: 1, label: {refs},") + head
                + "messages:\n  - {t: 0, dir: c2s, payload: {jsonrpc: '2.0', id: 1, method: ping}}\n").encode()
    payload = {"params": f"{{jsonrpc: '2.0', id: 1, method: tools/call, params: {{name: t, arguments: {{a: {refs}}}}}}}",
               "result": f"{{jsonrpc: '2.0', id: 1, result: {{content: {refs}}}}}",
               "key": "{jsonrpc: '2.0', id: 1, method: tools/call, params: {? *big : 1}}"}[where]
    return (VCR_META + head + "messages:\n"
            "  - {t: 0, dir: c2s, payload: {jsonrpc: '2.0', id: 1, method: tools/call, params: {name: t}}}\n"
            f"  - {{t: 1, dir: s2c, payload: {payload}}}\n").encode()


def test_yaml_string_alias_bombs() -> None:
    verbs = ("inspect", "inspect -v", "import", "convert:reel", "convert:qai", "convert:har", "export otlp content",
             "redact", "diff")
    _limited("families/yaml-string-bombs", lambda d: {"data": string_bomb(d), "verb": d.pick(verbs),
                                                      "suffix": ".yaml"}, _run_verb)


#: file names a corpus folder may hold: not UTF-8, a carriage return, a newline, quotes and commas (the
#: spool is CSV), long, and a name that looks like SQL
NAMES = [b"plain.json", b"caf\xe9.json", b"cr\rname.jsonl", b"nl\nname.json", b'q"u,o\'te.json', b"x" * 240 + b".json",
         b"'; DROP TABLE files; --.jsonl", b"\xff\xfe.jsonl", b"tab\tname.json", b"%_wild.json"]


def corpus_file(d: Draw, files: list[Path]) -> tuple[bytes, bytes]:
    """One file of a corpus folder: a hostile name and damaged bytes (stacked, re-encoded or spliced)."""
    return d.pick(NAMES), d.pick([stacked, re_encoded, spliced])(d, files)


#: damaged files in one folder indexed in one pass (each an input), in the big run and in ``make test``
CORPUS_BATCH = 100 if os.environ.get("MCPREEL_FUZZ_N") else 5


def test_corpus_folders() -> None:
    """The indexer's reading (names, bytes, the accumulator) and DuckDB's load of its spools, for folders
    of damaged files with hostile names: every file is a row (read, or stored with its one-line error).
    A folder holds :data:`CORPUS_BATCH` inputs, read in one pass and loaded through one connection; a
    folder that fails is read again a file at a time (the harness), and now and then the whole ``index``
    verb reads the folder too."""
    from mcpreel.corpus.db import connect
    from mcpreel.corpus.index import _Chunk, _read_batches

    files = _files()
    state: dict[str, Any] = {}

    def run(inputs: list[dict[str, Any]]) -> list[str]:
        box = scratch()
        if "con" not in state:
            state["db"] = box.root / "fuzz.duckdb"
            state["con"] = connect(state["db"], read_only=False)
            state["next"] = 1
        con = state["con"]
        root = box.case / "c"
        root.mkdir()
        spool = box.case / "spool"
        spool.mkdir()
        todo = []
        for i, case in enumerate(inputs):
            name, data = case["file"]
            path = Path(os.fsdecode(os.path.join(os.fsencode(root), b"%d-" % i + name)))
            path.write_bytes(data)
            todo.append((path, path.stat(), "h"))
        try:
            batches = list(_read_batches(_Chunk(str(spool), "0", todo, int(time.time() * 1000))))
            for batch in batches:
                batch.stale.extend(batch.paths)
                batch.write(con, state["next"])
                state["next"] += batch.ids
        except Hang:
            raise AssertionError("index: hang") from None
        except Exception as exc:
            raise AssertionError("index: traceback") from exc
        results = [r for b in batches for r in b.results]
        assert len(results) == len(inputs)
        for status, error, _ in results:
            assert status in ("ok", "in-progress", "error")
            assert status != "error" or (error and "\n" not in error), error
        if STATE.via_cli:  # the verb itself on the same folder: exit 0, or one error line
            cli_db = box.root / "cli.duckdb"
            try:
                run_cli(["index", str(root), "--db", str(cli_db)], root, {p.name for p, _, _ in todo}, found=True)
            finally:
                for leftover in box.root.glob("cli.duckdb*"):
                    leftover.unlink()
        return [f"file {'error' if status == 'error' else 'read'}" for status, _, _ in results]

    try:
        fuzz("families/corpus", lambda d: {"file": corpus_file(d, files)}, run, N, batch=CORPUS_BATCH)
    finally:
        if "con" in state:
            state["con"].close()
            for leftover in state["db"].parent.glob("fuzz.duckdb*"):
                leftover.unlink()


def test_otlp_export_and_read_back() -> None:
    """``export otlp`` on damaged sessions; and OTLP JSON mcpreel wrote, damaged, read back by every verb."""
    import shutil
    import tempfile

    from click.testing import CliRunner

    from mcpreel.cli import cli

    files = _files()
    otlp_dir = Path(tempfile.mkdtemp())
    seed_files = []
    try:
        for path in files[:: max(1, len(files) // 12)]:
            out = otlp_dir / f"{len(seed_files)}.json"
            result = CliRunner().invoke(cli, ["export", "otlp", str(path), "-o", str(out), "--include-content"])
            if result.exit_code == 0 and out.exists():
                seed_files.append(out)
        assert seed_files, "OTLP written from the fixtures"

        def run(data: bytes, verb: str, export_first: bool) -> str:
            return _run_verb(data, "export otlp content" if export_first else verb, ".json")

        def make(d: Draw) -> dict[str, Any]:
            how = d.int(0, 2)
            data = stacked(d, files) if how == 2 else (stacked if how == 0 else re_encoded)(d, seed_files)
            return {"data": data, "verb": d.pick(VERBS), "export_first": d.bool()}

        _limited("families/otlp", make, run)
    finally:
        shutil.rmtree(otlp_dir, ignore_errors=True)


def _draft_lines(d: Draw) -> list[dict[str, Any]]:
    """A reel of the drafts' framings: raw ``bytes`` lines (text and base64), the stdio-v2 marker, partial
    results, task status, subscription lifecycle, an SSE-framed transport record."""
    t = 1_700_000_000_000
    lines: list[dict[str, Any]] = [{"v": 1, "type": "meta", "startedAt": "2023-11-14T22:13:20.000Z", "label": "d",
                                    "command": ["srv"], "transport": d.pick(["stdio", "streamable-http"])}]
    pieces = [
        {"t": t, "dir": "in", "type": "transport", "ctx": {"framing": "h2", "transport": "stdio-v2"}},
        {"t": t, "dir": "in", "type": "bytes", "text": "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"},
        {"t": t, "dir": "out", "type": "bytes", "base64": base64.b64encode(bytes(range(40))).decode()},
        {"t": t, "dir": "in", "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                      "params": {"name": "t", "_meta": {"partialResultToken": "p1", "progressToken": 7}}}},
        {"t": t, "dir": "out", "raw": {"jsonrpc": "2.0", "method": "notifications/tools/partial_result",
                                       "params": {"partialResultToken": "p1", "seq": 0, "final": False,
                                                  "content": [{"type": "text", "text": "a"}]}}},
        {"t": t, "dir": "out", "raw": {"jsonrpc": "2.0", "method": "notifications/tasks/status",
                                       "params": {"taskId": "k", "status": "working", "progress": 1, "progressTotal": 2}}},
        {"t": t, "dir": "out", "raw": {"jsonrpc": "2.0", "method": "notifications/subscriptions/lifecycle",
                                       "params": {"state": "open"}}},
        {"t": t, "dir": "out", "raw": {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": {}}},
         "ctx": {"sse": {"event": "message", "id": "e1"}, "status": 200, "headers": {"content-type": "text/event-stream"},
                 "exchange": 1}},
        {"t": t, "dir": "out", "type": "transport", "ctx": {"sse": {"event": "ping", "retry": 10}, "data": "x"}},
    ]
    chosen = [d.pick(pieces) for _ in range(d.int(1, 12))]
    return lines + [copy.deepcopy(p) for p in chosen]


def draft_reel(d: Draw) -> bytes:
    """A reel of the drafts' framings with 0 to 4 damages (a type changed, a member deleted, a value nested
    900 to 1,020 levels deep) and now and then cut short."""
    lines = _draft_lines(d)
    for _ in range(d.int(0, 4)):
        paths = _paths(lines)
        where = d.pick(paths)
        parent = _at(lines, where[:-1])
        how = d.pick(["type", "delete", "deep"])
        if how == "delete" and len(where) > 1:
            del parent[where[-1]]
        elif how == "deep":
            parent[where[-1]] = _deep(d.int(900, 1020) - len(where), d.pick(["list", "dict"]))
        else:
            parent[where[-1]] = copy.deepcopy(d.pick(STACK_VALUES))
    for line in lines:
        if isinstance(line, dict) and "t" in line and isinstance(line["t"], int):
            line["t"] = f"2023-11-14T22:13:{20 + line['t'] % 30:02d}.000Z"
    data = _encode("jsonl", lines)
    if d.int(0, 6) == 0:
        data = data[: d.int(0, len(data))]
    return data


def test_the_drafts_framings() -> None:
    _limited("families/drafts", lambda d: {"data": draft_reel(d), "verb": d.pick(VERBS), "suffix": ".jsonl"},
             _run_verb)


@pytest.mark.parametrize("depth", [950, 1000, 1022])
def test_a_stacked_deep_value_reaches_the_walks_in_the_family(depth: int) -> None:
    """The ``stacked`` family writes values as deep as the issue's (950-1022 levels, under the readers'
    limit): a check that it can find what it is meant to."""
    line = _encode("json", {"a": _deep(depth, "list")})
    assert line.count(b"[") == depth
