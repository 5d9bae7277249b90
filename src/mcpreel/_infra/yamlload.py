"""YAML read with a budget: what every YAML file mcpreel reads goes through (MCP-VCR transcripts, rules).

PyYAML's safe loader is safe from code, not from size: an alias is a reference to an anchored node, so
a 600-byte file of nested aliases ("billion laughs") is a document of 9^9 values once walked. The
loader itself returns at once (aliases are shared objects); whoever walks the result (a check of every
value, a ``repr`` in an error message, a JSON writer) never ends. So the node graph is composed first
and measured without expanding it (each node's expanded size and depth once, by identity), and refused
before anything is constructed when:

- aliases make it bigger than the file spells out by more than :data:`ALIAS_NODES` nodes,
- or by more than :data:`ALIAS_BYTES` bytes of text (one long string aliased many times is few nodes but
  gigabytes once written out: a 700 KB file of one 100 KB string and 200,000 aliases is 20 GB of JSON),
- it is nested deeper than :data:`~mcpreel._infra.nesting.MAX_DEPTH` (what a JSON reader accepts), or
- an alias stands inside its own anchor (a recursive document: JSON has no such value).

A file without aliases is never refused for its size (only for its depth): its nodes are its bytes.
"""

from __future__ import annotations

from typing import Any

import yaml

from mcpreel._infra.nesting import MAX_DEPTH

__all__ = ["ALIAS_BYTES", "ALIAS_NODES", "YamlLimitError", "load"]

#: how many nodes aliases may add to a document beyond the ones written in the file
ALIAS_NODES = 1_000_000
#: how many bytes (scalar text, and 2 per node for its punctuation) aliases may add beyond the file's own
ALIAS_BYTES = 16 << 20


class YamlLimitError(ValueError):
    """A document over the budget; ``line`` (from 1) is where the node that broke it starts."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def _line(node: yaml.Node) -> int | None:
    mark = node.start_mark
    return mark.line + 1 if mark is not None else None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _own_bytes(node: yaml.Node) -> int:
    """What ``node`` itself weighs written out: its text if a scalar, and 2 for its punctuation."""
    return 2 + (len(node.value) if isinstance(node, yaml.ScalarNode) else 0)


def check(root: yaml.Node) -> None:
    """Raise :class:`YamlLimitError` when ``root``'s document is over the budget (see the module doc).

    Iterative (a deep document must not exhaust the stack that measures it) and linear in the nodes
    written: a node reached again through an alias is measured once. A scalar child is measured where its
    collection is opened, not through the stack: most nodes of a big document are scalars, and a stack
    round trip for each made a plain list of a million numbers take most of a minute.
    """
    size: dict[int, int] = {}  # id(node) -> nodes in its expansion (itself included), once finished
    weight: dict[int, int] = {}  # id(node) -> bytes of its expansion (see _own_bytes), once finished
    written = 0  # bytes of the distinct nodes measured so far (what the file spells out)
    depth: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are being measured (an alias to one is a cycle)
    scalar = yaml.ScalarNode
    if type(root) is scalar or isinstance(root, scalar):
        return  # one scalar: its bytes are the file's
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            own = _own_bytes(node)
            written += own
            weight[key] = own + sum(weight[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            open_.discard(key)
            if depth[key] > MAX_DEPTH:
                raise YamlLimitError(f"nested deeper than {MAX_DEPTH} levels", _line(node))
            if size[key] > len(size) + ALIAS_NODES:  # len(size): the distinct nodes measured so far
                raise YamlLimitError(f"aliases expand the document by more than {ALIAS_NODES:,} nodes beyond "
                                     "what the file holds (nested aliases: a 'billion laughs')", _line(node))
            if weight[key] > written + ALIAS_BYTES:
                raise YamlLimitError(f"aliases expand the document by more than {ALIAS_BYTES >> 20} MB beyond "
                                     "what the file holds (a long value aliased many times)", _line(node))
            continue
        if key in size:
            continue
        if key in open_:
            raise YamlLimitError("an alias inside its own anchor (a recursive document has no JSON form)",
                                 _line(node))
        open_.add(key)
        stack.append((node, True))
        for kid in _children(node):
            k = id(kid)
            if k in size:
                continue
            if type(kid) is scalar or isinstance(kid, scalar):
                own = _own_bytes(kid)
                size[k], weight[k], depth[k] = 1, own, 1
                written += own
            else:
                stack.append((kid, False))


def load(data: bytes | str, loader: type[Any]) -> Any:
    """The one document in ``data`` read by ``loader`` (a safe loader class), checked by :func:`check`
    before it is constructed. Raises :class:`YamlLimitError` or PyYAML's own errors."""
    reader = loader(data)
    try:
        node = reader.get_single_node()
        if node is None:
            return None
        check(node)
        return reader.construct_document(node)
    finally:
        reader.dispose()
