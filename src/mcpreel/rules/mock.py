"""Rules on the mock (``mcpreel serve --rules``): a mock connection whose traffic passes the rules.

:class:`RuledConnection` is a :class:`~mcpreel.mock.engine.MockConnection` that asks the rules about each
client message before the mock sees it and about each message the mock says before it goes out. What
needs the I/O layer is emitted as a marker the mock's seam defines: :class:`~mcpreel.mock.engine.RawLine`
(a line that is not JSON, for ``malformed``) and :data:`~mcpreel.mock.engine.CLOSE` (end the connection:
stdio closes its stdout, HTTP drops the connection and forgets the session). Delays are tasks the returned
coroutine waits for, so an HTTP answer that is late still goes out on the request's own stream.

The rules plug into the mock through its seam (:attr:`~mcpreel.mock.engine.Mock.connection_factory`):
:func:`ruled_connections` is what a front end (``mcpreel serve --rules``, a cassette) sets there. This
module imports the mock; the mock never imports it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from mcpreel._infra.correlation import verbatim_key
from mcpreel.mock.engine import CLOSE, Close, ConnectionFactory, Emit, Mock, MockConnection, RawLine
from mcpreel.rules.engine import RuleSet, Verdict, message_kind

__all__ = ["CLOSE", "Close", "RawLine", "RuledConnection", "ruled_connections"]

C2S, S2C = "client_to_server", "server_to_client"


def ruled_connections(rules: RuleSet) -> ConnectionFactory:
    """What a front end plugs into :attr:`Mock.connection_factory <mcpreel.mock.engine.Mock.connection_factory>`
    so that every client connection's traffic passes ``rules`` (one rule set shared by all connections:
    a rule's ``times`` counts across clients, as it does on a recording proxy)."""

    def make(mock: Mock) -> MockConnection:
        return RuledConnection(mock, rules)

    return make


class RuledConnection(MockConnection):
    """A mock connection under rules (see the module docstring)."""

    def __init__(self, mock: Mock, rules: RuleSet):
        super().__init__(mock)
        self.rules = rules
        self._asked: dict[Any, dict[str, Any]] = {}  # the client's requests by id, for matching answers
        self.closed = False

    def receive(self, message: Any, emit: Emit) -> Coroutine[Any, Any, None] | None:
        if self.closed:
            return None
        later: list[asyncio.Task[None]] = []
        out = self._outgoing(emit, later)
        if isinstance(message, dict) and message_kind(message) == "request":
            self._asked[verbatim_key(message.get("id"))] = message
        verdict = self.rules.decide(message, C2S)
        if verdict is None:
            pending = super().receive(message, out)
        else:
            self._said(verdict, C2S)
            pending = (self._after(verdict.delay, lambda: self._incoming(verdict, out, emit)) if verdict.delay
                       else self._incoming(verdict, out, emit))
        return self._settle(pending, later) if later or pending is not None else None

    def _incoming(self, v: Verdict, out: Emit, emit: Emit) -> Coroutine[Any, Any, None] | None:
        if v.action == "forward":
            return super().receive(v.message, out)
        if v.action in ("drop", "error"):
            if v.answer is not None:
                self._asked.pop(verbatim_key(v.answer.get("id")), None)
                emit(v.answer)
            return None
        self._asked.pop(verbatim_key(v.original.get("id")), None)
        if v.action == "malformed":
            emit(RawLine(v.raw or b""))  # type: ignore[arg-type]
        else:
            self._close(emit)
        return None

    def _outgoing(self, emit: Emit, later: list[asyncio.Task[None]]) -> Emit:
        def out(message: dict[str, Any]) -> None:
            if self.closed:
                return
            if not isinstance(message, dict):  # a batch's answers: rules speak of one message
                emit(message)
                return
            request = None
            if message_kind(message) == "response":
                request = self._asked.pop(verbatim_key(message.get("id")), None)
            verdict = self.rules.decide(message, S2C, request)
            if verdict is None:
                emit(message)
                return
            self._said(verdict, S2C)
            if verdict.delay:
                later.append(asyncio.ensure_future(self._after(verdict.delay, lambda: self._send(verdict, emit))))
            else:
                self._send(verdict, emit)

        return out

    def _send(self, v: Verdict, emit: Emit) -> None:
        if self.closed:
            return
        if v.action == "forward":
            emit(v.message)
        elif v.action in ("drop", "error"):
            if v.answer is not None and message_kind(v.original) == "request":
                super().receive(v.answer, emit)  # a server request refused: the mock gets the error as its answer
        elif v.action == "malformed":
            emit(RawLine(v.raw or b""))  # type: ignore[arg-type]
        else:
            self._close(emit)

    def _close(self, emit: Emit) -> None:
        emit(CLOSE)  # type: ignore[arg-type]
        self.closed = True
        self.client_gone()

    def _said(self, v: Verdict, direction: str) -> None:
        what = v.original.get("method") or f"the answer to {v.original.get('id')!r}"
        how = v.action if v.action != "forward" else "rewrite" if v.modified else "delay"
        delay = f" {v.delay:g}s" if how == "delay" else f" after {v.delay:g}s" if v.delay else ""
        arrow = "->" if direction == C2S else "<-"
        self.mock.on_event(f"{v.decided_by}: {how}{delay} {arrow} {what}")

    async def _after(self, delay: float, then: Callable[[], Any]) -> None:
        if delay:
            await asyncio.sleep(delay)
        pending = then()
        if pending is not None:
            await pending

    async def _settle(self, pending: Any, later: list[asyncio.Task[None]]) -> None:
        try:
            if pending is not None:
                await pending
            while later:  # answers a rule delays, including those emitted while waiting
                task = later.pop(0)
                await task
        finally:
            for task in later:
                task.cancel()
