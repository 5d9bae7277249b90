"""redact.headers: which recorded HTTP headers are secrets, and the copy with their values replaced."""

from __future__ import annotations

import pytest

from mcpreel.redact import MARKER
from mcpreel.redact.headers import is_secret_header, redact_headers


@pytest.mark.parametrize("name", ["Authorization", "proxy-authorization", "Cookie", "Set-Cookie", "X-API-Key",
                                  "X-Goog-Api-Key", "X-Client-Secret", "X-Refresh-Token", "DB-Password"])
def test_secret_headers(name: str) -> None:
    assert is_secret_header(name)


@pytest.mark.parametrize("name", ["Accept", "Content-Type", "Mcp-Session-Id", "MCP-Protocol-Version", "Host"])
def test_plain_headers(name: str) -> None:
    assert not is_secret_header(name)


def test_redact_headers_copies_and_keeps_the_names() -> None:
    headers = {"Authorization": "Bearer x", "Accept": "*/*"}
    assert redact_headers(headers) == {"Authorization": MARKER, "Accept": "*/*"}
    assert headers["Authorization"] == "Bearer x"
    assert redact_headers(None) == {} and redact_headers({}) == {}
