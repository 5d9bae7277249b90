"""A line-level stdio server whose misbehaviour the test chooses (argv[1]).

echo        answer every line with itself (the bytes as they came)
answer      answer every request with a result naming its method
garbage     write non-JSON to stdout and lines to stderr, then echo
exit N      exit with code N right away (after a line on stderr)
crash       read one line, then exit 3 without answering (a request in flight)
signal N    kill itself with signal N after the first line
sigterm     echo; on SIGTERM write "got SIGTERM" on stderr and exit 42
pid FILE    write its pid to FILE, then echo
orphan      answer one line, leave a child holding stdout/stderr open for 10 s, say "leaving" and exit 0
"""

from __future__ import annotations

import os
import signal
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "echo"
out = sys.stdout.buffer
err = sys.stderr


def echo() -> None:
    for line in sys.stdin.buffer:
        out.write(line)
        out.flush()


if mode == "echo":
    echo()
elif mode == "answer":
    import json

    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" in msg and "method" in msg:
            out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"method": msg["method"]}}).encode() + b"\n")
            out.flush()
elif mode == "garbage":
    err.write("starting up\nsecond stderr line\n")
    err.flush()
    out.write(b"this is not json\n\xff\xfe bytes\n")
    out.flush()
    echo()
elif mode == "exit":
    err.write("exiting\n")
    err.flush()
    sys.exit(int(sys.argv[2]))
elif mode == "crash":
    sys.stdin.buffer.readline()
    err.write("crash mid-call\n")
    err.flush()
    os._exit(3)
elif mode == "signal":
    sys.stdin.buffer.readline()
    os.kill(os.getpid(), int(sys.argv[2]))
elif mode == "sigterm":
    def on_term(signum, frame):
        err.write("got SIGTERM\n")
        err.flush()
        os._exit(42)

    signal.signal(signal.SIGTERM, on_term)
    err.write("ready\n")
    err.flush()
    echo()
elif mode == "pid":
    with open(sys.argv[2], "w") as fh:
        fh.write(str(os.getpid()))
    echo()
elif mode == "orphan":
    import subprocess

    out.write(sys.stdin.buffer.readline())
    out.flush()
    subprocess.Popen(["sleep", "10"])  # inherits the pipes: the proxy's drain waits for it
    err.write("leaving\n")
    err.flush()
    sys.exit(0)
else:
    sys.exit(f"unknown mode {mode}")
