# Two commands do all set-up: `make demo` and `make test`. Each creates .venv when it is
# missing (or when pyproject.toml changed) and installs mropt into it.
# `make lint` is the maintainer's full check: lint, formatting and types.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINT_PATHS := mropt tests benchmarks

.PHONY: demo test lint install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/mropt demo

# lint (not formatting, not types: those are `make lint`) runs first, so CI enforces it;
# the tests run in TEST_WORKERS processes (pytest-xdist): CI has 2 cores, and the suite took
# 307 s in one process there against 175 s in two (2026-11-25); 181 s in two on 2026-11-26
# with 2120 tests, in a fresh clone (docs/testing.md); --dist loadgroup: the documented commands' tests in one
# worker (tests/conftest.py), which runs the commands that write their inputs once, not in both
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

# all three run; the target fails if any of them does
lint: $(STAMP)
	status=0; \
	$(BIN)/ruff check $(LINT_PATHS) || status=1; \
	$(BIN)/ruff format --check $(LINT_PATHS) || status=1; \
	$(BIN)/mypy || status=1; \
	exit $$status

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .ruff_cache .mypy_cache
