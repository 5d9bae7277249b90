"""One client config file as text plus what it means: the servers, and where each one's text is.

Edits are splices: the characters of one server entry are replaced and every other byte of the file
stays as it was (comments, key order, indentation, line endings). JSON and JSON-with-comments files are
spliced with the spans of :mod:`mcpreel.clientconfig.jsonc`; Codex's TOML is edited with ``tomlkit``
(which keeps comments and formatting) and its server's section is located by its table header.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcpreel.clientconfig.clients import ClientFile
from mcpreel.clientconfig.jsonc import JsoncError, Node, parse
from mcpreel.errors import InputError

__all__ = ["ConfigDocument", "local_scopes"]


@dataclass
class ConfigDocument:
    file: ClientFile
    text: str

    @classmethod
    def load(cls, file: ClientFile, text: str | None = None) -> ConfigDocument:
        """Read and parse a client's config file; one that cannot be read, is not UTF-8 or not JSON(C) is an input
        error naming it."""
        if text is None:
            try:
                text = file.path.read_bytes().decode("utf-8")
            except OSError as exc:
                raise InputError(f"cannot read: {exc.strerror or exc}", path=str(file.path)) from exc
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 (byte {exc.start})", path=str(file.path)) from exc
        doc = cls(file, text)
        doc.servers()  # a file that does not parse stops here, before anything is planned or written
        return doc

    @property
    def newline(self) -> str:
        """The file's own line ending, so an edit does not change every line of a Windows file."""
        return "\r\n" if "\r\n" in self.text else "\n"

    # -- reading ------------------------------------------------------------------------------------
    def _json_root(self, text: str | None = None) -> Node:
        try:
            return parse(self.text if text is None else text)
        except JsoncError as exc:
            raise InputError(f"{exc} (the file is left as it is)", path=str(self.file.path)) from exc

    def _toml(self, text: str | None = None) -> Any:
        import tomlkit

        try:
            return tomlkit.parse(self.text if text is None else text)
        except Exception as exc:  # tomlkit raises its own ParseError family
            raise InputError(f"not valid TOML: {exc} (the file is left as it is)", path=str(self.file.path)) from exc

    def servers(self, text: str | None = None) -> dict[str, dict[str, Any]]:
        """Server name -> its entry (plain Python values), in file order."""
        key = self.file.servers_key
        if self.file.syntax == "toml":
            doc = self._toml(text)
            table = doc.get(key, {})
            raw = table.unwrap() if hasattr(table, "unwrap") else dict(table)
        else:
            root = self._json_root(text)
            if not isinstance(root.value, dict):
                raise InputError("the top level is not an object", path=str(self.file.path))
            raw = root.value
            for step in self.file.keys:
                raw = raw.get(step, {}) if isinstance(raw, dict) else None
            key = ".".join(self.file.keys)
        if not isinstance(raw, dict):
            raise InputError(f"{key!r} is not an object/table", path=str(self.file.path))
        return {name: entry for name, entry in raw.items() if isinstance(entry, dict)}

    def span(self, name: str, text: str | None = None) -> tuple[int, int]:
        """Where server ``name``'s own text is: its JSON value, or its TOML section's body."""
        text = self.text if text is None else text
        if self.file.syntax == "toml":
            return _toml_section(text, self.file.servers_key, name, str(self.file.path))
        node = self._json_root(text).get(*self.file.keys, name)
        if node is None:
            raise InputError(f"no server {name!r}", path=str(self.file.path))
        return node.start, node.end

    # -- writing ------------------------------------------------------------------------------------
    def with_entry(self, name: str, entry: dict[str, Any]) -> str:
        """The whole file's text with server ``name`` replaced by ``entry`` (nothing else touched)."""
        if self.file.syntax == "toml":
            import tomlkit

            doc = self._toml()
            table = doc[self.file.servers_key][name]
            for key in list(table.keys()):
                if key not in entry:
                    del table[key]
            for key, value in entry.items():
                if table.get(key) != value:
                    table[key] = value
            return tomlkit.dumps(doc)
        node = self._json_root().get(*self.file.keys, name)
        if node is None:
            raise InputError(f"no server {name!r}", path=str(self.file.path))
        spliced = self._splice_members(node, entry)
        if spliced is not None:
            return spliced
        return self.text[:node.start] + self._render_json(entry, node.start, node.end) + self.text[node.end:]

    def with_new_entry(self, name: str, entry: dict[str, Any]) -> str:
        """The whole file's text with server ``name`` added after the others (nothing else touched: the
        servers object's own layout and comments stay). The file must already have its servers object."""
        if self.file.syntax == "toml":
            import tomlkit

            doc = self._toml()
            if self.file.servers_key not in doc:
                doc[self.file.servers_key] = tomlkit.table(is_super_table=True)
            doc[self.file.servers_key][name] = entry
            return tomlkit.dumps(doc)
        node = self._json_root().get(*self.file.keys)
        if node is None or not isinstance(node.value, dict):
            raise InputError(f"has no {'.'.join(self.file.keys)!r} object to add a server to: add it by hand",
                             path=str(self.file.path))
        if not node.value:  # an empty object: its text becomes the one entry
            return self.text[:node.start] + self._render_json({name: entry}, node.start, node.end, force_multiline=True) \
                + self.text[node.end:]
        spliced = self._splice_members(node, {**node.value, name: entry})
        assert spliced is not None  # a member added after the last keeps every other member where it is
        return spliced

    def _splice_members(self, node: Node, entry: dict[str, Any]) -> str | None:
        """Replace only the members whose values changed, and add new ones right after the member before
        them, so comments *inside* the entry stay too. None when a member was removed or reordered."""
        old = node.value
        if any(key not in entry for key in old):
            return None
        keys = list(entry)
        if [k for k in keys if k in old] != list(old):
            return None
        edits: list[tuple[int, int, str]] = []
        for i, key in enumerate(keys):
            if key in old:
                if old[key] != entry[key]:
                    child = node.members[key]
                    edits.append((child.start, child.end, self._render_json(entry[key], child.start, child.end)))
                continue
            before = next((k for k in reversed(keys[:i]) if k in old), None)
            if before is None:
                return None
            after = node.members[before].end
            one_line = "\n" not in self.text[node.start:node.end]
            if one_line:
                sep = ", "
            else:
                kstart = node.member_spans[before][0]
                line_start = self.text.rfind("\n", 0, kstart) + 1
                sep = "," + self.newline + self.text[line_start:kstart]
            rendered = _dumps(entry[key]) if one_line else self._render_json(
                entry[key], node.members[before].start, node.members[before].end, force_multiline=True)
            edits.append((after, after, f"{sep}{json.dumps(key)}: {rendered}"))
        text = self.text
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
        return text

    def _render_json(self, entry: Any, start: int, end: int, *, force_multiline: bool = False) -> str:
        old = self.text[start:end]
        if "\n" not in old and not force_multiline:  # a one-line value stays one line
            return _dumps(entry)
        line_start = self.text.rfind("\n", 0, start) + 1
        base = re.match(r"[ \t]*", self.text[line_start:]).group(0)  # type: ignore[union-attr]
        inner = re.search(r"\n([ \t]+)\S", old)
        unit = inner.group(1)[len(base):] if inner and len(inner.group(1)) > len(base) else "  "
        rendered = _dumps(entry, indent=unit)
        return rendered.replace("\n", self.newline + base)

    def replace_span(self, start: int, end: int, new: str) -> str:
        """The text with one span replaced: edits touch only the bytes of the entry they change (comments and layout
        stay)."""
        return self.text[:start] + new + self.text[end:]


_SURROGATE = re.compile("[\ud800-\udfff]")


def _dumps(value: Any, **kwargs: Any) -> str:
    """JSON text as the file's own (non-ASCII kept), but a lone surrogate (``"\\ud800"`` in the file, which
    no UTF-8 file can hold as a character) written back as its escape, as it was read."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _SURROGATE.search(text) else text


def local_scopes(doc: ConfigDocument) -> list[ClientFile]:
    """Claude Code's per-project servers in ``~/.claude.json`` (``projects.<path>.mcpServers``, where
    ``claude mcp add`` puts them by default): one file view a project that has any."""
    from dataclasses import replace

    if doc.file.client != "claude-code" or doc.file.scope != "user" or doc.file.syntax == "toml":
        return []
    root = doc._json_root().value
    projects = root.get("projects") if isinstance(root, dict) else None
    if not isinstance(projects, dict):
        return []
    return [replace(doc.file, scope="local", where=("projects", path)) for path, entry in projects.items()
            if isinstance(entry, dict) and isinstance(entry.get("mcpServers"), dict) and entry["mcpServers"]]


_HEADER = re.compile(r"^[ \t]*\[(?!\[)([^\]\n]*)\][ \t]*(#[^\n]*)?$", re.M)


def _header_key(inside: str) -> list[str]:
    parts = []
    for m in re.finditer(r'\s*("(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)\s*(\.|$)', inside):
        part = m.group(1)
        parts.append(json.loads(part) if part.startswith('"') else part.strip("'"))
    return parts


def _toml_section(text: str, key: str, name: str, path: str) -> tuple[int, int]:
    """The body of ``[key.name]``: from the end of its header line to the next header (or the end)."""
    headers = list(re.finditer(r"^[ \t]*\[", text, re.M))
    for m in _HEADER.finditer(text):
        if _header_key(m.group(1)) == [key, name]:
            body_start = m.end() + 1 if m.end() < len(text) else m.end()
            nxt = next((h.start() for h in headers if h.start() >= body_start), len(text))
            return body_start, nxt
    raise InputError(f"no [{key}.{name}] table (servers written as inline tables cannot be wrapped)", path=path)
