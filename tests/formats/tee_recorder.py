"""A 50-line stdio line tee for the end-to-end test: ``python tee_recorder.py OUT.jsonl -- CMD ARGS...``.

It forwards the client's lines to the server and back unchanged and records each in a reel with
:class:`mcpreel.formats.reel.ReelWriter` (stderr lines too), so the formats can be tested against real
traffic without depending on the recorder of another issue.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from mcpreel._infra import jsonio
from mcpreel.formats.reel import ReelWriter
from mcpreel.model import Kind, Message, SessionInfo


def main() -> int:
    out, sep, *argv = sys.argv[1:]
    assert sep == "--"
    writer = ReelWriter(out, SessionInfo(transport="stdio", command=argv, label="e2e"))
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def record(direction: str, line: bytes) -> None:
        text = line.rstrip(b"\r\n")
        try:
            value = jsonio.loads(text)
        except ValueError:
            writer.write(Message(direction, None, kind=Kind.INVALID, text=text.decode("utf-8", "replace")))
            return
        writer.write(Message(direction, value))

    def pump_in() -> None:
        for line in sys.stdin.buffer:
            record("in", line)
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    def pump_out() -> None:
        for line in child.stdout:
            record("out", line)
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    def pump_err() -> None:
        for line in child.stderr:
            writer.write(Message(None, None, kind=Kind.STDERR, text=line.decode("utf-8", "replace").rstrip("\n")))

    threads = [threading.Thread(target=f, daemon=True) for f in (pump_in, pump_out, pump_err)]
    for t in threads:
        t.start()
    code = child.wait()
    threads[1].join(5)
    threads[2].join(5)
    writer.close(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
