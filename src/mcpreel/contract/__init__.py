"""The tool contract of an MCP server: what it offers (tools, prompts, resources, templates), and how
two versions of it differ, classed as breaking, dangerous or minor.

- :mod:`mcpreel.contract.snapshot`: the :class:`Contract` document, made from a recorded session
  (the ``*/list`` results it saw) and written/read as JSON;
- :mod:`mcpreel.contract.live`: the same lists asked of a live server (a command or a URL);
- :mod:`mcpreel.contract.compare`: every change between two contracts, with its class and evidence path.
"""

from __future__ import annotations

from mcpreel.contract.compare import CLASSES, Change, ContractDiff, compare
from mcpreel.contract.snapshot import Contract, from_session, load_contract

__all__ = ["CLASSES", "Change", "Contract", "ContractDiff", "compare", "from_session", "load_contract"]
