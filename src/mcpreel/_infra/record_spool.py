"""Records kept on disk by the group they belong to, read back group by group: a split in flat memory.

A recording of many client sessions (a proxy that recorded one session per tool call, CI recording a
whole test suite) is replayed session by session. Reading the whole file again for each session makes
the work grow with the square of the file; holding every record in memory makes it grow with the file.
One pass writes each record once to a temporary file (pickled: the model's own objects come back as
they were, big integers and lone surrogates included) and remembers, per group, where its records
start: 8 bytes a record in memory, the records themselves on disk.
"""

from __future__ import annotations

import pickle
import tempfile
from array import array
from collections.abc import Callable, Iterator
from typing import IO

from mcpreel.model import Message


class RecordSpool:
    """Append ``(group, record)`` in file order; :meth:`reader` gives one group's records in that order."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile()
        self._offsets: dict[int, array[int]] = {}
        self._pickler = pickle.Pickler(self._file, protocol=pickle.HIGHEST_PROTOCOL)

    def append(self, group: int, record: Message) -> None:
        offsets = self._offsets.get(group)
        if offsets is None:
            offsets = self._offsets[group] = array("q")
        offsets.append(self._file.tell())
        self._pickler.dump(record)
        self._pickler.clear_memo()  # each record stands alone: it is read back on its own

    def count(self, group: int) -> int:
        return len(self._offsets.get(group, ()))

    def reader(self, group: int) -> Callable[[], Iterator[Message]]:
        """A re-iterable view of ``group``'s records (each call reads them again from the spool)."""
        spool = self

        def records() -> Iterator[Message]:
            fh = spool._file
            fh.flush()
            for offset in spool._offsets.get(group, ()):
                fh.seek(offset)
                yield pickle.load(fh)
            fh.seek(0, 2)  # back to the end, where appends go

        return records

    def close(self) -> None:
        self._file.close()
