"""The contract document: what a server offers, as one JSON file that lives next to the code.

A contract keeps the definitions only (names, descriptions, schemas, annotations); the volatile parts of
a list result (``_meta``, ``nextCursor``, the 2026-era ``resultType``/``cacheScope``) are left out so the
file changes only when the server's offer does. Entries are keyed by name (tools, prompts), URI
(resources) or URI template (templates) and written sorted, so a contract diffs cleanly in review.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel._infra import jsonio
from mcpreel.errors import InputError
from mcpreel.model import SCOPE_KEY, Kind, Session
from mcpreel.operations.walk import walk

__all__ = ["CONTRACT_VERSION", "KINDS", "LIST_METHODS", "Contract", "from_lists", "from_session", "load_contract"]

CONTRACT_VERSION = 1
#: kind -> (list method, member of the result, key of an entry)
KINDS: dict[str, tuple[str, str, str]] = {
    "tools": ("tools/list", "tools", "name"),
    "prompts": ("prompts/list", "prompts", "name"),
    "resources": ("resources/list", "resources", "uri"),
    "resourceTemplates": ("resources/templates/list", "resourceTemplates", "uriTemplate"),
}
LIST_METHODS = {method: kind for kind, (method, _, _) in KINDS.items()}
_HELLO = ("initialize", "server/discover")
_SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


@dataclass
class Contract:
    """A server's offer. ``listed`` names the kinds whose list was seen (an unseen kind is not "empty")."""

    server: dict[str, Any] = field(default_factory=dict)
    protocol_version: str | None = None
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    prompts: dict[str, dict[str, Any]] = field(default_factory=dict)
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    resourceTemplates: dict[str, dict[str, Any]] = field(default_factory=dict)  # the MCP name
    listed: set[str] = field(default_factory=set)
    source: str | None = None
    scopes: set[str] = field(default_factory=set)  # the servers of a merged session (not written)

    def entries(self, kind: str) -> dict[str, dict[str, Any]]:
        """The contract's tools, prompts or resources by name (``kind`` names which)."""
        return getattr(self, kind)

    def to_json(self) -> dict[str, Any]:
        """The contract as its file holds it (sorted keys: a committed contract diffs cleanly)."""
        doc: dict[str, Any] = {"mcpreel_contract": CONTRACT_VERSION}
        if self.server:
            doc["server"] = self.server
        if self.protocol_version:
            doc["protocolVersion"] = self.protocol_version
        for kind in KINDS:
            if kind in self.listed:
                doc[kind] = {k: self.entries(kind)[k] for k in sorted(self.entries(kind))}
        return doc

    def dumps(self) -> bytes:
        """Indented, every object's keys sorted: the same offer is the same bytes, whatever the era or server."""
        import json

        from mcpreel._infra.nesting import recursion_room

        doc = self.to_json()
        try:
            text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
        except RecursionError:  # a schema as deep as the readers accept (1024 levels): the encoder recurses
            with recursion_room():
                text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
        return text.encode("utf-8") + b"\n"

    @classmethod
    def from_json(cls, doc: Any, *, path: str | None = None) -> Contract:
        """A contract read back from its file; anything else is an input error naming the file."""
        if not isinstance(doc, dict) or doc.get("mcpreel_contract") != CONTRACT_VERSION:
            raise InputError(f"not an mcpreel contract (expected \"mcpreel_contract\": {CONTRACT_VERSION})", path=path)
        c = cls(source=path)
        server = doc.get("server")
        c.server = server if isinstance(server, dict) else {}
        pv = doc.get("protocolVersion")
        c.protocol_version = pv if isinstance(pv, str) else None
        for kind in KINDS:
            if kind not in doc:
                continue
            entries = doc[kind]
            if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
                raise InputError(f"{kind}: must be an object of objects", path=path)
            c.listed.add(kind)
            setattr(c, kind, dict(entries))
        return c


def _definition(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry without its ``_meta`` (volatile: timestamps, server-internal ids)."""
    return {k: v for k, v in entry.items() if k != "_meta"}


def _take_list(contract: Contract, kind: str, result: Any) -> None:
    _, member, key = KINDS[kind]
    if not isinstance(result, dict) or not isinstance(result.get(member), list):
        return
    contract.listed.add(kind)
    entries = contract.entries(kind)
    for entry in result[member]:
        if isinstance(entry, dict) and isinstance(entry.get(key), str):
            entries[entry[key]] = _definition(entry)


def _take_hello(contract: Contract, result: Any) -> None:
    if not isinstance(result, dict):
        return
    info = result.get("serverInfo")
    if isinstance(info, dict):
        contract.server = {k: info[k] for k in ("name", "version", "title") if k in info}
    pv = result.get("protocolVersion")
    if isinstance(pv, str):
        contract.protocol_version = pv
    versions = result.get("supportedVersions")
    if contract.protocol_version is None and isinstance(versions, list) and versions and isinstance(versions[0], str):
        contract.protocol_version = versions[0]


def from_lists(lists: dict[str, list[dict[str, Any]]], hello: Any = None, *, source: str | None = None) -> Contract:
    """A contract from list results already fetched (kind -> entries) and the handshake result."""
    c = Contract(source=source)
    _take_hello(c, hello)
    for kind, entries in lists.items():
        _take_list(c, kind, {KINDS[kind][1]: entries})
    return c


def from_session(session: Session, *, source: str | None = None) -> Contract:
    """The contract a recording saw: every successful ``*/list`` answer, pages and repeats folded in.

    A later answer for the same name wins (the server's latest word); a tool that changed *within* the
    session is the audit's business (:mod:`mcpreel.audit`), not the contract's.
    """
    c = Contract(source=source or session.info.path)
    for step in walk(session):  # the one walk: answers pair with requests within their client session
        m = step.msg
        if m is None or m.kind != Kind.MESSAGE or m.dropped or m.dir is None:
            continue
        scope = m.extra.get(SCOPE_KEY) if m.extra else None
        if isinstance(scope, str):
            c.scopes.add(scope)
        ex = step.exchange
        if step.kind != "response" or ex is None or ex.dropped or ex.response is None:
            continue
        answered = ex.method
        if (answered not in LIST_METHODS and answered not in _HELLO) or "result" not in ex.response:
            continue
        result = ex.response["result"]
        if answered in _HELLO:
            _take_hello(c, result)
        else:
            _take_list(c, LIST_METHODS[answered], result)
            meta = result.get("_meta") if isinstance(result, dict) else None
            if not c.server and isinstance(meta, dict) and isinstance(meta.get(_SERVER_INFO_META), dict):
                _take_hello(c, {"serverInfo": meta[_SERVER_INFO_META]})
    return c


def load_contract(path: str | Path) -> Contract:
    """Read a contract file; a file that is not one is one clear line (exit 2)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=str(path)) from exc
    try:
        doc = jsonio.loads(data)
    except ValueError as exc:
        raise InputError(f"not JSON: {jsonio.error_reason(exc)}", path=str(path)) from exc
    return Contract.from_json(doc, path=str(path))
