# Two entry points on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
PEERS  := .peers
# the reference MCP server from the npm registry, a real peer in the end-to-end tests
EVERYTHING_VERSION ?= 2026.8.31
EVERYTHING := $(PEERS)/node_modules/@modelcontextprotocol/server-everything/dist/index.js

.PHONY: demo test install install-dev peers chromium phoenix bench clean

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

peers: $(EVERYTHING) chromium phoenix

# headless Chromium for the HTML report's browser tests (Debian's package; Playwright drives it, its own
# browser download is never used). Installed only when missing and apt is usable; else the tests skip.
chromium:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium (apt)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
			|| echo "warning: apt-get install chromium failed; browser tests will be skipped"; \
	else echo "warning: /usr/bin/chromium missing and apt-get unusable here; browser tests will be skipped"; fi

# Arize Phoenix, a real OTLP backend for the export tests, in its own virtualenv (its pins stay out of ours)
PHOENIX_VERSION ?= 20.26.1
$(PEERS)/phoenix/.installed:
	@mkdir -p $(PEERS)
	@($(PYTHON) -m venv $(PEERS)/phoenix && $(PEERS)/phoenix/bin/pip install -q arize-phoenix==$(PHOENIX_VERSION) \
		&& touch $@) || echo "warning: installing arize-phoenix failed; the Phoenix test will be skipped"

phoenix: $(PEERS)/phoenix/.installed

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
