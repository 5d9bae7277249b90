"""The server side of every local listener mcpreel runs: the recording proxy, the mock and the demo server.

One layer, so the three cannot drift apart in what they accept or in how they start and stop:

- :mod:`.origin`: which requests are answered -- the one ``Origin`` and ``Host`` policy (loopback,
  own origin, ``--allow-origin`` with ``*``; rebound ``Host`` names refused on loopback), as pure
  functions and as an ASGI guard;
- :mod:`.loop`: the one serving loop -- bind first, uvicorn configured once, ``ready(host, port)``,
  stop on a signal or :meth:`~.loop.Server.stop`, clean shutdown;
- :mod:`.limits`: what one request may cost -- its body (413), its head (431), the time to send its head
  (408) -- applied by the loop to every listener before the app sees the request;
- :mod:`.listen` makes the TCP listener (127.0.0.1 unless told otherwise, ``TCP_NODELAY``);
- :mod:`.wire`: the listener's HTTP/1.1 protocol that sends what one loop turn wrote in one segment.
"""
