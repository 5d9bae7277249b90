"""Draw a terminal capture (``tmux capture-pane -e``) as a PNG, for the README's screenshot of ``mcpreel tui``.

    MCPREEL_TUI_SCREENSHOT=/tmp/tui.ansi python -m pytest tests/tui/test_tmux.py -n 0
    python -m tests.tui.peers.screenshot /tmp/tui.ansi docs/tui.png

The capture's colours become an SVG (rich's ``export_svg``), which headless Chromium renders to PNG.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text


def render(ansi: Path, png: Path, width: int = 150) -> None:
    lines = ansi.read_text(encoding="utf-8").rstrip("\n").split("\n")
    console = Console(record=True, width=width, file=open("/dev/null", "w"), color_system="truecolor")
    for line in lines:
        console.print(Text.from_ansi(line), no_wrap=True, overflow="crop")
    svg = console.export_svg(title="mcpreel tui")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "tui.html"
        page.write_text(f"<html><body style='margin:0;background:#fff'>{svg}</body></html>", encoding="utf-8")
        height = int(len(lines) * 24.5) + 90
        subprocess.run(["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={int(width * 12.2) + 40},{height}", f"--screenshot={png.resolve()}",
                        page.as_uri()], check=True, capture_output=True, timeout=60)


if __name__ == "__main__":
    render(Path(sys.argv[1]), Path(sys.argv[2]))
