# The README's two commands: `make demo` (set up, run the main job) and `make test` (the whole suite).
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.goldloop-synced

.PHONY: setup demo test lint bench

setup: $(STAMP)

$(STAMP): pyproject.toml uv.lock
	@$(PY) -m uv --version >/dev/null 2>&1 || $(PY) -m pip install --quiet uv
	$(PY) -m uv sync --all-extras --frozen
	@touch $@

demo: setup
	$(VENV)/bin/goldloop demo

test: setup
	$(VENV)/bin/pytest

lint: setup
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

bench: setup
	for b in benchmarks/[!_]*.py; do echo "== $$b"; $(VENV)/bin/python $$b || exit 1; done
