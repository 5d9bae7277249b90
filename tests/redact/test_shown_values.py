"""What shared views ask of the redactor (issue 28): a difference's value redacted as in its place, and a
session redacted for a view that shows no payload (inspect without -v)."""

from __future__ import annotations

import pytest

from mcpreel.compare.jsondiff import Difference
from mcpreel.model import Kind, Message, Session, SessionInfo
from mcpreel.redact import Redactor


@pytest.mark.parametrize("path", ["$.params.arguments.password", '$.a["pass word"]', '$.h["X-Api-Key"]',
                                  "$.params.arguments.api_key"])
def test_a_value_at_a_secret_named_path_is_redacted(path: str) -> None:
    assert Redactor().value_at(path, "hunter2") == "[REDACTED]"


def test_a_value_elsewhere_keeps_what_is_no_secret() -> None:
    r = Redactor()
    assert r.value_at("$.params.arguments.city", "Paris") == "Paris"
    assert r.value_at("$.result.content[0].text", "key sk-" + "a" * 24) == "key [REDACTED]"
    assert r.value_at("$", {"token": "x", "n": 1}) == {"token": "[REDACTED]", "n": 1}


def test_a_difference_is_redacted_on_both_sides_and_kept_when_clean() -> None:
    r = Redactor()
    d = Difference("$.params.arguments.password", "changed", "old-pw", "new-pw")
    assert r.difference(d) == Difference("$.params.arguments.password", "changed", "[REDACTED]", "[REDACTED]")
    clean = Difference("$.params.arguments.city", "changed", "Paris", "Lyon")
    assert r.difference(clean) is clean


def test_a_session_without_payloads_redacts_texts_header_and_headers_only() -> None:
    secret_call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "t", "arguments": {"password": "pw-1"}}}
    msgs = [Message("in", secret_call, t=1),
            Message(None, None, t=2, kind=Kind.STDERR, text="api_key=stderr-2"),
            Message("in", secret_call, t=3, ctx={"headers": {"Authorization": "Bearer hdr-3"}})]
    info = SessionInfo(transport="stdio", command=["srv", "--token", "argv-4"])
    shown = Redactor().session(Session(info, msgs), payloads=False)
    out = list(shown)
    assert shown.info.command == ["srv", "--token", "[REDACTED]"]
    assert out[0] is msgs[0]  # a payload the view does not show: not redacted, not copied
    assert out[1].text == "api_key=[REDACTED]"
    assert out[2].ctx == {"headers": {"Authorization": "[REDACTED]"}} and out[2].raw is secret_call
    full = list(Redactor().session(Session(info, msgs)))
    assert full[0].raw["params"]["arguments"]["password"] == "[REDACTED]"
