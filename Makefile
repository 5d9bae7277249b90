# Two entry points on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
PEERS  := .peers
# the reference MCP server from the npm registry, a real peer in the end-to-end tests
EVERYTHING_VERSION ?= 2026.8.31
EVERYTHING := $(PEERS)/node_modules/@modelcontextprotocol/server-everything/dist/index.js
# a server whose tools write files: `mcpreel check` must leave its directory as it found it
FILESYSTEM_VERSION ?= 2026.8.31
FILESYSTEM := $(PEERS)/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

.PHONY: demo test install install-dev peers bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

$(EVERYTHING):
	@if command -v npm >/dev/null 2>&1; then \
		mkdir -p $(PEERS) && npm install --silent --no-audit --no-fund --prefix $(PEERS) \
			@modelcontextprotocol/server-everything@$(EVERYTHING_VERSION) || echo "warning: npm install failed; server-everything tests will be skipped"; \
	else echo "warning: npm not found; server-everything tests will be skipped"; fi

$(FILESYSTEM): $(EVERYTHING)
	@if command -v npm >/dev/null 2>&1; then \
		npm install --silent --no-audit --no-fund --prefix $(PEERS) \
			@modelcontextprotocol/server-filesystem@$(FILESYSTEM_VERSION) || echo "warning: npm install failed; server-filesystem tests will be skipped"; \
	fi

peers: $(EVERYTHING) $(FILESYSTEM)

# the main job on the built-in demo server: record (stdio and Streamable HTTP), convert, check -> demo-output/
demo: install
	$(VENV)/bin/mcpreel demo --out demo-output

test: install-dev peers
	$(PY) -m pytest -n 2

bench: install-dev
	$(PIP) install -q -e '.[bench]'
	for b in bench/*.py; do $(PY) $$b; done

clean:
	rm -rf $(VENV) $(PEERS) demo-output
