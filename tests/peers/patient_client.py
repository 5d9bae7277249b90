"""Run an SDK client script with a longer ``server/discover`` wait: ``python patient_client.py SCRIPT ARGS...``.

The SDK's default mode gives ``server/discover`` 10 s; a Python server started through the recorder on a
busy 2-core machine can take longer to import ``mcp``, and the client then falls back to ``initialize``
mid-start, which makes a recording that is not the one the test meant (two handshakes on one pipe).
"""

import runpy
import sys

import mcp.client.session

mcp.client.session.DISCOVER_TIMEOUT_SECONDS = 60.0
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
