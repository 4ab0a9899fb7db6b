# `make run` sets up and runs the service; `make test` sets up and runs every test.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test test-fast lint system-deps test-services lnbits migrate bench clean devchain

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.runtime: $(VENV)/bin/python requirements.txt
	$(PIP) install -q -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PIP) install -q -r requirements-dev.txt
	touch $@

# Local chain nodes for the tests (anvil), pinned in package.json / package-lock.json.
node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund
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

# The suite runs on every core (pytest-xdist); each worker has its own test database and Redis
# key prefix, and runs each test file whole, so a module's servers start once (docs/development.md).
# TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= auto
PYTEST_PARALLEL := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

test: system-deps test-services lnbits $(VENV)/.dev node_modules/.installed
	$(PYTEST_PARALLEL)

# Unit and API tests only: no browser, chain node, LNbits, bench or started service (`slow`).
test-fast: system-deps test-services $(VENV)/.dev
	$(PYTEST_PARALLEL) --reuse-db -m "not slow"

# The last step fails when a payer's string is untranslated in some language or a .mo file is stale.
lint: system-deps $(VENV)/.dev
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
