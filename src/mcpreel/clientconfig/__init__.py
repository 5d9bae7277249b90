"""The MCP clients' own config files: find them, list their servers, wrap stdio servers in ``mcpreel record``
and unwrap them exactly (see :mod:`mcpreel.clientconfig.wrapping` for what makes that safe)."""

from __future__ import annotations

from mcpreel.clientconfig.clients import CLIENTS, ClientFile, candidate_files, shape_for
from mcpreel.clientconfig.document import ConfigDocument
from mcpreel.clientconfig.wrapping import Edit, ServerInfo, apply_edit, describe, plan_unwrap, plan_wrap

__all__ = ["CLIENTS", "ClientFile", "ConfigDocument", "Edit", "ServerInfo", "apply_edit", "candidate_files",
           "describe", "plan_unwrap", "plan_wrap", "shape_for"]
