"""The Mini App page stays live by itself: a dropped event stream reconnects and shows the
newer state; an expired token is replaced by a new session (for the stream and for a move);
a session refused on the way shows its message instead of the table (headless Chromium
against tests/fakes/miniapp_api.py)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser import open_page
from tests.fakes.miniapp_api import MiniAppStandIn, mid_bout

pytestmark = pytest.mark.browser


def _newer() -> dict[str, Any]:
    state = mid_bout(version=18)
    state["stock"] = 10
    state["status"] = "Clara throws in."
    return state


async def test_a_dropped_stream_reconnects_and_shows_the_newer_state(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        opened = await open_page(browser, server.url)
        page = opened.page
        await expect(page.locator("#stock .deck-count")).to_have_text("12")
        server.drop()
        server.push(_newer())  # stored while no stream is open: the next one starts with it
        await expect(page.locator("#stock .deck-count")).to_have_text("10")
        await expect(page.locator("#status")).to_have_text("Clara throws in.")
        await expect(page.locator("#offline")).to_be_hidden()
        assert server.connects == 2
        assert len(server.sessions) == 1  # the token was still good
        assert opened.elsewhere() == []


async def test_a_state_pushed_on_the_open_stream_is_drawn(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#stock .deck-count")).to_have_text("12")
        server.push(_newer())
        await expect(page.locator("#stock .deck-count")).to_have_text("10")
        assert server.connects == 1


async def test_an_expired_token_gets_a_new_session_and_the_stream_again(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#stock .deck-count")).to_have_text("12")
        server.expire()
        server.drop()
        server.push(_newer())
        await expect(page.locator("#stock .deck-count")).to_have_text("10")
        assert server.refused == 2  # the stream, and the page asking why it failed
        assert len(server.sessions) == 2
        assert server.connects == 2
        await page.locator('#hand .hand-card[data-card="10♠"]').click()
        await server.wait_until(lambda: len(server.moves) == 1)
        assert server.moves[0][0] == "Bearer token-2"


async def test_a_move_with_an_expired_token_is_sent_again_with_a_new_one(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        server.move_answer = {"ok": True, "text": "Covered."}
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#hand .legal")).to_have_count(4)
        server.expire()
        await page.locator('#hand .hand-card[data-card="10♠"]').click()
        await expect(page.locator("#toast")).to_have_text("Covered.")
        assert [(auth, body["action"]) for auth, body in server.moves] == [
            ("Bearer token-2", "defend 9♠ 10♠")
        ]


async def test_a_session_refused_on_reconnecting_shows_its_message(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#stock .deck-count")).to_have_text("12")
        server.session_answer = (401, {"error": "expired", "message": "Open the app again."})
        server.expire()
        server.drop()
        await expect(page.locator("#notice")).to_have_text("Open the app again.")
        await expect(page.locator("#game")).to_be_hidden()
        assert server.connects == 1
