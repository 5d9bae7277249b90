"""The demo: mcpreel's own small MCP server (:mod:`.server`) and the main job run on it (:mod:`.run`).

``mcpreel demo-server`` serves :func:`.server.build_server` over stdio, Streamable HTTP or legacy SSE;
``mcpreel demo`` (:func:`.run.run_demo`) records it, converts the recording, records it again over
Streamable HTTP and checks it.
"""
