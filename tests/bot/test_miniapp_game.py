"""Whole games seen in the Mini App (#32): three players and an onlooker each hold an event
stream while the game is played, partly with app moves and partly with the chat's buttons.
Every payload each viewer receives is scanned for a card that viewer may not see: another
player's hand or the stock. Public are the trump card, the cards on the table, and what the
rules made public since (cards that lay on the table and were taken, beaten off or shown:
R12-R14, the trump swapped in by R19; docs/rules.md). The chat's hands and table stay in step
with the app's moves."""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine import Game
from storage import GameRecord
from tests.bot.miniapp_client import APP_NAME, APP_URL, Mini, Viewer, ref_of, serving
from tests.fakes.telegram import FakeGroup, FakeUser


@pytest.fixture
async def mini(tmp_path: Path) -> AsyncIterator[Mini]:
    async with serving(tmp_path) as m:
        yield m


CARD = re.compile(r"(10|[2-9JQKA])([♠♥♦♣])")


def cards_in(text: str) -> set[str]:
    return {m.group(0) for m in CARD.finditer(text.replace("\ufe0f", ""))}


def public_now(record: GameRecord) -> set[str]:
    """What everybody can see or has seen at this moment."""
    game = record.game
    assert game is not None
    seen = {str(c) for pair in game.table for c in pair if c is not None}
    seen |= {str(c) for c in game.discard}
    if game.trump_card is not None:
        seen.add(str(game.trump_card))
    for entry in record.meta.log:
        seen |= {str(c) for c in entry.cards or ()}
    return seen


class Scan:
    """Each viewer's payloads, checked as they come."""

    def __init__(self, viewers: dict[str | None, Viewer]) -> None:
        self.viewers = viewers
        self.public: set[str] = set()
        self.hands: dict[str, set[str]] = {}
        self.checked = {id(v): 0 for v in viewers.values()}
        self.payloads = 0

    def check(self, record: GameRecord) -> None:
        game = record.game
        assert game is not None
        self.public |= public_now(record)
        now = {p: {str(c) for c in game.hand(p)} for p in game.players}
        for pid, viewer in self.viewers.items():
            mine = now.get(pid or "", set()) | self.hands.get(pid or "", set())
            for raw, state in list(zip(viewer.raw, viewer.states, strict=True))[
                self.checked[id(viewer)] :
            ]:
                leaked = cards_in(raw) - self.public - mine
                assert not leaked, f"{pid or 'onlooker'} was sent {leaked}: {raw}"
                if pid is None:
                    assert state["hand"] is None and state["legal"] == [] and state["you"] is None
                else:
                    assert state["you"] == pid
                self.payloads += 1
            self.checked[id(viewer)] = len(viewer.raw)
        self.hands = now


async def caught_up(viewers: dict[str | None, Viewer], game: Game) -> None:
    for viewer in viewers.values():
        await viewer.until(lambda s: s["move"] == game.move_number and s["over"] == game.is_over)


def in_step(m: Mini, record: GameRecord, users: dict[str, FakeUser], group: FakeGroup) -> None:
    """The chat shows what the app shows: every hand message its player's current options,
    the table message the cards on the table."""
    game = record.game
    assert game is not None
    for pid in users:
        if pid in game.active_players and not game.is_over:
            assert m.h.rooms.screens.sees_current(record, pid), f"hand of {pid} behind"
    table = m.h.fake.message(group.id, record.table_message_id or 0)
    for attack, defence in game.table:
        for card in (attack, defence):
            if card is not None:
                assert str(card) in table.text.replace("\ufe0f", "")


async def play(m: Mini, seed: int) -> tuple[Scan, int, int]:
    h = m.h
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-5000 - seed, "Club", admins={alice})
    await h.open_game(group, [alice, bob, carol])
    record = h.rooms.store.live(group.id)
    assert record is not None and record.game is not None and record.id is not None
    ref = ref_of(record.id)
    # The ways in: the group's table has the direct link, each hand the web_app button.
    table = await h.table_of(group)
    links = [b.url for row in table.buttons for b in row if b.text == "Table"]
    assert links == [f"https://t.me/{h.rooms.kit.bot_username}/{APP_NAME}?startapp={ref}"]
    hand = h.hand_message(alice)
    web_apps = [
        b["web_app"]["url"]
        for row in (hand.reply_markup or {})["inline_keyboard"]
        for b in row
        if "web_app" in b
    ]
    assert web_apps == [APP_URL]
    users = {"1": alice, "2": bob, "3": carol}
    viewers: dict[str | None, Viewer] = {}
    tokens = {}
    for pid, user in users.items():
        session = (await m.session(user.id, user.first_name)).json()
        assert session["game"] == ref  # their running game, found without startapp
        tokens[pid] = session["token"]
        viewer = Viewer(m, session["token"], ref, f"page-{pid}")
        m.viewers.append(viewer)
        await viewer.connect()
        viewers[pid] = viewer
    viewers[None] = await m.viewer(9, "Dave", links[0].rpartition("=")[2])  # the onlooker
    scan = Scan(viewers)
    scan.check(record)
    rng = random.Random(seed)
    app_moves = chat_taps = 0
    for _ in range(1500):
        game = record.game
        assert game is not None
        if game.is_over:
            break
        pid = rng.choice(sorted(game.to_act))
        if rng.random() < 0.5:
            state = viewers[pid].last
            assert state["legal"], f"{pid} is to act but the app offers nothing"
            choice: dict[str, Any] = rng.choice(state["legal"])
            response = await m.move(tokens[pid], ref, state["move"], choice["action"])
            assert response.status_code == 200
            assert response.json() == {"ok": True, "text": None}, choice
            app_moves += 1
            await m.settle()
            in_step(m, record, users, group)
        else:
            await h.tap_random(users[pid], rng)
            chat_taps += 1
        await caught_up(viewers, game)
        scan.check(record)
    assert record.game is not None and record.game.is_over
    for pid, viewer in viewers.items():
        final = viewer.last
        assert final["over"] and final["result"] and final["legal"] == []
        if pid is not None:
            assert final["hand"] == [str(c) for c in record.game.hand(pid)]
    return scan, app_moves, chat_taps


async def test_a_whole_game_in_app_and_chat_shows_nobody_a_card_they_may_not_see(
    mini: Mini,
) -> None:
    scan, app_moves, chat_taps = await play(mini, 7)
    assert app_moves > 10 and chat_taps > 10
    assert scan.payloads > 4 * 20  # every viewer got the game as it went


async def test_another_deal_and_order_of_moves_leaks_nothing_either(mini: Mini) -> None:
    scan, app_moves, _ = await play(mini, 11)
    assert app_moves > 10 and scan.payloads > 80
