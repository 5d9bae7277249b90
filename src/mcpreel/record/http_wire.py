"""Fewer, fuller TCP segments on both legs of the proxy — the cost of a hop is a wakeup, not a byte.

On a loopback hop each ``send()`` that reaches a waiting peer wakes it, and on a small machine the woken
process preempts the sender: measured on the 2-core CI box, a proxied request spent ~1.2 ms in four
``send()`` calls, more than the whole server. HTTP/1.1 stacks write a message's head and its body with
separate sends, so the peer wakes twice for one message. Both legs write a message in one send:

- upstream, the lean transport of :mod:`~mcpreel.record.http_upstream` writes a request in one call; for
  ``https`` targets :class:`BatchingBackend` wraps httpcore2's network backend: writes are held until the
  connection is next read (a client reads right after sending its request), then sent as one buffer;
- downstream, the listener's protocol (:mod:`mcpreel.serving.wire`, shared by every local server)
  gathers the writes made in one event-loop turn (``http.response.start`` + the first body chunk).

Nothing is reordered or changed; only the number of ``send()`` calls. SSE stream heads are never held:
the proxy sends them at once (a stream may say nothing for minutes), and a held write goes out at the end
of the loop turn anyway.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2
from httpcore2 import AsyncNetworkBackend, AsyncNetworkStream

__all__ = ["BatchingBackend", "upstream_transport"]


class _BatchingStream(AsyncNetworkStream):
    """Holds writes until the next read (or close): a request goes out as one segment."""

    def __init__(self, inner: AsyncNetworkStream):
        self._inner = inner
        self._pending: list[bytes] = []

    async def _flush(self, timeout: float | None) -> None:
        if self._pending:
            data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
            self._pending.clear()
            await self._inner.write(data, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._pending.append(buffer)
            if sum(map(len, self._pending)) >= 1 << 16:  # a big body is not held whole
                await self._flush(timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._flush(None)
        return await self._inner.read(max_bytes, timeout)

    async def aclose(self) -> None:
        self._pending.clear()
        await self._inner.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> AsyncNetworkStream:
        await self._flush(timeout)
        return _BatchingStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class BatchingBackend(AsyncNetworkBackend):
    """httpcore2's own backend, with :class:`_BatchingStream` around every connection."""

    def __init__(self, inner: AsyncNetworkBackend | None = None):
        self._inner = inner or httpcore2.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> AsyncNetworkStream:
        stream = await self._inner.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                               socket_options=socket_options)
        return _BatchingStream(stream)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)
        return _BatchingStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def upstream_transport(scheme: str, connect_timeout: float = 10.0) -> httpx2.AsyncBaseTransport:
    """The proxy's upstream transport: the lean HTTP/1.1 one for ``http``, httpx2's own for ``https``.

    httpx2's own runs on a batching connection pool; httpx2 does not take a network backend, so the pool
    it built is replaced by the same pool with one.
    """
    if scheme == "http":
        from mcpreel.record.http_upstream import Http1Transport

        return Http1Transport(connect_timeout)
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=64, keepalive_expiry=30.0)
    transport = httpx2.AsyncHTTPTransport(limits=limits, trust_env=False)
    if not isinstance(getattr(transport, "_pool", None), httpcore2.AsyncConnectionPool):  # pragma: no cover
        return transport  # a future httpx2 laid out differently: unbatched but correct
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=transport._pool._ssl_context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=BatchingBackend(),
    )
    return transport
