# ttanjit — see README.md. Every target installs what it needs first.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROTOS := $(wildcard proto/ttanjit/v1/*.proto)
GEN_STAMP := services/ttanjit/v1/.generated

.PHONY: install proto run test test-fast screenshots lint bench chaos clean tools web browser pushgateway image

install: $(STAMP) $(GEN_STAMP) web

# The web client's build-time assets: the Korean web font from npm, copied into
# the static folder (generated, gitignored; DESIGN.md 6: never from a CDN).
WEB := services/ttanjit/gateway/web
FONT_STAMP := services/ttanjit/gateway/static/fonts/fonts.css
web: $(FONT_STAMP)
$(FONT_STAMP): $(WEB)/package.json $(WEB)/package-lock.json $(WEB)/copy-fonts.mjs
	cd $(WEB) && (npm ci --no-audit --no-fund --loglevel=error || npm install --no-audit --no-fund --loglevel=error)
	node $(WEB)/copy-fonts.mjs

# Debian's chromium for the browser tests (Playwright's own download cannot work here).
browser:
	test -x /usr/bin/chromium || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium fonts-noto-cjk)

# Debian's Prometheus Pushgateway for the load tester's push test.
pushgateway:
	test -x /usr/bin/prometheus-pushgateway || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus-pushgateway)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,bench]'
	touch $(STAMP)

# Generated gRPC/protobuf stubs: never committed, never hand-edited.
proto: $(GEN_STAMP)
$(GEN_STAMP): $(STAMP) $(PROTOS)
	rm -rf services/ttanjit/v1
	mkdir -p services/ttanjit/v1
	if [ -n "$(PROTOS)" ]; then $(BIN)/python -m grpc_tools.protoc -Iproto \
	  --python_out=services --grpc_python_out=services --pyi_out=services $(PROTOS); fi
	touch services/ttanjit/v1/__init__.py $(GEN_STAMP)

run: install
	$(BIN)/python -m ttanjit.run

# The web client's node unit tests (node --test, gateway/web/test) run inside
# pytest: tests/unit/test_web_client_js.py.
# The container tier runs after the rest, not beside it: its podman networks
# and containers add and remove network interfaces, and Chromium fails every
# request under way when it sees one come or go (net::ERR_NETWORK_CHANGED,
# loopback too): a browser test's page lost a module and never ran.
# Ctrl-C stops both: pytest exits 2 when interrupted, and the shell's trap
# alone did not stop the second run (a Ctrl-C'd run went on to the tier).
PYTEST_2 = $(BIN)/python -m pytest -q -n 2 --dist loadfile
test: install browser pushgateway tools
	trap 'exit 130' INT; \
	$(PYTEST_2) --ignore=tests/container; rest=$$?; \
	if test $$rest = 2; then exit 2; fi; \
	$(PYTEST_2) tests/container; tier=$$?; \
	test $$rest = 0 && test $$tier = 0

# The README's screenshots, from the browser tests (make test writes them to a
# scratch folder only).
screenshots: install browser
	TTANJIT_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/python -m pytest -q tests/e2e

test-fast: install
	$(BIN)/python -m pytest -q tests/unit tests/scenarios

lint: install
	$(BIN)/ruff check services tests
	$(BIN)/mypy services/ttanjit/games
	cd services/ttanjit/gateway && web/node_modules/.bin/eslint -c web/eslint.config.mjs static/js web

bench: install
	$(BIN)/python -m ttanjit.bench

# Fault drill on a local stack (3-node NATS cluster, 2 of each service) under
# load; fails if a fault loses an accepted command or stalls a game > 3 s.
chaos: install
	$(BIN)/python -m ttanjit.chaos

# The image ttanjit/ttanjit:<version> with podman, from Debian packages only
# (no image registry): base images by mmdebstrap, then deploy/Dockerfile.
# Skipped when the image's source hash label matches (deploy/image/build.py).
image:
	$(PY) deploy/image/build.py

# helm, kubectl, promtool, prometheus for the chart tests (see deploy/tools.py).
tools: $(STAMP)
	$(BIN)/python deploy/tools.py .tools/bin

clean:
	rm -rf $(VENV) services/ttanjit/v1 .pytest_cache
