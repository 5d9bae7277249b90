"""server-everything over stdio with one change: its research reports say "Summary" for "Report".

    python changed_everything.py NODE_SCRIPT

The regression the task replay must catch: the same tools, the same task lifecycle (``working`` polls,
``completed``), a different ``tasks/result``. Lines pass through unchanged otherwise.
"""

import subprocess
import sys
import threading


def main() -> None:
    proc = subprocess.Popen(["node", sys.argv[1], "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None

    def pump_in() -> None:
        assert proc.stdin is not None
        for line in sys.stdin.buffer:
            proc.stdin.write(line)
        proc.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    out = sys.stdout.buffer
    for line in proc.stdout:
        out.write(line.replace(b"# Research Report:", b"# Research Summary:"))
        out.flush()
    sys.exit(proc.wait())


if __name__ == "__main__":
    main()
