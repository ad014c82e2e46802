# Quire: `make run` sets up and starts the embedded server; `make test` sets up and runs the tests.
# Only Python 3.11+ is needed: both create .venv and install the pinned requirements first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# The embedded default: DEBUG on, SQLite under var/, tasks in process, email to the console.
RUN_ENV := DEBUG=1 QUIRE_BASE_URL=$${QUIRE_BASE_URL:-http://$(HOST):$(PORT)}

.PHONY: run demo manage test install lint typecheck bench bench-search bench-scale bench-million bench-review soak clean

$(STAMP): requirements.txt requirements-dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Quire needs Python 3.11 or newer; run with PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

# Migrate, load the demo handbook (idempotent) and print the login and agent token.
demo: $(STAMP)
	$(RUN_ENV) $(PY) manage.py migrate --noinput
	$(RUN_ENV) $(PY) manage.py load_demo

run: demo
	$(RUN_ENV) $(PY) manage.py runserver $(HOST):$(PORT)

# Any management command with the settings `make run` uses: make manage ARGS="load_demo".
manage: $(STAMP)
	$(RUN_ENV) $(PY) manage.py $(ARGS)

# In two passes side by side, parallel and serial (tests/run.py); QUIRE_TEST_WORKERS=0 runs one plain pass.
test: $(STAMP)
	SECRET_KEY=$${SECRET_KEY:-test-only-secret-key} $(PY) tests/run.py $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(PY) tools/import_cycles.py

typecheck: $(STAMP)
	DEBUG=1 $(BIN)/mypy .

bench: $(STAMP)
	DEBUG=1 $(PY) bench/run.py
	@if [ -n "$$BENCH_SEARCH_DATABASE_URL" ]; then \
		DATABASE_URL=$$BENCH_SEARCH_DATABASE_URL DEBUG=1 $(PY) bench/search_quality.py; fi

# Hybrid against keyword-only search on the question sets (bench/search_quality.py).
bench-search: $(STAMP)
	DATABASE_URL=$${BENCH_SEARCH_DATABASE_URL:?set BENCH_SEARCH_DATABASE_URL} DEBUG=1 \
		$(PY) bench/search_quality.py $(ARGS)

# search_pages at 116,280 pages (the tldr pages imported 3 times) over HTTP against its raw
# SQL, for a set of every page, a 2,000-page subtree and 101 single pages (bench/search_scale.py).
bench-scale: $(STAMP)
	DEBUG=1 $(PY) bench/search_scale.py

# Six agents propose sixty changes to the 18F handbook over MCP; a reviewer in Chromium clears
# the queue one by one and with batch selection (bench/review_volume.py). Its database
# (BENCH_REVIEW_DATABASE_URL, name containing "bench") is dropped and created afresh.
bench-review: $(STAMP)
	DEBUG=1 $(PY) bench/review_volume.py

# Reads at 38,760, 116,280 and about 1,000,000 pages (the tldr site copied in SQL), wall and
# the worker's CPU per call, against the bare authenticated view (bench/million.py).
bench-million: $(STAMP)
	DEBUG=1 nice -n 19 $(PY) bench/million.py

# A soak against gunicorn, PostgreSQL, Redis, a Celery worker and aiosmtpd (see bench/soak.py):
# `make soak MINUTES=5 CLIENTS=24`; SOAK_ARGS=--faults kills and restarts Redis and SMTP.
# Its database (SOAK_DATABASE_URL, name containing "soak") is dropped and created afresh.
MINUTES ?= 5
CLIENTS ?= 24
REVIEWERS ?= 4
soak: $(STAMP)
	$(PY) bench/soak.py --seconds $$(( $(MINUTES) * 60 )) --agents $(CLIENTS) \
		--reviewers $(REVIEWERS) $(SOAK_ARGS)

clean:
	rm -rf $(VENV) var staticfiles
