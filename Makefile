# The README's two commands are `make run` and `make test`; .ci/run calls `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/relevo demo

lint: $(STAMP)
	$(BIN)/ruff format --check app tests benchmarks migrations
	$(BIN)/ruff check app tests benchmarks migrations

typecheck: $(STAMP)
	$(BIN)/mypy app

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/scoring.py
	$(BIN)/python benchmarks/run_case.py
	$(BIN)/python benchmarks/pages.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
