"""The Mini App page when its event stream is refused: for good (404: the game is over or
unknown; 429: too many streams; 401 again with a new session) it says so in words, in the
viewer's language, and stops asking; a 503 (a standby worker) keeps "Reconnecting…" and
tries again until the stream is back (headless Chromium against tests/fakes/miniapp_api.py,
the page's timers on Playwright's clock)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser import open_page
from tests.fakes.miniapp_api import MiniAppStandIn, app_strings, mid_bout

pytestmark = pytest.mark.browser


async def _clock(page: Any) -> None:
    await page.clock.install()


async def _run_until(page: Any, done: Callable[[], Awaitable[bool]]) -> None:
    """Moves the page's clock on in half seconds until `done()` (the network answers in
    its own time meanwhile)."""
    for _ in range(200):
        if await done():
            return
        await page.clock.run_for(500)
    raise AssertionError("the page never got there")


async def _notice(page: Any) -> str:
    return str(await page.evaluate("document.getElementById('notice').innerText")).strip()


@pytest.mark.parametrize(
    ("status", "key", "lang"),
    [
        (404, "app-page-ended", "en"),
        (429, "app-page-too-many", "de"),
        (404, "app-page-ended", "ru"),
    ],
)
async def test_a_stream_refused_for_good_says_why_and_stops_asking(
    browser: Any, status: int, key: str, lang: str
) -> None:
    async with MiniAppStandIn(mid_bout(), lang=lang) as server:
        page = (await open_page(browser, server.url, before=_clock)).page
        await expect(page.locator("#stock .deck-count")).to_have_text("12")
        server.events_answer = (status, {"error": "x", "message": "x"})
        server.drop()
        said = app_strings(lang)[key]

        async def shown() -> bool:
            return await _notice(page) == said

        await _run_until(page, shown)
        await expect(page.locator("#game")).to_be_hidden()
        await expect(page.locator("#offline")).to_be_hidden()
        asked = server.events_asked
        await page.clock.run_for(120_000)  # no retry every 10 s behind the words
        assert await _notice(page) == said
        assert server.events_asked == asked


async def test_a_stream_refused_again_with_a_new_session_says_the_view_expired(
    browser: Any,
) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url, before=_clock)).page
        await expect(page.locator("#stock .deck-count")).to_have_text("12")
        server.events_answer = (401, {"error": "expired", "message": "x"})
        server.drop()
        said = app_strings("en")["app-page-expired"]

        async def shown() -> bool:
            return await _notice(page) == said

        await _run_until(page, shown)
        assert len(server.sessions) == 2  # a new session was tried first


async def test_a_standby_workers_503_keeps_reconnecting_until_the_stream_is_back(
    browser: Any,
) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url, before=_clock)).page
        await expect(page.locator("#stock .deck-count")).to_have_text("12")
        server.events_answer = (503, {"error": "unavailable", "message": "x"})
        server.drop()
        asked = server.events_asked

        async def tried_thrice() -> bool:
            return server.events_asked >= asked + 6  # each try: the stream and its probe

        await _run_until(page, tried_thrice)
        await expect(page.locator("#offline")).to_have_text("Reconnecting…")
        await expect(page.locator("#offline")).to_be_visible()
        assert await _notice(page) == ""
        state = mid_bout(version=18)
        state["stock"] = 10
        server.events_answer = None
        server.push(state)

        async def back() -> bool:
            return await page.locator("#stock .deck-count").inner_text() == "10"

        await _run_until(page, back)
        await expect(page.locator("#offline")).to_be_hidden()
