"""The lean HTTP/1.1 upstream transport, against a scripted raw TCP server: framing, reuse, errors."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.record.http_upstream import KEEPALIVE_EXPIRY, Http1Transport
from mcpreel.record.http_wire import upstream_transport

pytestmark = pytest.mark.anyio

class RawServer:
    """Answers each connection with a script; counts connections and remembers the requests' heads."""

    def __init__(self, script: Callable[..., object]):
        self.script = script
        self.connections = 0
        self.heads: list[bytes] = []
        self.bodies: list[bytes] = []

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.script(self, reader, writer)  # type: ignore[misc]
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def read_request(self, reader: asyncio.StreamReader) -> bytes:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        length = 0
        chunked = False
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
            if name.lower() == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if chunked:
            body = b""
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                data = await reader.readexactly(size + 2)
                if size == 0:
                    break
                body += data[:-2]
        else:
            body = await reader.readexactly(length)
        self.bodies.append(body)
        return body

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)


def answer(*parts: bytes, keep: bool = True, pause: float = 0.0) -> Callable[..., object]:
    """A script: for each request on the connection, send ``parts`` (with a pause between them)."""

    async def script(srv: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await srv.read_request(reader)
            for part in parts:
                writer.write(part)
                await writer.drain()
                if pause:
                    await asyncio.sleep(pause)
            if not keep:
                return

    return script


async def fetch(t: httpx2.AsyncBaseTransport, url: str, method: str = "POST", content: object = b"{}") -> tuple[httpx2.Response, bytes]:
    req = httpx2.Request(method, url, content=content)  # type: ignore[arg-type]
    resp = await t.handle_async_request(req)
    body = b"".join([c async for c in resp.aiter_raw()])
    await resp.aclose()
    return resp, body


async def test_content_length_and_reuse() -> None:
    srv = RawServer(answer(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n", b'{"a":1}'))
    async with srv.running() as base:
        t = Http1Transport()
        r1, b1 = await fetch(t, base + "/mcp?x=1")
        r2, b2 = await fetch(t, base + "/mcp")
        await t.aclose()
    assert (r1.status_code, b1, b2) == (200, b'{"a":1}', b'{"a":1}')
    assert r1.headers.raw[0] == (b"Content-Type", b"application/json")  # names as the server wrote them
    assert srv.connections == 1  # kept alive and reused
    assert srv.heads[0].startswith(b"POST /mcp?x=1 HTTP/1.1\r\n") and b"Host: 127.0.0.1:" in srv.heads[0]
    assert srv.bodies == [b"{}", b"{}"]


async def test_chunked_with_extensions_and_trailers() -> None:
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Trailer: 1\r\n\r\n"
    srv = RawServer(answer(chunked[:30], chunked[30:41], chunked[41:]))
    async with srv.running() as base:
        t = Http1Transport()
        _, body = await fetch(t, base)
        _, again = await fetch(t, base)
        await t.aclose()
    assert body == again == b"Wikipedia"
    assert srv.connections == 1


async def test_close_delimited_http10_and_informational() -> None:
    srv = RawServer(answer(b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n", b"HTTP/1.0 200 OK\r\n\r\nuntil ", b"the end",
                           keep=False))
    async with srv.running() as base:
        t = Http1Transport()
        r, body = await fetch(t, base)
        _, again = await fetch(t, base)
        await t.aclose()
    assert r.status_code == 200 and body == again == b"until the end"
    assert srv.connections == 2  # HTTP/1.0 without keep-alive: not reused


@pytest.mark.parametrize(("method", "status"), [("HEAD", 200), ("POST", 204), ("GET", 304)])
async def test_bodiless_answers(method: str, status: int) -> None:
    srv = RawServer(answer(b"HTTP/1.1 %d X\r\nContent-Length: 5\r\n\r\n" % status if method == "HEAD"
                           else b"HTTP/1.1 %d X\r\n\r\n" % status))
    async with srv.running() as base:
        t = Http1Transport()
        r, body = await fetch(t, base, method, None if method != "POST" else b"{}")
        r2, _ = await fetch(t, base, method, None if method != "POST" else b"{}")
        await t.aclose()
    assert r.status_code == r2.status_code == status and body == b""
    assert srv.connections == 1


async def test_connection_close_header_is_respected() -> None:
    srv = RawServer(answer(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", keep=False))
    async with srv.running() as base:
        t = Http1Transport()
        await fetch(t, base)
        await fetch(t, base)
        await t.aclose()
    assert srv.connections == 2


async def test_idle_connection_closed_by_the_server_is_not_reused() -> None:
    srv = RawServer(answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", keep=False))  # closes after answering
    async with srv.running() as base:
        t = Http1Transport()
        await fetch(t, base)
        await asyncio.sleep(0.05)  # the server's FIN arrives on the idle connection
        _, body = await fetch(t, base)
        await t.aclose()
    assert body == b"ok" and srv.connections == 2


async def test_expired_idle_connections_are_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpreel.record.http_upstream as up

    srv = RawServer(answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
    async with srv.running() as base:
        t = Http1Transport()
        await fetch(t, base)
        now = up.time.monotonic()
        monkeypatch.setattr(up.time, "monotonic", lambda: now + KEEPALIVE_EXPIRY + 1)
        await fetch(t, base)
        await t.aclose()
    assert srv.connections == 2


@pytest.mark.parametrize(("parts", "error", "says"), [
    ([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"], httpx2.RemoteProtocolError, "5 bytes short"),
    ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"], httpx2.RemoteProtocolError, "short in a chunk"),
    ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"], httpx2.RemoteProtocolError, "malformed chunk size"),
    ([b"garbage\r\n\r\n"], httpx2.RemoteProtocolError, "malformed status line"),
    ([b"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n"], httpx2.RemoteProtocolError, "malformed header line"),
    ([b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"], httpx2.RemoteProtocolError, "bad Content-Length"),
    ([], httpx2.RemoteProtocolError, "without sending a response"),
    ([b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000], httpx2.RemoteProtocolError, "head too long"),
])
async def test_broken_answers_are_httpx2_errors(parts: list[bytes], error: type[Exception], says: str) -> None:
    srv = RawServer(answer(*parts, keep=False))
    async with srv.running() as base:
        t = Http1Transport()
        with pytest.raises(error, match=says):
            await fetch(t, base)
        await t.aclose()


async def test_unreachable_target_is_a_connect_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = Http1Transport()
    with pytest.raises(httpx2.ConnectError):
        await fetch(t, f"http://127.0.0.1:{port}/")
    with pytest.raises(httpx2.UnsupportedProtocol):
        await fetch(t, "https://127.0.0.1:1/")


async def test_connect_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = asyncio.get_running_loop()

    async def never(*a: object, **k: object) -> None:
        await asyncio.sleep(10)

    monkeypatch.setattr(loop, "create_connection", never)
    with pytest.raises(httpx2.ConnectTimeout, match="within 0.05 s"):
        await fetch(Http1Transport(connect_timeout=0.05), "http://127.0.0.1:9/")


async def test_streamed_request_body_is_sent_chunked() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b'{"a":'
        yield b"1}"

    srv = RawServer(answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
    async with srv.running() as base:
        t = Http1Transport()
        _, body = await fetch(t, base, "POST", parts())
        await t.aclose()
    assert body == b"ok" and srv.bodies == [b'{"a":1}']
    assert b"Transfer-Encoding: chunked" in srv.heads[0]


async def test_big_body_with_back_pressure() -> None:
    big = bytes(range(256)) * (5 * 4096)  # 5 MiB
    srv = RawServer(answer(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big), big))
    async with srv.running() as base:
        t = Http1Transport()
        req = httpx2.Request("GET", base)
        resp = await t.handle_async_request(req)
        got = bytearray()
        async for chunk in resp.aiter_raw():
            got += chunk
            await asyncio.sleep(0)  # a slow reader
        await resp.aclose()
        await t.aclose()
    assert bytes(got) == big


async def test_leaving_mid_body_closes_the_connection() -> None:
    srv = RawServer(answer(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", b"3\r\ndef\r\n0\r\n\r\n",
                           pause=0.2))
    async with srv.running() as base:
        t = Http1Transport()
        resp = await t.handle_async_request(httpx2.Request("GET", base))
        async for chunk in resp.aiter_raw():
            assert chunk == b"abc"
            break
        await resp.aclose()
        await fetch(t, base)
        await t.aclose()
    assert srv.connections == 2  # the left connection was not put back


async def test_https_targets_use_httpx2s_own_transport() -> None:
    assert isinstance(upstream_transport("http"), Http1Transport)
    assert isinstance(upstream_transport("https"), httpx2.AsyncHTTPTransport)


CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n"
           b"1a\r\n" + b"x" * 26 + b"\r\n3;e=\"v\"\r\nyyy\r\n0\r\nT: 1\r\n\r\n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(min_value=1, max_value=len(CHUNKED) - 1), max_size=8, unique=True))
def test_any_split_of_a_chunked_answer_gives_the_same_body(cuts: list[int]) -> None:
    points = sorted(cuts)
    parts = [CHUNKED[a:b] for a, b in zip([0, *points], [*points, len(CHUNKED)], strict=True)]

    async def main() -> bytes:
        srv = RawServer(answer(*parts))
        async with srv.running() as base:
            t = Http1Transport()
            _, body = await fetch(t, base)
            await t.aclose()
        return body

    assert asyncio.run(main()) == b"x" * 26 + b"yyy"


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_from_a_server_give_an_answer_or_an_httpx2_error(data: bytes) -> None:
    async def main() -> None:
        srv = RawServer(answer(data, keep=False))
        async with srv.running() as base:
            t = Http1Transport()
            try:
                await fetch(t, base)
            except httpx2.HTTPError:
                pass
            await t.aclose()

    asyncio.run(main())
