"""Lists retrieved over HTTP GET with caching (the transports-wg HTTP list retrieval draft), read from a
session's transport records.

A ``GET <endpoint>?mcp_list=tools`` is not JSON-RPC: the HTTP recorder keeps it as it came, a transport
record for the request (its path and headers: ``If-None-Match``, ``MCP-Protocol-Version``) and one for the
answer (its status, ``ETag``, ``Cache-Control``, ``Vary``, and the bare list result as ``data``; a ``304``
has no body). This module pairs the two into one :class:`ListGet` -- the list operation it stands for
(``tools/list`` ...), its validators and its result -- for the verbs that act on them: ``serve`` answers
them (a 304 when the client's validator matches the recorded one), ``replay`` re-sends and judges them,
``inspect`` shows them. The JSON-RPC walk (:mod:`mcpreel.operations.walk`) does not count them: they have
no JSON-RPC id to correlate, and the draft's selectors are illustrative (:mod:`mcpreel.drafts`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcpreel import drafts
from mcpreel.model import Kind, Message

__all__ = ["ListGet", "ListGets", "list_get_selector", "list_gets"]


def list_get_selector(path: Any) -> str | None:
    """The ``mcp_list`` selector of a request path (None: not a list GET). An unknown selector is kept as
    it came (its method is then None)."""
    if not isinstance(path, str) or drafts.LIST_QUERY_PARAMETER + "=" not in path:
        return None
    values = parse_qs(urlsplit(path).query, keep_blank_values=True).get(drafts.LIST_QUERY_PARAMETER)
    return values[0] if values else None


def _lower(headers: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {}


@dataclass
class ListGet:
    """One list GET and its answer, as recorded."""

    index: int  # record index of the request
    path: str
    selector: str | None
    request_headers: dict[str, str] = field(default_factory=dict)
    exchange: Any = None
    t: int | None = None
    status: int | None = None  # None: no answer recorded
    response_headers: dict[str, str] = field(default_factory=dict)
    result: Any = None  # the bare list result of a 200 (None for a 304)
    body: str | None = None  # a body that was not a JSON object, as text
    t_end: int | None = None

    @property
    def method(self) -> str | None:
        """The list method the selector stands for (None for a selector the draft does not name)."""
        return drafts.list_method_of_selector(self.selector)

    @property
    def cursor(self) -> str | None:
        """The page's ``cursor`` parameter (None for the first page)."""
        values = parse_qs(urlsplit(self.path).query).get(drafts.LIST_CURSOR_PARAMETER)
        return values[0] if values else None

    @property
    def if_none_match(self) -> str | None:
        """The validator the client sent (``If-None-Match``)."""
        return self.request_headers.get("if-none-match")

    @property
    def etag(self) -> str | None:
        """The validator the server answered with."""
        return self.response_headers.get("etag")

    @property
    def not_modified(self) -> bool:
        """A ``304 Not Modified``: the client's validator matched; no body."""
        return self.status == 304

    def label(self) -> str:
        """How a report names it: ``GET ?mcp_list=tools (tools/list), If-None-Match "v7" -> 304``."""
        said = f"GET ?{drafts.LIST_QUERY_PARAMETER}={self.selector}" + (f" ({self.method})" if self.method else "")
        if self.cursor:
            said += f" cursor {self.cursor}"
        if self.if_none_match:
            said += f", If-None-Match {self.if_none_match}"
        return said + (f" -> {self.status}" if self.status is not None else " -> no answer")


class ListGets:
    """Collects the list GETs of a session record by record (transport records only; cheap for the others)."""

    def __init__(self) -> None:
        self.lists: list[ListGet] = []
        self._open: dict[Any, ListGet] = {}  # exchange -> its GET, until answered

    def feed(self, index: int, msg: Message) -> None:
        """Take one record (any kind; only a list GET's transport records are kept)."""
        ctx = msg.ctx
        if msg.kind != Kind.TRANSPORT or not ctx or ctx.get("method") != "GET":
            return
        selector = list_get_selector(ctx.get("path"))
        if selector is None:
            return
        exchange = ctx.get("exchange")
        if msg.dir == "in" and "status" not in ctx:
            get = ListGet(index, str(ctx.get("path")), selector, _lower(ctx.get("headers")), exchange, msg.t)
            self.lists.append(get)
            if exchange is not None:
                self._open[exchange] = get
            return
        answered = self._open.pop(exchange) if exchange in self._open else None
        if answered is None:
            return
        get = answered
        get.status = ctx.get("status") if isinstance(ctx.get("status"), int) else None
        get.response_headers = _lower(ctx.get("headers"))
        get.result = ctx.get("data")
        get.body = ctx.get("body") if isinstance(ctx.get("body"), str) else None
        get.t_end = msg.t


def list_gets(records: Iterable[Message]) -> list[ListGet]:
    """Every list GET of ``records`` (a session), in recorded order."""
    collector = ListGets()
    for index, msg in enumerate(records):
        collector.feed(index, msg)
    return collector.lists
