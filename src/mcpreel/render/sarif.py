"""SARIF 2.1.0: the one findings format CI systems read (GitHub code scanning, GitLab, Azure DevOps).

Each command that judges something (``contract check``, ``audit``, ``diff``, ``check``) turns its findings
into :class:`SarifFinding` records; this module only knows SARIF. Findings in MCP traffic have no source line,
so every result's location is a file plus *logical* locations: the evidence path
(``/tools/search/inputSchema/properties/q``) as a fully qualified name, and for a live server the server
itself (its URL, or its command line), secrets redacted. The file is the one judged (the contract, the
recording); for a live server it is what :func:`live_target` finds naming it, as SARIF producers for
findings outside files do (a web scanner locates a finding at the page's URL): the repository's file the
command runs (``python server.py``: ``server.py``), else the GitHub Actions workflow that names the server
(at the line that names it), else the URL itself or the program run. Code scanning refuses or hides a
result with no physical location, and shows one on a file of the repository.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpreel._version import __version__

__all__ = ["LEVELS", "SARIF_SCHEMA", "SARIF_VERSION", "SarifFinding", "RuleInfo", "Target", "live_target", "sarif_log"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = ("error", "warning", "note", "none")
INFO_URI = "https://github.com/mcpreel/mcpreel"


@dataclass(frozen=True)
class RuleInfo:
    id: str
    description: str
    level: str = "warning"
    help: str | None = None


@dataclass(frozen=True)
class SarifFinding:
    rule: str
    level: str
    message: str
    path: str  # the evidence path (logical location)
    file: str | None = None  # the artifact judged (contract, recording), as given on the command line
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    """A live server that was judged, as a location: ``name`` its URL or command line (secrets redacted),
    ``kind`` "url" or "command", ``artifact`` the file (or URL) a result points at, ``line`` the line of
    ``artifact`` that names the server, when known."""

    name: str
    kind: str
    artifact: str
    line: int | None = None

    def logical(self) -> dict[str, Any]:
        return {"name": self.name, "fullyQualifiedName": self.name, "kind": "resource" if self.kind == "url" else "module"}


def _uri(path: str) -> str:
    """A path or URL as a SARIF URI reference (RFC 3986): forward slashes, and what a URI cannot hold
    (spaces, brackets outside an IPv6 host, non-ASCII) percent-encoded; a file name's undecodable bytes
    (Python's surrogate escapes) as the bytes they stand for."""
    from urllib.parse import quote, urlsplit, urlunsplit

    def q(text: str, safe: str) -> str:
        try:
            return quote(text, safe=safe, errors="surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate no file name holds
            return quote(text, safe=safe, errors="replace")

    path = path.replace("\\", "/")
    safe = "/:@!$&'()*+,;=~%-._"
    if "://" in path:
        parts = urlsplit(path)
        return urlunsplit((parts.scheme, parts.netloc, q(parts.path, safe), q(parts.query, safe + "?"),
                           q(parts.fragment, safe + "?")))
    return q(path, safe)  # a file name's "?" and "#" are no query or fragment


def _shown_url(url: str) -> str:
    """A server's URL as a report may show it: no user or password, secret query values redacted."""
    from urllib.parse import urlsplit, urlunsplit

    from mcpreel.redact.urls import redact_url

    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        parts = parts._replace(netloc=host + (f":{parts.port}" if parts.port else ""))
    return redact_url(urlunsplit(parts))


def live_target(*, command: str | None = None, url: str | None = None, workflow_ref: str | None = None,
                root: Path | None = None) -> Target:
    """Where the findings about a live server are located (see the module docstring for the order).

    ``workflow_ref`` is GitHub's ``GITHUB_WORKFLOW_REF`` (``owner/repo/.github/workflows/ci.yml@refs/...``);
    ``root`` the repository's folder (the current one). Only files inside ``root`` are named.
    """
    from mcpreel.redact import Redactor

    root = (root or Path.cwd()).resolve()
    argv: list[str] = []
    if url:
        name, kind, raw = _shown_url(url), "url", url
    else:
        raw = command or ""
        argv = shlex.split(raw)
        shown = Redactor().command(argv)
        name, kind = (shlex.join(shown) if shown != argv else raw), "command"
    files = [a for a in argv[1:] if not a.startswith("-") and "=" not in a] + argv[:1]  # its script, then the program
    for arg in files:  # the server's own code, when the repository holds it
        candidate = (root / arg).resolve()
        if candidate.is_file() and candidate.is_relative_to(root):
            return Target(name, kind, candidate.relative_to(root).as_posix())
    if workflow_ref:
        path = workflow_ref.split("@", 1)[0].split("/", 2)[-1]  # owner/repo/<path>
        workflow = (root / path).resolve()
        if workflow.is_file() and workflow.is_relative_to(root):
            line = None
            try:
                for number, text in enumerate(workflow.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                    if raw and raw in text:
                        line = number
                        break
            except OSError:
                pass
            return Target(name, kind, workflow.relative_to(root).as_posix(), line)
    if kind == "url":
        return Target(name, kind, name)
    for arg in files:  # the script or the program, wherever it is (the program as the shell finds it)
        found = (root / arg) if (root / arg).is_file() else None
        if found is None and arg is argv[0] and shutil.which(arg):
            found = Path(shutil.which(arg) or arg)
        if found is not None:
            return Target(name, kind, Path(os.path.abspath(found)).as_uri())
    return Target(name, kind, argv[0] if argv else "server")


def sarif_log(tool: str, rules: list[RuleInfo], findings: list[SarifFinding], *, invocation_ok: bool = True,
              properties: dict[str, Any] | None = None, target: Target | None = None) -> dict[str, Any]:
    """One run of ``mcpreel <tool>`` as a SARIF log (a dict ready for JSON). ``target``: the live server
    judged, located on every result (the file of a finding that names one stays its physical location)."""
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for f in findings:
        if f.level not in LEVELS:
            raise ValueError(f"not a SARIF level: {f.level!r}")
        location: dict[str, Any] = {"logicalLocations": [{"fullyQualifiedName": f.path, "kind": "member"}]}
        if target is not None:
            location["logicalLocations"].append(target.logical())
        if f.file:
            location["physicalLocation"] = {"artifactLocation": {"uri": _uri(f.file)}}
        elif target is not None:
            physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(target.artifact)}}
            if target.line:
                physical["region"] = {"startLine": target.line}
            location["physicalLocation"] = physical
        else:  # code scanning refuses a result it cannot place
            raise ValueError(f"a SARIF result needs a file or a target: {f.rule} at {f.path}")
        res: dict[str, Any] = {"ruleId": f.rule, "level": f.level, "message": {"text": f.message},
                               "locations": [location]}
        if f.rule in index:
            res["ruleIndex"] = index[f.rule]
        if f.properties:
            res["properties"] = f.properties
        results.append(res)
    driver: dict[str, Any] = {
        "name": f"mcpreel {tool}",
        "version": __version__,
        "informationUri": INFO_URI,
        "rules": [
            {"id": r.id, "shortDescription": {"text": r.description},
             "defaultConfiguration": {"level": r.level},
             **({"help": {"text": r.help}} if r.help else {})}
            for r in rules
        ],
    }
    run: dict[str, Any] = {"tool": {"driver": driver}, "results": results,
                           "invocations": [{"executionSuccessful": invocation_ok}]}
    if properties or target is not None:
        run["properties"] = {**(properties or {}), **({"server": target.name} if target is not None else {})}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
