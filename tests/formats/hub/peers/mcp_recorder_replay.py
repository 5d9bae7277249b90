"""Run mcp-recorder's own replay server on a cassette, on 127.0.0.1 (its CLI binds 0.0.0.0).

    <.peers/mcp-recorder/bin/python> mcp_recorder_replay.py CASSETTE PORT MATCH

Runs in mcp-recorder's own virtualenv, with its own loader, matcher and Starlette app (the code behind
``mcp-recorder replay``). It serves until its stdin closes, then prints, as JSON on stdout, whether every
recorded request was consumed and how many incoming requests found no match.
"""

import json
import sys
import threading
from pathlib import Path

import uvicorn
from mcp_recorder._utils import load_cassette
from mcp_recorder.matcher import create_matcher
from mcp_recorder.replayer import create_replay_app

cassette = load_cassette(Path(sys.argv[1]))
matcher = create_matcher(sys.argv[3], cassette.interactions)
server = uvicorn.Server(uvicorn.Config(create_replay_app(cassette, matcher), host="127.0.0.1",
                                       port=int(sys.argv[2]), log_level="warning"))
thread = threading.Thread(target=server.run, daemon=True)  # not the main thread: no signal handlers
thread.start()
sys.stdin.read()
server.should_exit = True
thread.join(10)
print(json.dumps({"consumed": matcher.all_consumed, "unmatched": len(matcher.unmatched_requests)}), flush=True)
