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
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any, BinaryIO

import orjson

from mcpreel._infra import jsonio

__all__ = ["Encoded", "ItemSpool", "RunSpool", "SortedSpool", "encode_run", "marker", "write_document"]

_BATCH = 512
_BATCH_BYTES = 1 << 20  # a batch is written once it holds this much (an item may be a run of many)


class Encoded(bytes):
    """An array item already encoded (by ``dumps_indented`` for an indented document, ``dumps`` else)."""


class SortedSpool:
    """Encoded items sorted by a key (ties kept in the order they came), in bounded memory.

    Items are held up to :attr:`limit` bytes, then sorted and written to a temporary file as one run;
    :meth:`__iter__` merges the runs. What lets the HAR writer keep its entries in start order without
    holding them all: a session whose entries come in order costs one pass through a temporary file,
    and neither a sort nor a merge (the runs are read one after the other).

    Items are kept as plain ``bytes`` (pickled as such, several times faster than a ``bytes`` subclass)
    and made :class:`Encoded` as they are read back; keys are compared as ``(key, arrival)``, so two
    items never compare their bytes.
    """

    _RUN_BATCH = 64

    def __init__(self, limit: int = 16 << 20) -> None:
        self.limit = limit
        self._items: list[tuple[Any, int, bytes]] = []
        self._size = 0
        self._n = 0
        self._file: IO[bytes] | None = None
        self._runs: list[tuple[int, int]] = []  # (offset, count) of each run in the file
        self._in_order = True  # every key so far came no smaller than the one before
        self._last: Any = None

    def add(self, key: Any, item: bytes) -> None:
        if self._in_order:
            if self._n and key < self._last:
                self._in_order = False
            self._last = key
        # a copy the size of its bytes: orjson's have room to spare (a third more memory held)
        self._items.append((key, self._n, bytes(memoryview(item))))
        self._n += 1
        self._size += len(item) + 100
        if self._size >= self.limit:
            self._spill()

    def _spill(self) -> None:
        if not self._items:
            return
        if self._file is None:
            self._file = tempfile.TemporaryFile()
        if not self._in_order:
            self._items.sort()
        self._file.seek(0, 2)
        offset = self._file.tell()
        # small batches: the merge at the end holds one batch per run in memory (a hundred runs at a
        # million messages)
        for start in range(0, len(self._items), self._RUN_BATCH):
            pickle.dump(self._items[start:start + self._RUN_BATCH], self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._runs.append((offset, len(self._items)))
        self._items = []
        self._size = 0

    def _read_run(self, offset: int, count: int) -> Iterator[tuple[Any, int, bytes]]:
        assert self._file is not None
        done = 0
        while done < count:
            self._file.seek(offset)
            batch = pickle.load(self._file)
            offset = self._file.tell()
            done += len(batch)
            yield from batch

    def __iter__(self) -> Iterator[Encoded]:
        runs: list[Iterable[tuple[Any, int, bytes]]] = [self._read_run(o, c) for o, c in self._runs]
        if self._in_order:
            runs.append(self._items)
            for run in runs:
                for _, _, item in run:
                    yield Encoded(item)
            return
        self._items.sort()
        for _, _, item in heapq.merge(*runs, self._items):
            yield Encoded(item)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


class ItemSpool:
    """Items kept in a temporary file in the order they came, read back encoded by iterating.

    For a document whose header is known only once every item has been made (a cassette's metadata),
    and for items that change after they are made (a request entry that takes its response): such an
    item is :meth:`hold`-ed -- its place kept, the object in memory -- and :meth:`settle`-d once final;
    settled while its batch is still in memory, it is encoded there and forgotten; else (and if never
    settled) it is encoded when read back. Memory holds one batch plus the items still open, never the
    items that merely follow an open one.

    Batches hold plain ``bytes`` (pickled as one copy each; a ``bytes`` subclass would go through
    ``__reduce_ex__``, several times slower): items become :class:`Encoded` as they are read back.
    """

    _BATCH = 1024
    #: a batch also goes to the file once its encoded items reach this many bytes (items that are runs
    #: of entries are large: 1024 of them would keep tens of megabytes in memory)
    _BATCH_BYTES = 1 << 20

    def __init__(self, encode: Callable[[Any], bytes] = jsonio.dumps_indented) -> None:
        self._encode = encode
        self._file: IO[bytes] = tempfile.TemporaryFile()
        self._batch: list[bytes | None] = []
        self._batch_bytes = 0
        self._flushed = 0  # items already in the file
        self._count = 0
        self._held: dict[int, Any] = {}  # position -> an item held open (None in its batch)

    def append(self, item: bytes) -> None:
        """An item already encoded (final)."""
        self._batch.append(item if type(item) is bytes else bytes(item))
        self._count += 1
        self._batch_bytes += len(item)
        if len(self._batch) >= self._BATCH or self._batch_bytes >= self._BATCH_BYTES:
            self._flush()

    def hold(self, item: Any) -> int:
        """Keep ``item``'s place; it may still change. Returns its position (for :meth:`settle`)."""
        position = self._count
        self._held[position] = item
        self._batch.append(None)
        self._count += 1
        if len(self._batch) >= self._BATCH:
            self._flush()
        return position

    def settle(self, position: int) -> None:
        """The item held at ``position`` is final (encoded now when its batch is still in memory)."""
        if position >= self._flushed and position in self._held:
            self._batch[position - self._flushed] = self._encode(self._held.pop(position))

    def _flush(self) -> None:
        if self._batch:
            pickle.dump(self._batch, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._flushed += len(self._batch)
            self._batch = []
            self._batch_bytes = 0

    def __len__(self) -> int:
        return self._count

    def _batches(self) -> Iterator[list[bytes]]:
        """The batches from the file in order, each item encoded (a held one now, if not before)."""
        self._flush()
        self._file.seek(0)
        position = 0
        held, encode = self._held, self._encode
        while position < self._count:
            batch: list[bytes | None] = pickle.load(self._file)
            for i, item in enumerate(batch):
                if item is None:
                    batch[i] = encode(held[position + i])
            position += len(batch)
            yield batch  # type: ignore[misc]  # no None is left in it

    def __iter__(self) -> Iterator[Encoded]:
        for batch in self._batches():
            for item in batch:
                yield Encoded(item)

    def joined(self, separator: bytes) -> Iterator[Encoded]:
        """The items a batch at a time, each batch one :class:`Encoded` item: its items joined by
        ``separator``, the array's own (``b","`` for a compact document, ``b",\\n"`` for an indented
        one), which :func:`write_document` writes as the same bytes as the items one by one."""
        for batch in self._batches():
            yield Encoded(separator.join(batch))

    def close(self) -> None:
        self._file.close()


def encode_run(items: list[Any], depth: int) -> bytes:
    """``items`` as they stand ``depth`` spaces deep in an indented array, joined by ``,`` and a new
    line (nothing before the first): the bytes :func:`write_document` writes for them, made by one
    orjson call for the whole run (the run nested in arrays comes out indented to its depth) instead of
    one call and one re-indentation per item. A run orjson refuses is encoded item by item, the refused
    ones by the standard library, as for one item. ``items`` must not be empty; ``depth`` is even, >= 2.
    """
    nested: Any = items
    levels = depth // 2
    for _ in range(levels - 1):
        nested = [nested]
    try:
        block = orjson.dumps(nested, option=orjson.OPT_INDENT_2)
        if jsonio.indented_too_deep(block, depth):
            raise TypeError("members past the levels indented: made item by item, those compact")
    except TypeError:
        pad = b"\n" + b" " * depth
        return (b"," + pad).join(jsonio.dumps_indented(item).replace(b"\n", pad) for item in items)
    frame = _RUN_FRAME.get(depth)
    if frame is None:
        head = sum(2 * j + 2 for j in range(levels)) + depth  # "[\n", "  [\n", ... and the first item's indentation
        tail = sum(2 * j + 2 for j in range(levels))  # "\n  ]", "\n]"
        frame = _RUN_FRAME[depth] = (head, tail)
    head, tail = frame
    return block[head:len(block) - tail]


_RUN_FRAME: dict[int, tuple[int, int]] = {}  # depth -> the lengths of what encode_run's nesting adds before and after


class RunSpool:
    """Items in the order they came, encoded a run at a time (:func:`encode_run`) into a temporary file
    at the depth their array will stand at; :func:`write_document` copies the file into the document.

    For a document whose header is known only once every item has been made (a cassette's) and whose
    items never change once made: no per-item encoding, pickling or re-indentation, and memory holds one
    run. ``depth`` must be where the document puts the array's items (:func:`write_document` checks).
    """

    _RUN = 256

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._file: IO[bytes] = tempfile.TemporaryFile()
        self._run: list[Any] = []
        self._count = 0

    def append(self, item: Any) -> None:
        self._run.append(item)
        self._count += 1
        if len(self._run) >= self._RUN:
            self._flush()

    def _flush(self) -> None:
        if self._run:
            first = self._count == len(self._run)
            self._file.write((b"" if first else b",\n" + b" " * self.depth) + encode_run(self._run, self.depth))
            self._run = []

    def __len__(self) -> int:
        return self._count

    def write_to(self, out: BinaryIO, depth: int) -> None:
        """The array, its items at ``depth`` spaces (``depth - 2`` before its closing bracket)."""
        if depth + 2 != self.depth:
            raise ValueError(f"the items were encoded {self.depth} spaces deep, the array stands at {depth}")
        self._flush()
        if not self._count:
            out.write(b"[]")
            return
        out.write(b"[\n" + b" " * self.depth)
        self._file.seek(0)
        shutil.copyfileobj(self._file, out, 1 << 20)
        out.write(b"\n" + b" " * depth + b"]")

    def close(self) -> None:
        self._file.close()


def marker() -> str:
    """A string that stands for a streamed array in a document (unique per call)."""
    return f"@@mcpreel-stream-{uuid.uuid4().hex}@@"


def write_document(out: BinaryIO, doc: Any, arrays: Mapping[str, Iterable[Any] | RunSpool], *,
                   indent: bool = True) -> None:
    """Write ``doc`` with each marker string that is a key of ``arrays`` replaced by that array.

    Byte for byte what encoding the whole document would give (see the module note on fallbacks).
    An :class:`Encoded` item may hold several items joined by the array's separator (``b","``, or
    ``b",\\n"`` when indented; :meth:`ItemSpool.joined`): they come out as if given one by one.
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
            if isinstance(items, RunSpool):
                items.write_to(out, depth)
            else:
                _write_indented(out, items, depth)
        elif isinstance(items, RunSpool):
            raise ValueError("a RunSpool's items are encoded indented")
        else:
            _write_compact(out, items)
        pos = at + length
    out.write(data[pos:])


def _write_indented(out: BinaryIO, items: Iterable[Any], depth: int) -> None:
    """Each item on its own line, indented by ``depth + 2`` spaces (its inner lines too).

    Done a batch at a time: the items of a batch, each after a newline, joined by commas, then every
    newline of the batch indented at once (the same bytes as item by item, in one pass over them).
    """
    pad = b"\n" + b" " * (depth + 2)
    dumps = jsonio.dumps_indented
    batch: list[bytes] = []
    size = 0
    first = True
    for item in items:
        encoded = item if type(item) is Encoded else dumps(item)
        batch.append(encoded)
        size += len(encoded)
        if len(batch) >= _BATCH or size >= _BATCH_BYTES:
            out.write(_indented_batch(batch, first, pad))
            first = False
            batch.clear()
            size = 0
    if batch:
        out.write(_indented_batch(batch, first, pad))
        first = False
    out.write(b"[]" if first else b"\n" + b" " * depth + b"]")


def _indented_batch(batch: list[bytes], first: bool, pad: bytes) -> bytes:
    """``[`` (the first batch) or ``,``, then the items of ``batch`` each on a line of its own."""
    return (b"[" if first else b",") + (b"\n" + b",\n".join(batch)).replace(b"\n", pad)


def _write_compact(out: BinaryIO, items: Iterable[Any]) -> None:
    dumps = jsonio.dumps
    batch: list[bytes] = [b"["]
    size = 0
    first = True
    for item in items:
        if not first:
            batch.append(b",")
        encoded = item if type(item) is Encoded else dumps(item)
        batch.append(encoded)
        size += len(encoded)
        first = False
        if len(batch) >= _BATCH or size >= _BATCH_BYTES:
            out.write(b"".join(batch))
            batch.clear()
            size = 0
    batch.append(b"]")
    out.write(b"".join(batch))
