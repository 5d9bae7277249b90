"""The report in a real browser: headless Chromium (Debian's package) driven by Playwright for Python.

What a person sees is asserted: the number of rows, that filtering and sorting work, that a row opens
to its JSON, that the page logs no error and asks for nothing over the network. A screenshot of each
report type is saved under the test's temporary directory.

Chromium comes from ``make chromium`` (apt): the ``browser`` fixture is in ``tests/report/conftest.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpreel.formats import open_session
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.report import ReportLimits, write_report
from tests.conftest import FIXTURES, needs_shared

FAILED = {"error", "isError", "unanswered"}


class Opened:
    def __init__(self, browser, path: Path):
        self.problems: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)

    def rows(self) -> int:
        return self.page.locator("#calls-table tbody tr.call").count()

    def close(self) -> None:
        self.page.close()


def _matches(call: dict, words: list[str]) -> bool:
    """The page's filter, said again: every word is in the call's number, method, target, id, status, code, text
    or tags, its request or response (arguments and results), or a server request it caused."""
    kids = [" ".join((ch["method"], ch["status"], ch["request"], ch["response"] or "")) for ch in call.get("children", [])]
    text = " ".join(str(x) for x in (call["n"] + 1, call["method"], call["target"] or "", call["id"] or "", call["status"],
                                     "" if call["code"] is None else call["code"], call["message"] or "",
                                     " ".join(call["tags"]), "server" if call["dir"] == "out" else "client",
                                     call["request"] or "", call["response"] or "", *kids)).lower()
    return all(w in text for w in words)


def check_report(browser, session: Session, tmp_path: Path, name: str, word: str, limits: ReportLimits | None = None) -> dict:
    html = tmp_path / f"{name}.html"
    data = write_report(session, html, limits)
    opened = Opened(browser, html)
    page = opened.page
    try:
        # what is there
        assert opened.rows() == len(data.calls) > 0
        assert page.locator("#timeline tbody tr.seq").count() == len(data.timeline)
        assert page.locator("#tools-table tbody tr").count() == len(data.tools)
        assert page.locator("#latency-chart .lat-row").count() == min(len(data.latency), 40)
        assert page.locator("#call-count").inner_text() == f"{len(data.calls)} of {len(data.calls)} calls shown"
        failed_rows = page.locator("#calls-table tbody tr.call.failed").count()
        assert failed_rows == sum(1 for c in data.calls if c["status"] in FAILED)

        # filtering: by text, by status, and back
        expected = [c for c in data.calls if _matches(c, [word])]
        assert expected, f"the word {word!r} matches no call: pick another"
        page.fill("#call-filter", word)
        assert opened.rows() == len(expected)
        firsts = page.locator("#calls-table tbody tr.call td:first-child").all_inner_texts()
        assert [int(x) for x in firsts] == [c["n"] + 1 for c in expected]
        page.fill("#call-filter", "")
        page.select_option("#call-status", "failed")
        assert opened.rows() == failed_rows
        page.select_option("#call-status", "all")
        assert opened.rows() == len(data.calls)

        # sorting: latency, slowest first
        page.click('#calls-table th[data-key="latency"]')
        top = page.locator("#calls-table tbody tr.call").first
        slowest = max(data.calls, key=lambda c: (c["latency"] if c["latency"] is not None else -1, -c["n"]))
        assert int(top.locator("td").first.inner_text()) == slowest["n"] + 1
        page.click('#calls-table th[data-key="n"]')

        # a row opens to the pretty JSON of its request and response, and closes again
        first = page.locator("#calls-table tbody tr.call").first
        first.click()
        detail = page.locator("#calls-table tbody tr.detail")
        assert detail.count() == 1 and detail.is_visible()
        request = json.loads(detail.locator("pre.request").inner_text())
        assert request["method"] == data.calls[0]["method"] and first.get_attribute("aria-expanded") == "true"
        if data.calls[0]["response"] is not None:
            response = json.loads(detail.locator("pre.response").inner_text())
            assert "result" in response or "error" in response
        page.screenshot(path=str(tmp_path / f"{name}.png"))
        first.click()
        assert page.locator("#calls-table tbody tr.detail").count() == 0

        # the sequence view opens too
        seq = page.locator("#timeline tbody tr.seq").first
        seq.click()
        assert page.locator("#timeline tbody tr.detail pre").count() == 1

        assert opened.problems == []
        assert opened.requests == [opened.url]  # the page itself, nothing else
    finally:
        opened.close()
    shot = tmp_path / f"{name}.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    return {"data": data, "shot": shot}


@needs_shared
def test_report_of_an_imported_fixture(browser, tmp_path):
    path = FIXTURES / "mcp-replay-v1" / "mcp-api-coingecko-com-2026-08-19T23-43-21-646Z.mcp.jsonl"
    out = check_report(browser, open_session(path)[0], tmp_path, "fixture", "execute")
    assert out["data"].counts["is_errors"] == 19


@pytest.mark.e2e
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_report_of_a_real_recording(browser, tmp_path, recordings, era):
    out = check_report(browser, open_session(recordings[era])[0], tmp_path, f"recorded-{era}", "echo")
    assert {c["target"] for c in out["data"].calls} >= {"echo", "fail", "slow", "ask", "greet", "res://motd"}


def test_report_of_a_big_session_shows_the_bounded_detail(browser, tmp_path):
    msgs = []
    for i in range(5000):
        msgs.append(Message("in", {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                   "params": {"name": f"tool{i % 4}", "arguments": {"i": i}}}, t=10 * i))
        result = {"content": [{"type": "text", "text": "ok"}], "isError": i % 400 == 3}
        msgs.append(Message("out", {"jsonrpc": "2.0", "id": i, "result": result}, t=10 * i + (i % 7) + (500 if i % 1000 == 999 else 0)))
    session = Session(SessionInfo(label="big", transport="stdio"), msgs)
    limits = ReportLimits(timeline=200, detail=25, max_errors=100)
    out = check_report(browser, session, tmp_path, "big", "tool1", limits)
    data = out["data"]
    assert data.calls_total == 5000 and 25 <= len(data.calls) <= 25 + 25 + 13
    assert (tmp_path / "big.html").stat().st_size < 400_000


@pytest.mark.e2e
def test_diff_page_of_two_real_recordings(browser, tmp_path, recordings):
    """``diff --html`` of the two eras' recordings: the same calls, different envelopes and one failure."""
    import subprocess
    import sys

    from mcpreel.compare import diff_files

    html = tmp_path / "diff.html"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "diff", str(recordings["legacy"]), str(recordings["modern"]),
                           "--html", str(html)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr  # they differ
    result = diff_files(str(recordings["legacy"]), str(recordings["modern"]))
    changed = [c for c in result.calls if c.kind != "same"]
    opened = Opened(browser, html)
    page = opened.page
    try:
        rows = page.locator("#diff-table tbody tr.call")
        assert rows.count() == len(changed) > 0
        page.select_option("#call-kind", "all")
        assert rows.count() == len(result.calls)
        page.select_option("#call-kind", "changed")
        assert rows.count() == sum(1 for c in result.calls if c.kind == "changed")
        page.fill("#call-filter", "ask")
        ask = [c for c in result.calls if c.kind == "changed" and c.subject == "ask"]
        assert rows.count() == len(ask) == 1
        rows.first.click()
        detail = page.locator("#diff-table tbody tr.detail")
        paths = detail.locator("table.paths tr.path").all_inner_texts()
        assert len(paths) == len(ask[0].arguments) + len(ask[0].result)
        assert any("$.error" in p or "$.result" in p for p in paths)
        assert detail.locator("pre.json").count() == 4  # A and B, request and response each
        assert json.loads(detail.locator("pre.request").nth(1).inner_text())["params"]["name"] == "ask"
        page.screenshot(path=str(tmp_path / "diff.png"))
        assert opened.problems == [] and opened.requests == [opened.url]
    finally:
        opened.close()
    assert (tmp_path / "diff.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.e2e
def test_replay_page_against_a_changed_server(browser, tmp_path, recordings):
    """``replay --html``: the legacy recording, with one recorded answer changed, replayed against the real
    server: that call is ``different``, path by path, and everything else the same."""
    import subprocess
    import sys

    lines = recordings["legacy"].read_text().splitlines(keepends=True)
    doctored = tmp_path / "doctored.jsonl"
    # the server's first echo answer, as if an older version had said something else
    first = next(i for i, line in enumerate(lines) if '"result"' in line and "hello <b>&</b>" in line)
    doctored.write_text("".join(lines[:first] + [lines[first].replace("hello <b>&</b>", "hullo")] + lines[first + 1:]))
    html = tmp_path / "replay.html"
    server = f"{sys.executable} {Path(__file__).resolve().parent / 'peers' / 'server.py'}"
    proc = subprocess.run([sys.executable, "-m", "mcpreel", "replay", str(doctored), "--target-command", server,
                           "--html", str(html), "--output", str(tmp_path / "replay.json")],
                          capture_output=True, text=True, timeout=90)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "replay.json").read_text())["results"]
    different = [r for r in results if r["status"] == "changed"]
    assert [r["tool"] for r in different] == ["echo"]
    opened = Opened(browser, html)
    page = opened.page
    try:
        rows = page.locator("#diff-table tbody tr.call")
        assert rows.count() == 1
        page.select_option("#call-kind", "all")
        assert rows.count() == len(results)
        page.select_option("#call-kind", "changed")
        rows.first.click()
        detail = page.locator("#diff-table tbody tr.detail")
        paths = detail.locator("table.paths tr.path").all_inner_texts()
        assert len(paths) == len(different[0]["diff"]) and all("hullo" in p for p in paths)
        assert detail.locator("pre.json").count() == 4
        assert page.locator("#server-requests tbody tr").count() == 1  # the sampling request, answered from the recording
        page.screenshot(path=str(tmp_path / "replay.png"))
        assert opened.problems == [] and opened.requests == [opened.url]
    finally:
        opened.close()
    assert (tmp_path / "replay.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.e2e
def test_session_page_links_folds_copies_and_draws_what_a_call_caused(browser, tmp_path, recordings):
    """The legacy recording's ``ask`` call made the server ask the client to sample: the sampling request is
    drawn under that call and opens to its JSON; the filter finds a call by its arguments; ``#call-N`` opens
    that call; a JSON block folds and unfolds back to the same text; the copy button copies the JSON."""
    html = tmp_path / "links.html"
    data = write_report(open_session(recordings["legacy"])[0], html)
    ask = next(c for c in data.calls if c["target"] == "ask")
    opened = Opened(browser, html)
    page = opened.page
    try:
        # the server request the call caused, right under it, and its own JSON
        row = page.locator(f"#call-{ask['n'] + 1}")
        assert row.locator("td").nth(3).inner_text() == "ask"
        child = page.locator(f"#call-{ask['n'] + 1} + tr.child")
        assert child.locator("td.caused").inner_text() == "↳ sampling/createMessage"
        assert page.locator("#calls-table tbody tr.child").count() == sum(len(c.get("children", [])) for c in data.calls)
        child.click()
        sampled = page.locator("#calls-table tr.child-detail")
        assert json.loads(sampled.locator("pre.child-request").inner_text())["method"] == "sampling/createMessage"
        assert "result" in json.loads(sampled.locator("pre.child-response").inner_text())
        child.click()

        # the filter reads arguments and results: the question asked is only in the ask call's arguments
        page.fill("#call-filter", "meaning?")
        assert opened.rows() == 1 and page.locator("#calls-table tbody tr.call td").nth(3).inner_text() == "ask"
        page.fill("#call-filter", "")

        # #call-N: a link per call, and opening the page at one opens that call (even when the filter hid it)
        echo = next(c for c in data.calls if c["target"] == "echo")
        link = page.locator(f"#call-{echo['n'] + 1} td.num a")
        assert link.get_attribute("href") == f"#call-{echo['n'] + 1}"
        page.fill("#call-filter", "no row has this")
        page.goto(f"{opened.url}#call-{ask['n'] + 1}")
        page.wait_for_function(f"document.getElementById('call-{ask['n'] + 1}')?.getAttribute('aria-expanded') === 'true'")
        assert page.evaluate("location.hash") == f"#call-{ask['n'] + 1}"
        detail = page.locator("#calls-table tbody tr.detail").first
        request_pre = detail.locator("pre.request")
        whole = request_pre.inner_text()
        assert whole == ask["request"] and json.loads(whole)["params"]["name"] == "ask"
        page.screenshot(path=str(tmp_path / "links.png"), full_page=False)

        # JSON folds: the params block closes to "{ … }" and opens again to the very same text
        toggles = request_pre.locator(".fold")
        assert toggles.count() >= 2  # the message and its params at least
        params = toggles.nth(1)
        params.click()
        assert params.get_attribute("aria-expanded") == "false"
        folded = request_pre.inner_text()
        assert '"params": {' in folded and '"arguments"' not in folded and len(folded) < len(whole)
        page.screenshot(path=str(tmp_path / "folded.png"))
        params.focus()
        page.keyboard.press("Enter")
        assert request_pre.inner_text() == whole

        # copy: the button puts the JSON, as recorded, on the clipboard
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        detail.locator("h3 button.copy").first.click()
        page.wait_for_function("document.querySelector('#calls-table tr.detail h3 button.copy').textContent === 'copied'")
        assert page.evaluate("navigator.clipboard.readText()") == ask["request"]

        # a call the page does not keep says so
        page.goto(f"{opened.url}#call-{data.calls_total + 5}")
        page.wait_for_function("document.getElementById('call-count').textContent.indexOf('not kept') >= 0")
        assert opened.problems == []
        assert {u.split("#")[0] for u in opened.requests} == {opened.url}
    finally:
        opened.close()
    for name in ("links.png", "folded.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        import shutil

        shutil.copy(tmp_path / name, Path("/tmp") / f"mcpreel-{name}")


@pytest.mark.e2e
def test_corpus_page_sorts_filters_and_links_to_each_session(browser, tmp_path, recordings):
    """``report --db``: the two eras' recordings indexed; the sessions table has their times, sorts by a
    heading, filters by a word and by failed; the failed call links into its session's own report, which
    opens at that call."""
    import shutil

    from mcpreel.corpus.index import index_paths
    from mcpreel.corpus.page import write_corpus_report

    folder = tmp_path / "sessions"
    folder.mkdir()
    for era in ("legacy", "modern"):
        shutil.copy(recordings[era], folder / f"{era}.jsonl")
    db = tmp_path / "corpus.duckdb"
    index_paths([folder], db)
    html = tmp_path / "corpus.html"
    data = write_corpus_report(db, html)
    assert len(data.sessions) >= 2 and len(data.pages) == 2  # a file may hold more than one client session
    modern = sum(1 for r in data.sessions if r[0].endswith("modern.jsonl"))
    opened = Opened(browser, html)
    page = opened.page
    try:
        rows = page.locator("#sessions-table tbody tr")
        assert rows.count() == len(data.sessions)
        times = rows.locator("td.time").all_inner_texts()
        assert times == sorted(times, reverse=True) and all(t.startswith("20") for t in times)  # newest first
        page.click("#sessions-table th >> text=started (UTC)")  # ascending
        assert rows.locator("td.time").all_inner_texts() == sorted(times)
        page.fill('input.table-filter[data-table="sessions-table"]', "modern.jsonl")
        visible = page.locator("#sessions-table tbody tr:visible")
        assert visible.count() == modern and all("modern.jsonl" in t for t in visible.all_inner_texts())
        shown = page.locator('.table-count[data-table="sessions-table"]').inner_text()
        assert shown == f"{modern} of {len(data.sessions)} shown"
        page.fill('input.table-filter[data-table="sessions-table"]', "")
        page.select_option('select.table-status[data-table="sessions-table"]', "failed")
        assert visible.count() == sum(1 for r in data.sessions if r[8] or r[9]) >= 1
        page.screenshot(path=str(tmp_path / "corpus.png"), full_page=True)
        # the failed `fail` call opens in its own session's report, at that call
        failed = page.locator("#failed-table tbody tr", has_text="fail").first
        failed.locator("td.open a").click()
        page.wait_for_load_state()
        assert ".sessions/" in page.url and "#call-" in page.url
        n = page.url.rsplit("#call-", 1)[1]
        row = page.locator(f"#call-{n}")
        page.wait_for_function(f"document.getElementById('call-{n}').getAttribute('aria-expanded') === 'true'")
        assert row.locator("td").nth(3).inner_text() == "fail" and "failed" in row.get_attribute("class")
        page.screenshot(path=str(tmp_path / "corpus-link.png"))
        assert opened.problems == []
        assert {u.split("#")[0] for u in opened.requests} == {opened.url, page.url.split("#")[0]}
    finally:
        opened.close()
    for name in ("corpus.png", "corpus-link.png"):
        shutil.copy(tmp_path / name, Path("/tmp") / f"mcpreel-{name}")
