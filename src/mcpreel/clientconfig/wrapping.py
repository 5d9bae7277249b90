"""Wrap a client's stdio servers so the client starts them through ``mcpreel record``, and undo it exactly.

What makes it safe:

- **a state file** next to the config (``<file>.mcpreel-wrap.json``, mode 0600) keeps, per wrapped
  server, the exact original text of its entry and the exact text wrap wrote. ``unwrap`` splices the
  original back only where the entry still reads as wrap left it, so edits the user made to other
  entries (or anywhere else) survive, and an untouched file comes back byte for byte;
- **a backup** of the file as it was before mcpreel first touched it (``<file>.mcpreel-backup``);
- **nothing is written unless the new text parses** to exactly the servers intended: the others equal
  to what they were, the changed ones equal to their new entries;
- wrapping a wrapped server changes nothing, and a file that does not parse is never written.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio, platform
from mcpreel.clientconfig.clients import ClientFile
from mcpreel.clientconfig.document import ConfigDocument
from mcpreel.errors import InputError, UsageError

__all__ = ["Edit", "ServerInfo", "apply_edit", "backup_path", "default_mcpreel_argv", "describe", "merge_edits",
           "plan_unwrap", "plan_wrap", "refusal", "shown", "state_key", "state_path"]

STATE_VERSION = 1
DEFAULT_LISTEN_PORT = 8765


def state_path(config: Path) -> Path:
    """Where ``wrap`` keeps what ``unwrap`` needs, next to the config it changed."""
    return config.with_name(config.name + ".mcpreel-wrap.json")


def backup_path(config: Path) -> Path:
    """Where the config's one backup goes (made once, before the first change)."""
    return config.with_name(config.name + ".mcpreel-backup")


def default_mcpreel_argv() -> list[str]:
    """How a client should start mcpreel: the console script next to this Python, else ``python -m mcpreel``.

    Absolute either way: clients start servers with a minimal PATH (Claude Desktop, the SDK's stdio client).
    """
    script = Path(sys.executable).with_name("mcpreel")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "mcpreel"]


def _load_state(config: Path) -> dict[str, Any]:
    p = state_path(config)
    if not p.is_file():
        return {"mcpreel_wrap": STATE_VERSION, "servers": {}}
    try:
        state = jsonio.loads(p.read_bytes())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the wrap state: {exc}", path=str(p)) from exc
    if not isinstance(state, dict) or state.get("mcpreel_wrap") != STATE_VERSION or not isinstance(state.get("servers"), dict):
        raise InputError("not an mcpreel wrap state file", path=str(p))
    return state


@dataclass
class ServerInfo:
    """One server of one client file, as ``wrap --list`` shows it."""

    file: ClientFile
    name: str
    entry: dict[str, Any]
    wrapped: bool

    @property
    def transport(self) -> str:
        """How the client reaches this server (``stdio``, ``streamable-http`` or ``sse``), from whichever keys the
        client's format uses."""
        e = self.entry
        kind = str(e.get("type") or e.get("transport") or "").lower()
        if "command" in e and kind in ("", "stdio"):
            return "stdio"
        if kind == "sse" or (self.url or "").rstrip("/").endswith("/sse"):
            return "sse"
        if self.file.client == "gemini" and "url" in e and "httpUrl" not in e:
            return "sse"  # Gemini CLI: url is SSE, httpUrl is Streamable HTTP
        return "streamable-http" if self.url else (kind or "unknown")

    @property
    def url_key(self) -> str | None:
        """The member that holds the URL in this client's format (clients spell it differently)."""
        for key in ("url", "serverUrl", "httpUrl"):
            if isinstance(self.entry.get(key), str):
                return key
        return None

    @property
    def url(self) -> str | None:
        """The server's URL (None for a stdio server)."""
        key = self.url_key
        return self.entry[key] if key else None

    @property
    def target(self) -> str:
        """What the server is, in one line a person recognises: its command or its URL."""
        if self.transport == "stdio":
            return shlex.join(_words(self.entry))
        return self.url or "?"


def _words(entry: dict[str, Any]) -> list[str]:
    """The entry's argv as words to look at or show (whatever types the file holds; wrap refuses odd ones)."""
    args = entry.get("args")
    return [str(entry.get("command", ""))] + [str(a) for a in (args if isinstance(args, list) else [])]


def _mcpreel_verb(entry: dict[str, Any]) -> str | None:
    """The mcpreel verb an entry runs (``mcpreel VERB ...`` or ``python -m mcpreel VERB ...``), or None."""
    argv = _words(entry)
    for i, word in enumerate(argv):
        if (Path(word).name == "mcpreel" or (word == "mcpreel" and i and argv[i - 1] == "-m")) and i + 1 < len(argv):
            return argv[i + 1]
    return None


def is_corpus_server(entry: dict[str, Any]) -> bool:
    """Whether an entry is mcpreel's own corpus server (``mcpreel mcp-server``): never wrapped, since an
    agent's questions to the corpus would otherwise be recorded into the corpus they read."""
    return _mcpreel_verb(entry) == "mcp-server"


#: the name ``wrap --add-corpus-server`` gives mcpreel's corpus server in a client's file
CORPUS_SERVER_NAME = "mcpreel-corpus"


def plan_add_corpus_server(doc: ConfigDocument, *, mcpreel_argv: Sequence[str], db: str | None = None,
                           state: dict[str, Any] | None = None) -> Edit:
    """The edit that adds mcpreel's corpus server (``mcpreel mcp-server``) to a client's file, so its agent can
    ask the corpus; nothing when the file already has one (under any name)."""
    state = state if state is not None else _load_state(doc.file.path)
    edit = Edit(doc, doc.text, state)
    servers = doc.servers()
    present = next((name for name, entry in servers.items() if is_corpus_server(entry)), None)
    if present is not None:
        edit.notes.append(f"{shown(present)}: mcpreel's corpus server is already there")
        return edit
    name = CORPUS_SERVER_NAME if CORPUS_SERVER_NAME not in servers else f"{CORPUS_SERVER_NAME}-{len(servers)}"
    argv = [*mcpreel_argv, "mcp-server", *(["--db", db] if db else [])]
    edit.new_text = doc.with_new_entry(name, {"command": argv[0], "args": argv[1:]})
    ConfigDocument(doc.file, edit.new_text).servers()  # must still parse
    edit.notes.append(f"{name}: added ({shlex.join(argv)}); remove the entry to take it out")
    return edit


def looks_wrapped(entry: dict[str, Any]) -> bool:
    """Whether an entry already runs through ``mcpreel record`` (so it is not wrapped twice, even without a state
    file)."""
    argv = _words(entry)
    for i, word in enumerate(argv):
        if (Path(word).name == "mcpreel" or (word == "mcpreel" and i and argv[i - 1] == "-m")) \
                and i + 1 < len(argv) and argv[i + 1] == "record":
            return True
    return False


def state_key(file: ClientFile, name: str) -> str:
    """Where a server's record sits in the state: its name, or for a server below the top of the file
    (Claude Code's per-project servers) the JSON list of the members that lead to it and its name."""
    return json.dumps([*file.where, name], ensure_ascii=False) if file.where else name


def _own_keys(file: ClientFile, state: dict[str, Any]) -> dict[str, str]:
    """Server name -> state key, for the servers of this view of the file that the state knows."""
    mine: dict[str, str] = {}
    for key in state["servers"]:
        if file.where:
            if key.startswith("["):
                try:
                    *where, name = json.loads(key)
                except ValueError:
                    continue
                if tuple(where) == file.where:
                    mine[name] = key
        elif not key.startswith("["):
            mine[key] = key
    return mine


def describe(doc: ConfigDocument, state: dict[str, Any] | None = None) -> list[ServerInfo]:
    """The servers a config declares, each marked wrapped or not (what ``wrap --list`` shows)."""
    known = _own_keys(doc.file, state if state is not None else _load_state(doc.file.path))
    return [ServerInfo(doc.file, name, entry, name in known or looks_wrapped(entry))
            for name, entry in doc.servers().items()]


_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def shown(text: str) -> str:
    """A name or argument as a line can show it: control characters and lone surrogates as escapes."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def refusal(name: str, entry: dict[str, Any]) -> str | None:
    """Why a stdio server cannot be wrapped as it is written (None: it can). Its name becomes a folder of
    the sessions folder and a ``--label``; its ``command`` and ``args`` become words of an argv."""
    if not name or name in (".", "..") or "/" in name or "\\" in name or name.startswith("-") \
            or _CONTROL.search(name) or len(name) > 200:
        return ("a server name that cannot be a folder of the sessions folder (empty, '.', '..', a '/' or "
                "'\\', a leading '-', a control character or a lone surrogate): rename it to wrap it")
    command, args = entry.get("command"), entry.get("args")
    args = [] if args is None else args
    if not isinstance(command, str) or not command:
        return f"'command' is {_kind(command)}, not a non-empty string"
    if not isinstance(args, list):
        return f"'args' is {_kind(args)}, not a list of strings"
    for i, word in enumerate([command, *args]):
        if not isinstance(word, str):
            return f"'args'[{i - 1}] is {_kind(word)}, not a string"
        if "\x00" in word or _CONTROL.search(word.replace("\n", "").replace("\t", "")):
            where = "'command'" if i == 0 else f"'args'[{i - 1}]"
            return f"{where} holds a NUL, a control character or a lone surrogate"
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "missing or null"
    return {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object",
            str: "an empty string"}.get(type(value), type(value).__name__)


@dataclass
class Edit:
    """What one command would do to one file: its new text, the new state, and what it says."""

    doc: ConfigDocument
    new_text: str
    state: dict[str, Any]
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: servers that were asked for and cannot be wrapped as they are written, one line each
    refused: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path:
        """The config file this edit writes."""
        return self.doc.file.path

    def diff(self) -> str:
        """The change as a unified diff (what ``--dry-run`` shows)."""
        a = self.doc.text.splitlines(keepends=True)
        b = self.new_text.splitlines(keepends=True)
        return "".join(difflib.unified_diff(a, b, str(self.path), f"{self.path} (wrapped by mcpreel)"))


def wrapped_entry(entry: dict[str, Any], *, name: str, mcpreel_argv: Sequence[str], out_dir: Path,
                  redact: bool) -> dict[str, Any]:
    """The entry a client starts instead: ``mcpreel record --label NAME --out-dir DIR -- CMD ARGS``.

    Every other member (env, cwd, type, the client's own keys) stays as it was, in its place.
    """
    original = [entry["command"], *(entry.get("args") or [])]  # strings: refusal() said so
    record = [*mcpreel_argv[1:], "record", "-q", "--label", name, "--out-dir", str(out_dir)]
    if redact:
        record.append("--redact")
    new: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "command":
            new["command"] = mcpreel_argv[0]
            new["args"] = [*record, "--", *original]
        elif key != "args":
            new[key] = value
    return new


def select(servers: Iterable[ServerInfo], names: Sequence[str], all_: bool) -> list[ServerInfo]:
    """The servers named (or all with ``all_``); naming none without ``--all`` is refused rather than wrapping
    everything."""
    if not names and not all_:
        raise UsageError("name the servers to change, or give --all (see them with --list)")
    chosen = []
    for s in servers:
        if all_ or s.name in names or f"{s.file.client}:{s.name}" in names:
            chosen.append(s)
    return chosen


def _verify(doc: ConfigDocument, new_text: str, expected: dict[str, dict[str, Any]]) -> None:
    """The new text must parse to exactly the intended servers, or nothing is written."""
    got = doc.servers(new_text)
    if got != expected or list(got) != list(expected):
        raise InputError("the edited text would not read back as intended: nothing written", path=str(doc.file.path))


def plan_wrap(doc: ConfigDocument, names: Sequence[str], *, all_: bool, mcpreel_argv: Sequence[str],
              sessions_root: Path, redact: bool, http_port: int | None = None,
              state: dict[str, Any] | None = None) -> Edit:
    """Wrap the chosen stdio servers; with ``http_port`` also point the chosen HTTP servers at a recording
    proxy (one port each, counting up), and say the ``mcpreel record`` command that starts it.

    ``state``: the wrap state so far (another view of the same file planned first); else read from disk.
    A server whose name or ``command``/``args`` cannot be wrapped safely is refused: ``edit.refused``."""
    state = state if state is not None else _load_state(doc.file.path)
    servers = doc.servers()
    edit = Edit(doc, doc.text, state)
    for info in select(describe(doc, state), names, all_):
        if info.wrapped:
            edit.notes.append(f"{shown(info.name)}: already wrapped")
            continue
        if info.transport == "stdio" and is_corpus_server(info.entry):
            edit.notes.append(f"{shown(info.name)}: mcpreel's own corpus server, left as it is (recording it would "
                              "put the agent's questions into the corpus they read)")
            continue
        why = refusal(info.name, info.entry) if info.transport == "stdio" else (
            refusal(info.name, {"command": "x"}) if http_port is not None else None)
        if why is not None:
            edit.refused.append(f"{shown(info.name)}: not wrapped: {why}")
            continue
        out_dir = sessions_root / doc.file.client / info.name
        if info.transport == "stdio":
            new_entry = wrapped_entry(servers[info.name], name=info.name, mcpreel_argv=mcpreel_argv,
                                      out_dir=out_dir, redact=redact)
            note = f"{info.name}: wrapped; sessions go to {out_dir}"
        elif info.url_key and http_port is not None:
            port, http_port = http_port, http_port + 1
            argv = http_record_argv(info, port) + (["--redact"] if redact else [])
            new_entry = {k: (proxy_url(info, port) if k == info.url_key else v) for k, v in servers[info.name].items()}
            note = (f"{info.name}: now points at {proxy_url(info, port)}; start the recording proxy with "
                    f"{shlex.join(argv)}")
        else:
            edit.notes.append(f"{info.name}: {info.transport} server at {info.url}: run "
                              f"{shlex.join(http_record_argv(info))} and point the client at {proxy_url(info)} "
                              "(or wrap --http)")
            continue
        cur = ConfigDocument(doc.file, edit.new_text)
        start, end = cur.span(info.name)
        original_text = cur.text[start:end]
        new_text = cur.with_entry(info.name, new_entry)
        servers = {**servers, info.name: new_entry}
        _verify(doc, new_text, servers)
        ns, ne = ConfigDocument(doc.file, new_text).span(info.name)
        if new_text[:ns] != cur.text[:start] or new_text[ne:] != cur.text[end:]:
            raise InputError(f"editing {info.name!r} would change text outside its entry: nothing written",
                             path=str(doc.file.path))
        state["servers"][state_key(doc.file, info.name)] = {"original": original_text, "wrapped": new_text[ns:ne],
                                                           "out_dir": str(out_dir)}
        edit.new_text = new_text
        edit.changed.append(info.name)
        edit.notes.append(note)
    return edit


def plan_unwrap(doc: ConfigDocument, names: Sequence[str], *, all_: bool, force: bool = False,
                state: dict[str, Any] | None = None) -> Edit:
    """The edit that restores each wrapped entry exactly as it was (an entry edited since is left alone unless
    ``force``)."""
    state = state if state is not None else _load_state(doc.file.path)
    edit = Edit(doc, doc.text, state)
    mine = _own_keys(doc.file, state)
    known = {name: state["servers"][key] for name, key in mine.items()}
    current = doc.servers()
    client = doc.file.client
    wanted = list(known) if all_ or not names else [
        n.split(":", 1)[-1] for n in names if ":" not in n or n.split(":", 1)[0] == client]
    for name in wanted:
        if name not in known:
            if name in current and looks_wrapped(current[name]):
                edit.notes.append(f"{shown(name)}: wrapped, but mcpreel kept no record of its original: edit it by hand")
            elif not all_:
                edit.notes.append(f"{shown(name)}: not wrapped by mcpreel")
            continue
        if name not in current:
            del state["servers"][mine[name]]
            edit.notes.append(f"{shown(name)}: no longer in the file; forgotten")
            continue
        cur = ConfigDocument(doc.file, edit.new_text)
        start, end = cur.span(name)
        if cur.text[start:end] != known[name]["wrapped"] and not force:
            edit.notes.append(f"{shown(name)}: edited since it was wrapped; left as it is (--force restores the original)")
            continue
        new_text = cur.replace_span(start, end, known[name]["original"])
        ConfigDocument(doc.file, new_text).servers()  # must still parse
        edit.new_text = new_text
        del state["servers"][mine[name]]
        edit.changed.append(name)
        edit.notes.append(f"{shown(name)}: restored")
    return edit


def merge_edits(edits: Sequence[Edit]) -> Edit:
    """The edits of several views of one file (planned one after another, each on the text and state the
    one before left) as one write: the first one's original text (for the backup), the last one's text."""
    first, last = edits[0], edits[-1]
    merged = Edit(first.doc, last.new_text, last.state)
    for e in edits:
        merged.changed += e.changed
    return merged


def http_record_argv(info: ServerInfo, port: int = DEFAULT_LISTEN_PORT) -> list[str]:
    """The ``mcpreel record`` command a person runs for an HTTP server (a client cannot start it for them)."""
    return ["mcpreel", "record", "--transport", info.transport, "--target-url", info.url or "",
            "--listen", f"127.0.0.1:{port}", "--label", info.name]


def proxy_url(info: ServerInfo, port: int = DEFAULT_LISTEN_PORT) -> str:
    """The URL the client is pointed at instead: the recording proxy on loopback, same path and query."""
    from urllib.parse import urlsplit

    url = info.url or ""
    try:
        parts = urlsplit(url)
    except ValueError:  # a host urllib refuses (a stray "[" in it): the path and query are read past the host
        rest = url.split("://", 1)[-1]
        host_end = next((i for i, ch in enumerate(rest) if ch in "/?#"), len(rest))
        parts = urlsplit("http://host" + rest[host_end:])
    path = parts.path or "/"
    return f"http://127.0.0.1:{port}{path}" + (f"?{parts.query}" if parts.query else "")


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        platform.set_mode(fd, mode)  # where modes mean something (not on Windows)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def apply_edit(edit: Edit) -> None:
    """Write the file (keeping its mode), its backup (once) and the state; nothing when nothing changed."""
    if edit.new_text == edit.doc.text and not edit.changed:
        if not edit.state["servers"]:
            with contextlib.suppress(FileNotFoundError):
                state_path(edit.path).unlink()
        return
    path = edit.path
    try:
        mode = path.stat().st_mode & 0o7777
        backup = backup_path(path)
        if not backup.exists():
            _write_atomic(backup, edit.doc.text.encode("utf-8"), 0o600)
        if edit.state["servers"]:
            _write_atomic(state_path(path), jsonio.dumps_indented(edit.state) + b"\n", 0o600)
        _write_atomic(path, edit.new_text.encode("utf-8"), mode)
        if not edit.state["servers"]:
            with contextlib.suppress(FileNotFoundError):
                state_path(path).unlink()
            if backup.is_file() and backup.read_bytes() == edit.new_text.encode("utf-8"):
                backup.unlink()  # back where it started: the backup holds nothing the file does not
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from exc
