"""Validation of our SARIF against the published SARIF 2.1.0 JSON schema.

The schema comes from the npm registry (``@microsoft/jest-sarif`` ships ``sarif-2.1.0-rtm.5.json``, the
schema schemastore publishes for 2.1.0), installed into ``.peers`` by ``make peers``; nothing is fetched
from the web at test time.
"""

from __future__ import annotations

import json
import shutil
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft4Validator, FormatChecker

from tests.conftest import ROOT

SCHEMA = ROOT / ".peers" / "node_modules" / "@microsoft" / "jest-sarif" / "lib" / "schemas" / "sarif-2.1.0-rtm.5.json"


@cache
def _validator() -> Draft4Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return Draft4Validator(schema, format_checker=FormatChecker())


def validate_sarif(doc: Any) -> None:
    """Fail the test with every schema error; skip only where npm is missing (as for server-everything)."""
    if not SCHEMA.is_file():
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: the SARIF schema cannot be installed")
        pytest.fail(f"the SARIF schema is not installed at {SCHEMA}: run `make peers`")
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:20])
    assert doc["version"] == "2.1.0"
