"""A stdio peer that is not newline-delimited JSON: it writes a binary greeting with no newline, then
echoes every byte it reads at once (``os.read``/``os.write``, no line buffering), and with ``--log DIR``
keeps what it read and wrote, byte for byte. Exits at stdin's EOF.

Run: ``python byte_echo.py [--log DIR]``.
"""

from __future__ import annotations

import os
import sys

GREETING = b"\x00\x01\xfe\xffbinary hello\r\x00"


def main() -> int:
    log = sys.argv[sys.argv.index("--log") + 1] if "--log" in sys.argv else None
    got = open(os.path.join(log, "server-read.bin"), "wb") if log else None
    sent = open(os.path.join(log, "server-wrote.bin"), "wb") if log else None

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(1, view)
            view = view[n:]
        if sent:
            sent.write(data)

    write(GREETING)
    while True:
        data = os.read(0, 1 << 16)
        if not data:
            break
        if got:
            got.write(data)
        write(data)
    if got:
        got.close()
    if sent:
        sent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
