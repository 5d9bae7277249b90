"""Replay of lists retrieved over HTTP GET with caching (the transports-wg list retrieval draft).

A recording's list GETs (:mod:`mcpreel.operations.http_lists`) are not JSON-RPC, so the replay engine does
not send them; this sends each one again to the target as it was sent -- its query (``?mcp_list=tools``,
``cursor``) and the headers that select and validate the representation (``Accept``,
``MCP-Protocol-Version``, ``If-None-Match``) -- and judges the answer as one more request: the status, the
validator (``ETag``) and, for a ``200``, the list result (compared as every result is, volatile members
left out). A ``304`` is "the same" only when the baseline was a ``304`` too (the client's validator still
matches); a ``200`` where a ``304`` was recorded means the representation changed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2

from mcpreel._infra import jsonio
from mcpreel.compare.jsondiff import Difference, diff
from mcpreel.compare.normalize import IgnorePath, comparable
from mcpreel.operations.http_lists import ListGet
from mcpreel.replay.results import RequestResult

__all__ = ["SENT_HEADERS", "replay_list_gets"]

#: the recorded request headers sent again (the rest -- host, credentials, connection -- are the live client's)
SENT_HEADERS = ("accept", "mcp-protocol-version", "if-none-match", "accept-language")


def _url(target: str, recorded_path: str) -> str:
    parts = urlsplit(target)
    query = urlsplit(recorded_path).query
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "&".join(q for q in (parts.query, query) if q), ""))


def _side(status: int | None, headers: dict[str, str], result: Any, body: str | None) -> dict[str, Any]:
    """An answer as replay compares and shows it."""
    out: dict[str, Any] = {"status": status}
    if headers.get("etag") is not None:
        out["etag"] = headers["etag"]
    if result is not None:
        out["result"] = result
    elif body:
        out["body"] = body
    return out


def _judge(recorded: dict[str, Any], live: dict[str, Any], ignore: Sequence[IgnorePath]) -> list[Difference]:
    def view(side: dict[str, Any]) -> dict[str, Any]:
        out = dict(side)
        if isinstance(out.get("result"), dict):
            out["result"] = comparable({"result": out["result"]}, list(ignore)).get("result")
        return out

    return diff(view(recorded), view(live))


def replay_list_gets(lists: Sequence[ListGet], url: str, *, headers: dict[str, str] | None = None,
                     timeout: float = 30.0, ignore: Sequence[IgnorePath] = ()) -> list[RequestResult]:
    """Send every recorded list GET to ``url`` (with the user's ``headers``) and judge each answer."""
    out: list[RequestResult] = []
    with httpx2.Client(timeout=timeout) as client:
        for get in lists:
            if get.status is None:
                continue  # no recorded answer: nothing to compare with
            sent = {k: v for k, v in get.request_headers.items() if k in SENT_HEADERS}
            request = {"method": "GET", "path": get.path, "headers": sent}
            recorded = _side(get.status, get.response_headers, get.result, get.body)
            result = RequestResult(0, f"{get.method} (GET)" if get.method else get.label(), None, "error", request,
                                   sent_message=request,
                                   recorded_response=recorded, source=get.index)
            t0 = time.perf_counter()
            try:
                resp = client.get(_url(url, get.path), headers={**sent, **(headers or {})})
            except httpx2.HTTPError as exc:
                result.error = f"{get.label()}: no answer: {exc}"
                out.append(result)
                continue
            result.duration_ms = (time.perf_counter() - t0) * 1000.0
            try:
                value = jsonio.loads(resp.content) if resp.content.strip() else None
            except (ValueError, UnicodeDecodeError):
                value = None
            live_headers = {k.lower(): v for k, v in resp.headers.items()}
            live = _side(resp.status_code, live_headers, value if isinstance(value, dict) else None,
                         None if isinstance(value, dict) else resp.text[:2000] or None)
            result.response = live
            result.diff = _judge(recorded, live, ignore)
            result.status = "changed" if result.diff else "same"
            if result.diff and get.status == 304 and resp.status_code == 200:
                result.error = f"{get.label()}: the validator no longer matches: the list changed"
            out.append(result)
    return out
