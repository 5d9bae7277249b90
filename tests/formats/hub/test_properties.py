"""Property tests, one set per hub reader: random bytes, truncated files and files with one member replaced by
a random JSON value end in a clear :class:`McpreelError` (one line), or in a session every lossless writer
and the import can take -- never a traceback."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpreel.errors import McpreelError
from mcpreel.formats import Source, get_reader, get_writer
from mcpreel.inspection import analyze
from tests.conftest import needs_shared

from ..support import FIXTURES, assert_same_wire, t1, wire
from .samples import INSPECTOR_NETWORK, MCPSNOOP_LINES

HUB = FIXTURES / "hub"


def _hub(rel: str) -> bytes:
    """A published file's bytes; empty without ../shared, where the tests that read it are skipped."""
    return (HUB / rel).read_bytes() if FIXTURES.is_dir() else b""


#: reader -> (sample bytes, "jsonl" | "json" | "yaml")
SAMPLES = {
    "mcpspy": (_hub("mcpspy/tests__expected_output_stdio.jsonl"), "jsonl"),
    "mcp-cassette-npm": (_hub("mcp-cassette-npm/tests__fixtures__tiny-server.golden.cassette.jsonl"), "jsonl"),
    "mcp-cassette-pypi": (_hub("mcp-cassette-pypi/examples__cassettes__sampling.mcp.json"), "json"),
    "mcp-vcr": (_hub("mcp-vcr/fixtures__with_notifications.yaml"), "yaml"),
    "agent-vcr": (_hub("agent-vcr/examples__recordings__calculator-errors.vcr"), "json"),
    "mcpsnoop": ("".join(json.dumps(x) + "\n" for x in MCPSNOOP_LINES).encode(), "jsonl"),
    "inspector-network": (json.dumps(INSPECTOR_NETWORK).encode(), "json"),
    "mcp-conformance": (_hub("mcp-conformance-tomtom215/corpus__good__http-session.jsonl"), "jsonl"),
}
READERS = sorted(SAMPLES)
#: the readers again, those whose sample is a published file marked ``needs_shared``
SAMPLED = [pytest.param(fmt, marks=needs_shared) if fmt not in ("mcpsnoop", "inspector-network") else fmt
           for fmt in READERS]
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=8),
                    st.floats(allow_nan=False, allow_infinity=False))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=6)


def _read_everything(fmt: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in"
        path.write_bytes(data)
        try:
            session = get_reader(fmt)(Source(path)).materialize()
        except McpreelError as exc:
            assert str(exc) and "\n" not in str(exc)
            return
        analyze(session, payloads=True)
        for out in ("qai", "har"):
            get_writer(out)(session, io.BytesIO())
        reel = Path(tmp) / "out.jsonl"  # whatever a reader accepts, a reel keeps and gives back
        with open(reel, "wb") as fh:
            get_writer("reel")(session, fh)
        assert_same_wire(wire(get_reader("reel")(Source(reel)).materialize()), wire(session))
        try:
            t1(session)
        except McpreelError as exc:  # a mutated session may break the import contract: said in one line
            assert "\n" not in str(exc)


def _parse(data: bytes, kind: str):
    if kind == "jsonl":
        return [json.loads(line) for line in data.splitlines() if line.strip()]
    if kind == "yaml":
        return yaml.safe_load(data)
    return json.loads(data)


def _dump(doc, kind: str) -> bytes:
    if kind == "jsonl":
        return "".join(json.dumps(x) + "\n" for x in doc).encode()
    if kind == "yaml":
        return yaml.safe_dump(doc, sort_keys=False).encode()
    return json.dumps(doc).encode()


def _paths(doc, prefix=()):
    """Every place in a document a value sits (as key paths), the document's first few entries only."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _replace(doc, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: _replace(doc[head], rest, value)}
    out = list(doc)
    out[head] = _replace(doc[head], rest, value)
    return out


@pytest.mark.parametrize("fmt", READERS)
@settings(max_examples=30, **SETTINGS)
@given(data=st.binary(max_size=200))
def test_random_bytes_never_crash_a_hub_reader(fmt, data):
    _read_everything(fmt, data)


@pytest.mark.parametrize("fmt", SAMPLED)
@settings(max_examples=30, **SETTINGS)
@given(cut=st.floats(0, 1))
def test_truncated_files_never_crash_a_hub_reader(fmt, cut):
    data = SAMPLES[fmt][0]
    _read_everything(fmt, data[: int(len(data) * cut)])


@pytest.mark.parametrize("fmt", SAMPLED)
@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_members_with_wrong_values_fail_cleanly(fmt, data):
    raw, kind = SAMPLES[fmt]
    doc = _parse(raw, kind)
    paths = list(_paths(doc))
    path = data.draw(st.sampled_from(paths))
    _read_everything(fmt, _dump(_replace(doc, path, data.draw(json_values)), kind))


@pytest.mark.parametrize("fmt", SAMPLED)
def test_the_samples_themselves_read(fmt):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in"
        path.write_bytes(SAMPLES[fmt][0])
        assert get_reader(fmt)(Source(path)).materialize().messages
