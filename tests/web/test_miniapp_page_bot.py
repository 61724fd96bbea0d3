"""The Mini App page against the real bot (its web server on loopback, the fake Bot API,
initData signed as Telegram signs it: tests/bot/miniapp_client.py): a player's page and an
onlooker's beside the chat, a move made on the page and one with the chat's buttons, and
initData the server refuses (headless Chromium)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from bot.miniapp.auth import sign_init_data
from tests.bot.conftest import TOKEN
from tests.bot.miniapp_client import Mini, serving
from tests.browser import open_page

pytestmark = pytest.mark.browser


@pytest.fixture
async def mini(tmp_path: Path) -> AsyncIterator[Mini]:
    async with serving(tmp_path) as m:
        yield m


def init_data(
    m: Mini, user_id: int, name: str, lang: str = "en", *, age: float = 0, token: str = TOKEN
) -> str:
    """initData as Telegram signs it for the bot (`token`), made `age` seconds ago."""
    user = json.dumps({"id": user_id, "first_name": name, "language_code": lang})
    now = m.h.clock().timestamp()
    return sign_init_data(token, {"auth_date": str(int(now - age)), "user": user})


async def _cards(page: Any, selector: str) -> list[str]:
    return list(
        await page.eval_on_selector_all(selector, "nodes => nodes.map(n => n.dataset.card)")
    )


async def test_a_move_on_the_page_and_one_in_the_chat_reach_both_pages(
    browser: Any, mini: Mini
) -> None:
    h = mini.h
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-7001, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    assert record is not None and record.game is not None and record.id is not None
    game = record.game
    users = {"1": alice, "2": bob}
    attacker, defender = users[game.attacker], users[game.defender]
    # the group's table links to the app with the game in `startapp`
    table = await h.table_of(group)
    links = [b.url or "" for row in table.buttons for b in row if b.text == "Table"]
    ref = links[0].rpartition("startapp=")[2]

    mine = await open_page(browser, mini.base, init_data=init_data(mini, attacker.id, "A"))
    watching = await open_page(
        browser, mini.base, init_data=init_data(mini, 9, "Dave"), start_param=ref
    )
    page, onlooker = mine.page, watching.page
    # the player's own game is found without a start parameter; the hand is theirs
    hand = [str(c) for c in game.hand(game.attacker)]
    await expect(page.locator("#hand .hand-card")).to_have_count(len(hand))
    assert await _cards(page, "#hand .hand-card") == hand
    await expect(onlooker.locator("#my-seat")).to_contain_text("You are watching")
    await expect(onlooker.locator("#hand .hand-card")).to_have_count(0)
    await expect(onlooker.locator("#seats .seat")).to_have_count(2)

    # the attacker plays a card on the page: the onlooker's page and the chat's table show it
    card = (await _cards(page, "#hand .legal"))[0]
    await page.locator(f'#hand .hand-card[data-card="{card}"]').click()
    await expect(onlooker.locator("#table .attack")).to_have_count(1)
    assert await _cards(onlooker, "#table .attack") == [card]
    await h.settle()
    assert [str(a) for a, _ in game.table] == [card]
    assert card in (await h.table_of(group)).text.replace("\ufe0f", "")

    # the defender takes with the chat's button: both pages follow
    await h.send(defender.tap(h.hand_message(defender), "Take"))
    for shown in (page, onlooker):
        await expect(shown.locator("body")).to_have_attribute("data-version", str(record.version))
    assert mine.elsewhere() == [] and watching.elsewhere() == []


async def test_expired_init_data_shows_the_servers_message(browser: Any, mini: Mini) -> None:
    stale = init_data(mini, 1, "Alice", age=2 * 24 * 3600)
    page = (await open_page(browser, mini.base, init_data=stale)).page
    await expect(page.locator("#notice")).to_have_text(
        "This link has expired. Open the table from the bot's button again."
    )
    await expect(page.locator("#game")).to_be_hidden()


async def test_forged_init_data_shows_the_servers_message_in_the_users_language(
    browser: Any, mini: Mini
) -> None:
    forged = init_data(mini, 1, "Alice", "de", token="123456:not-the-bots-token")
    page = (await open_page(browser, mini.base, init_data=forged)).page
    await expect(page.locator("#notice")).to_contain_text("Öffne")
    await expect(page.locator("#game")).to_be_hidden()
