"""The Mini App page draws the state the server sends: a seated player's table and hand, an
onlooker's view without a hand, the end of a game, a refused session; in a 360x740 phone
and a desktop window, in Telegram's light and dark themes (headless Chromium against the
stand-in server of tests/fakes/miniapp_api.py)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser import open_page
from tests.fakes.miniapp_api import MiniAppStandIn, game_over, mid_bout, onlooker

pytestmark = pytest.mark.browser


async def _cards(page: Any, selector: str) -> list[str]:
    return list(
        await page.eval_on_selector_all(selector, "nodes => nodes.map(n => n.dataset.card)")
    )


async def test_a_seated_player_sees_the_table_and_their_hand_with_playable_cards_raised(
    browser: Any,
) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        opened = await open_page(browser, server.url)
        page = opened.page
        await expect(page.locator("#status")).to_have_text("Alice defends: two cards to cover.")
        # the other seats along the top: name, a fan of backs and the count, the role
        seats = page.locator("#seats .seat")
        await expect(seats).to_have_count(2)
        await expect(seats.nth(0)).to_contain_text("Boris")
        await expect(seats.nth(0)).to_contain_text("attacks")
        await expect(seats.nth(0).locator(".count")).to_have_text("3")
        await expect(seats.nth(1)).to_contain_text("throws in")
        # Alice's own line: her role and her clock
        me = page.locator("#my-seat")
        await expect(me).to_contain_text("Alice")
        await expect(me).to_contain_text("defends")
        await expect(me).to_contain_text("Your turn")
        await expect(me.locator(".timer")).to_have_text("0:25")
        # the table: three attacks, one covered
        assert await _cards(page, "#table .attack") == ["8♣", "9♠", "9♣"]
        assert await _cards(page, "#table .defence") == ["K♣"]
        assert await _cards(page, "#stock .trump") == ["7♥"]
        await expect(page.locator("#stock .deck-count")).to_have_text("12")
        await expect(page.locator("#discard .deck-count")).to_have_text("8")
        await expect(page.locator("#log li")).to_have_text(
            ["Last bout: 6♣ 8♦ beaten off", "Clara runs out of time"]
        )
        # the hand: every card, the playable ones raised, the others dimmed
        assert await _cards(page, "#hand .hand-card") == ["6♥", "7♦", "10♠", "Q♥", "A♣", "9♦"]
        assert await _cards(page, "#hand .legal") == ["6♥", "10♠", "Q♥", "A♣"]
        assert await _cards(page, "#hand .dim") == ["7♦", "9♦"]
        await expect(page.locator("#actions .action")).to_have_text(["Take"])
        # drawn in the project's own SVG: rank in the corners, suits in the suit's colour
        red = page.locator('#hand [data-card="Q♥"] svg.card')
        await expect(red).to_have_class("card red")
        assert await red.locator("text.rank").all_text_contents() == ["Q", "Q"]
        # it fits the phone: nothing sticks out sideways, the buttons are on the screen
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 360
        take = await page.locator("#actions .action").bounding_box()
        assert take is not None
        assert take["y"] + take["height"] <= 740
        assert await page.evaluate("Telegram.WebApp.calls.map(c => c[0])") == [
            "ready",
            "expand",
            "onEvent",
        ]
        assert opened.elsewhere() == []


async def test_a_hand_of_twenty_cards_fits_the_phones_width(browser: Any) -> None:
    state = mid_bout()
    ranks = ["6", "7", "8", "9", "10"]
    state["hand"] = [rank + suit for suit in "♠♥♦♣" for rank in ranks]
    async with MiniAppStandIn(state) as server:
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#hand .hand-card")).to_have_count(20)
        assert await page.evaluate("document.documentElement.scrollWidth") <= 360
        last = await page.locator('#hand .hand-card[data-card="10♣"]').bounding_box()
        assert last is not None
        assert last["x"] + last["width"] <= 360


async def test_an_onlooker_sees_the_table_and_no_hand(browser: Any) -> None:
    async with MiniAppStandIn(onlooker()) as server:
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#my-seat")).to_have_text(
            "You are watching. Only the players see their cards."
        )
        # every seat is along the top, none marked as the viewer's
        await expect(page.locator("#seats .seat")).to_have_count(3)
        await expect(page.locator("#seats .you")).to_have_count(0)
        await expect(page.locator("#hand .hand-card")).to_have_count(0)
        await expect(page.locator("#actions button")).to_have_count(0)
        assert await _cards(page, "#table .attack") == ["8♣", "9♠", "9♣"]


async def test_the_end_of_a_game_shows_its_result_and_no_clock(browser: Any) -> None:
    async with MiniAppStandIn(game_over()) as server:
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#status .over")).to_have_text("Game over\nBoris is the durak.")
        assert await page.inner_text("#status") == "Game over\nBoris is the durak."
        await expect(page.locator(".timer")).to_have_count(0)
        await expect(page.locator("#table .empty")).to_have_text("")
        await expect(page.locator("#my-seat")).to_contain_text("out")


async def test_a_forged_session_shows_its_message_and_no_table(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        server.session_answer = (
            401,
            {"error": "forged", "message": "This link was not made by Telegram."},
        )
        page = (await open_page(browser, server.url, init_data="user=1&hash=bad")).page
        await expect(page.locator("#notice")).to_have_text("This link was not made by Telegram.")
        await expect(page.locator("#game")).to_be_hidden()
        assert server.sessions == [{"init_data": "user=1&hash=bad", "start": ""}]
        assert server.connects == 0


async def test_no_game_says_so_in_the_viewers_language(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout(), lang="de") as server:
        server.game = None
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#notice")).to_have_text("Hier läuft kein Spiel.")
        assert server.connects == 0


async def test_the_start_parameter_goes_with_the_session(browser: Any) -> None:
    async with MiniAppStandIn(onlooker()) as server:
        page = (await open_page(browser, server.url, start_param="g7")).page
        await expect(page.locator("#seats .seat")).to_have_count(3)
        assert server.sessions[0]["start"] == "g7"


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_both_themes_keep_red_suits_red_on_a_light_face(browser: Any, scheme: str) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url, scheme=scheme)).page
        await expect(page.locator("#hand .hand-card")).to_have_count(6)
        colours = await page.evaluate(
            """() => {
              const style = (sel, prop) => getComputedStyle(document.querySelector(sel))[prop];
              return {
                body: style('body', 'backgroundColor'),
                red: style('#hand [data-card="Q♥"] svg.card', 'fill'),
                black: style('#hand [data-card="10♠"] svg.card', 'fill'),
                face: style('#hand [data-card="Q♥"] .face', 'fill'),
              };
            }"""
        )
        assert colours["body"] == ("rgb(23, 33, 43)" if scheme == "dark" else "rgb(255, 255, 255)")
        assert colours["red"] in ("rgb(208, 32, 29)", "rgb(200, 23, 27)")
        assert colours["black"] == "rgb(21, 24, 28)"
        red, green, blue = (int(v) for v in colours["face"][4:-1].split(","))
        assert min(red, green, blue) > 220  # a light face in both themes


async def test_a_desktop_window_draws_larger_cards(browser: Any) -> None:
    async with MiniAppStandIn(mid_bout()) as server:
        page = (await open_page(browser, server.url, width=1024, height=768)).page
        card = page.locator('#hand [data-card="Q♥"] svg.card')
        await expect(card).to_be_visible()
        box = await card.bounding_box()
        assert box is not None
        assert box["width"] >= 80
        assert await page.evaluate("document.documentElement.scrollWidth") <= 1024
