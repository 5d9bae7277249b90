"""The proxy's small rules: target and listen parsing, header filtering (Origin: tests/serving)."""

from __future__ import annotations

import pytest

from mcpreel.errors import TransportError, UsageError
from mcpreel.record.http_proxy import (
    _REQUEST_DROP,
    _RESPONSE_DROP,
    ProxyConfig,
    ProxyServer,
    RecordingProxy,
    _filter,
    _request_id,
    parse_target,
)
from mcpreel.record.http_recorder import HttpRecorder
from mcpreel.serving.listen import parse_listen


def test_parse_target() -> None:
    assert parse_target("https://api.example.com:8443/v1/mcp") == ("https://api.example.com:8443", "/v1/mcp")
    assert parse_target("http://127.0.0.1:8000") == ("http://127.0.0.1:8000", "/")
    assert parse_target("https://h/mcp?key=1") == ("https://h", "/mcp?key=1")
    for bad in ("ftp://x/mcp", "127.0.0.1:8000/mcp", "http:///mcp", "http://x:notaport/"):
        with pytest.raises(UsageError):
            parse_target(bad)


def test_parse_listen() -> None:
    assert parse_listen("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_listen(":9000") == ("127.0.0.1", 9000)
    assert parse_listen("9000") == ("127.0.0.1", 9000)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_listen("0.0.0.0:80") == ("0.0.0.0", 80)
    for bad in ("host:", "host:70000", "[::1]8765", "x:y"):
        with pytest.raises(UsageError):
            parse_listen(bad)


def test_header_filtering() -> None:
    headers = [(b"host", b"p:1"), (b"connection", b"keep-alive, X-Custom-Hop"), (b"x-custom-hop", b"1"),
               (b"keep-alive", b"timeout=5"), (b"transfer-encoding", b"chunked"), (b"te", b"trailers"),
               (b"upgrade", b"h2c"), (b"proxy-authorization", b"x"), (b"content-length", b"3"),
               (b"mcp-session-id", b"s"), (b"authorization", b"Bearer t"), (b"last-event-id", b"9"),
               (b"Mcp-Param-Region", b"eu")]
    kept = _filter(headers, _REQUEST_DROP)
    assert kept == [(b"mcp-session-id", b"s"), (b"authorization", b"Bearer t"), (b"last-event-id", b"9"),
                    (b"Mcp-Param-Region", b"eu")]
    answer = [(b"Content-Length", b"3"), (b"WWW-Authenticate", b"Bearer"), (b"Connection", b"close"),
              (b"Proxy-Authenticate", b"Basic")]
    assert _filter(answer, _RESPONSE_DROP) == [(b"Content-Length", b"3"), (b"WWW-Authenticate", b"Bearer")]


def test_request_id_of_a_body() -> None:
    assert _request_id(b'{"jsonrpc":"2.0","id":"a","method":"x"}') == "a"
    assert _request_id(b'{"jsonrpc":"2.0","id":3,"method":"x"}') == 3
    assert _request_id(b'[{"jsonrpc":"2.0","id":1,"method":"x"}]') is None
    assert _request_id(b'{"id":true}') is None and _request_id(b"nope") is None and _request_id(b"") is None


def test_config_refuses_unknown_transport() -> None:
    with pytest.raises(UsageError, match="unknown HTTP transport 'stdio'"):
        ProxyConfig("stdio", "http://127.0.0.1:1/mcp")


def test_taken_port_is_a_transport_error() -> None:
    proxy = RecordingProxy(ProxyConfig("streamable-http", "http://127.0.0.1:1/mcp"), HttpRecorder(lambda m: None))
    first = ProxyServer(proxy, "127.0.0.1", 0)
    try:
        with pytest.raises(TransportError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            ProxyServer(proxy, "127.0.0.1", first.port)
        assert first.url == f"http://127.0.0.1:{first.port}/mcp"
    finally:
        first.close()


def test_the_closing_line_counts_in_words() -> None:
    from pathlib import Path

    from mcpreel.cli.record_http import summary
    from mcpreel.record import RecordResult
    from mcpreel.record.http_recorder import RecorderStats

    one = RecordResult(0, "signal SIGINT", Path("s.jsonl"),
                       stats=RecorderStats(exchanges=1, messages_in=1, requests=1, invalid=1), unanswered=1)
    assert summary(one) == ("1 message in 1 HTTP exchange (1 request, 1 unanswered, 1 invalid) recorded -> s.jsonl; "
                            "signal SIGINT")
    many = RecordResult(0, "stopped", Path("s.jsonl"),
                        stats=RecorderStats(exchanges=3, messages_in=2, messages_out=2, requests=2))
    assert summary(many) == "4 messages in 3 HTTP exchanges (2 requests) recorded -> s.jsonl; stopped"


def test_every_proxy_header_is_hop_by_hop() -> None:
    """Spec 03: ``Proxy-*`` are hop-by-hop (RFC 9110's Proxy-Authenticate/-Authorization, RFC 9209's
    Proxy-Status, and the non-standard Proxy-Connection): none goes on, either way."""
    request = [(b"proxy-status", b"x"), (b"proxy-connection", b"keep-alive"), (b"proxy-authorization", b"Basic a"),
               (b"mcp-method", b"tools/call")]
    assert _filter(request, _REQUEST_DROP) == [(b"mcp-method", b"tools/call")]
    answer = [(b"Proxy-Status", b"edge; error=timeout"), (b"Proxy-Authentication-Info", b"x"),
              (b"Mcp-Session-Id", b"s")]
    assert _filter(answer, _RESPONSE_DROP) == [(b"Mcp-Session-Id", b"s")]


def test_the_closing_line_says_how_many_secrets_were_redacted() -> None:
    from pathlib import Path

    from mcpreel.cli.record_http import summary
    from mcpreel.record import RecordResult
    from mcpreel.record.http_recorder import RecorderStats

    stats = RecorderStats(exchanges=1, messages_in=1, messages_out=1, requests=1)
    result = RecordResult(0, "stopped", Path("s.jsonl"), redacted=2, stats=stats)
    assert summary(result) == ("2 messages in 1 HTTP exchange (1 request, 2 secrets redacted) recorded -> s.jsonl; "
                               "stopped")
    result.redacted = 0  # --redact found nothing: said too, as the stdio recorder says it
    assert "(1 request, 0 secrets redacted)" in summary(result)
