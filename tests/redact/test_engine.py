"""redact.engine: one Redactor, its own counts; no redactor shared by the process."""

from __future__ import annotations

import threading

import mcpreel.redact
from mcpreel.redact import MARKER, Redactor
from mcpreel.redact.rules import rules_from_dict


def test_each_redactor_counts_its_own_run() -> None:
    first, second = Redactor(), Redactor()
    assert first.value({"token": "a"}) == {"token": MARKER}
    assert first.text("Authorization: Bearer abcdefghijkl") == f"Authorization: Bearer {MARKER}"
    assert first.command(["srv", "--api-key", "k"]) == ["srv", "--api-key", MARKER]
    assert first.counts == {"key": 1, "bearer": 1, "command": 1} and first.total == 3
    assert second.total == 0  # nothing shared between instances
    assert not hasattr(mcpreel.redact, "redact_message") and not hasattr(mcpreel.redact, "redact_command")


def test_copy_on_write_and_already_redacted_values_are_not_counted_again() -> None:
    r = Redactor()
    clean = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "c"}}
    assert r.value(clean) is clean
    once = r.value({"password": "x"})
    assert r.value(once) is once and r.total == 1


def test_the_counts_add_up_across_threads() -> None:
    r = Redactor()

    def work() -> None:
        for _ in range(200):
            r.value({"token": "t"})

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.counts == {"key": 800}


def test_rules_reach_the_engine() -> None:
    r = Redactor(rules_from_dict({"defaults": False, "keys": ["ssn"], "paths": ["$..email"], "marker": "<x>"}))
    assert r.value({"ssn": 1, "token": "kept", "a": {"email": "e@x"}}) == {"ssn": "<x>", "token": "kept",
                                                                            "a": {"email": "<x>"}}
    assert r.counts == {"key": 1, "path $..email": 1}
