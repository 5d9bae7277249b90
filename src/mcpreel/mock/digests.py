"""A served recording's definitions and how its server refused stale ones (the drafts' definition digests).

A server that advertises digests (a Tool's ``_meta`` digest, or a list's collection ``digest``) refuses a
call made against definitions it no longer has: a DigestChanged JSON-RPC error, HTTP 409 on Streamable HTTP
(:mod:`mcpreel.drafts` names every key). ``serve`` answers a client whose expected digest is stale the way
the recording's server did: with the refusal it recorded (its code, message and data, the client's id),
never with a refusal it invented -- a recording whose server never refused has nothing to say, and the
request is an ordinary miss.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpreel import drafts
from mcpreel.operations.cassette import Turn
from mcpreel.operations.facts import definition_digests, digest_refusal, expected_digest, subject

__all__ = ["DigestGuard"]

#: the conditional operations and the list that advertises the definition each one names
_LIST_OF = {"tools/call": "tools/list", "prompts/get": "prompts/list", "resources/read": "resources/list"}


class DigestGuard:
    """The last digests the recording's lists advertised, and its server's recorded DigestChanged refusal."""

    def __init__(self, turns: Iterable[Turn]) -> None:
        self.current: dict[str, dict[str, str]] = {}  # list method -> {name / uri / "*": digest}
        self.refusal: dict[str, Any] | None = None  # the recorded error object
        #: the codes the recording's server refused stale digests with (served as 409 again)
        self.codes: frozenset[Any] = frozenset()
        for ex in turns:
            if ex.method in drafts.LISTED_PRIMITIVES and ex.response is not None:
                self.current.setdefault(ex.method, {}).update(definition_digests(ex.response, ex.method))
            elif ex.method in _LIST_OF and digest_refusal(ex.response, ex.wire.response_status if ex.wire else None):
                error = (ex.response or {}).get("error")
                if isinstance(error, dict):
                    self.refusal = self.refusal or dict(error)
                    self.codes |= {error.get("code")}

    def refused(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded refusal, re-addressed to ``message``, when it was made against a digest the
        recording's lists no longer advertise (None: not stale, or the recorded server never refused)."""
        if self.refusal is None:
            return None
        method = message.get("method")
        listing = _LIST_OF.get(method) if isinstance(method, str) else None
        expected = expected_digest(message)
        if listing is None or expected is None:
            return None
        digests = self.current.get(listing, {})
        stale: list[str] = []
        if isinstance(expected, str):
            now = digests.get(subject(message) or "")
            if now is not None and now != expected:
                stale.append(listing)
        else:  # knownDigests: {list method: digest}, compared with each list's collection digest
            for known_method, known in expected.items():
                now = self.current.get(known_method, {}).get("*")
                if now is not None and known != now:
                    stale.append(known_method)
        if not stale:
            return None
        error = dict(self.refusal)
        data = error.get("data")
        if isinstance(data, dict) and drafts.STALE_DIGESTS_FIELD in data:
            error["data"] = {**data, drafts.STALE_DIGESTS_FIELD: stale}
        return {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
