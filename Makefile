# Two entry points on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
PEERS  := .peers
# the reference MCP server from the npm registry, a real peer in the end-to-end tests
EVERYTHING_VERSION ?= 2026.8.31
EVERYTHING := $(PEERS)/node_modules/@modelcontextprotocol/server-everything/dist/index.js
# the TypeScript SDK (its client is a peer of the mock's tests: tests/peers/ts_mrtr_client.mjs)
TS_SDK_VERSION ?= 1.32.2
# the MCP Inspector CLI, a client no one here wrote (pinned: a plain install resolves 0.15 on node 20)
INSPECTOR_VERSION ?= 2.12.0
INSPECTOR := $(PEERS)/node_modules/@modelcontextprotocol/inspector/package.json
# the SARIF 2.1.0 JSON schema (Microsoft's sarif-js-sdk ships it) that the tests validate our SARIF against
JEST_SARIF_VERSION ?= 1.0.0-beta.0
SARIF_SCHEMA := $(PEERS)/node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json
# a server whose tools write files: `mcpreel check` must leave its directory as it found it
FILESYSTEM_VERSION ?= 2026.8.31
FILESYSTEM := $(PEERS)/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

# other recorders, each in its own virtualenv, replaying cassettes mcpreel wrote (tests/formats/hub)
MCP_RECORDER_VERSION ?= 0.5.0
MCP_RECORDER := $(PEERS)/mcp-recorder/.installed-$(MCP_RECORDER_VERSION)
MCP_CASSETTE := $(PEERS)/mcp-cassette/.installed

# inputs per format family for `make fuzz` (tests/fuzz: damaged fixtures through import, inspect, convert)
N ?= 100000

.PHONY: action-tag demo test check docs fuzz install install-dev install-full peers conformance-peers hub-peers upgrade-peers chromium tmux phoenix bench clean

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

# the whole suite's heavy extras (Playwright, Spark, Ray) beside dev; `make check` does without them
$(VENV)/.installed-full: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev,full]'
	touch $(VENV)/.installed $(VENV)/.installed-dev $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev
install-full: $(VENV)/.installed-full


# every npm peer in one install, pinned (a later install of one alone would re-resolve the others)
NPM_PEERS := @modelcontextprotocol/server-everything@$(EVERYTHING_VERSION) \
	@modelcontextprotocol/inspector@$(INSPECTOR_VERSION) \
	@microsoft/jest-sarif@$(JEST_SARIF_VERSION) \
	@modelcontextprotocol/server-filesystem@$(FILESYSTEM_VERSION) \
	@modelcontextprotocol/sdk@$(TS_SDK_VERSION)
NPM_STAMP := $(PEERS)/.npm-$(EVERYTHING_VERSION)-$(INSPECTOR_VERSION)-$(JEST_SARIF_VERSION)-$(FILESYSTEM_VERSION)-$(TS_SDK_VERSION)

$(NPM_STAMP):
	@if command -v npm >/dev/null 2>&1; then \
		mkdir -p $(PEERS) && npm install --silent --no-audit --no-fund --prefix $(PEERS) $(NPM_PEERS) \
			&& touch $@ || echo "warning: npm install failed; the tests of npm peers will fail or skip"; \
	else echo "warning: npm not found; the tests of npm peers will be skipped"; fi

# the official MCP conformance suite (tests/conformance), two pinned releases in their own prefixes: 0.1.16
# judges the 2025-11-25 scenarios, 0.2.0-alpha.12 the 2026-07-28 requirements. It needs Node >= 22
# (fs.globSync): Node 22 from the npm registry, in its own prefix (the system node stays as it is)
NODE22_VERSION ?= 22
CONFORMANCE_01 ?= 0.1.16
CONFORMANCE_02 ?= 0.2.0-alpha.12
NODE22 := $(PEERS)/node22/.installed-$(NODE22_VERSION)
CONFORMANCE_STAMPS := $(PEERS)/conformance-0.1/.installed-$(CONFORMANCE_01) $(PEERS)/conformance-0.2/.installed-$(CONFORMANCE_02)

$(NODE22):
	@if command -v npm >/dev/null 2>&1; then \
		mkdir -p $(PEERS)/node22 && npm install --silent --no-audit --no-fund --prefix $(PEERS)/node22 node@$(NODE22_VERSION) \
			&& touch $@ || echo "warning: npm install node@$(NODE22_VERSION) failed; the conformance suite's tests will be skipped"; \
	else echo "warning: npm not found; the conformance suite's tests will be skipped"; fi

# $(call conformance,DIR,VERSION): the suite at VERSION into .peers/DIR
define conformance
	@if command -v npm >/dev/null 2>&1; then \
		mkdir -p $(PEERS)/$(1) && npm install --silent --no-audit --no-fund --prefix $(PEERS)/$(1) @modelcontextprotocol/conformance@$(2) \
			&& touch $(PEERS)/$(1)/.installed-$(2) \
			|| echo "warning: npm install @modelcontextprotocol/conformance@$(2) failed; its conformance tests will be skipped"; \
	else echo "warning: npm not found; the conformance suite's tests will be skipped"; fi
endef

$(PEERS)/conformance-0.1/.installed-$(CONFORMANCE_01):
	$(call conformance,conformance-0.1,$(CONFORMANCE_01))

$(PEERS)/conformance-0.2/.installed-$(CONFORMANCE_02):
	$(call conformance,conformance-0.2,$(CONFORMANCE_02))

# FastMCP 4 (server and Client), a third real server for the conformance suite, in its own virtualenv
FASTMCP_VERSION ?= 4.2.3
FASTMCP := $(PEERS)/fastmcp/.installed-$(FASTMCP_VERSION)
$(FASTMCP):
	@mkdir -p $(PEERS)
	@({ [ -x $(PEERS)/fastmcp/bin/pip ] || $(PYTHON) -m venv $(PEERS)/fastmcp; } \
		&& $(PEERS)/fastmcp/bin/pip install -q fastmcp==$(FASTMCP_VERSION) && touch $@) \
		|| echo "warning: installing fastmcp $(FASTMCP_VERSION) failed; its conformance tests will be skipped"

conformance-peers: $(NODE22) $(CONFORMANCE_STAMPS) $(FASTMCP)

# issue 34: real servers replayed against themselves (noise) and across real releases (upgrades). Each set in
# its own prefix: the new Python servers beside the 2.x SDK they ship for; the 2025 Python releases in a
# virtualenv of their own with the 1.x SDK they need; the 2025 npm releases, and server-memory's current
# release, in npm prefixes of their own (the main prefix keeps its pins)
TIME_VERSION ?= 2026.10.19
FETCH_VERSION ?= 2026.10.24
OLD_TIME_VERSION ?= 2025.9.25
OLD_GIT_VERSION ?= 2025.9.25
OLD_FETCH_VERSION ?= 2025.4.7
# the 1.x SDK of their time (September 2025): a plain install would bring the 2.x SDK they were not written for
OLD_MCP_VERSION ?= 1.15.0
OLD_PYDANTIC_VERSION ?= 2.11.9
OLD_EVERYTHING_VERSION ?= 2025.9.25
OLD_FILESYSTEM_VERSION ?= 2025.8.21
OLD_MEMORY_VERSION ?= 2025.4.25
MEMORY_VERSION ?= 2026.8.31
PY_SERVERS := $(PEERS)/py-servers/.installed-$(TIME_VERSION)-$(FETCH_VERSION)
PY_SERVERS_OLD := $(PEERS)/py-servers-old/.installed-$(OLD_TIME_VERSION)-$(OLD_GIT_VERSION)-$(OLD_FETCH_VERSION)-$(OLD_MCP_VERSION)-$(OLD_PYDANTIC_VERSION)
NPM_OLD := $(PEERS)/npm-old/.installed-$(OLD_EVERYTHING_VERSION)-$(OLD_FILESYSTEM_VERSION)-$(OLD_MEMORY_VERSION)
NPM_MEMORY := $(PEERS)/npm-memory/.installed-$(MEMORY_VERSION)

$(PY_SERVERS):
	@mkdir -p $(PEERS)
	@({ [ -x $(PEERS)/py-servers/bin/pip ] || $(PYTHON) -m venv $(PEERS)/py-servers; } \
		&& $(PEERS)/py-servers/bin/pip install -q mcp-server-time==$(TIME_VERSION) mcp-server-fetch==$(FETCH_VERSION) \
		&& touch $@) || echo "warning: installing mcp-server-time/-fetch failed; their replay tests will be skipped"

$(PY_SERVERS_OLD):
	@mkdir -p $(PEERS)
	@({ [ -x $(PEERS)/py-servers-old/bin/pip ] || $(PYTHON) -m venv $(PEERS)/py-servers-old; } \
		&& $(PEERS)/py-servers-old/bin/pip install -q mcp-server-time==$(OLD_TIME_VERSION) \
			mcp-server-git==$(OLD_GIT_VERSION) mcp-server-fetch==$(OLD_FETCH_VERSION) \
			mcp==$(OLD_MCP_VERSION) pydantic==$(OLD_PYDANTIC_VERSION) \
		&& touch $@) || echo "warning: installing the 2025 Python servers failed; their upgrade tests will be skipped"

$(NPM_OLD):
	@if command -v npm >/dev/null 2>&1; then \
		mkdir -p $(PEERS)/npm-old && npm install --silent --no-audit --no-fund --prefix $(PEERS)/npm-old \
			@modelcontextprotocol/server-everything@$(OLD_EVERYTHING_VERSION) \
			@modelcontextprotocol/server-filesystem@$(OLD_FILESYSTEM_VERSION) \
			@modelcontextprotocol/server-memory@$(OLD_MEMORY_VERSION) \
			&& touch $@ || echo "warning: npm install of the 2025 servers failed; their upgrade tests will be skipped"; \
	else echo "warning: npm not found; the upgrade tests of npm servers will be skipped"; fi

$(NPM_MEMORY):
	@if command -v npm >/dev/null 2>&1; then \
		mkdir -p $(PEERS)/npm-memory && npm install --silent --no-audit --no-fund --prefix $(PEERS)/npm-memory \
			@modelcontextprotocol/server-memory@$(MEMORY_VERSION) \
			&& touch $@ || echo "warning: npm install server-memory failed; its upgrade tests will be skipped"; \
	else echo "warning: npm not found; the upgrade tests of npm servers will be skipped"; fi

upgrade-peers: $(PY_SERVERS) $(PY_SERVERS_OLD) $(NPM_OLD) $(NPM_MEMORY)

peers: $(NPM_STAMP) conformance-peers chromium tmux phoenix upgrade-peers langchain-peer

$(MCP_RECORDER):
	@$(PYTHON) -m venv $(PEERS)/mcp-recorder && $(PEERS)/mcp-recorder/bin/pip install -q \
		mcp-recorder==$(MCP_RECORDER_VERSION) && touch $@ \
		|| echo "warning: mcp-recorder could not be installed; its replay test will be skipped"

# mcp-cassette (PyPI) is not on every index: its test is skipped, saying so, when this fails
$(MCP_CASSETTE):
	@{ [ -x $(PEERS)/mcp-cassette/bin/pip ] || $(PYTHON) -m venv $(PEERS)/mcp-cassette; } \
		&& $(PEERS)/mcp-cassette/bin/pip install -q mcp-cassette \
		>/dev/null 2>&1 && touch $@ \
		|| echo "warning: mcp-cassette could not be installed; its cassette test will be skipped"

hub-peers: $(MCP_RECORDER) $(MCP_CASSETTE)

# headless Chromium for the HTML report's browser tests (Debian's package; Playwright drives it, its own
# browser download is never used). Installed only when missing and apt is usable; else the tests skip.
chromium:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium (apt)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
			|| echo "warning: apt-get install chromium failed; browser tests will be skipped"; \
	else echo "warning: /usr/bin/chromium missing and apt-get unusable here; browser tests will be skipped"; fi

# tmux: `mcpreel tui`'s end-to-end tests drive it in a real terminal (send-keys, capture-pane), a client in
# one window and the viewer attached from another. Debian's package, only when missing and apt is usable.
tmux: chromium
	@if command -v tmux >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing tmux (apt)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null) \
			|| echo "warning: apt-get install tmux failed; the terminal tests of mcpreel tui will be skipped"; \
	else echo "warning: tmux missing and apt-get unusable here; the terminal tests of mcpreel tui will be skipped"; fi

# Arize Phoenix, a real OTLP backend for the export tests, in its own virtualenv (its pins stay out of ours)
PHOENIX_VERSION ?= 20.26.1
$(PEERS)/phoenix/.installed:
	@mkdir -p $(PEERS)
	@($(PYTHON) -m venv $(PEERS)/phoenix && $(PEERS)/phoenix/bin/pip install -q arize-phoenix==$(PHOENIX_VERSION) \
		&& touch $@) || echo "warning: installing arize-phoenix failed; the Phoenix test will be skipped"

phoenix: $(PEERS)/phoenix/.installed

# mcpreel beside a project on the MCP SDK 1.x: langchain-mcp-adapters 0.3.2 pins mcp<2, and mcpreel's core
# needs no SDK (tests/test_without_sdk.py runs the pytest plugin and the CLI there; `make test` installs it,
# and the test skips, saying so, only where the install failed)
LANGCHAIN_ADAPTERS_VERSION ?= 0.3.2
$(PEERS)/langchain/.installed: $(VENV)/.installed-full  # after the main install: both build this tree's egg-info
	@($(PYTHON) -m venv $(PEERS)/langchain && $(PEERS)/langchain/bin/pip install -q \
		langchain-mcp-adapters==$(LANGCHAIN_ADAPTERS_VERSION) pytest -e . \
		&& touch $@) || echo "warning: installing langchain-mcp-adapters failed; its test will be skipped"

.PHONY: langchain-peer
langchain-peer: $(PEERS)/langchain/.installed

# the main job on the built-in demo server: record (stdio and Streamable HTTP), convert, check -> demo-output/
demo: install
	$(PIP) install -q -e '.[sdk]'  # the demo server is made with the official SDK (not in the core)
	$(VENV)/bin/mcpreel demo --out demo-output

# the tests start `python -m mcpreel` thousands of times: with bytecode written once (compileall, before the
# workers start) each start reads it instead of compiling every module again (0.2 s of CPU a start, measured
# where PYTHONDONTWRITEBYTECODE is set, as on this project's machines)
BYTECODE := env -u PYTHONDONTWRITEBYTECODE

# three workers on two cores: a third of the suite's time is waiting on servers it starts (24 min 47 s against
# 27 min 44 s with two, both green, measured on one machine the same hour)
# the installs first, four at a time (each peer has a prefix or virtualenv of its own; the two apt installs
# take turns: tmux waits for chromium), then lint, types and the whole suite
test:
	@$(MAKE) --no-print-directory -j4 install-full peers hub-peers
	$(PY) -m ruff check src tests bench
	$(PY) -m mypy
	$(BYTECODE) $(PY) -m compileall -q src tests >/dev/null
	$(BYTECODE) $(PY) -m pytest -n 3 $(PYTEST_ARGS)

# the everyday inner loop: lint, types and the tests that need no peer (no npm, no .peers virtualenv, no
# browser, Spark or Ray), in a few minutes. The rest is marked `e2e` (or skips, saying why), and the tests that
# need no peer but take long are marked `slow` from a whole run's durations (tests/slow.txt, written by
# tools/slow_tests.py); `make test` runs all
check: install-dev
	$(PY) -m ruff check src tests bench
	$(PY) -m mypy
	$(BYTECODE) $(PY) -m compileall -q src tests >/dev/null
	$(BYTECODE) $(PY) -m pytest -n 2 -m "not e2e and not slow" $(PYTEST_ARGS)

# the big fuzz run: N damaged inputs per format family (make test runs 200 of each, derandomized)
# (one JSON line per family with the cases counted goes to FUZZ_REPORT; a failing input's seed replays it:
# MCPREEL_FUZZ_CASE=SEED pytest tests/fuzz -k FAMILY; tests/fuzz/harness.py)
FUZZ_REPORT ?= fuzz-report.jsonl
fuzz: install-dev
	rm -f $(FUZZ_REPORT)
	MCPREEL_FUZZ_N=$(N) MCPREEL_FUZZ_REPORT=$(FUZZ_REPORT) MCPREEL_FUZZ_KEEP_GOING=1 $(PY) -m pytest tests/fuzz -n 2 --dist worksteal -p no:cacheprovider --timeout=0
	@$(PY) -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; print(f'fuzz: {sum(x[\"cases\"] for x in r)} damaged inputs in {len(r)} families, {sum(x.get(\"tracebacks\", 0) for x in r)} tracebacks, {sum(x.get(\"hangs\", 0) for x in r)} hangs')" $(FUZZ_REPORT)

# the docs site (MkDocs Material, docs/ and mkdocs.yml) into site/; --strict: a broken link or anchor, a page
# missing from the nav or a nav entry without its page fails the build (tests/docs runs the same build)
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# mcpreel (the build hook reads its command line) and MkDocs Material: the docs extra
$(VENV)/.installed-docs: $(VENV)/.installed
	$(PIP) install -q -e '.[docs]'
	touch $@

# the Action's release step: check action.yml, then move its major tag (TAG, default v1) to this commit;
# DRY_RUN=1 only says what would move. Publishing is `git push --force origin v1` (tools/action_tag.py)
action-tag:
	$(PY) tools/action_tag.py --tag $(or $(TAG),v1) $(if $(DRY_RUN),--dry-run)

bench: install-dev
	$(PIP) install -q -e '.[bench]'
	for b in bench/*.py; do $(PY) $$b; done

clean:
	rm -rf $(VENV) $(PEERS) demo-output site
