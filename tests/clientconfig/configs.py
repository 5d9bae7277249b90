"""Real-looking config files of every client, as their users write them (comments, other settings, secrets in env)."""

from __future__ import annotations

CLAUDE_DESKTOP = """{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/me/Desktop",
        "/Users/me/Downloads"
      ]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example000000000000000000000000000"
      }
    }
  },
  "globalShortcut": "Ctrl+Space"
}
"""

CLAUDE_CODE_USER = """{
  "numStartups": 42,
  "installMethod": "npm",
  "autoUpdates": true,
  "tipsHistory": {"memory-command": 3, "theme-command": 1},
  "projects": {
    "/home/me/src/app": {
      "allowedTools": [],
      "history": [],
      "mcpServers": {},
      "hasTrustDialogAccepted": true
    }
  },
  "mcpServers": {
    "sentry": {
      "type": "http",
      "url": "https://mcp.sentry.dev/mcp"
    },
    "airtable": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "airtable-mcp-server"],
      "env": {"AIRTABLE_API_KEY": "patXXXXXXXX"}
    }
  },
  "userID": "0123456789abcdef"
}
"""

CLAUDE_CODE_PROJECT = """{
  "mcpServers": {
    "shared-server": {
      "command": "/path/to/server",
      "args": [],
      "env": {}
    }
  }
}
"""

CURSOR = """{
  "mcpServers": {
    "web-search": {
      "command": "node",
      "args": ["/home/me/tools/web-search/build/index.js"],
      "env": { "BRAVE_API_KEY": "BSA-example" }
    },
    "linear": {
      "url": "https://mcp.linear.app/sse"
    }
  }
}
"""

VSCODE = """{
  // 💡 Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [
    {
      "type": "promptString",
      "id": "perplexity-key",
      "description": "Perplexity API Key",
      "password": true
    }
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"], // pinned later
      "env": {
        "PERPLEXITY_API_KEY": "${input:perplexity-key}"
      },
    },
    /* the team's remote server */
    "fetch": {
      "type": "http",
      "url": "https://api.example.com/mcp",
      "headers": {"Authorization": "Bearer ${input:api-token}"}
    },
  },
}
"""

WINDSURF = """{
  "mcpServers": {
    "google-maps": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-google-maps"],
      "env": {"GOOGLE_MAPS_API_KEY": "<YOUR_API_KEY>"}
    },
    "figma": {
      "serverUrl": "https://figma.example.com/mcp"
    }
  }
}
"""

GEMINI = """{
  "theme": "GitHub",
  "selectedAuthType": "oauth-personal",
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "./mcp-servers/python",
      "env": {"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"},
      "timeout": 15000,
      "trust": false
    },
    "httpServer": {
      "httpUrl": "http://localhost:3000/mcp",
      "timeout": 5000
    }
  },
  "checkpointing": {"enabled": true}
}
"""

CODEX = """# ~/.codex/config.toml
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.context7]
# docs lookups
command = "npx"
args = ["-y", "@upstash/context7-mcp"]  # latest
startup_timeout_sec = 20

[mcp_servers.context7.env]
CONTEXT7_API_KEY = "ctx7-example"

[mcp_servers."sqlite-db"]
command = "uvx"
args = [
    "mcp-server-sqlite",
    "--db-path",
    "/home/me/data.db",
]

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"

[profiles.fast]
model = "gpt-5-mini"
"""

#: client -> (path under HOME or under the project as "project:...", text, stdio servers, http servers)
CASES = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", CLAUDE_DESKTOP, ["filesystem", "github"], []),
    "claude-code": (".claude.json", CLAUDE_CODE_USER, ["airtable"], ["sentry"]),
    "claude-code-project": ("project:.mcp.json", CLAUDE_CODE_PROJECT, ["shared-server"], []),
    "cursor": (".cursor/mcp.json", CURSOR, ["web-search"], ["linear"]),
    "vscode": ("project:.vscode/mcp.json", VSCODE, ["Perplexity"], ["fetch"]),
    "windsurf": (".codeium/windsurf/mcp_config.json", WINDSURF, ["google-maps"], ["figma"]),
    "gemini": (".gemini/settings.json", GEMINI, ["pythonTools"], ["httpServer"]),
    "codex": (".codex/config.toml", CODEX, ["context7", "sqlite-db"], ["figma"]),
}
