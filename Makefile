# `make run` sets up and runs the service; `make test` sets up and runs every test.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test test-fast lint docs lock run-deps system-deps test-services lnbits migrate bench clean devchain

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# requirements.txt and requirements-dev.txt are locks: every package, transitive ones too, pinned
# with its hashes. Production installs requirements.txt alone. Edit requirements*.in, then `make lock`.
$(VENV)/.runtime: $(VENV)/bin/python requirements.txt
	$(PIP) install -q --require-hashes -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(PIP) install -q --require-hashes -r requirements-dev.txt
	touch $@

# Resolves requirements.in and requirements-dev.in into the locks, keeping every pin the locks
# already hold unless the .in files ask otherwise (add --upgrade-package NAME to move one).
LOCK := $(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes --custom-compile-command "make lock"
lock: $(VENV)/.dev
	$(LOCK) requirements.in -o requirements.txt
	$(LOCK) requirements-dev.in -o requirements-dev.txt

# Local chain nodes for the tests (anvil, bcoin), pinned in package.json / package-lock.json.
# bcoin 1.0.2's install scripts build native modules that fail on current Node; it runs on its
# JavaScript fallbacks (NODE_BACKEND=js), so no package's scripts run except anvil's own
# postinstall (it fetches the anvil binary), run by the rebuild.
node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund --ignore-scripts
	npm rebuild --foreground-scripts @foundry-rs/anvil
	touch $@

# Debian packages: what running needs (WeasyPrint's libraries and fonts, nginx), and what the tests
# and benches need on top (chromium, valgrind, wrk, Electrum, poppler, gettext).
run-deps:
	scripts/system-deps.sh run

system-deps:
	scripts/system-deps.sh test

test-services:
	scripts/test-services.sh

# A real LNbits (pinned) in its own venv under var/ for the Lightning end-to-end test.
lnbits:
	scripts/lnbits-venv.sh

run: run-deps $(VENV)/.runtime
	scripts/run.sh

# anvil as Sepolia and Base Sepolia with test tokens, written into .env (docs/local-chain.md).
devchain: $(VENV)/.runtime node_modules/.installed
	$(PY) manage.py devchain

# The suite runs on every core (pytest-xdist); each worker has its own test database and Redis
# key prefix, and runs each test file whole, so a module's servers start once (docs/development.md).
# TEST_WORKERS=0 runs it in one process. One worker per core (auto): the suite is bound by CPU, so
# more workers than cores cost each one's collection and test database for a tenth of the wall
# time of the files that wait most, and make latency-bound tests fail (docs/development.md).
TEST_WORKERS ?= auto
PYTEST_PARALLEL := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Bytecode caches (__pycache__, ignored by git) are written even where the environment says not
# to: the hundreds of processes the suite starts would each compile the project's modules again
# (about 0.25 s of CPU a start), and each worker rewrite every test file's asserts at collection.
test test-fast: export PYTHONDONTWRITEBYTECODE :=

test: system-deps test-services lnbits $(VENV)/.dev node_modules/.installed
	$(PYTEST_PARALLEL)

# Unit and API tests only: no browser, chain node, LNbits, bench or started service (`slow`).
test-fast: system-deps test-services $(VENV)/.dev
	$(PYTEST_PARALLEL) --reuse-db -m "not slow"

# check_translations fails when a payer's string is untranslated in some language or a .mo file is
# stale; mkdocs --strict when a link or anchor between the documentation's pages does not resolve.
lint: system-deps $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	DATABASE_URL=sqlite:///:memory: DJANGO_SETTINGS_MODULE=tests.settings $(PY) manage.py makemigrations --check --dry-run
	$(PY) scripts/check_translations.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# The documentation site (mkdocs.yml: README.md and docs/) on http://127.0.0.1:8001
docs: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8001

bench: system-deps test-services $(VENV)/.dev
	$(PY) bench/drafts_bench.py

migrate: $(VENV)/.runtime
	$(PY) manage.py migrate

clean:
	rm -rf $(VENV) var .pytest_cache
