# The two commands the README promises: `make run` starts the bot, `make test` runs every check.
# Both install what they need into .venv on a fresh machine (only Python and pip required).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test lint typecheck pytest bench format clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV) && $(PYTHON) -m pip install --quiet --user virtualenv && $(PYTHON) -m virtualenv $(VENV); }
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python -m bot

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/storage.py
	$(BIN)/python bench/bot.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
