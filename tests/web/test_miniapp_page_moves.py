"""A move made on the Mini App page: a tap on a card sends the one action it can do (or, where
it can do several, the one chosen from their labels), card-less actions are buttons, the card
shows a spinner until the answer and the answer's text shows as a toast; the clock counts
down (headless Chromium against tests/fakes/miniapp_api.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser import open_page
from tests.fakes.miniapp_api import NOW, MiniAppStandIn, mid_bout, thrower

pytestmark = pytest.mark.browser


async def _posted(server: MiniAppStandIn, count: int) -> list[str]:
    """The actions posted, once `count` have come (the browser posts on its own time)."""
    await server.wait_until(lambda: len(server.moves) >= count)
    return [body["action"] for _, body in server.moves]


async def test_a_tap_on_a_card_with_one_action_sends_it_with_the_token_and_move(
    browser: Any,
) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url)).page
        await page.locator('#hand .hand-card[data-card="10♠"]').click()
        assert await _posted(server, 1) == ["defend 9♠ 10♠"]
        authorization, body = server.moves[0]
        assert authorization == "Bearer token-1"
        assert body == {"game": "g7", "move": 17, "action": "defend 9♠ 10♠"}
        await expect(page.locator("#chooser")).to_be_hidden()


async def test_a_card_with_two_actions_asks_which(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url)).page
        await page.locator('#hand .hand-card[data-card="Q♥"]').click()
        chooser = page.locator("#chooser")
        await expect(chooser).to_be_visible()
        await expect(page.locator("#chooser-title span:not(.cardbox)")).to_have_text("Which one?")
        assert await page.eval_on_selector_all(
            "#chooser-title .cardbox", "nodes => nodes.map(n => n.dataset.card)"
        ) == ["Q♥"]
        await expect(chooser.locator("button")).to_have_text(
            ["Cover 9♠ with Q♥", "Cover 9♣ with Q♥", "Cancel"]
        )
        await chooser.get_by_text("Cancel").click()
        await expect(chooser).to_be_hidden()
        assert server.moves == []
        await page.locator('#hand .hand-card[data-card="Q♥"]').click()
        await chooser.get_by_text("Cover 9♣ with Q♥").click()
        assert await _posted(server, 1) == ["defend 9♣ Q♥"]
        await expect(chooser).to_be_hidden()


async def test_a_dimmed_card_sends_nothing(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url)).page
        card = page.locator('#hand .hand-card[data-card="7♦"]')
        await expect(card).to_be_disabled()
        await card.click(force=True)
        await page.locator('#hand .hand-card[data-card="A♣"]').click()
        assert await _posted(server, 1) == ["defend 9♣ A♣"]


async def test_take_and_done_are_buttons(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url)).page
        await page.get_by_role("button", name="Take").click()
        assert await _posted(server, 1) == ["take"]
        server.push(thrower())
        await expect(page.locator("#actions .action")).to_have_text(["Done"])
        assert await page.eval_on_selector_all(
            "#hand .legal", "nodes => nodes.map(n => n.dataset.card)"
        ) == ["9♦"]
        await page.get_by_role("button", name="Done").click()
        assert await _posted(server, 2) == ["take", "pass"]
        assert server.moves[1][1]["move"] == 18


async def test_the_card_spins_until_the_answer_whose_text_is_a_toast(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        server.move_gate = asyncio.Event()
        server.move_answer = {"ok": False, "text": "Too late: the bout is over."}
        page = (await open_page(browser, server.url)).page
        card = page.locator('#hand .hand-card[data-card="6♥"]')
        await card.click()
        await page.locator("#chooser").get_by_text("Cover 9♠ with 6♥").click()
        await expect(card).to_have_class("hand-card legal busy")
        await expect(page.locator("#toast")).to_be_hidden()
        server.move_gate.set()
        await expect(page.locator("#toast")).to_have_text("Too late: the bout is over.")
        await expect(card).to_have_class("hand-card legal")
        assert await page.evaluate("Telegram.WebApp.calls.map(c => c[0])") == [
            "ready",
            "expand",
            "onEvent",
            "notificationOccurred",
        ]


async def test_the_clock_counts_down_on_the_pages_own_clock(browser: Any) -> None:
    async def fake_clock(page: Any) -> None:
        # the page's clock far from the server's: it counts from deadline - now
        await page.clock.install(time=(NOW - 3600) * 1000)

    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url, before=fake_clock)).page
        timer = page.locator("#my-seat .timer")
        await expect(timer).to_have_text("0:25")
        await page.clock.run_for(5000)
        await expect(timer).to_have_text("0:20")
        await page.clock.run_for(12000)
        await expect(timer).to_have_text("0:08")
        await expect(timer).to_have_class("timer low")
        await page.clock.run_for(60000)
        await expect(timer).to_have_text("0:00")
