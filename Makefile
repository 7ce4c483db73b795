# The README's two commands: `make demo` (set up, run the main job) and `make test` (the whole suite).
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.goldloop-synced

.PHONY: setup demo test lint bench bench-full run-benchmarks

# Bytecode is compiled at install, as pip does and uv does not by default: where
# PYTHONDONTWRITEBYTECODE is set (as on the machines we test on) nothing writes it later, and every
# process would compile each module it imports from source (`goldloop status --help`: 3x the
# work; each Label Studio start: Django's thousands of modules). `compileall` keeps goldloop's own
# sources compiled as they change (it skips what is up to date).
setup: $(STAMP)
	@$(VENV)/bin/python -m compileall -q src

$(STAMP): pyproject.toml uv.lock
	@$(PY) -m uv --version >/dev/null 2>&1 || $(PY) -m pip install --quiet uv
	$(PY) -m uv sync --all-extras --frozen --compile-bytecode
	@touch $@

demo: setup
	$(VENV)/bin/goldloop demo

# One pytest worker per core (at most 4), a test file's tests together in one worker (each worker
# starts its own Label Studio): most of the suite waits on servers, so two workers on two cores
# take less than half the time of one.
test: setup
	$(VENV)/bin/pytest -n auto --maxprocesses 4 --dist loadfile

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/mypy
	# The benchmarks call the library as a user would: type-checked, they cannot drift from it.
	$(VENV)/bin/mypy --explicit-package-bases benchmarks
	$(VENV)/bin/lint-imports --no-cache

# `make bench`: every benchmark at a short size (campaign.py and studio.py default to their
# issues' full sizes, so they get short ones here); `make bench-full`: the sizes the issues set
# (benchmarks/README.md), an hour or more on two cores.
BENCH_SHORT = campaign.py=--docs 300;studio.py=--docs 200
BENCH_FULL = annotate.py=--docs 200 --rerun-docs 2000;llm_baseline.py=--spans 400;sample.py=--docs 2000;sample_scale.py=--rows 1000000;score.py=--docs 10000;interchange.py=--docs 10000;batch.py=--docs 1000

bench: setup
	@$(MAKE) --no-print-directory run-benchmarks SIZES="$(BENCH_SHORT)"

bench-full: setup
	@$(MAKE) --no-print-directory run-benchmarks SIZES="$(BENCH_FULL)"

run-benchmarks:
	@for b in benchmarks/[!_]*.py; do \
	  args=$$(echo "$(SIZES)" | tr ';' '\n' | sed -n "s|^$$(basename $$b)=||p"); \
	  echo "== $$b $$args"; $(VENV)/bin/python $$b $$args || exit 1; \
	done
