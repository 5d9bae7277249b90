"""How quickly ``mcpreel tui FILE`` shows a big file: headless (Textual's ``run_test``), a generated reel of
tools/call pairs.

Reports when the first rows are on screen, when the whole file is in (rows paired, sessions found), how
long a ``text:`` filter over every record takes, and a jump to the end plus a page up.

    python bench/tui_load.py [--records 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path


def write_reel(path: Path, records: int) -> None:
    with path.open("w") as fh:
        fh.write(json.dumps({"v": 1, "type": "meta", "startedAt": "2026-11-24T00:00:00.000Z", "label": "bench",
                             "command": ["server"], "transport": "stdio"}) + "\n")
        for i in range(records // 2):
            fh.write(json.dumps({"t": "2026-11-24T00:00:00.000Z", "dir": "in", "seq": 2 * i, "raw": {
                "jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "search", "arguments": {"q": f"q{i}"}}}}) + "\n")
            fh.write(json.dumps({"t": "2026-11-24T00:00:00.005Z", "dir": "out", "seq": 2 * i + 1, "raw": {
                "jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "ok"}]}}}) + "\n")


async def measure(path: Path) -> dict[str, float]:
    from mcpreel.formats import open_session
    from mcpreel.tui.app import FileFeed, ViewerApp

    session, _ = open_session(path)
    app = ViewerApp(FileFeed(session), session.info, title=str(path))
    start = time.perf_counter()
    out: dict[str, float] = {}
    async with app.run_test(size=(160, 40)) as pilot:
        while not app.entries.complete:
            await pilot.pause(0.01)
            if "first_rows_s" not in out and len(app.entries):
                out["first_rows_s"] = time.perf_counter() - start
        out["loaded_s"] = time.perf_counter() - start
        t = time.perf_counter()
        app._set_filter("text:q4242")
        out["text_filter_s"] = time.perf_counter() - t
        t = time.perf_counter()
        await pilot.press("end", "pageup")
        out["end_pageup_s"] = time.perf_counter() - t
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        write_reel(path, args.records)
        result = asyncio.run(measure(path))
    print(f"{args.records:,} records: " + ", ".join(f"{k} {v:.2f}" for k, v in result.items()))


if __name__ == "__main__":
    main()
