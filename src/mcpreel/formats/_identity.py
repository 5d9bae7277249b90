"""What a writer makes up for a session that does not say who it is: its label and its id.

Both the reel and the qai writer need the same answers (a reel converted to qai and back keeps its id
and does not keep a label it made up), so they live here, below both, instead of one writer importing
the other.
"""

from __future__ import annotations

import uuid

from mcpreel.formats._source import encodable
from mcpreel.model import SessionInfo

__all__ = ["SESSION_NS", "fallback_label", "session_document_id"]

#: namespace of the proxy_ids and session ids we derive (deterministic: same input, same file)
SESSION_NS = uuid.UUID("6f1c1a52-3f0e-4f57-9c55-6d4b1e0c2a71")


def fallback_label(info: SessionInfo) -> str:
    """The label a reel's meta line gets when the session has none (the member is required)."""
    return (info.command[0] if info.command else None) or info.url or "session"


def session_document_id(info: SessionInfo) -> str:
    """The session's id, or one derived from what is known of it (so a conversion is deterministic)."""
    if info.id:
        return info.id
    known = f"{info.path}|{info.started}|{info.label}|{info.url}|{' '.join(info.command)}"
    return str(uuid.uuid5(SESSION_NS, encodable(known)))  # a reader that let a lone surrogate through must not crash this
