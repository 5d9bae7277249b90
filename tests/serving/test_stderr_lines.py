"""Issue 28 item 14: stderr carries mcpreel's lines, not other libraries' (unless ``mcpreel -v``), and
``demo-server`` warns of a non-loopback bind as ``record`` and ``serve`` do.

Real subprocesses of the CLI: uvicorn's "Invalid HTTP request received." for a garbage request to the demo
server, and the OpenTelemetry SDK's export retries for a dead ``--otlp-endpoint``, used to reach stderr
through logging's last resort before (or instead of) mcpreel's own one line.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(90)
PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}


def demo_server_stderr(verbose: bool) -> str:
    argv = [PY, "-m", "mcpreel", *(["-v"] if verbose else []), "demo-server", "--transport", "streamable-http",
            "--port", "0"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=ENV)
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline().decode()
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert port, line
        with socket.create_connection(("127.0.0.1", int(port.group(1))), 10) as sock:
            sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            sock.settimeout(10)
            while sock.recv(4096):
                pass
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    return line + err.decode()


def test_uvicorns_invalid_request_line_is_kept_off_stderr_unless_verbose() -> None:
    quiet = demo_server_stderr(verbose=False)
    assert "Invalid HTTP request received" not in quiet, quiet
    assert "mcpreel demo server (streamable-http) on http://127.0.0.1:" in quiet  # mcpreel's own lines stay
    loud = demo_server_stderr(verbose=True)
    assert "uvicorn.error: WARNING: Invalid HTTP request received." in loud, loud


SERVER = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        print(json.dumps({"jsonrpc": "2.0", "id": json.loads(line)["id"], "result": {}}), flush=True)
    """
)


@pytest.mark.parametrize("verbose", [False, True])
def test_the_otel_sdks_retry_lines_are_kept_off_stderr_unless_verbose(tmp_path: Path, verbose: bool) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    argv = [PY, "-m", "mcpreel", *(["-v"] if verbose else []), "record", "--out", str(tmp_path / "r.jsonl"),
            "--otlp-endpoint", f"http://127.0.0.1:{dead}", "--", PY, "-c", SERVER]
    done = subprocess.run(argv, input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True,
                          env=ENV, timeout=60)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert f"warning: OTLP export to http://127.0.0.1:{dead}/v1/traces failed" in err  # mcpreel's one line
    others = [line for line in err.splitlines() if line.startswith("opentelemetry") or "spans batch" in line]
    if verbose:
        assert others, err
    else:
        assert others == [], err


def test_demo_server_warns_of_a_non_loopback_bind_as_record_and_serve_do() -> None:
    # 192.0.2.1 (TEST-NET-1) is on no interface here: the bind fails, after the warning, and nothing listens
    done = subprocess.run([PY, "-m", "mcpreel", "demo-server", "--transport", "streamable-http", "--host", "192.0.2.1",
                           "--port", "0"], capture_output=True, env=ENV, timeout=60, stdin=subprocess.DEVNULL)
    err = done.stderr.decode()
    assert "warning: listening on 192.0.2.1: other machines can reach this demo server" in err, err
    assert done.returncode == 2 and "cannot listen on 192.0.2.1" in err
    record = subprocess.run([PY, "-m", "mcpreel", "record", "--transport", "streamable-http",
                             "--target", "http://127.0.0.1:9/mcp", "--listen", "192.0.2.1:0"],
                            capture_output=True, env=ENV, timeout=60, stdin=subprocess.DEVNULL)
    assert "warning: listening on 192.0.2.1: other machines can reach this proxy" in record.stderr.decode()
