# `make run` sets up and runs the service; `make test` sets up and runs every test.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test lint system-deps test-services lnbits migrate bench clean devchain

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.runtime: $(VENV)/bin/python requirements.txt
	$(PIP) install -q -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PIP) install -q -r requirements-dev.txt
	touch $@

# Local chain nodes for the tests (anvil, bcoin), pinned in package.json / package-lock.json.
# bcoin 1.0.2's install scripts build native modules that fail on current Node; it runs on its
# JavaScript fallbacks (NODE_BACKEND=js), so no package's scripts run except anvil's own
# postinstall (it fetches the anvil binary), run by the rebuild.
node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund --ignore-scripts
	npm rebuild --foreground-scripts @foundry-rs/anvil
	touch $@

system-deps:
	scripts/system-deps.sh

test-services:
	scripts/test-services.sh

# A real LNbits (pinned) in its own venv under var/ for the Lightning end-to-end test.
lnbits:
	scripts/lnbits-venv.sh

run: system-deps $(VENV)/.runtime
	scripts/run.sh

# anvil as Sepolia and Base Sepolia with test tokens, written into .env (README, "A local chain").
devchain: $(VENV)/.runtime node_modules/.installed
	$(PY) manage.py devchain

test: system-deps test-services lnbits $(VENV)/.dev node_modules/.installed
	$(PY) -m pytest

# The last step fails when a payer's string is untranslated in some language or a .mo file is stale.
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	DATABASE_URL=sqlite:///:memory: DJANGO_SETTINGS_MODULE=tests.settings $(PY) manage.py makemigrations --check --dry-run
	$(PY) scripts/check_translations.py

bench: system-deps test-services $(VENV)/.dev
	$(PY) bench/drafts_bench.py

migrate: $(VENV)/.runtime
	$(PY) manage.py migrate

clean:
	rm -rf $(VENV) var .pytest_cache
