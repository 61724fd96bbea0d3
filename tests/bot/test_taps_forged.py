"""Buttons the bot never drew for that place: a resign from a hand, practice in a group
(#34 item 11)."""

from __future__ import annotations

from bot.callbacks import encode_practice
from tests.bot.conftest import BotHarness


async def test_a_forged_resign_from_a_hand_resigns_nobody(harness: BotHarness) -> None:
    """Only /leave's question, answered Yes, resigns: "R" on a hand's data is refused."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-3402, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    assert record is not None and record.game is not None and record.id is not None
    game = record.game
    hand = h.hand_message(alice)
    tap = alice.tap_raw(hand, f"m{record.id}.{game.move_number}.R")
    await h.send(tap)
    assert h.fake.answer_for(tap).text == h.rooms.kit.t("en", "error-stale-shown")
    assert not game.is_over and "1" in game.active_players
    assert record.status == "running"


async def test_a_practice_button_in_a_group_starts_nothing_there(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-3403, "Club", admins={alice})
    await h.send(alice.start_private())
    await h.send(alice.send(group, "/help"))
    message = h.fake.last_message(group.id)
    tap = alice.tap_raw(message, encode_practice(2, "easy"))
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "practice-in-private")
    assert h.rooms.store.live(group.id) is None
    assert h.rooms.store.live(alice.id) is None  # nor in private, unasked
