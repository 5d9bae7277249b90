"""Our TCP listeners must get TCP_NODELAY on every connection (else ~40 ms per answer: delayed ACKs)."""

from __future__ import annotations

import asyncio
import socket

from mcpreel.serving.listen import listening_socket


def test_connections_accepted_by_asyncio_have_nagle_off():
    async def main() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        sock = listening_socket("127.0.0.1", 0)
        server = await asyncio.start_server(on_conn, sock=sock)
        port = sock.getsockname()[1]
        r, w = await asyncio.open_connection("127.0.0.1", port)
        value = await asyncio.wait_for(seen, 5)
        w.close()
        server.close()
        await server.wait_closed()
        return value

    assert asyncio.run(main()) != 0


def test_a_taken_port_is_an_os_error_and_nothing_leaks():
    first = listening_socket("127.0.0.1", 0)
    try:
        port = first.getsockname()[1]
        try:
            listening_socket("127.0.0.1", port)
        except OSError:
            pass
        else:
            raise AssertionError("binding a taken port succeeded")
    finally:
        first.close()
