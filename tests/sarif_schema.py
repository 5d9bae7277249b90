"""Validation of our SARIF against the published SARIF 2.1.0 JSON schema.

The schema comes from the npm registry (``@microsoft/jest-sarif`` ships ``sarif-2.1.0-rtm.5.json``, the
schema schemastore publishes for 2.1.0), installed into ``.peers`` by ``make peers``; nothing is fetched
from the web at test time.
"""

from __future__ import annotations

import json
import re
import shutil
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft4Validator, FormatChecker

from tests.conftest import ROOT

SCHEMA = ROOT / ".peers" / "node_modules" / "@microsoft" / "jest-sarif" / "lib" / "schemas" / "sarif-2.1.0-rtm.5.json"


#: RFC 3986's characters; brackets only around an IPv6 host; a percent sign only before two hex digits
_URI_CHARS = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#]|%[0-9A-Fa-f]{2})*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_IPV6_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?\[[0-9A-Fa-f:.]+\](?::\d*)?(?=[/?#]|$)")


def is_uri_reference(text: object) -> bool:
    """RFC 3986 URI-reference, as the SARIF schema's ``format: uri-reference`` asks (the jsonschema checker
    for it needs a package this project does not install, so without this the format goes unchecked)."""
    if not isinstance(text, str):
        return True
    rest = text
    m = _IPV6_AUTHORITY.match(text)
    if m:
        rest = text[m.end():]
    if not _URI_CHARS.match(rest):
        return False
    if not _SCHEME.match(text):  # a relative reference: its first segment holds no colon
        return ":" not in re.split(r"[/?#]", text, maxsplit=1)[0]
    return True


def is_uri(text: object) -> bool:
    return not isinstance(text, str) or (bool(_SCHEME.match(text)) and is_uri_reference(text))


@cache
def _validator() -> Draft4Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    formats = FormatChecker()
    formats.checks("uri-reference")(is_uri_reference)
    formats.checks("uri")(is_uri)
    return Draft4Validator(schema, format_checker=formats)


def validate_sarif(doc: Any) -> None:
    """Fail the test with every schema error; skip only where npm is missing (as for server-everything)."""
    if not SCHEMA.is_file():
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: the SARIF schema cannot be installed")
        pytest.fail(f"the SARIF schema is not installed at {SCHEMA}: run `make peers`")
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:20])
    assert doc["version"] == "2.1.0"
    assert_located(doc)


def assert_located(doc: Any) -> None:
    """Every result has a physical location with a non-empty URI: code scanning asks for one
    (``physicalLocation.artifactLocation.uri``), whether the finding is in a file or a live server."""
    for run in doc["runs"]:
        for i, result in enumerate(run.get("results", [])):
            locations = result.get("locations") or []
            assert locations, f"result {i} ({result.get('ruleId')}) has no location"
            uri = locations[0].get("physicalLocation", {}).get("artifactLocation", {}).get("uri")
            assert isinstance(uri, str) and uri, f"result {i} ({result.get('ruleId')}) has no physical location"
