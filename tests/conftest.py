"""Test-wide settings."""

import os

# python-telegram-bot 22 gives RetryAfter.retry_after as a timedelta with this set (and
# warns without it); the bot sets it too, in bot/__init__.py.
os.environ.setdefault("PTB_TIMEDELTA", "true")


def pytest_report_header() -> str:
    """Which engine build this run tests (`make test` runs the suite on each)."""
    import engine

    build = "compiled (mypyc)" if engine.COMPILED else "pure Python"
    return f"engine: {build}, from {os.path.dirname(engine.__file__)}"
