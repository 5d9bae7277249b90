"""``mcpreel show ID`` drawn for a person: a short header, then each request and answer as indented JSON.

The document :func:`~mcpreel.corpus.show.show_operation` returns is the raw form (``show --json``: epoch
milliseconds, the index row as stored). Read on a terminal it should say what a person asks first --
what was called, on which server, when (the reader's clock), how it ended, how long it took, where it is
and how to open it -- and then the messages, pretty-printed, already redacted by the library unless
``--no-redact``. Every value is another program's text: the header's fields are escaped to one line,
the JSON blocks keep JSON's own escapes and have what JSON leaves raw (C1, bidi controls) escaped too
(:mod:`~mcpreel.render.terminal_safe`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from mcpreel._infra.timeutil import duration_ms_text
from mcpreel.render.calls import local_time
from mcpreel.render.terminal_safe import json_terminal_safe, terminal_safe

__all__ = ["Block", "show_blocks"]

_ARROW = {"in": "→", "out": "←"}
_WHO = {"in": "client to server", "out": "server to client"}


@dataclass(frozen=True)
class Block:
    """One piece of the page: a header line (``json`` False) or a pretty-printed JSON message."""

    text: str
    json: bool = False
    style: str = ""


def _field(value: Any) -> str:
    return terminal_safe("" if value is None else str(value), multiline=False)


def _pretty(message: Any) -> str:
    from mcpreel._infra import jsonio

    return json_terminal_safe(jsonio.dumps_indented(message).decode("utf-8", "surrogateescape"))


def show_blocks(doc: dict[str, Any], *, tz: tzinfo | None = None) -> list[Block]:
    """The page of ``show``: the header lines, then a heading line and a JSON block per message."""
    op, session = doc["operation"], doc.get("session") or {}
    what = op.get("tool") or " ".join(p for p in (op.get("method"), op.get("target")) if p) or "?"
    status = op.get("status") or "-"
    if op.get("code") is not None:
        status += f" {op['code']}"
    latency = "" if op.get("latency_ms") is None else f" · {duration_ms_text(op['latency_ms'])} ms"
    out = [Block(f"operation {op['id']}: {_field(op.get('method'))} {_field(what)} · {_field(status)}{latency}",
                 style="bold red" if op.get("failed") else "bold")]

    def peer(name: str) -> str:
        version = session.get(f"{name}_version")
        return _field(session.get(f"{name}_name") or "?") + (f" {_field(version)}" if version else "")

    out.append(Block(f"  server   {peer('server')}   client {peer('client')}   era {_field(session.get('era') or '?')}"))
    when = local_time(op.get("start_ms"), tz)
    if op.get("end_ms") is not None and op.get("end_ms") != op.get("start_ms"):
        when += f" → {local_time(op['end_ms'], tz)[11:]}"
    out.append(Block(f"  time     {when}"))
    line = f" line {op['request_line']}" if op.get("request_line") is not None else ""
    out.append(Block(f"  file     {_field(op.get('file'))}{line} (session {op.get('session')})"))
    if op.get("request_index") is not None:
        out.append(Block(f"  open     mcpreel tui {shlex.quote(str(op.get('file')))} --at {op['request_index']}",
                         style="dim"))
    if op.get("message"):
        out.append(Block(f"  error    {_field(str(op['message']).strip().splitlines()[0])}", style="red"))
    extra = [f"{op['children']} server request(s) it caused"] if op.get("children") else []
    if doc.get("notifications"):
        extra.append(f"{doc['notifications']} notification(s) on the way (not shown)")
    if extra:
        out.append(Block(f"  also     {'; '.join(extra)}"))
    for msg in doc.get("messages", []):
        arrow = _ARROW.get(msg.get("dir"), "·")
        role = _field(msg.get("role") or "request")
        where = f"line {msg['line']}" if msg.get("line") is not None else f"record {msg.get('index')}"
        out.append(Block(""))
        out.append(Block(f"{arrow} {role} {_field(msg.get('method'))} ({_WHO.get(msg.get('dir'), '?')}, {where})",
                         style="bold"))
        out.append(Block(_pretty(msg.get("message")), json=True))
    out.append(Block(""))
    out.append(Block("secrets redacted (--no-redact shows them as recorded; --json: the raw form)"
                     if doc.get("redacted") else "shown as recorded, secrets included (--no-redact)", style="dim"))
    return out
