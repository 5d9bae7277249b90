"""Private infrastructure, one copy each: faithful JSON (:mod:`.jsonio`), atomic 0600 files
(:mod:`.fileio`), time and the clock (:mod:`.timeutil`), server-sent events (:mod:`.sse`), JSON-RPC id rules and
request/response correlation (:mod:`.correlation`). Nothing here knows MCP's layers above it; every
layer may use it. Not a public API.
"""
