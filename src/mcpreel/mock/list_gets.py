"""``serve``'s answer to a list retrieved over HTTP GET (the transports-wg list retrieval draft).

``GET <endpoint>?mcp_list=tools`` is answered from the recording's own list GETs
(:mod:`mcpreel.operations.http_lists`) for the same selector and page: ``304 Not Modified`` (no body, the
recorded ``ETag``, ``Cache-Control`` and ``Vary``) when the client's ``If-None-Match`` matches the recorded
validator, else the recorded representation (``200``, its body and validators); a status the server
answered otherwise (a ``400`` for a selector it does not know) is answered again. A list GET the recording
never made is a miss (``404``), said as such -- never a list made up from a POST answer.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from mcpreel._infra import jsonio
from mcpreel.drafts import LIST_CURSOR_PARAMETER, LIST_QUERY_PARAMETER
from mcpreel.operations.http_lists import ListGet

__all__ = ["list_get_answer", "validator_matches"]

#: the recorded response headers a list answer carries again (the rest -- date, server -- are the mock's)
KEPT_HEADERS = ("etag", "cache-control", "vary", "content-type", "last-modified", "expires")


def validator_matches(if_none_match: str | None, etag: str | None) -> bool:
    """RFC 9110's weak comparison of ``If-None-Match`` (a list, or ``*``) against an ``ETag``."""
    if not if_none_match or not etag:
        return False
    if if_none_match.strip() == "*":
        return True

    def bare(tag: str) -> str:
        tag = tag.strip()
        return tag[2:] if tag.startswith("W/") else tag

    return bare(etag) in {bare(t) for t in if_none_match.split(",")}


def _headers(get: ListGet) -> dict[str, str]:
    return {k: v for k, v in get.response_headers.items() if k in KEPT_HEADERS}


def list_get_answer(mock: Any, request: Request) -> Response:
    """The answer to a list GET, from ``mock.http_lists`` (see the module's docstring)."""
    selector = request.query_params.get(LIST_QUERY_PARAMETER)
    cursor = request.query_params.get(LIST_CURSOR_PARAMETER)
    recorded = [g for g in mock.http_lists if g.selector == selector and g.cursor == cursor and g.status is not None]
    mock.stats.requests += 1
    if not recorded:
        reason = f"the recording holds no GET ?{LIST_QUERY_PARAMETER}={selector}" + (f" cursor {cursor}" if cursor else "")
        mock.on_event(f"miss: {reason}")
        return Response(jsonio.dumps({"error": "not_recorded", "error_description": f"mcpreel serve: {reason}"}),
                        status_code=404, media_type="application/json")
    mock.stats.answered += 1
    asked = request.headers.get("if-none-match")
    bodies = [g for g in recorded if g.status == 200]
    current = bodies[-1] if bodies else None
    validators = [g for g in recorded if g.status in (200, 304) and g.etag]
    known = current if current is not None else (validators[-1] if validators else None)
    if known is not None and validator_matches(asked, known.etag):
        head = {k: v for k, v in _headers(known).items() if k != "content-type"}
        return Response(status_code=304, headers=head)
    if current is not None:
        body = jsonio.dumps(current.result) if current.result is not None else (current.body or "").encode()
        return Response(body, status_code=200, headers=_headers(current))
    other = [g for g in recorded if g.status not in (200, 304)]
    if other:
        last = other[-1]
        body = jsonio.dumps(last.result) if last.result is not None else (last.body or "").encode()
        return Response(body, status_code=last.status or 500, headers=_headers(last))
    reason = (f"the recording holds only 304s for GET ?{LIST_QUERY_PARAMETER}={selector} (no body to send) "
              f"and the client's validator {asked!r} is not theirs")
    mock.on_event(f"miss: {reason}")
    return Response(jsonio.dumps({"error": "not_recorded", "error_description": f"mcpreel serve: {reason}"}),
                    status_code=404, media_type="application/json")
