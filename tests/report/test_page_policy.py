"""The Content-Security-Policy of every page (report, ``diff --html``, ``replay --html``), parsed and checked.

The page is read with the standard library's HTML parser, its policy split into directives and sources,
and the hashes in it compared with SHA-256 of the page's own ``<script>`` and ``<style>`` texts computed
here, independently of :mod:`mcpreel.report.page`. No browser: the Chromium tests
(``test_hostile_pages.py``) show the policy works; these say what it is, on every page, with or without
Chromium on the machine.
"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest

from mcpreel.compare.diff import diff_sessions
from mcpreel.model import Message, Session, SessionInfo
from mcpreel.replay.results import ReplayReport, RequestResult, ServerRequestResult
from mcpreel.report import collect, compare_page, html, page
from tests.report.hostile_recording import hostile_session
from tests.report.peers.hostile import hostile

QUOTED = re.compile(r"'(none|self|sha256-[A-Za-z0-9+/]{43}=|script)'")


class Page(HTMLParser):
    """What the policy checks need: the policy, where it stands, and the inline script and style texts."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.policies: list[str] = []
        self.before_policy: list[str] = []  # elements opened before the policy's <meta>
        self.scripts: list[str] = []  # the texts of scripts the browser runs
        self.data_blocks = 0  # <script type="application/json">
        self.styles: list[str] = []
        self.style_attributes = 0
        self.remote: list[str] = []  # src= / href= attributes
        self._in: tuple[str, bool] | None = None
        self._text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.policies.append(a.get("content") or "")
        elif not self.policies:
            self.before_policy.append(tag)
        if "style" in a:
            self.style_attributes += 1
        self.remote += [f"{tag}[{k}]={v}" for k, v in attrs if k in ("src", "href", "srcdoc", "action", "data")]
        if tag in ("script", "style"):
            self._in = (tag, tag == "script" and (a.get("type") or "").lower() == "application/json")
            self._text = []

    def handle_data(self, data):
        if self._in is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if self._in is not None and tag == self._in[0]:
            text = "".join(self._text)
            if tag == "style":
                self.styles.append(text)
            elif self._in[1]:
                self.data_blocks += 1
            else:
                self.scripts.append(text)
            self._in = None


def directives(policy: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in policy.split(";"):
        words = part.split()
        if not words:
            continue
        name = words[0].lower()
        assert name not in out, f"directive {name} given twice (the browser keeps the first): {policy}"
        out[name] = words[1:]
    return out


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def check_policy(text: str) -> dict[str, list[str]]:
    doc = Page(text)
    assert len(doc.policies) == 1, f"{len(doc.policies)} policies in the page"
    # a <meta> policy governs only what comes after it: nothing but the charset and viewport before it
    assert doc.before_policy == ["html", "head", "meta", "meta"], doc.before_policy
    d = directives(doc.policies[0])
    assert d["default-src"] in (["'none'"], ["'self'"]), d
    for name, sources in d.items():
        for source in sources:
            # no remote origin, scheme, host or wildcard anywhere: only quoted keywords and hashes
            assert QUOTED.fullmatch(source), f"{name}: {source!r} is not a keyword or a hash"
    script = d["script-src"]
    for bad in ("'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "'strict-dynamic'", "'wasm-unsafe-eval'"):
        assert bad not in script and bad not in d.get("style-src", []), f"{bad} in {d}"
    assert "script-src-elem" not in d and "script-src-attr" not in d and "style-src-attr" not in d
    # the page's own script and stylesheet, and only they, by hash
    assert doc.scripts and doc.data_blocks == 1
    assert sorted(script) == sorted({sha256_source(s) for s in doc.scripts})
    assert doc.styles and sorted(d["style-src"]) == sorted({sha256_source(s) for s in doc.styles})
    assert doc.style_attributes == 0  # a style="" would need 'unsafe-inline' or 'unsafe-hashes'
    assert d["base-uri"] == ["'none'"] and d["form-action"] == ["'none'"]
    assert d["require-trusted-types-for"] == ["'script'"]
    assert doc.remote == [], doc.remote
    assert "url(" not in "".join(doc.styles) and "@import" not in "".join(doc.styles)
    return d


def _report_page() -> str:
    return html.render(collect(hostile_session(hostile)))


def _diff_page() -> str:
    return compare_page.diff_page(diff_sessions(hostile_session(hostile, "a"), hostile_session(hostile, "b")))


def _replay_page() -> str:
    request = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": hostile("tool"), "arguments": {}}}
    recorded = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": hostile("recorded")}]}}
    replayed = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": hostile("replayed")}]}}
    report = ReplayReport(session=hostile("session"), target=hostile("target"), transport="stdio",
                          handshake=hostile("handshake"), ended=hostile("ended"), notes=[hostile("note")])
    report.results.append(RequestResult(index=1, method="tools/call", tool=hostile("tool"), status="changed",
                                        original_request=request, sent_message=request, response=replayed,
                                        recorded_response=recorded, error=hostile("error"), source=3))
    report.server_requests.append(ServerRequestResult(hostile("server-method"), {}, None, hostile("refused")))
    return compare_page.replay_page(report)


PAGES = {"report": _report_page, "diff": _diff_page, "replay": _replay_page}


@pytest.mark.parametrize("kind", list(PAGES))
def test_every_page_allows_only_its_own_script_and_style(kind):
    text = PAGES[kind]()
    d = check_policy(text)
    assert len(d["script-src"]) == 1 and len(d["style-src"]) == 1


def test_the_policy_follows_the_script_it_allows(monkeypatch):
    """The hash is computed when the page is written: a changed script gets a changed policy (and a page
    whose script no longer matches its policy would run nothing, which the browser tests would see)."""
    before = directives(Page(_report_page()).policies[0])["script-src"]
    real = page.asset
    monkeypatch.setattr(html, "asset", lambda name: real(name) + ("\n// changed" if name == "report.js" else ""))
    after = Page(_report_page())
    assert directives(after.policies[0])["script-src"] == [sha256_source(after.scripts[0])] != before


def test_a_check_that_can_fail():
    """The parsed check refuses the policy the pages had before (``'unsafe-inline'``), a remote origin, and a
    hash that is not the page's script."""
    good = _report_page()
    policy = Page(good).policies[0]
    d = directives(policy)
    for bad in [policy.replace(d["script-src"][0], "'unsafe-inline'"),
                policy.replace(d["script-src"][0], d["script-src"][0] + " https://cdn.example"),
                policy.replace("default-src 'none'", "default-src *"),
                policy.replace(d["script-src"][0], sha256_source("alert(1)"))]:
        with pytest.raises(AssertionError):
            check_policy(good.replace(policy, bad))


def test_session_text_is_never_read_for_placeholders():
    """Each ``@NAME@`` of the template is filled once: session text that spells a placeholder stays text."""
    msgs = [Message("in", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "@JS@ @CSP@"}}, t=1)]
    text = html.render(collect(Session(SessionInfo(label="@JS@ @CSS@ @CSP@"), msgs)))
    assert text.count(page.asset("report.js")) == 1 and "@JS@ @CSS@ @CSP@" in text
    check_policy(text)
