"""The safety lint: rules as data (:mod:`mcpreel.audit.rules`, ``rules.json``) run over one session
(:mod:`mcpreel.audit.engine`): instruction-shaped text, definitions that change mid-session, duplicate
and shadowing tool names, secrets in traffic, destructive tools without annotations."""

from __future__ import annotations

from mcpreel.audit.engine import AuditReport, Finding, audit_session
from mcpreel.audit.rules import AuditRule, builtin_rules, load_rules, merge_rules

__all__ = ["AuditReport", "Finding", "AuditRule", "audit_session", "builtin_rules", "load_rules", "merge_rules"]
