"""Pages that cannot run what they show: the report, ``diff --html`` and ``replay --html`` pages of
recordings whose every string field is hostile (``peers/hostile.py``), rendered in Chromium.

Two guards stand between session text and the page's script: the escaping (HTML escapes, ``<`` escaped
in the JSON block, ``textContent`` in the script) and the Content-Security-Policy (only the page's own
script and stylesheet, by hash; Trusted Types). Each page is checked as written (both guards on) and with
the browser told to ignore the policy (``bypass_csp``: the escaping alone must hold). What is checked:
no script ran (``window.__pwned`` unset, the title not changed), the browser saw no policy violation and
logged no error, no element was injected (the tags counted after every row is opened are those of the
same page built from a harmless twin of the recording, the page's own ``<script>`` is two and ``<img>``
none, no element has an ``on…`` attribute), the page's own script did run (its rows are there), and the
hostile text is on the page as text.

The check is shown to fail: with the escape of the JSON block dropped, or ``textContent`` turned into
``innerHTML`` in the page's script, it reports the injected elements or the violation; and with the policy
bypassed as well, the payload does run, so the payload is live and the guards are what stop it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mcpreel.formats import open_session
from mcpreel.formats.reel import write as write_reel
from mcpreel.model import Session
from mcpreel.report import collect, compare_page, html, page
from tests.report.hostile_recording import hostile_session
from tests.report.peers.hostile import PWNED_TITLE, hostile, hostile_name, plain

PEERS = Path(__file__).resolve().parent / "peers"

#: set before the page's own parsing starts (an init script is not subject to the page's policy)
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + (e.blockedURI || "") + " " + (e.sample || ""));
}, true);
"""

#: what the page holds once its script has run and every row is open
CENSUS = """() => {
  const all = Array.from(document.querySelectorAll("*"));
  const tags = {};
  all.forEach(e => { tags[e.localName] = (tags[e.localName] || 0) + 1; });
  const handlers = [];
  all.forEach(e => Array.from(e.attributes).forEach(a => {
    if (a.name.toLowerCase().startsWith("on")) handlers.push(e.localName + "[" + a.name + "]");
  }));
  return {tags: tags, handlers: handlers, pwned: window.__pwned || null, title: document.title,
          violations: window.__violations || [], text: document.body ? document.body.innerText : ""};
}"""


# -- the recordings ---------------------------------------------------------------------------------------
def _write(session: Session, path: Path) -> Path:
    with path.open("wb") as fh:
        write_reel(session, fh)
    return path


@dataclass
class Recordings:
    """The hostile recordings on disk (under hostile file names), and their harmless twins."""

    folder: Path
    files: dict[str, dict[str, Path]] = field(default_factory=dict)  # strings -> side -> file

    def file(self, strings: str, side: str = "a") -> Path:
        return self.files[strings][side]


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> Recordings:
    folder = tmp_path_factory.mktemp("hostile")
    out = Recordings(folder)
    for name, s, file_name in (("hostile", hostile, hostile_name), ("plain", plain, plain)):
        (folder / name).mkdir()
        out.files[name] = {side: _write(hostile_session(s, side), folder / name / f"{file_name('file-' + side)}.jsonl")
                           for side in ("a", "b")}
    return out


@pytest.fixture(scope="module")
def replays(recordings):
    """``replay`` of each recording against ``peers/hostile_server.py`` speaking the same strings, run for
    real (a server process over stdio): ``{"hostile": ReplayReport, "plain": ReplayReport}``."""
    from concurrent.futures import ThreadPoolExecutor

    from mcpreel.replay import ReplayOptions, ReplayTarget, replay_file

    out = {}
    for name, s in (("hostile", hostile), ("plain", plain)):
        command = [sys.executable, str(PEERS / "hostile_server.py"), name, s("target-argv")]
        # a thread of its own: Playwright's sync API keeps an event loop running in this one
        with ThreadPoolExecutor(1) as pool:
            out[name] = pool.submit(replay_file, recordings.file(name), ReplayTarget(command=command),
                                    options=ReplayOptions(timeout=20)).result(timeout=60)
        assert out[name].results, f"the {name} replay sent nothing"
    return out


# -- the pages ---------------------------------------------------------------------------------------
def report_page(recordings: Recordings, replays, strings: str) -> str:
    return html.render(collect(open_session(recordings.file(strings))[0]))


def diff_page(recordings: Recordings, replays, strings: str) -> str:
    from mcpreel.compare import diff_files

    return compare_page.diff_page(diff_files(recordings.file(strings, "a"), recordings.file(strings, "b")))


def replay_page(recordings: Recordings, replays, strings: str) -> str:
    return compare_page.replay_page(replays[strings])


PAGES = {"report": report_page, "diff": diff_page, "replay": replay_page}
#: the page's table of calls, and the tables whose rows open
ROWS = {"report": ["#calls-table tbody tr.call", "#timeline tbody tr.seq"], "diff": ["#diff-table tbody tr.call"],
        "replay": ["#diff-table tbody tr.call"]}
#: a hostile field each page must show as text (what the session said, not what it would have done)
SHOWN = {"report": ["server", "client", "label", "tool", "argument", "result", "error", "stderr", "method"],
         "diff": ["file-a", "file-b", "server-version-b", "tool-3", "result-b"],
         "replay": ["file-a", "target-argv", "tool", "replayed-result", "replayed-error", "server-method"]}


@dataclass
class Seen:
    census: dict
    problems: list[str]
    rows: int


def open_page(browser, text: str, path: Path, kind: str, *, bypass_csp: bool = False) -> Seen:
    """Open the page, let its script run, open every row it has, and take the census."""
    path.write_text(text, encoding="utf-8")
    context = browser.new_context(bypass_csp=bypass_csp, viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    try:
        tab = context.new_page()
        tab.add_init_script(WATCH)
        tab.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
               if m.type in ("error", "warning") else None)
        tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        tab.on("request", lambda r: None if r.url == path.resolve().as_uri() else problems.append(f"request {r.url}"))
        tab.goto(path.resolve().as_uri())
        if kind != "report":
            tab.select_option("#call-kind", "all")
        rows = 0
        for selector in ROWS[kind]:
            found = tab.locator(selector)
            rows += found.count()
            for i in range(found.count()):
                found.nth(i).click()
        tab.wait_for_timeout(50)  # an onerror fires after the image fails: let it
        return Seen(tab.evaluate(CENSUS), problems, rows)
    finally:
        context.close()


def findings(seen: Seen, twin: Seen) -> list[str]:
    """What says that session text became markup or script: empty for a page that held."""
    c = seen.census
    out = list(seen.problems)
    if c["pwned"]:
        out.append(f"script ran, carried by {c['pwned']}")
    if c["title"] == PWNED_TITLE:
        out.append(f"the title was changed: {c['title']!r}")
    out += [f"policy violation: {v}" for v in c["violations"]]
    out += [f"event handler attribute {h}" for h in c["handlers"]]
    tags, own = c["tags"], twin.census["tags"]
    if tags.get("script", 0) != 2:
        out.append(f"{tags.get('script', 0)} <script> elements, the page has 2")
    if tags.get("img", 0) != 0:
        out.append(f"{tags['img']} <img> elements, the page has none")
    out += [f"<{t}>: {tags.get(t, 0)} where the page has {own.get(t, 0)}" for t in sorted(set(tags) | set(own))
            if tags.get(t, 0) != own.get(t, 0)]
    if seen.rows != twin.rows or seen.rows == 0:
        out.append(f"{seen.rows} rows where the page has {twin.rows}: its own script did not run as it should")
    return out


@pytest.fixture(scope="module")
def twins(browser, recordings, replays, tmp_path_factory) -> dict[str, Seen]:
    """Each page built from the harmless twin: the census an unharmed page has."""
    folder = tmp_path_factory.mktemp("twins")
    out = {}
    for kind, build in PAGES.items():
        out[kind] = open_page(browser, build(recordings, replays, "plain"), folder / f"{kind}.html", kind)
        assert out[kind].problems == [] and out[kind].census["violations"] == [], out[kind]
        assert out[kind].census["tags"].get("script") == 2 and not out[kind].census["tags"].get("img")
    return out


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["as-written", "escaping-alone"])
@pytest.mark.parametrize("kind", list(PAGES))
def test_hostile_session_text_stays_text(browser, recordings, replays, twins, tmp_path, kind, bypass_csp):
    text = PAGES[kind](recordings, replays, "hostile")
    assert hostile("server") in open_session(recordings.file("hostile"))[0].messages[1].raw["result"]["serverInfo"]["name"]
    seen = open_page(browser, text, tmp_path / f"{kind}.html", kind, bypass_csp=bypass_csp)
    assert findings(seen, twins[kind]) == []
    shown = seen.census["text"]
    forms = {tag: (hostile(tag), hostile_name(tag), json.dumps(hostile(tag))[1:-1]) for tag in SHOWN[kind]}
    missing = [tag for tag, texts in forms.items() if not any(text in shown for text in texts)]
    assert missing == [], f"hostile text not shown as text on the {kind} page: {missing}"


# -- the test can fail --------------------------------------------------------------------------------
def _no_json_escape(doc) -> str:
    from mcpreel._infra import jsonio

    return jsonio.dumps(doc).decode("utf-8")


def _break(monkeypatch, how: str) -> None:
    """Take one guard away: the ``<`` escape of the JSON block, or ``textContent`` in the page's script."""
    if how == "json-escape":
        monkeypatch.setattr(html, "script_json", _no_json_escape)
        monkeypatch.setattr(compare_page, "script_json", _no_json_escape)
        return
    real = page.asset

    def inner_html(name: str) -> str:
        text = real(name)
        if name.endswith(".js"):
            assert "e.textContent = String(text);" in text, f"{name} no longer sets textContent in el(): update this test"
            text = text.replace("e.textContent = String(text);", "e.innerHTML = String(text);")
        return text

    monkeypatch.setattr(html, "asset", inner_html)
    monkeypatch.setattr(compare_page, "asset", inner_html)


@pytest.mark.parametrize("how", ["json-escape", "innerHTML"])
@pytest.mark.parametrize("kind", list(PAGES))
def test_a_broken_page_is_caught(browser, recordings, replays, twins, tmp_path, monkeypatch, kind, how):
    _break(monkeypatch, how)
    text = PAGES[kind](recordings, replays, "hostile")
    # as written: the policy stops the payload, and the check says what got in
    held = open_page(browser, text, tmp_path / f"{kind}.html", kind)
    found = findings(held, twins[kind])
    assert found, f"the broken {kind} page ({how}) passed the check"
    assert not held.census["pwned"] and held.census["title"] != PWNED_TITLE
    assert held.census["violations"], "the policy refused nothing"
    # without the policy the payload runs: it is live, and the guards are what stop it
    bare = open_page(browser, text, tmp_path / f"{kind}-bare.html", kind, bypass_csp=True)
    assert bare.census["pwned"], f"the broken {kind} page ({how}) ran nothing without its policy"
    assert findings(bare, twins[kind])
