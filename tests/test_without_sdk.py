"""mcpreel's core installs and runs without the official MCP SDK (issue 39: "installs beside any MCP framework").

The SDK is an extra (``mcpreel[sdk]``): a project on SDK 1.x (``langchain-mcp-adapters`` 0.3.2 pins ``mcp<2``)
must be able to install mcpreel and record, inspect, convert, replay, serve and index its sessions. Here
every command runs in a process where importing the SDK (or what it brings: pydantic, mcp_types,
sse_starlette) fails, as if it were not installed: a ``sys.meta_path`` blocker put first. The verbs that
do run an SDK server (``demo-server``) say in one line what to install.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.corpus.test_index import reel

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
RAW = ROOT / "tests" / "record" / "stdio" / "servers" / "raw_server.py"

#: a launcher: the SDK made unimportable, then mcpreel's own entry point with the given arguments
BLOCKED = '''
import sys
BLOCKED = {"mcp", "mcp_types", "pydantic", "pydantic_core", "sse_starlette"}

class NoSdk:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)
        return None

sys.meta_path.insert(0, NoSdk())
for name in [n for n in sys.modules if n.split(".")[0] in BLOCKED]:
    del sys.modules[name]
if sys.argv[1:2] == ["--import-only"]:
    import mcpreel, mcpreel.formats, mcpreel.inspection, mcpreel.convert, mcpreel.replay, mcpreel.record
    import mcpreel.mock, mcpreel.corpus.index, mcpreel.cassette.pytest_plugin, mcpreel.cli.output
    print(sorted(n for n in sys.modules if n.split(".")[0] in BLOCKED))
    sys.exit(0)
from mcpreel.__main__ import main
sys.argv[0] = "mcpreel"
main(sys.argv[1:])
'''


def _blocked(tmp_path: Path) -> Path:
    launcher = tmp_path / "no_sdk.py"
    launcher.write_text(BLOCKED)
    return launcher


def _run(launcher: Path, *args: object, stdin: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([PY, str(launcher), *map(str, args)], input=stdin.decode(), capture_output=True, text=True,
                          timeout=timeout, cwd=launcher.parent)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_the_sdk_is_an_extra_not_a_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.split(">")[0].split("=")[0].split("<")[0].strip() == "mcp"]
    assert any(d.startswith("mcp") for d in project["optional-dependencies"]["sdk"])
    assert any(d.startswith("mcp>=") for d in project["optional-dependencies"]["dev"])


def test_the_core_imports_without_the_sdk(tmp_path: Path) -> None:
    proc = _run(_blocked(tmp_path), "--import-only")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"  # nothing of the SDK was loaded (the blocker would have refused it)


def test_record_inspect_convert_replay_serve_and_index_run_without_the_sdk(tmp_path: Path) -> None:
    launcher = _blocked(tmp_path)
    # record: a stdio server behind the proxy, a request and its answer
    request = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
    recorded = tmp_path / "recorded.jsonl"
    proc = _run(launcher, "record", "-o", recorded, "--no-control", "--", PY, RAW, "answer", stdin=request)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["id"] == 1
    # inspect, convert
    proc = _run(launcher, "inspect", recorded, "--json")
    assert proc.returncode == 0, proc.stderr
    converted = tmp_path / "converted.json"
    proc = _run(launcher, "convert", recorded, converted, "--to", "qai")
    assert proc.returncode == 0 and converted.stat().st_size > 0, proc.stderr
    # replay a session against `mcpreel serve` of the same session (both processes without the SDK)
    session = reel(tmp_path / "s" / "session.jsonl", fail=False)
    proc = _run(launcher, "replay", session, "--target-command", f"{PY} {launcher} serve {session}", timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 changed" in proc.stdout
    # index and ask it
    db = tmp_path / "c.duckdb"
    proc = _run(launcher, "index", session.parent, "--db", db)
    assert proc.returncode == 0, proc.stderr
    proc = _run(launcher, "calls", "--db", db, "--json")
    assert proc.returncode == 0 and len(json.loads(proc.stdout)) == 5, proc.stderr


def test_a_verb_that_needs_the_sdk_says_what_to_install(tmp_path: Path) -> None:
    proc = _run(_blocked(tmp_path), "demo-server")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "needs the official MCP Python SDK 2.x" in lines[0] and "mcpreel[sdk]" in lines[0]


def test_a_generated_redaction_key_is_ignored_by_git(tmp_path: Path) -> None:
    """(issue 39) the key made beside the project gets a ``.gitignore``; a project's own is left alone."""
    import shutil

    from mcpreel.redact.keys import DEFAULT_KEY_FILE, load_or_create_key

    load_or_create_key(cwd=tmp_path)
    ignore = tmp_path / ".mcpreel" / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "redact.key"
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
        checked = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "-q", str(DEFAULT_KEY_FILE)])
        assert checked.returncode == 0  # ignored
    other = tmp_path / "other"
    (other / ".mcpreel").mkdir(parents=True)
    (other / ".mcpreel" / ".gitignore").write_text("*.tmp\n")
    load_or_create_key(cwd=other)
    assert (other / ".mcpreel" / ".gitignore").read_text() == "*.tmp\n"


# -- beside a real project on SDK 1.x: langchain-mcp-adapters 0.3.2 (`make langchain-peer`) ----------------

LANGCHAIN = ROOT / ".peers" / "langchain"

INNER = '''
import asyncio

import pytest
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp import ClientSession
from mcp.client.stdio import stdio_client


@pytest.mark.mcp_cassette("cassette.jsonl", record_mode="none")
def test_a_langchain_agent_gets_its_tools_from_a_cassette(mcp_server):
    async def run():
        async with stdio_client(mcp_server.stdio_parameters()) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await load_mcp_tools(session)
                answer = await session.call_tool("echo", {"text": "hi 0", "api_key": SECRET})
                return [t.name for t in tools], answer.content[0].text
    names, text = asyncio.run(run())
    assert names == ["echo"] and text == "hi 0"
'''


def test_beside_langchain_mcp_adapters_on_sdk_1x(tmp_path: Path) -> None:
    """One environment holds langchain-mcp-adapters 0.3.2 (``mcp<2``: SDK 1.x) and mcpreel: the pytest
    plugin serves a cassette to the SDK 1.x client langchain loads its tools through, and the CLI records,
    inspects and converts there."""
    import pytest

    python = LANGCHAIN / "bin" / "python"
    if not (LANGCHAIN / ".installed").is_file():
        pytest.skip(f"no venv beside langchain-mcp-adapters at {LANGCHAIN}: make langchain-peer")
    versions = subprocess.run([str(python), "-c", "from importlib.metadata import version as v; "
                               "print(v('mcp'), v('langchain-mcp-adapters'), v('mcpreel'))"],
                              capture_output=True, text=True, timeout=60)
    sdk, adapters, _ = versions.stdout.split()
    assert sdk.startswith("1.") and adapters == "0.3.2", versions.stdout
    from tests.corpus.test_index import SECRET

    project = tmp_path / "project"
    reel(project / "cassette.jsonl", fail=False)
    (project / "test_agent.py").write_text(f"SECRET = {SECRET!r}\n" + INNER)
    (project / "pytest.ini").write_text("[pytest]\n")
    ran = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(project)],
                         capture_output=True, text=True, timeout=300, cwd=project)
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout[-3000:] + ran.stderr[-3000:]
    mcpreel = [str(python), "-m", "mcpreel"]
    out = tmp_path / "r.jsonl"
    recorded = subprocess.run([*mcpreel, "record", "-o", str(out), "--no-control", "--", PY, str(RAW), "answer"],
                              input='{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n', capture_output=True, text=True,
                              timeout=120)
    assert recorded.returncode == 0 and json.loads(recorded.stdout)["id"] == 1, recorded.stderr
    for args in (["inspect", str(out), "--json"], ["convert", str(out), str(tmp_path / "r.json"), "--to", "qai"]):
        done = subprocess.run([*mcpreel, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
