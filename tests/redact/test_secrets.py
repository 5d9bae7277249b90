"""redact.secrets: the key rule (which member names hold a secret) and the built-in value patterns."""

from __future__ import annotations

import pytest

from mcpreel.redact.secrets import DEFAULT_PATTERNS, QUICK_LITERALS, is_secret_key, norm_key


@pytest.mark.parametrize("name", ["token", "access_token", "refreshToken", "password", "Authorization", "api_key",
                                  "apiKey", "X-API-Key", "client_secret", "secret", "cookie", "Set-Cookie",
                                  "private_key", "GITHUB_TOKEN", "aws_secret_access_key", "db-password"])
def test_secret_keys(name):
    assert is_secret_key(name)


@pytest.mark.parametrize("name", ["progressToken", "nextPageToken", "maxTokens", "tokens", "name", "key", "cursor",
                                  "tokenizer", "description"])
def test_not_secret_keys(name):
    assert not is_secret_key(name)


def test_names_are_compared_without_case_or_separators() -> None:
    assert norm_key("X-Api_Key.v 2") == "xapikeyv2"
    assert is_secret_key("customer_id", frozenset({"customerid"}))  # the user's keys, normalized


@pytest.mark.parametrize("secret", ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "sk-abcdefghijklmnopqrstuv",
                                    "ghp_" + "a" * 36, "AKIAABCDEFGHIJKLMNOP", "https://u:pw@h/x"])
def test_every_string_a_builtin_pattern_finds_holds_a_quick_literal(secret: str) -> None:
    # the Redactor skips strings without one of these literals: a pattern that needed none would be skipped
    assert any(p.regex.search(secret) for p in DEFAULT_PATTERNS)
    assert any(q in secret.lower() for q in QUICK_LITERALS)
