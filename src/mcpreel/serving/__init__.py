"""The server side of every local listener mcpreel runs: the recording proxy, the mock and the demo server.

:mod:`.listen` makes the TCP listener (127.0.0.1 unless told otherwise, ``TCP_NODELAY``).
"""
