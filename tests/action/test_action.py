"""The GitHub Action, proved without GitHub: action.yml and its scripts agree, and the scripts run here with
the environment the Action gives them (inputs as MCPREEL_*, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.contract.helpers import SERVER, mcpreel, record_era
from tests.sarif_schema import validate_sarif

SCRIPTS = ROOT / ".github" / "actions" / "scripts"
MCPREEL_BIN = str(Path(sys.executable).with_name("mcpreel"))
LOCAL_ONLY = {"MCPREEL_BIN", "MCPREEL_PYTHON"}  # overrides for running the scripts off GitHub


def action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def run_script(name: str, tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], dict, str]:
    outputs, summary = tmp_path / "github_output", tmp_path / "step_summary"
    outputs.write_text("")
    summary.write_text("")
    full = {**os.environ, "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary),
            "MCPREEL_BIN": MCPREEL_BIN, **env}
    proc = subprocess.run(["bash", str(SCRIPTS / name)], capture_output=True, text=True, env=full, cwd=tmp_path,
                          timeout=120)
    got = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return proc, got, summary.read_text()


def test_action_yml_and_scripts_agree():
    doc = action()
    assert doc["runs"]["using"] == "composite"
    inputs = set(doc["inputs"])
    used_inputs: set[str] = set()
    for step in doc["runs"]["steps"]:
        text = json.dumps(step)
        used_inputs |= set(re.findall(r"inputs\.([a-z-]+)", text))
        if "run" not in step:
            continue
        assert step["shell"] == "bash"
        script = re.search(r"\.github/actions/scripts/([\w.-]+\.sh)", step["run"]).group(1)
        path = SCRIPTS / script
        assert path.is_file(), script
        read = set(re.findall(r"\$\{?(MCPREEL_[A-Z_]+)", path.read_text())) - LOCAL_ONLY
        given = set(step.get("env", {}))
        assert read == given, f"{script}: reads {sorted(read)}, the step sets {sorted(given)}"
    assert used_inputs == inputs, f"inputs never used: {sorted(inputs - used_inputs)}"
    gates = doc["runs"]["steps"][2]
    assert gates["id"] == "gates"
    assert doc["outputs"]["exit-code"]["value"] == "${{ steps.gates.outputs.exit-code }}"


@pytest.fixture(scope="module")
def contract(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("c") / "mcp-contract.json"
    assert mcpreel("contract", "snapshot", "--command", SERVER, "-o", str(path)).returncode == 0
    return path


@pytest.mark.e2e
def test_contract_and_audit_gates_pass_then_fail(tmp_path, contract):
    proc, out, summary = run_script("run.sh", tmp_path, MCPREEL_RUN="contract-check, audit",
                                    MCPREEL_SERVER_COMMAND=SERVER, MCPREEL_CONTRACT=str(contract),
                                    MCPREEL_FAIL_ON="dangerous", MCPREEL_AUDIT_FAIL_ON="error", MCPREEL_REPORTS="reports")
    assert proc.returncode == 0, proc.stderr
    assert out == {"contract-check-exit-code": "0", "audit-exit-code": "0", "exit-code": "0", "reports": "reports"}
    assert "| contract-check | passed |" in summary and "| audit | passed |" in summary
    for name in ("contract.sarif", "audit.sarif"):
        validate_sarif(json.loads((tmp_path / "reports" / name).read_text()))
    assert "no changes" in (tmp_path / "reports" / "contract.txt").read_text()
    verdict = subprocess.run(["bash", str(SCRIPTS / "verdict.sh")], env={**os.environ, "MCPREEL_EXIT_CODE": "0"},
                             capture_output=True, text=True)
    assert verdict.returncode == 0

    proc, out, summary = run_script("run.sh", tmp_path, MCPREEL_RUN="contract-check audit",
                                    MCPREEL_SERVER_COMMAND=f"{SERVER} v2", MCPREEL_CONTRACT=str(contract),
                                    MCPREEL_REPORTS="reports")
    assert proc.returncode == 0, proc.stderr  # the gates step itself never fails: every report gets uploaded
    assert out["contract-check-exit-code"] == "1" and out["audit-exit-code"] == "1" and out["exit-code"] == "1"
    assert "| contract-check | **failed** |" in summary
    sarif = json.loads((tmp_path / "reports" / "audit.sarif").read_text())
    validate_sarif(sarif)  # every result located: the live server has no file of its own
    assert any(r["ruleId"] == "MCPA001" for r in sarif["runs"][0]["results"])
    server = f"{SERVER} v2"
    for name in ("audit.sarif", "contract.sarif"):
        doc = json.loads((tmp_path / "reports" / name).read_text())
        validate_sarif(doc)
        for r in doc["runs"][0]["results"]:
            assert {"name": server, "fullyQualifiedName": server, "kind": "module"} in r["locations"][0]["logicalLocations"]
    contract_results = json.loads((tmp_path / "reports" / "contract.sarif").read_text())["runs"][0]["results"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in contract_results} == {str(contract)}
    verdict = subprocess.run(["bash", str(SCRIPTS / "verdict.sh")], env={**os.environ, "MCPREEL_EXIT_CODE": "1"},
                             capture_output=True, text=True)
    assert verdict.returncode == 1 and "::error::" in verdict.stdout


@pytest.mark.e2e
def test_replay_and_check_gates(tmp_path):
    reel = tmp_path / "session.jsonl"
    record_era("legacy", reel)
    proc, out, summary = run_script("run.sh", tmp_path, MCPREEL_RUN="replay check", MCPREEL_SESSION=str(reel),
                                    MCPREEL_TARGET_COMMAND=SERVER, MCPREEL_SERVER_COMMAND=SERVER,
                                    MCPREEL_REPORTS="r")
    assert proc.returncode == 0, proc.stderr
    assert out["replay-exit-code"] == "0", proc.stdout
    # check-profile defaults to mcp: an ordinary SDK server passes (warnings only). Its checks wait 10 s for
    # each answer, which a machine shared by many test runs has missed once: one more run then (strict-sse
    # fails this server on its format every time, so a second run cannot hide the wrong profile)
    if out["check-exit-code"] != "0":
        first = (tmp_path / "r" / "check.txt").read_text()[-2000:]
        _, out, summary = run_script("run.sh", tmp_path, MCPREEL_RUN="check", MCPREEL_SERVER_COMMAND=SERVER,
                                     MCPREEL_REPORTS="r")
        assert out["check-exit-code"] == "0", first + "\n---\n" + (tmp_path / "r" / "check.txt").read_text()[-2000:]
    assert "| check | passed |" in summary
    assert (tmp_path / "r" / "replay.junit.xml").read_text().startswith("<?xml")
    validate_sarif(json.loads((tmp_path / "r" / "check.sarif").read_text()))
    proc, out, summary = run_script("run.sh", tmp_path, MCPREEL_RUN="replay", MCPREEL_SESSION=str(reel),
                                    MCPREEL_TARGET_COMMAND=f"{SERVER} v2", MCPREEL_REPORTS="r")
    assert out["replay-exit-code"] == "1" and out["exit-code"] == "1"


@pytest.mark.e2e
def test_check_profile_reaches_the_check_and_results_are_located(tmp_path):
    """check-profile: strict-sse fails the same SDK server (seed 002's strict format); each failed check is
    a SARIF result located on the workflow that names the server, at the line that names it."""
    workflow = tmp_path / ".github" / "workflows" / "mcp.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(f"on: pull_request\njobs:\n  mcp:\n    steps:\n      - uses: mcpreel/mcpreel@main\n"
                        f"        with:\n          run: check\n          server-command: {SERVER}\n")
    proc, out, _ = run_script("run.sh", tmp_path, MCPREEL_RUN="check", MCPREEL_SERVER_COMMAND=SERVER,
                              MCPREEL_CHECK_PROFILE="strict-sse", MCPREEL_REPORTS="r",
                              GITHUB_WORKFLOW_REF="acme/server/.github/workflows/mcp.yml@refs/pull/1/merge")
    assert proc.returncode == 0, proc.stderr
    assert out["check-exit-code"] == "1", proc.stdout
    doc = json.loads((tmp_path / "r" / "check.sarif").read_text())
    validate_sarif(doc)
    results = doc["runs"][0]["results"]
    assert any(r["level"] == "error" for r in results)
    for r in results:
        loc = r["locations"][0]
        assert loc["physicalLocation"] == {"artifactLocation": {"uri": ".github/workflows/mcp.yml"},
                                           "region": {"startLine": 8}}
        assert {"name": SERVER, "fullyQualifiedName": SERVER, "kind": "module"} in loc["logicalLocations"]


def test_check_profile_input_is_passed_to_check(tmp_path):
    """Without a server: a stand-in mcpreel shows the argv the check gate runs, for the default and a choice."""
    fake = tmp_path / "mcpreel"
    fake.write_text('#!/usr/bin/env bash\nprintf \'%s\\n\' "$@" > "$MCPREEL_ARGS_OUT"\n')
    fake.chmod(0o755)
    doc = action()
    assert doc["inputs"]["check-profile"]["default"] == "mcp"
    for given, expected in (({}, "mcp"), ({"MCPREEL_CHECK_PROFILE": "strict-sse"}, "strict-sse")):
        args = tmp_path / "args"
        proc, out, _ = run_script("run.sh", tmp_path, MCPREEL_RUN="check", MCPREEL_SERVER_COMMAND="python s.py",
                                  MCPREEL_BIN=str(fake), MCPREEL_ARGS_OUT=str(args), **given)
        assert proc.returncode == 0, proc.stderr
        argv = args.read_text().splitlines()
        assert argv[:3] == ["check", "--command", "python s.py"]
        assert argv[argv.index("--profile") + 1] == expected


def test_noise_and_repeat_inputs_are_passed_to_replay(tmp_path):
    """Without a server: a stand-in mcpreel shows the argv the replay gate runs with a noise file and a repeat."""
    fake = tmp_path / "mcpreel"
    fake.write_text('#!/usr/bin/env bash\nprintf \'%s\\n\' "$@" > "$MCPREEL_ARGS_OUT"\n')
    fake.chmod(0o755)
    doc = action()
    assert doc["inputs"]["repeat"]["default"] == "1" and doc["inputs"]["noise"]["default"] == ""
    args = tmp_path / "args"
    proc, _, _ = run_script("run.sh", tmp_path, MCPREEL_RUN="replay", MCPREEL_SESSION="s.jsonl",
                            MCPREEL_TARGET_COMMAND="python s.py", MCPREEL_NOISE="noise.json", MCPREEL_REPEAT="3",
                            MCPREEL_BIN=str(fake), MCPREEL_ARGS_OUT=str(args))
    assert proc.returncode == 0, proc.stderr
    argv = args.read_text().splitlines()
    assert argv[:4] == ["replay", "s.jsonl", "--target-command", "python s.py"]
    assert argv[argv.index("--noise") + 1] == "noise.json" and argv[argv.index("--repeat") + 1] == "3"


def test_could_not_run_and_bad_words(tmp_path):
    proc, out, summary = run_script("run.sh", tmp_path, MCPREEL_RUN="audit", MCPREEL_SOURCE=str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 0
    assert out["audit-exit-code"] == "2" and out["exit-code"] == "2"
    assert "could not run" in summary
    proc, out, _ = run_script("run.sh", tmp_path, MCPREEL_RUN="lint")
    assert proc.returncode == 2 and "unknown gate 'lint'" in proc.stderr and out["exit-code"] == "2"
    proc, _, _ = run_script("run.sh", tmp_path, MCPREEL_RUN="audit", MCPREEL_SOURCE="a.jsonl",
                            MCPREEL_SERVER_COMMAND="x")
    assert proc.returncode == 2 and "not both" in proc.stderr
    proc, _, _ = run_script("run.sh", tmp_path, MCPREEL_RUN="")
    assert proc.returncode == 2
    for code, rc in (("2", 2), ("", 2)):
        verdict = subprocess.run(["bash", str(SCRIPTS / "verdict.sh")], env={**os.environ, "MCPREEL_EXIT_CODE": code},
                                 capture_output=True, text=True)
        assert verdict.returncode == rc


def test_install_script_skip_and_missing_action_path(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTION_PATH"}
    ok = subprocess.run(["bash", str(SCRIPTS / "install.sh")], capture_output=True, text=True,
                        env={**env, "MCPREEL_INSTALL": "skip", "MCPREEL_BIN": MCPREEL_BIN})
    assert ok.returncode == 0 and "mcpreel" in ok.stdout
    bad = subprocess.run(["bash", str(SCRIPTS / "install.sh")], capture_output=True, text=True,
                         env={**env, "MCPREEL_INSTALL": "action"})
    assert bad.returncode == 2 and "GITHUB_ACTION_PATH" in bad.stderr
    gone = subprocess.run(["bash", str(SCRIPTS / "install.sh")], capture_output=True, text=True,
                          env={**env, "MCPREEL_INSTALL": "skip", "MCPREEL_BIN": str(tmp_path / "no-mcpreel")})
    assert gone.returncode == 2 and "not on PATH" in gone.stderr


def test_the_replay_gate_takes_a_compare_rules_file(tmp_path):
    """compare-rules reaches `mcpreel replay --compare-rules`: the clock's time is masked, the gate passes."""
    from tests.compare.test_rules import _reel

    recorded = _reel(tmp_path / "recorded.jsonl", "2026-01-01T10:00:00Z")
    served = _reel(tmp_path / "served.jsonl", "2027-02-02T11:11:11Z")
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - {tool: now, path: '$.result.content[0].text', mask: '\\d{4}-[\\d:T-]+Z'}\n")
    env = {"MCPREEL_RUN": "replay", "MCPREEL_SESSION": str(recorded), "MCPREEL_REPORTS": "r",
           "MCPREEL_TARGET_COMMAND": f"{sys.executable} -m mcpreel serve {served}"}
    _, out, _ = run_script("run.sh", tmp_path, **env)
    assert out["replay-exit-code"] == "1"
    proc, out, summary = run_script("run.sh", tmp_path, **env, MCPREEL_COMPARE_RULES=str(rules))
    assert out["replay-exit-code"] == "0", proc.stdout + proc.stderr
    assert "| replay | passed |" in summary


def _stand_in(tmp_path: Path) -> tuple[Path, Path]:
    """A stand-in mcpreel that writes the argv it was given (one a line) to the second path."""
    fake = tmp_path / "mcpreel"
    fake.write_text('#!/usr/bin/env bash\nprintf \'%s\\n\' "$@" > "$MCPREEL_ARGS_OUT"\n')
    fake.chmod(0o755)
    return fake, tmp_path / "args"


def test_replay_inputs_several_sessions_ignore_paths_jobs_and_html(tmp_path):
    """Without a server: several sessions (a pattern expanded, a folder), one ignore path a line (a space
    and a comma inside one kept), jobs, and the HTML page in the reports folder reach `mcpreel replay`."""
    fake, args = _stand_in(tmp_path)
    doc = action()
    assert {"ignore-path", "jobs", "target-command"} <= set(doc["inputs"])
    assert doc["inputs"]["server-command"]["deprecationMessage"].startswith("server-command is deprecated")
    (tmp_path / "s").mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / "s" / name).write_text("")
    proc, out, _ = run_script("run.sh", tmp_path, MCPREEL_RUN="replay", MCPREEL_SESSION="s/*.jsonl\n  folder/ ",
                              MCPREEL_TARGET_COMMAND="python s.py", MCPREEL_JOBS="3", MCPREEL_REPORTS="r",
                              MCPREEL_IGNORE_PATH="$..createdAt\n\n  $.result.tools[name=a b,c].description  \n",
                              MCPREEL_BIN=str(fake), MCPREEL_ARGS_OUT=str(args))
    assert proc.returncode == 0 and out["replay-exit-code"] == "0", proc.stderr
    argv = args.read_text().splitlines()
    assert argv[:6] == ["replay", "s/a.jsonl", "s/b.jsonl", "folder/", "--target-command", "python s.py"]
    ignored = [argv[i + 1] for i, a in enumerate(argv) if a == "--ignore-path"]
    assert ignored == ["$..createdAt", "$.result.tools[name=a b,c].description"]
    assert argv[argv.index("--jobs") + 1] == "3" and argv[argv.index("--html") + 1] == "r/replay.html"
    assert "deprecated" not in proc.stderr


def test_target_command_names_the_server_for_every_gate_and_server_command_still_works(tmp_path):
    """target-command alone starts the server of check (and audit); the deprecated server-command still
    does, with a warning; both given keep their old meanings (server-command for audit, target for replay)."""
    fake, args = _stand_in(tmp_path)
    for env in ({"MCPREEL_TARGET_COMMAND": "python new.py"}, {"MCPREEL_SERVER_COMMAND": "python new.py"}):
        for gate in ("check", "audit"):
            proc, out, _ = run_script("run.sh", tmp_path, MCPREEL_RUN=gate, MCPREEL_BIN=str(fake),
                                      MCPREEL_ARGS_OUT=str(args), **env)
            assert proc.returncode == 0 and out["exit-code"] == "0", proc.stderr
            argv = args.read_text().splitlines()
            assert argv[:3] == [gate, "--command", "python new.py"]
            assert ("server-command is deprecated" in proc.stderr) == ("MCPREEL_SERVER_COMMAND" in env)
    for gate, expected in (("audit", ["audit", "--command", "python old.py"]),
                           ("replay", ["replay", "s.jsonl", "--target-command", "python new.py"])):
        proc, _, _ = run_script("run.sh", tmp_path, MCPREEL_RUN=gate, MCPREEL_SESSION="s.jsonl",
                                MCPREEL_SERVER_COMMAND="python old.py", MCPREEL_TARGET_COMMAND="python new.py",
                                MCPREEL_BIN=str(fake), MCPREEL_ARGS_OUT=str(args))
        assert proc.returncode == 0, proc.stderr
        assert args.read_text().splitlines()[:len(expected)] == expected
    # a recording to audit and a server to replay against: source wins for audit, no conflict
    proc, _, _ = run_script("run.sh", tmp_path, MCPREEL_RUN="audit", MCPREEL_SOURCE="rec.jsonl",
                            MCPREEL_TARGET_COMMAND="python new.py", MCPREEL_BIN=str(fake), MCPREEL_ARGS_OUT=str(args))
    assert proc.returncode == 0 and args.read_text().splitlines()[:2] == ["audit", "rec.jsonl"], proc.stderr


@pytest.mark.e2e
def test_a_folder_of_sessions_replays_as_a_fleet_with_ignore_path_and_html_pages(tmp_path):
    """A folder of two sessions against one server: each a job, a JUnit case each, the fleet's page and each
    session's page in the reports; the clock's text differs until ignore-path leaves it out."""
    from tests.compare.test_rules import _reel

    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        _reel(folder / name, "2026-01-01T10:00:00Z")
    served = _reel(tmp_path / "served.jsonl", "2027-02-02T11:11:11Z")
    env = {"MCPREEL_RUN": "replay", "MCPREEL_SESSION": "sessions", "MCPREEL_REPORTS": "r", "MCPREEL_JOBS": "2",
           "MCPREEL_TARGET_COMMAND": f"{sys.executable} -m mcpreel serve {served}"}
    proc, out, _ = run_script("run.sh", tmp_path, **env)
    assert out["replay-exit-code"] == "1", proc.stdout + proc.stderr
    proc, out, summary = run_script("run.sh", tmp_path, **env, MCPREEL_IGNORE_PATH="$.result.content[0].text\n")
    assert out["replay-exit-code"] == "0", proc.stdout + proc.stderr
    assert "| replay | passed |" in summary
    assert (tmp_path / "r" / "replay.junit.xml").read_text().count("<testcase") == 2
    page = (tmp_path / "r" / "replay.html").read_text()
    pages = sorted(p.name for p in (tmp_path / "r" / "replay.sessions").iterdir())
    assert len(pages) == 2 and all(f"replay.sessions/{p}" in page for p in pages), pages
