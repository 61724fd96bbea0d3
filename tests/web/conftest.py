"""The Mini App page's browser tests: a headless Chromium per test (`browser`), skipped with
a clear reason where none can run here (`tests.browser.missing`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests import browser as chromium

_skipped: list[str] = []


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    why = chromium.missing()
    if why is not None:
        _skipped.append(why)
        pytest.skip(why)
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await chromium.launch(playwright)
        try:
            yield launched
        finally:
            await launched.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Skipped browser tests are never silent: one line at the end of the run."""
    if _skipped:
        terminalreporter.write_line(f"Browser tests SKIPPED: {_skipped[0]}", yellow=True, bold=True)
