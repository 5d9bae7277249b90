"""Run a client through ``mcpreel record``: the conformance suite's ``--command`` for its client scenarios.

    MCPREEL_REEL=out.jsonl python tests/peers/through_record.py CLIENT ARGS... URL

Starts ``mcpreel record --transport streamable-http --target URL`` on a free 127.0.0.1 port, runs the
client with the proxy's URL (same path) in place of ``URL``, then stops the recorder as a person does
(SIGINT) so the reel is whole, and exits with the client's exit code. The client finds the recorded
server's URL in ``MCPREEL_TARGET_URL``. The recorder's own output goes to
``MCPREEL_REEL`` + ``.log``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit, urlunsplit


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    *client, url = sys.argv[1:]
    reel = os.environ["MCPREEL_REEL"]
    port = free_port()
    with open(reel + ".log", "ab") as log:
        proxy = subprocess.Popen([sys.executable, "-m", "mcpreel", "record", "--transport", "streamable-http",
                                  "--target", url, "--listen", f"127.0.0.1:{port}", "--out", reel, "--no-control"],
                                 stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proxy.poll() is not None or time.monotonic() > deadline:
                    print(f"through_record: the recorder never listened on {port}", file=sys.stderr)
                    return 3
                time.sleep(0.05)
        parts = urlsplit(url)
        proxied = urlunsplit((parts.scheme, f"127.0.0.1:{port}", parts.path, parts.query, parts.fragment))
        return subprocess.run([*client, proxied], timeout=60, env={**os.environ, "MCPREEL_TARGET_URL": url}).returncode
    finally:
        proxy.send_signal(signal.SIGINT)
        try:
            proxy.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proxy.kill()
            proxy.wait()


if __name__ == "__main__":
    sys.exit(main())
