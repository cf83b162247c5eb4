# The README's two commands are `make run` and `make test`; .ci/run calls `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make run PORT=8001` runs a second demo next to the first: the engine port follows the
# app's (8000 → 9250, 8001 → 9251) unless ENGINE_PORT is given.
HOST ?= 127.0.0.1
PORT ?= 8000
ENGINE_PORT ?= $(shell expr $(PORT) + 1250)

.PHONY: run test test-fast install lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/relevo demo --host $(HOST) --port $(PORT) --engine-port $(ENGINE_PORT)

lint: $(STAMP)
	$(BIN)/ruff format --check app tests benchmarks migrations
	$(BIN)/ruff check app tests benchmarks migrations
	$(BIN)/lint-imports --no-logo --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy app
	$(BIN)/mypy --check-untyped-defs tests benchmarks

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

# The same checks without the minute-long cross-checks marked `slow` (CI runs `make test`).
test-fast: lint typecheck
	$(BIN)/pytest -m "not slow"

bench: $(STAMP)
	$(BIN)/python benchmarks/scoring.py
	$(BIN)/python benchmarks/run_case.py
	$(BIN)/python benchmarks/pages.py
	$(BIN)/python benchmarks/compare.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
