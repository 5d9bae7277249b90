"""Issue 12, secrets: a key in the target's query (``?api_key=``) stays out of every file and every line.

Real recordings through ``mcpreel record``: the reel (session header URL, ``metadata.listen``, every
request's ``ctx.path``), the envelope, the qai session file, a HAR converted from the reel, the 502 body
the proxy sends its client, stderr. ``--keep-secrets`` keeps them.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from mcpreel._infra import jsonio
from mcpreel.formats import open_session

from .helpers import ThreadServer, free_port, sdk_server
from .test_cli import Recorder
from .test_sdk_peers import streamable_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.filterwarnings("ignore:The sampling capability is deprecated")]

KEY = "k3y-S3CRET-0451"
TOKEN = "tok-S3CRET-9182"
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def _convert(tmp: Path, src: str, dst: str, to: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "convert", src, dst, "--to", to], cwd=tmp,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


async def test_a_key_in_the_target_query_is_in_no_file_and_no_line(tmp_path: Path) -> None:
    port = free_port()
    with ThreadServer(sdk_server().streamable_http_app(json_response=True)) as srv:
        target = srv.url(f"/mcp?api_key={KEY}&region=eu&token={TOKEN}")
        rec = Recorder("record", "--transport", "streamable-http", "--target", target, "--listen", f"127.0.0.1:{port}",
                       "--out", "r.jsonl", "--session-file", "q.json", "--envelope", "e.json", cwd=tmp_path)
        line = rec.wait_for("point your MCP client at")
        assert KEY not in line and "/mcp?api_key=[REDACTED]&region=eu&token=[REDACTED]" in line
        assert "with the secret parameters of --target-url" in line
        # the client knows the key: it uses the real URL, which the proxy forwards as it came
        result, _ = await streamable_session(f"http://127.0.0.1:{port}/mcp?api_key={KEY}&region=eu&token={TOKEN}",
                                             back_channel=False)
        code, out, err = rec.stop(signal.SIGINT)
    assert code == 0 and result["slow"] == "done 3"
    _convert(tmp_path, "r.jsonl", "h.har", "har")
    _convert(tmp_path, "r.jsonl", "c.json", "streamable-http")
    for name in ("r.jsonl", "q.json", "e.json", "h.har", "c.json"):
        text = (tmp_path / name).read_text()
        assert KEY not in text and TOKEN not in text, name
        assert "api_key=[REDACTED]" in text and "region=eu" in text, name
    assert KEY not in err and TOKEN not in err and "Traceback" not in err
    reel, _ = open_session(tmp_path / "r.jsonl", "reel")
    assert reel.info.url == srv.url("/mcp?api_key=[REDACTED]&region=eu&token=[REDACTED]")
    assert reel.info.metadata["listen"].endswith("/mcp?api_key=[REDACTED]&region=eu&token=[REDACTED]")
    paths = {(m.ctx or {}).get("path") for m in reel.messages} - {None}
    assert paths == {"/mcp?api_key=[REDACTED]&region=eu&token=[REDACTED]"}


def test_the_502_body_and_stderr_do_not_carry_the_key(tmp_path: Path) -> None:
    port = free_port()
    rec = Recorder("record", "--transport", "streamable-http", "--target", f"http://127.0.0.1:9/mcp?apikey={KEY}",
                   "--listen", f"127.0.0.1:{port}", "--out", "r.jsonl", cwd=tmp_path)
    rec.wait_for("point your MCP client at")
    r = httpx2.post(f"http://127.0.0.1:{port}/mcp?apikey={KEY}", content=PING)
    code, _, err = rec.stop(signal.SIGINT)
    assert r.status_code == 502 and code == 0
    message = r.json()["error"]["message"]
    assert KEY not in message and "http://127.0.0.1:9/mcp?apikey=[REDACTED] is unreachable" in message
    assert KEY not in err and KEY not in (tmp_path / "r.jsonl").read_text()


def test_keep_secrets_keeps_the_query(tmp_path: Path) -> None:
    port = free_port()
    rec = Recorder("record", "--transport", "streamable-http", "--target", f"http://127.0.0.1:9/mcp?apikey={KEY}",
                   "--listen", f"127.0.0.1:{port}", "--out", "r.jsonl", "--keep-secrets", cwd=tmp_path)
    line = rec.wait_for("point your MCP client at")
    r = httpx2.post(f"http://127.0.0.1:{port}/mcp?apikey={KEY}", content=PING)
    code, _, _ = rec.stop(signal.SIGINT)
    assert code == 0 and KEY in line and KEY in r.json()["error"]["message"]
    reel = (tmp_path / "r.jsonl").read_text()
    assert f'"url":"http://127.0.0.1:9/mcp?apikey={KEY}"' in reel and f'"path":"/mcp?apikey={KEY}"' in reel


def test_a_bad_target_is_refused_without_its_key(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "record", "--transport", "streamable-http",
                           "--target", f"ftp://host/mcp?token={TOKEN}", "--out", "r.jsonl"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and TOKEN not in proc.stderr and "token=[REDACTED]" in proc.stderr


def test_record_q_silences_the_http_recorder(tmp_path: Path) -> None:
    port = free_port()
    rec = Recorder("record", "-q", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                   "--listen", f"127.0.0.1:{port}", "--out", "r.jsonl", cwd=tmp_path)
    from .helpers import wait_port

    wait_port(port)
    assert httpx2.post(f"http://127.0.0.1:{port}/mcp", content=PING).status_code == 502
    code, _, err = rec.stop(signal.SIGINT)
    assert code == 0 and err == ""
    assert jsonio.loads((tmp_path / "r.jsonl").read_text().splitlines()[-1])["type"] == "end"


def test_listen_on_every_address_names_a_usable_url(tmp_path: Path) -> None:
    port = free_port()
    rec = Recorder("record", "--transport", "streamable-http", "--target", "http://127.0.0.1:9/mcp",
                   "--listen", f"0.0.0.0:{port}", "--out", "r.jsonl", cwd=tmp_path)
    line = rec.wait_for("point your MCP client at")
    url = line.split("point your MCP client at ", 1)[1].split()[0]
    assert "0.0.0.0" not in url and url.endswith(f":{port}/mcp")
    status = httpx2.post(url, content=PING, timeout=10).status_code  # the URL shown reaches the proxy
    code, _, err = rec.stop(signal.SIGINT)
    assert code == 0 and status == 502 and "other machines can reach this proxy" in err
