"""Test-wide settings, and the PostgreSQL server of a test session (`pg_server`)."""

import os
from collections.abc import Iterator

import pytest

from tests import postgres

# python-telegram-bot 22 gives RetryAfter.retry_after as a timedelta with this set (and
# warns without it); the bot sets it too, in bot/__init__.py.
os.environ.setdefault("PTB_TIMEDELTA", "true")


def pytest_report_header() -> str:
    """Which engine build this run tests (`make test` runs the suite on each)."""
    import engine

    build = "compiled (mypyc)" if engine.COMPILED else "pure Python"
    return f"engine: {build}, from {os.path.dirname(engine.__file__)}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "postgres: runs on the PostgreSQL server the tests start")
    config.addinivalue_line(
        "markers", "sqlite_only: a test of SQLite's files or connection: not run on PostgreSQL"
    )
    config.addinivalue_line(
        "markers", "browser: a page (Mini App, sandbox) in headless Chromium (tests/browser.py)"
    )
    config.addinivalue_line(
        "markers", "chaos: real bot processes through Telegram's faults and kills (tests/chaos.py)"
    )


_skipped_postgres: list[str] = []


@pytest.fixture(scope="session")
def pg_server() -> Iterator[postgres.PostgresServer]:
    """The PostgreSQL server of this test session (`tests.postgres`), started at its first
    use and stopped at the end; skips the test, saying what to install, where it cannot."""
    why = postgres.missing()
    if why is not None:
        _skipped_postgres.append(why)
        pytest.skip(why)
    server = postgres.PostgresServer.start()
    try:
        postgres.run_apart(postgres.make_template(server))  # first asked for inside a loop
        yield server
    finally:
        server.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Skipped PostgreSQL tests are never silent: one line at the end of every run."""
    if _skipped_postgres:
        terminalreporter.write_line(
            f"PostgreSQL tests SKIPPED: {_skipped_postgres[0]}", yellow=True, bold=True
        )
