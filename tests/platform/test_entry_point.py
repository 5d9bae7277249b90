"""The early-signal latch is the ``mcpreel`` command's, never a side effect of ``import mcpreel`` (issue 27).

A program run as ``python -m anypkg record`` that imports mcpreel keeps its own Ctrl+C; ``mcpreel record``
and ``python -m mcpreel record`` latch (their timing is tests/record/test_early_signals.py's).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mcpreel.__main__ as entry
from mcpreel._infra import platform, signals
from tests.platform.harness import ROOT

_REPORT = ("import signal, sys\n"
           "before = signal.getsignal(signal.SIGINT)\n"
           "import mcpreel, mcpreel.cli, mcpreel.record, mcpreel.clients.process\n"
           "from mcpreel import Session\n"
           "print(signal.getsignal(signal.SIGINT) is before, signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)\n")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))


def test_importing_mcpreel_with_record_in_argv_leaves_sigint_alone(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _REPORT, "record", "--out", "x"], capture_output=True, text=True,
                         env=_env(), timeout=60, check=True).stdout
    assert out.split() == ["True", "True"]


def test_another_package_run_as_record_keeps_its_ctrl_c(tmp_path: Path) -> None:
    package = tmp_path / "anypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(_REPORT)
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    out = subprocess.run([sys.executable, "-m", "anypkg", "record"], capture_output=True, text=True, env=env,
                         timeout=60, check=True, cwd=tmp_path).stdout
    assert out.split() == ["True", "True"]


@pytest.mark.parametrize(("argv", "latched"), [(["record", "--help"], True), (["proxy", "start", "--help"], True),
                                               (["inspect", "--help"], False)])
def test_the_entry_point_latches_for_the_recorders_only(monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                         latched: bool) -> None:
    calls: list[str] = []
    monkeypatch.setattr(signals, "install", lambda: calls.append("install"))
    monkeypatch.setattr("mcpreel.cli.main", lambda argv=None: calls.append("cli"))
    try:
        entry.main(argv)
    finally:
        platform.set_notice_sink(None)
    assert calls == (["install", "cli"] if latched else ["cli"])


def test_the_entry_point_sends_notices_to_stderr(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("mcpreel.cli.main", lambda argv=None: platform.notice("test-entry", "mcpreel: note: x"))
    monkeypatch.setattr(platform, "_said", {})
    try:
        entry.main(["inspect"])
    finally:
        platform.set_notice_sink(None)
    assert capsys.readouterr().err == "mcpreel: note: x\n"
