"""SARIF 2.1.0: the one findings format CI systems read (GitHub code scanning, GitLab, Azure DevOps).

Each command that judges something (``contract check``, ``audit``) turns its findings into
:class:`Finding` records; this module only knows SARIF. Findings in MCP traffic have no source line, so
a result's location is the file that was judged (the contract, the recording) plus a *logical*
location: the evidence path (``/tools/search/inputSchema/properties/q``) as a fully qualified name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpreel._version import __version__

__all__ = ["LEVELS", "SARIF_SCHEMA", "SARIF_VERSION", "Finding", "RuleInfo", "sarif_log"]

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
class Finding:
    rule: str
    level: str
    message: str
    path: str  # the evidence path (logical location)
    file: str | None = None  # the artifact judged (contract, recording), as given on the command line
    properties: dict[str, Any] = field(default_factory=dict)


def _uri(path: str) -> str:
    return path.replace("\\", "/")


def sarif_log(tool: str, rules: list[RuleInfo], findings: list[Finding], *, invocation_ok: bool = True,
              properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """One run of ``mcpreel <tool>`` as a SARIF log (a dict ready for JSON)."""
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for f in findings:
        if f.level not in LEVELS:
            raise ValueError(f"not a SARIF level: {f.level!r}")
        location: dict[str, Any] = {"logicalLocations": [{"fullyQualifiedName": f.path, "kind": "member"}]}
        if f.file:
            location["physicalLocation"] = {"artifactLocation": {"uri": _uri(f.file)}}
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
    if properties:
        run["properties"] = properties
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
