"""The intercept seam: the one place a recorder lets a message be held, edited, dropped — or injects one.

The addons of :mod:`mcpreel.record.pipeline` only see what is *recorded*; what is *forwarded* never
changes there. An interceptor is the other kind of hook: a message passes through it **before** it is
forwarded, and it decides what goes on. Both recorders (stdio, and the HTTP proxy for Streamable HTTP and
legacy SSE) call the same seam, so a person at a viewer (:class:`mcpreel.control.server.ControlServer`,
``--intercept``) and a rules engine (``--rules``) plug in the same way. An interceptor is any object with:

- ``wants(direction, message) -> bool``: may this JSON-RPC message (a parsed object; ``direction`` ``in`` =
  client -> server, ``out`` = server -> client) be held or changed? Called for every message on the
  forwarding path, so it is quick and never waits; False lets the message go on as it came, with its wire
  bytes, and costs nothing more.
- ``decide(item: Pending) -> Decision``: called for a message ``wants`` said yes to; may wait (a person
  thinking, a rule's delay). The stdio recorder calls it on the pump thread of that direction, so what comes
  behind a held message waits behind it, in wire order; the HTTP proxy calls it in a worker thread
  (``asyncio.to_thread``) so other exchanges go on meanwhile. It must return eventually (a timeout is the
  interceptor's business) and it must not raise: an exception is reported once and the message is forwarded
  unchanged.
- optionally ``attach(port: InjectPort)``: called once when the recorder starts, with the port through
  which the interceptor may send new messages at any time (:meth:`InjectPort.inject`);
- optionally ``active`` (an attribute or property): False while it holds nothing at all (a viewer's
  intercept is off), so the stdio pump skips even parsing lines for ``wants``;
- optionally ``shutdown()``: the proxy is stopping (the HTTP proxy calls it when its server begins to
  stop): whatever is held should be decided now, so stopping never waits on a person.
- optionally ``abandon(session=None, message=None)``: the client went away (stdio: nobody reads the
  proxy's stdout any more, and both are None: everything held; HTTP: the connection of a held request
  closed, ``session`` its ``Mcp-Session-Id`` and ``message`` the very object that was offered to
  ``decide``): what is held for it ends now with :data:`ABANDONED`, since nobody can get an answer, and
  nothing waits on a person for a client that is gone.

What an interceptor sees is the wire, before any ``--redact`` (that applies to what is recorded only).
Only single JSON-RPC objects are offered to it; a batch, a line that is not JSON and (on HTTP) anything the
server sends go through as they came.

A :class:`Decision` says ``forward`` (unchanged), ``edit`` (send ``message`` instead: a JSON-RPC message the
interceptor already validated, :func:`mcpreel.control.protocol.validate_message`), ``drop`` (send nothing
on; for a dropped *request* the sender is answered with ``error``, a JSON-RPC error object, with the
request's id, so the client never hangs — :data:`DEFAULT_DROP_ERROR` when ``error`` is None), or ``close``
(end the connection: stdio closes the pipe to the receiver, HTTP drops the client's connection). A
decision with ``abandoned`` set (:data:`ABANDONED`: a ``close`` by ``client-gone``) is what a held message
gets when its client went away: it is not sent on, and the stdio proxy closes the server's stdin, so the
server and the proxy end as they do when a client closes its end. ``by``
says who decided (``viewer``, ``timeout``, ``rules:NAME``) and goes into the reel as ``decided_by``; an
``inject`` tuple of ``(direction, message)`` is sent right after the decision is carried out.

In the reel (spec 02): an edited message is recorded once, as forwarded, with ``modified: true`` and
``original`` (the message as it arrived); a dropped one with ``dropped: true``; both with ``decided_by``; an abandoned one
with ``dropped: true`` and ``abandoned: true`` (kept by the reel reader as an extra member); an
injected message, and the error answer to a dropped request, with ``injected: true``. A message that was
held and then forwarded unchanged is recorded like any other, plus ``decided_by``.

Several interceptors run as one :class:`Interceptors` chain, in order (rules first, then the person): each
sees the message as the previous one left it; a drop or close ends the chain.

Adding one::

    class NoDeletes:
        def wants(self, direction, message):
            return direction == "in" and message.get("method") == "tools/call"

        def decide(self, item):
            if item.message["params"].get("name") == "delete_everything":
                return Decision("drop", error={"code": -32001, "message": "not today"}, by="rules:no-deletes")
            return FORWARD

    record(RecordOptions(StdioServer(("python", "server.py")), Path("s.jsonl")), RecordHooks(interceptor=NoDeletes()))
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ABANDONED",
    "ACTIONS",
    "DEFAULT_DROP_ERROR",
    "FORWARD",
    "Decision",
    "InjectPort",
    "Interceptor",
    "Interceptors",
    "Pending",
    "drop_answer",
    "safe_decide",
]

ACTIONS = ("forward", "edit", "drop", "close")
#: the JSON-RPC error a dropped request is answered with when the decision names none
DEFAULT_DROP_ERROR: dict[str, Any] = {"code": -32001, "message": "dropped by the mcpreel proxy"}


@dataclass(slots=True)
class Pending:
    """A message waiting for a decision: ``direction`` (``in``/``out``), the parsed ``message``, the
    receive time ``t`` (epoch ms), and on HTTP the ``session`` (the ``Mcp-Session-Id``, when there is one)."""

    direction: str
    message: Any
    t: int
    session: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with a :class:`Pending` message (see the module docstring)."""

    action: str = "forward"
    message: Any = None
    error: dict[str, Any] | None = None
    by: str = "viewer"
    inject: Sequence[tuple[str, Any]] = field(default=())
    #: the client went away while the message was held (see the module docstring)
    abandoned: bool = False

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown intercept action {self.action!r} (known: {', '.join(ACTIONS)})")
        if self.action == "edit" and not isinstance(self.message, (dict, list)):
            raise ValueError("an edit decision needs the edited JSON-RPC message")


#: forward unchanged, decided by nobody in particular (the interceptor let it pass)
FORWARD = Decision("forward", by="")
#: what a message held for a client that went away gets: not sent on, recorded as abandoned
ABANDONED = Decision("close", by="client-gone", abandoned=True)


class InjectPort(Protocol):
    """What a recorder hands an interceptor to send new messages with."""

    def inject(self, direction: str, message: Any) -> None:
        """Send ``message`` (a JSON-RPC object) to the server (``in``) or the client (``out``), and record
        it with ``injected: true``. Raises :class:`ValueError` when this transport cannot send it there."""
        ...


@runtime_checkable
class Interceptor(Protocol):
    def wants(self, direction: str, message: Any) -> bool: ...

    def decide(self, item: Pending) -> Decision: ...


def safe_decide(interceptor: Interceptor, item: Pending, warn: Callable[[str], None] | None) -> Decision:
    """``interceptor.decide(item)``; a bug in it forwards the message unchanged, with one warning."""
    try:
        decision = interceptor.decide(item)
    except Exception as exc:
        if warn is not None:
            warn(f"intercept: {type(interceptor).__name__} failed ({exc!r}); the message goes on unchanged")
        return FORWARD
    if not isinstance(decision, Decision):
        return FORWARD
    return decision


def drop_answer(message: Any, decision: Decision) -> dict[str, Any] | None:
    """The JSON-RPC error answer a dropped ``message`` gets (None: it was no request, nobody waits)."""
    if not isinstance(message, dict) or "method" not in message or message.get("id") is None:
        return None
    error = decision.error if isinstance(decision.error, dict) else DEFAULT_DROP_ERROR
    return {"jsonrpc": "2.0", "id": message["id"], "error": copy.deepcopy(error)}


class Interceptors:
    """Several interceptors as one, in order (see the module docstring)."""

    def __init__(self, interceptors: Iterable[Any]):
        self.chain = tuple(i for i in interceptors if i is not None)

    def attach(self, port: InjectPort) -> None:
        for i in self.chain:
            hook = getattr(i, "attach", None)
            if callable(hook):
                hook(port)

    @property
    def active(self) -> bool:
        return any(getattr(i, "active", True) for i in self.chain)

    def shutdown(self) -> None:
        for i in self.chain:
            hook = getattr(i, "shutdown", None)
            if callable(hook):
                hook()

    def abandon(self, session: str | None = None, message: Any = None) -> None:
        for i in self.chain:
            hook = getattr(i, "abandon", None)
            if callable(hook):
                hook(session, message)

    def wants(self, direction: str, message: Any) -> bool:
        return any(i.wants(direction, message) for i in self.chain)

    def decide(self, item: Pending) -> Decision:
        original = item.message
        current = original
        last: Decision = FORWARD
        by = ""
        inject: list[tuple[str, Any]] = []
        for i in self.chain:
            if not i.wants(item.direction, current):
                continue
            d = i.decide(Pending(item.direction, current, item.t, item.session))
            inject.extend(d.inject)
            if d.action in ("drop", "close"):
                return Decision(d.action, error=d.error, by=d.by, inject=tuple(inject), abandoned=d.abandoned)
            if d.action == "edit":
                current = d.message
                by = d.by
            elif d.by and not by:
                by = d.by
            last = d
        if current is not original:
            return Decision("edit", message=current, by=by, inject=tuple(inject))
        return Decision("forward", by=by or last.by, inject=tuple(inject))
