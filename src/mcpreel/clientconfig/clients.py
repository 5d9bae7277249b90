"""Where each MCP client keeps its server list, and in what shape.

One row a client file: the client, user or project scope, the path (under the home directory or the
project folder), the syntax (JSON, JSON with comments, TOML) and the key that holds the servers. The
home directory is a parameter (``--home``, ``MCPREEL_CONFIG_HOME``), never read behind the caller's back,
so tests run against a temporary home.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CLIENTS", "ClientFile", "candidate_files", "shape_for"]

#: client id -> what users call it
CLIENTS = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "windsurf": "Windsurf",
    "gemini": "Gemini CLI",
    "codex": "Codex",
}


@dataclass(frozen=True)
class ClientFile:
    client: str
    scope: str  # "user" | "project" | "given"
    path: Path
    syntax: str  # "json" | "jsonc" | "toml"
    servers_key: str  # "mcpServers" | "servers" | "mcp_servers"
    #: the members that lead to the object holding ``servers_key``: Claude Code keeps the servers it adds
    #: to one project (``claude mcp add``'s default "local" scope) in ``~/.claude.json`` under
    #: ``projects.<the project's path>.mcpServers``
    where: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How messages name the config file: its client and scope (and the project it belongs to)."""
        if self.where:
            return f"{self.client} ({self.scope} {self.where[-1]})"
        return f"{self.client} ({self.scope})"

    @property
    def keys(self) -> tuple[str, ...]:
        """The members from the top of the file to the servers' object."""
        return (*self.where, self.servers_key)


def _app_dirs(home: Path, platform: str, env: Mapping[str, str]) -> tuple[Path, Path]:
    """(per-user application support folder, XDG-style config folder) for ``platform``."""
    if platform == "darwin":
        support = home / "Library" / "Application Support"
        return support, support
    if platform.startswith("win"):
        appdata = Path(env["APPDATA"]) if env.get("APPDATA") else home / "AppData" / "Roaming"
        return appdata, appdata
    xdg = home / ".config"
    return xdg, xdg


def candidate_files(home: Path, project: Path | None = None, *, platform: str | None = None,
                    env: Mapping[str, str] = os.environ) -> list[ClientFile]:
    """Every file the known clients may keep servers in (whether it exists or not); ``platform`` names the
    desktop whose folders apply (this one's by default: :func:`mcpreel._infra.platform.system`)."""
    if platform is None:
        from mcpreel._infra.platform import system

        platform = system()
    support, config = _app_dirs(home, platform, env)
    codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    files = [
        ClientFile("claude-desktop", "user", support / "Claude" / "claude_desktop_config.json", "json", "mcpServers"),
        ClientFile("claude-code", "user", home / ".claude.json", "json", "mcpServers"),
        ClientFile("cursor", "user", home / ".cursor" / "mcp.json", "json", "mcpServers"),
        ClientFile("vscode", "user", (support if platform in ("darwin",) or platform.startswith("win") else config)
                   / "Code" / "User" / "mcp.json", "jsonc", "servers"),
        ClientFile("windsurf", "user", home / ".codeium" / "windsurf" / "mcp_config.json", "json", "mcpServers"),
        ClientFile("gemini", "user", home / ".gemini" / "settings.json", "jsonc", "mcpServers"),
        ClientFile("codex", "user", codex_home / "config.toml", "toml", "mcp_servers"),
    ]
    if project is not None:
        files += [
            ClientFile("claude-code", "project", project / ".mcp.json", "json", "mcpServers"),
            ClientFile("cursor", "project", project / ".cursor" / "mcp.json", "json", "mcpServers"),
            ClientFile("vscode", "project", project / ".vscode" / "mcp.json", "jsonc", "servers"),
            ClientFile("gemini", "project", project / ".gemini" / "settings.json", "jsonc", "mcpServers"),
        ]
    return files


def shape_for(path: Path, text: str) -> ClientFile:
    """A file given with ``--config``: TOML by its extension, else JSON keyed by what it holds."""
    if path.suffix == ".toml":
        return ClientFile("codex", "given", path, "toml", "mcp_servers")
    from mcpreel.clientconfig.jsonc import parse

    try:
        root = parse(text).value
    except ValueError:
        root = None
    key = "servers" if isinstance(root, dict) and "servers" in root and "mcpServers" not in root else "mcpServers"
    return ClientFile("vscode" if key == "servers" else "custom", "given", path, "jsonc", key)
