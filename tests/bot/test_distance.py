"""Whole games within Telegram's limits (#18): the fake answers 429 to any chat or bot that
goes over them (tests/fakes/telegram/limits.py), on the same virtual clock as the bot's
sender; not one 429 may come, whoever plays and however fast they tap."""

from __future__ import annotations

import random

from engine import Rules
from tests.bot.conftest import BotHarness
from tests.bot.test_computers import lobby_with_computers, play_humans, start_practice
from tests.bot.test_howto import set_rules


async def test_no_429_in_a_whole_game_of_three_people(harness: BotHarness) -> None:
    h = harness
    players = [h.user(n, name) for n, name in ((1, "Alice"), (2, "Bob"), (3, "Carol"))]
    group = h.fake.group(-9801, "Club", admins={players[0]})
    await h.open_game(group, players)
    await play_humans(h, group.id, random.Random(7))
    assert "Game over" in h.fake.last_message(group.id).text
    assert h.fake.flooded == [], h.fake.flood.over if h.fake.flood else None


async def test_no_429_in_a_six_player_game_with_transfers(harness: BotHarness) -> None:
    h = harness
    players = [h.user(n, f"P{n}") for n in range(1, 7)]
    group = h.fake.group(-9802, "Club", admins={players[0]})
    await set_rules(h, group, Rules.preset("perevodnoy"))
    await h.open_game(group, players)
    record = h.rooms.store.live(group.id)
    assert record is not None and record.rules.transfer and len(record.lobby.seats) == 6
    await play_humans(h, group.id, random.Random(8))
    assert "Game over" in h.fake.last_message(group.id).text
    assert h.fake.flooded == []


async def test_no_429_in_a_group_game_with_computers(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9803, "Club", admins={alice})
    await lobby_with_computers(h, group, [alice, bob], ["easy", "hard"])
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    await play_humans(h, group.id, random.Random(9))
    assert h.fake.flooded == []


async def test_no_429_in_practice_where_table_and_hand_share_one_chat(
    harness: BotHarness,
) -> None:
    h = harness
    solo = h.user(9, "Solo")
    await start_practice(h, solo, "P2m")
    await play_humans(h, solo.id, random.Random(10))
    assert h.fake.flooded == []
    assert h.timing.jumps, "practice waited for its chat's budget at least once"
