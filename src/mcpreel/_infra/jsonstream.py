"""One JSON document written as a stream: its big arrays encoded one item at a time.

The one-document formats (HAR, the Inspector export, the HTTP envelope, the cassettes) and
``inspect --json`` hold one array that grows with the session. Building the whole document and encoding
it at once holds every item twice (as Python objects and as bytes): gigabytes at a million messages.
:func:`write_document` writes the same bytes as :func:`mcpreel._infra.jsonio.dumps_indented` (or
:func:`~mcpreel._infra.jsonio.dumps`) of the whole document, with each array given as an iterable that
is consumed as it is written, so memory holds one item (and a batch of encoded ones) at a time.

The caller puts a :func:`marker` where an array goes; the rest of the document is encoded at once and
the arrays are spliced in at their markers, indented to their depth.

One difference from encoding the whole document: an item that orjson cannot encode (an integer beyond
64 bits, a lone surrogate) falls back to the standard library for that item alone, not for the document.
"""

from __future__ import annotations

import heapq
import pickle
import tempfile
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any, BinaryIO

from mcpreel._infra import jsonio

__all__ = ["Encoded", "ItemSpool", "Settling", "SortedSpool", "marker", "write_document"]

_BATCH = 512


class Encoded(bytes):
    """An array item already encoded (by ``dumps_indented`` for an indented document, ``dumps`` else)."""


class SortedSpool:
    """Encoded items sorted by a key (ties kept in the order they came), in bounded memory.

    Items are held up to :attr:`limit` bytes, then sorted and written to a temporary file as one run;
    :meth:`__iter__` merges the runs. What lets the HAR writer keep its entries in start order without
    holding them all: a session whose entries come in order costs one pass through a temporary file.
    """

    def __init__(self, limit: int = 8 << 20) -> None:
        self.limit = limit
        self._items: list[tuple[Any, int, Encoded]] = []
        self._size = 0
        self._n = 0
        self._file: IO[bytes] | None = None
        self._runs: list[tuple[int, int]] = []  # (offset, count) of each run in the file

    def add(self, key: Any, item: bytes) -> None:
        encoded = item if type(item) is Encoded else Encoded(item)
        self._items.append((key, self._n, encoded))
        self._n += 1
        self._size += len(encoded) + 100
        if self._size >= self.limit:
            self._spill()

    def _spill(self) -> None:
        if not self._items:
            return
        if self._file is None:
            self._file = tempfile.TemporaryFile()
        self._items.sort(key=lambda x: (x[0], x[1]))
        self._file.seek(0, 2)
        offset = self._file.tell()
        for start in range(0, len(self._items), 1024):
            pickle.dump(self._items[start:start + 1024], self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._runs.append((offset, len(self._items)))
        self._items = []
        self._size = 0

    def _read_run(self, offset: int, count: int) -> Iterator[tuple[Any, int, Encoded]]:
        assert self._file is not None
        done = 0
        while done < count:
            self._file.seek(offset)
            batch = pickle.load(self._file)
            offset = self._file.tell()
            done += len(batch)
            yield from batch

    def __iter__(self) -> Iterator[Encoded]:
        self._items.sort(key=lambda x: (x[0], x[1]))
        if not self._runs:
            for _, _, item in self._items:
                yield item
            return
        runs = [self._read_run(o, c) for o, c in self._runs]
        for _, _, item in heapq.merge(*runs, iter(self._items), key=lambda x: (x[0], x[1])):
            yield item

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


class ItemSpool:
    """Encoded items kept in a temporary file in the order they came, read back by iterating: for a
    document whose header is known only once every item has been made (a cassette's metadata)."""

    _BATCH = 1024

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile()
        self._batch: list[Encoded] = []
        self._count = 0

    def append(self, item: bytes) -> None:
        self._batch.append(item if type(item) is Encoded else Encoded(item))
        self._count += 1
        if len(self._batch) >= self._BATCH:
            pickle.dump(self._batch, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._batch = []

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Encoded]:
        if self._batch:
            pickle.dump(self._batch, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._batch = []
        self._file.seek(0)
        done = 0
        while done < self._count:
            batch: list[Encoded] = pickle.load(self._file)
            done += len(batch)
            yield from batch

    def close(self) -> None:
        self._file.close()


class Settling:
    """Items released in the order they were made, each once nothing can change it any more.

    A writer whose item changes after it is made (a request entry that takes its response) adds it
    ``waiting`` and settles it later; :meth:`ready` hands out the settled items at the front, encoded.
    Memory holds only the items from the oldest one still waiting onwards.
    """

    def __init__(self, encode: Callable[[Any], bytes]) -> None:
        self.encode = encode
        self.held: deque[list[Any]] = deque()  # [item or its encoding, waiting]

    def add(self, item: Any, waiting: bool = False) -> list[Any]:
        slot = [item, True] if waiting else [Encoded(self.encode(item)), False]
        self.held.append(slot)
        return slot

    def settle(self, slot: list[Any]) -> None:
        if slot[1]:
            slot[1] = False
            slot[0] = Encoded(self.encode(slot[0]))

    def ready(self) -> Iterator[Encoded]:
        held = self.held
        while held and not held[0][1]:
            yield held.popleft()[0]

    def rest(self) -> Iterator[Encoded]:
        for slot in self.held:
            self.settle(slot)
        return self.ready()


def marker() -> str:
    """A string that stands for a streamed array in a document (unique per call)."""
    return f"@@mcpreel-stream-{uuid.uuid4().hex}@@"


def write_document(out: BinaryIO, doc: Any, arrays: Mapping[str, Iterable[Any]], *, indent: bool = True) -> None:
    """Write ``doc`` with each marker string that is a key of ``arrays`` replaced by that array.

    Byte for byte what encoding the whole document would give (see the module note on fallbacks).
    """
    data = jsonio.dumps_indented(doc) if indent else jsonio.dumps(doc)
    spots = []
    for key, items in arrays.items():
        at = data.find(b'"' + key.encode("ascii") + b'"')
        if at < 0:
            raise ValueError(f"marker {key!r} is not in the document")
        spots.append((at, len(key) + 2, items))
    spots.sort(key=lambda spot: spot[0])
    pos = 0
    for at, length, items in spots:
        out.write(data[pos:at])
        if indent:
            line = data.rfind(b"\n", 0, at) + 1
            depth = len(data[line:at]) - len(data[line:at].lstrip(b" "))
            _write_indented(out, items, depth)
        else:
            _write_compact(out, items)
        pos = at + length
    out.write(data[pos:])


def _write_indented(out: BinaryIO, items: Iterable[Any], depth: int) -> None:
    pad = b"\n" + b" " * (depth + 2)
    dumps = jsonio.dumps_indented
    batch: list[bytes] = []
    first = True
    for item in items:
        encoded = item if type(item) is Encoded else dumps(item)
        if b"\n" in encoded:
            encoded = encoded.replace(b"\n", pad)
        batch.append((b"[" if first else b",") + pad + encoded)
        first = False
        if len(batch) >= _BATCH:
            out.write(b"".join(batch))
            batch.clear()
    if batch:
        out.write(b"".join(batch))
    out.write(b"[]" if first else b"\n" + b" " * depth + b"]")


def _write_compact(out: BinaryIO, items: Iterable[Any]) -> None:
    dumps = jsonio.dumps
    batch: list[bytes] = [b"["]
    first = True
    for item in items:
        if not first:
            batch.append(b",")
        batch.append(item if type(item) is Encoded else dumps(item))
        first = False
        if len(batch) >= _BATCH:
            out.write(b"".join(batch))
            batch.clear()
    batch.append(b"]")
    out.write(b"".join(batch))
