"""JSON with comments and trailing commas (VS Code's ``mcp.json``, Gemini's settings), parsed with spans.

The point is editing without reformatting: :func:`parse` returns the values *and* where each one sits in
the text, so a caller replaces one value's characters and leaves every comment, blank line, key order and
indentation of the rest of the file exactly as it was. Plain JSON is a subset, so the same parser serves
Claude Desktop, Cursor, Windsurf and Claude Code files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JsoncError", "Node", "parse"]


class JsoncError(ValueError):
    """A JSONC syntax error with its line and column (the caller names the file)."""
    def __init__(self, message: str, line: int, column: int):
        self.line, self.column = line, column
        super().__init__(f"line {line} column {column}: {message}")


@dataclass
class Node:
    """A value and its span ``text[start:end]``; an object's members keep their order and key spans."""

    value: Any
    start: int
    end: int
    members: dict[str, Node] = field(default_factory=dict)  # objects: key -> value node
    member_spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # key -> (key start, value end)
    items: list[Node] = field(default_factory=list)

    def get(self, *path: str) -> Node | None:
        """The node at a path of object members, or None when any step is missing or not an object."""
        node: Node | None = self
        for key in path:
            if node is None or not isinstance(node.value, dict):
                return None
            node = node.members.get(key)
        return node


_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def fail(self, message: str, at: int | None = None) -> JsoncError:
        pos = self.i if at is None else at
        line = self.s.count("\n", 0, pos) + 1
        col = pos - (self.s.rfind("\n", 0, pos) + 1) + 1
        return JsoncError(message, line, col)

    def skip(self) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t\r\n\ufeff":
                self.i += 1
            elif s.startswith("//", self.i):
                j = s.find("\n", self.i)
                self.i = n if j < 0 else j + 1
            elif s.startswith("/*", self.i):
                j = s.find("*/", self.i + 2)
                if j < 0:
                    raise self.fail("unterminated /* comment")
                self.i = j + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.i >= len(self.s):
            raise self.fail("unexpected end of file")
        c = self.s[self.i]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"':
            start = self.i
            return Node(self.string(), start, self.i)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if self.s.startswith(word, self.i):
                start = self.i
                self.i += len(word)
                return Node(val, start, self.i)
        return self.number()

    def number(self) -> Node:
        m = _NUMBER.match(self.s, self.i)
        if not m or not m.group(0):
            raise self.fail(f"unexpected {self.s[self.i]!r}")
        start, self.i = self.i, m.end()
        text = m.group(0)
        try:
            return Node(float(text) if any(ch in text for ch in ".eE") else int(text), start, self.i)
        except ValueError:  # more digits than Python turns into an int (4300)
            raise self.fail(f"a number of {len(text)} digits is too long", start) from None

    def string(self) -> str:
        s = self.s
        self.i += 1
        out: list[str] = []
        while True:
            j = self.i
            while j < len(s) and s[j] not in '"\\\n':
                j += 1
            out.append(s[self.i:j])
            if j >= len(s) or s[j] == "\n":
                raise self.fail("unterminated string", j)
            if s[j] == '"':
                self.i = j + 1
                return "".join(out)
            esc = s[j + 1:j + 2]
            if esc == "u":
                try:
                    code = int(s[j + 2:j + 6], 16)
                except ValueError:
                    raise self.fail("bad \\u escape", j) from None
                self.i = j + 6
                if 0xD800 <= code < 0xDC00 and s.startswith("\\u", self.i):  # a pair: one character
                    try:
                        low = int(s[self.i + 2:self.i + 6], 16)
                    except ValueError:
                        low = 0
                    if 0xDC00 <= low < 0xE000:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        self.i += 6
                out.append(chr(code))  # a lone surrogate stays one (as json.loads does)
            elif esc in _ESCAPES:
                out.append(_ESCAPES[esc])
                self.i = j + 2
            else:
                raise self.fail(f"bad escape \\{esc}", j)

    def obj(self) -> Node:
        start = self.i
        self.i += 1
        node = Node({}, start, start)
        while True:
            self.skip()
            if self.s.startswith("}", self.i):
                self.i += 1
                break
            if not self.s.startswith('"', self.i):
                raise self.fail("expected a member name in double quotes")
            kstart = self.i
            key = self.string()
            self.skip()
            if not self.s.startswith(":", self.i):
                raise self.fail("expected ':'")
            self.i += 1
            child = self.value()
            if key in node.members:
                raise self.fail(f"duplicate member {key!r}", kstart)
            node.members[key] = child
            node.member_spans[key] = (kstart, child.end)
            node.value[key] = child.value
            self.skip()
            if self.s.startswith(",", self.i):
                self.i += 1
            elif self.s.startswith("}", self.i):
                self.i += 1
                break
            else:
                raise self.fail("expected ',' or '}'")
        node.end = self.i
        return node

    def arr(self) -> Node:
        start = self.i
        self.i += 1
        node = Node([], start, start)
        while True:
            self.skip()
            if self.s.startswith("]", self.i):
                self.i += 1
                break
            child = self.value()
            node.items.append(child)
            node.value.append(child.value)
            self.skip()
            if self.s.startswith(",", self.i):
                self.i += 1
            elif self.s.startswith("]", self.i):
                self.i += 1
                break
            else:
                raise self.fail("expected ',' or ']'")
        node.end = self.i
        return node


def parse(text: str) -> Node:
    """The document's root node; raises :class:`JsoncError` (with line and column) on anything else."""
    p = _Parser(text)
    try:
        root = p.value()
    except RecursionError:
        raise p.fail("nested too deeply") from None
    p.skip()
    if p.i != len(text):
        raise p.fail("unexpected text after the document")
    return root
