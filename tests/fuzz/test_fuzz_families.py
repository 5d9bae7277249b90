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

Every case runs in-process through the CLI's click entry (or the indexer's own functions) with a per-input
limit (:data:`HANG_SECONDS` by ``SIGALRM``), and ends in exit 0 (1 where the verb found something), or exit
2 with one line and nothing left behind. ``make test`` runs :data:`N` cases a family (fewer than the
readers' 200: these verbs cost more; derandomized); ``MCPREEL_FUZZ_N`` and ``MCPREEL_FUZZ_REPORT`` work as in
:mod:`tests.fuzz.test_fuzz_readers`.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from tests.conftest import FIXTURES, needs_shared
from tests.fuzz.test_fuzz_loaders import Hang, fuzz, hang_after, run_cli
from tests.fuzz.test_fuzz_readers import FAMILIES, ODD_VALUES, _at, _parse

pytestmark = needs_shared

#: cases a family in ``make test`` (the big run sets MCPREEL_FUZZ_N)
N = int(os.environ.get("MCPREEL_FUZZ_N") or 25)
#: a case that runs longer than this is a hang
HANG_SECONDS = 30
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


@st.composite
def stacked(draw: st.DrawFn, files: list[Path]) -> bytes:
    """A fixture with 2 to 6 damages stacked (and now and then its bytes cut or flipped after them)."""
    path = draw(st.sampled_from(files))
    data = path.read_bytes()
    parsed = _parse(data)
    if parsed is None:
        return data[: draw(st.integers(0, len(data)))]
    kind, doc = parsed
    for _ in range(draw(st.integers(2, 6))):
        paths = _paths(doc)
        if not paths:
            break
        where = draw(st.sampled_from(paths))
        parent = _at(doc, where[:-1])
        how = draw(st.sampled_from(["type", "type", "delete", "deep", "listify"]))
        if how == "delete":
            del parent[where[-1]]
        elif how == "deep":
            # under the readers' limit (1,024 a line) by a few levels, or just past it
            parent[where[-1]] = _deep(draw(st.integers(940, 1030)) - len(where), draw(st.sampled_from(["list", "dict"])))
        elif how == "listify":
            parent[where[-1]] = [parent[where[-1]]]
        else:
            parent[where[-1]] = copy.deepcopy(draw(st.sampled_from(STACK_VALUES)))
    out = _encode(kind, doc)
    if draw(st.integers(0, 5)) == 0:
        out = out[: draw(st.integers(0, len(out)))]
    return out


@st.composite
def spliced(draw: st.DrawFn, files: list[Path]) -> bytes:
    """Two fixtures of different formats made one: cut and joined, a subtree of one in the other, or their
    JSON lines interleaved."""
    a = draw(st.sampled_from(files))
    b = draw(st.sampled_from([p for p in files if _family_of(p) != _family_of(a)]))
    da, db = a.read_bytes(), b.read_bytes()
    how = draw(st.sampled_from(["bytes", "subtree", "lines"]))
    pa, pb = _parse(da), _parse(db)
    if how == "subtree" and pa is not None and pb is not None:
        kind, doc = pa
        paths_a, paths_b = _paths(doc), _paths(pb[1])
        if paths_a and paths_b:
            where = draw(st.sampled_from(paths_a))
            _at(doc, where[:-1])[where[-1]] = _at(pb[1], draw(st.sampled_from(paths_b)))  # pb is this case's own
            return _encode(kind, doc)
    if how == "lines":
        la, lb = da.splitlines(keepends=True), db.splitlines(keepends=True)
        rng = random.Random(draw(st.integers(0, 2**32)))
        out = la + lb
        rng.shuffle(out)
        return b"".join(out[: max(1, len(out) // 2)])
    return da[: draw(st.integers(0, len(da)))] + db[draw(st.integers(0, len(db))):]


#: byte sequences UTF-8 cannot hold, or that change a text's meaning to a terminal or a line reader
BAD_BYTES = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00", b"\xef\xbb\xbf", b"\r", b"\x85",
             b"\xe2\x80\xa8", b"\x1b[2J", b"\x1b]52;c;aGk=\x07", b"\\ud800", b"\\udfff\\ud800", b"\xe9"]


@st.composite
def re_encoded(draw: st.DrawFn, files: list[Path]) -> bytes:
    data = draw(st.sampled_from(files)).read_bytes()
    how = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "insert", "insert",
                                "crlf", "bom-mid"]))
    if how == "insert":
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 5))):
            at = draw(st.integers(0, len(out)))
            out[at:at] = draw(st.sampled_from(BAD_BYTES))
        return bytes(out)
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    if how == "bom-mid":
        cut = draw(st.integers(0, len(data)))
        return data[:cut] + b"\xef\xbb\xbf" + data[cut:]
    text = data.decode("utf-8", "replace")
    if how == "latin-1":
        return text.encode("latin-1", "replace")
    bom = draw(st.booleans())
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
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / f"in{suffix}", Path(tmp) / "out"
        src.write_bytes(data)
        base = other or FIXTURES / "qai" / "qai_session_minimal.json"
        args = _args(verb, src, out, base) + (forced or [])
        started = time.monotonic()
        try:
            code = run_cli(args, Path(tmp), {src.name}, found=True)
        except AssertionError as exc:
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


def _limited(family: str, cases: Any, run: Any) -> None:
    """:func:`~tests.fuzz.test_fuzz_loaders.fuzz` with this module's count and per-input limit."""
    import tests.fuzz.test_fuzz_loaders as loaders

    saved = loaders.N, loaders.HANG_SECONDS
    loaders.N, loaders.HANG_SECONDS = N, HANG_SECONDS
    try:
        fuzz(family, cases, run)
    finally:
        loaders.N, loaders.HANG_SECONDS = saved


# -- the families ------------------------------------------------------------------------------------------


def test_stacked_mutations() -> None:
    files = _files()
    _limited("families/stacked", st.fixed_dictionaries({
        "data": stacked(files), "verb": st.sampled_from(VERBS), "suffix": st.sampled_from([".json", ".jsonl", ""])}),
        _run_verb)


def test_splices_across_formats() -> None:
    files = _files()
    _limited("families/splice", st.fixed_dictionaries({
        "data": spliced(files), "verb": st.sampled_from(VERBS), "suffix": st.sampled_from([".json", ".jsonl"])}),
        _run_verb)


def test_forced_wrong_formats() -> None:
    files = _files()

    def run(path: Path, reader: str, verb: str) -> str:
        option = "--from" if verb.startswith(("convert", "redact")) else "--format"
        if verb == "diff":
            return _run_verb(path.read_bytes(), "diff", path.suffix, forced=["--format", reader])
        return _run_verb(path.read_bytes(), verb, path.suffix, forced=[option, reader])

    verbs = ("inspect", "inspect -v", "import", "export otlp", "redact", "report", *(f"convert:{w}" for w in WRITERS[:6]))
    _limited("families/wrong-format", st.fixed_dictionaries({
        "path": st.sampled_from(files), "reader": st.sampled_from(READERS), "verb": st.sampled_from(verbs)}), run)


def test_broken_encodings() -> None:
    files = _files()
    _limited("families/encodings", st.fixed_dictionaries({
        "data": re_encoded(files), "verb": st.sampled_from(VERBS), "suffix": st.sampled_from([".json", ".jsonl", ""])}),
        _run_verb)


VCR_META = "meta: {version: 1, session_id: s1, server_command: [python, server.py], schema_version: '1.0'}\n"


@st.composite
def string_bomb(draw: st.DrawFn) -> bytes:
    """An MCP-VCR transcript with a long anchored string aliased many times (few nodes, many bytes), or a
    few times (within the budget), at a place a reader walks."""
    length = draw(st.sampled_from([10, 1000, 100_000, 200_000]))
    aliases = draw(st.sampled_from([1, 3, 50, 200, 5000, 20_000]))  # 100 KB x 200 is under the budget
    where = draw(st.sampled_from(["params", "result", "meta", "key"]))
    head = f"big: &big {'x' * length}\nrefs: [{', '.join(['*big'] * aliases)}]\n"
    refs = "[" + ", ".join(["*big"] * min(aliases, 64)) + "]"
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
    _limited("families/yaml-string-bombs", st.fixed_dictionaries({
        "data": string_bomb(), "verb": st.sampled_from(verbs), "suffix": st.just(".yaml")}), _run_verb)


#: file names a corpus folder may hold: not UTF-8, a carriage return, a newline, quotes and commas (the
#: spool is CSV), long, and a name that looks like SQL
NAMES = [b"plain.json", b"caf\xe9.json", b"cr\rname.jsonl", b"nl\nname.json", b'q"u,o\'te.json', b"x" * 240 + b".json",
         b"'; DROP TABLE files; --.jsonl", b"\xff\xfe.jsonl", b"tab\tname.json", b"%_wild.json"]


@st.composite
def corpus_folder(draw: st.DrawFn, files: list[Path]) -> list[tuple[bytes, bytes]]:
    out = []
    for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True)):
        data = draw(st.one_of(stacked(files), re_encoded(files), spliced(files)))
        out.append((name, data))
    return out


def test_corpus_folders() -> None:
    """The indexer's reading (names, bytes, the accumulator) and DuckDB's load of its spools, for folders
    of damaged files with hostile names: every file is a row (read, or stored with its one-line error)."""
    from mcpreel.corpus.db import connect
    from mcpreel.corpus.index import _Chunk, _read_batches

    files = _files()
    state: dict[str, Any] = {}
    home = tempfile.TemporaryDirectory()
    db = Path(home.name) / "fuzz.duckdb"

    def run(folder: list[tuple[bytes, bytes]]) -> str:
        if "con" not in state:
            state["con"] = connect(db, read_only=False)
            state["next"] = 1
        con = state["con"]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "c"
            root.mkdir()
            spool = Path(tmp) / "spool"
            spool.mkdir()
            todo = []
            for name, data in folder:
                path = Path(os.fsdecode(os.path.join(os.fsencode(root), name)))
                path.write_bytes(data)
                todo.append((path, path.stat(), "h"))
            try:
                with hang_after(HANG_SECONDS):
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
            assert len(results) == len(folder)
            for status, error, _ in results:
                assert status in ("ok", "in-progress", "error")
                assert status != "error" or (error and "\n" not in error), error
            return "errors " + str(sum(r[0] == "error" for r in results))

    try:
        _limited("families/corpus", st.fixed_dictionaries({"folder": corpus_folder(files)}), run)
    finally:
        if "con" in state:
            state["con"].close()
        home.cleanup()


def test_otlp_export_and_read_back() -> None:
    """``export otlp`` on damaged sessions; and OTLP JSON mcpreel wrote, damaged, read back by every verb."""
    from click.testing import CliRunner

    from mcpreel.cli import cli

    files = _files()
    seeds: list[bytes] = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files[:: max(1, len(files) // 12)]:
            out = Path(tmp) / f"{len(seeds)}.otlp.json"
            result = CliRunner().invoke(cli, ["export", "otlp", str(path), "-o", str(out), "--include-content"])
            if result.exit_code == 0 and out.exists():
                seeds.append(out.read_bytes())
    assert seeds, "OTLP written from the fixtures"
    otlp_dir = Path(tempfile.mkdtemp())
    seed_files = []
    for i, data in enumerate(seeds):
        seed_files.append(otlp_dir / f"{i}.json")
        seed_files[-1].write_bytes(data)

    def run(data: bytes, verb: str, export_first: bool) -> str:
        return _run_verb(data, "export otlp content" if export_first else verb, ".json")

    try:
        _limited("families/otlp", st.fixed_dictionaries({
            "data": st.one_of(stacked(seed_files), re_encoded(seed_files), stacked(files)),
            "verb": st.sampled_from(VERBS), "export_first": st.booleans()}), run)
    finally:
        import shutil

        shutil.rmtree(otlp_dir, ignore_errors=True)


def _draft_lines(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A reel of the drafts' framings: raw ``bytes`` lines (text and base64), the stdio-v2 marker, partial
    results, task status, subscription lifecycle, an SSE-framed transport record."""
    t = 1_700_000_000_000
    lines: list[dict[str, Any]] = [{"v": 1, "type": "meta", "startedAt": "2023-11-14T22:13:20.000Z", "label": "d",
                                    "command": ["srv"], "transport": draw(st.sampled_from(["stdio", "streamable-http"]))}]
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
    chosen = draw(st.lists(st.sampled_from(pieces), min_size=1, max_size=12))
    return lines + [copy.deepcopy(p) for p in chosen]


@st.composite
def draft_reel(draw: st.DrawFn) -> bytes:
    lines = _draft_lines(draw)
    for _ in range(draw(st.integers(0, 4))):
        paths = _paths(lines)
        where = draw(st.sampled_from(paths))
        parent = _at(lines, where[:-1])
        how = draw(st.sampled_from(["type", "delete", "deep"]))
        if how == "delete" and len(where) > 1:
            del parent[where[-1]]
        elif how == "deep":
            parent[where[-1]] = _deep(draw(st.integers(900, 1020)) - len(where), draw(st.sampled_from(["list", "dict"])))
        else:
            parent[where[-1]] = copy.deepcopy(draw(st.sampled_from(STACK_VALUES)))
    for line in lines:
        if isinstance(line, dict) and "t" in line and isinstance(line["t"], int):
            line["t"] = f"2023-11-14T22:13:{20 + line['t'] % 30:02d}.000Z"
    data = _encode("jsonl", lines)
    if draw(st.integers(0, 6)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


def test_the_drafts_framings() -> None:
    _limited("families/drafts", st.fixed_dictionaries({
        "data": draft_reel(), "verb": st.sampled_from(VERBS), "suffix": st.just(".jsonl")}), _run_verb)


@pytest.mark.parametrize("depth", [950, 1000, 1022])
def test_a_stacked_deep_value_reaches_the_walks_in_the_family(depth: int) -> None:
    """The ``stacked`` family writes values as deep as the issue's (950-1022 levels, under the readers'
    limit): a check that it can find what it is meant to."""
    line = _encode("json", {"a": _deep(depth, "list")})
    assert line.count(b"[") == depth
