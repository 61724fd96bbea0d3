"""A hand a killed bot sent without storing its id is not left live: the game was dealt
with where each player's first hand message would lie (`GameRecord.hand_floors`, the latest
message the bot knew in the private chat), so the next start, which sends the hand again,
finds the copy after it and deletes it."""

from __future__ import annotations

import pytest

from bot.delivery import screens
from tests.bot.conftest import BotHarness
from tests.bot.test_computers import start_practice
from tests.bot.test_turn_alerts import PAUSE, play, two_at
from tests.fakes.telegram import FakeMessage, FakeUser


def live_hands(h: BotHarness, user: FakeUser) -> list[FakeMessage]:
    """The user's private messages with a hand's buttons (a card, say), not deleted."""
    return [
        m
        for m in h.fake.messages(user.id)
        if not m.deleted
        and any((b.callback_data or "").startswith("m") for row in m.buttons for b in row)
    ]


async def test_a_hand_a_killed_bot_never_stored_is_deleted_once_the_next_start_sends_it(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9401, "Club", admins={alice})
    with monkeypatch.context() as patch:
        # The hands land, and the bot dies before it stores their ids.
        patch.setattr(screens, "_set_hand", lambda record, pid, message_id: False)
        await h.open_game(group, [alice, bob])
    firsts = {u.id: live_hands(h, u) for u in (alice, bob)}
    assert all(len(hands) == 1 for hands in firsts.values())
    welcome = {u.id: h.fake.messages(u.id)[0] for u in (alice, bob)}
    await h.restart()
    await h.settle()
    for user in (alice, bob):
        (hand,) = live_hands(h, user)
        assert hand.message_id != firsts[user.id][0].message_id
        assert firsts[user.id][0].deleted
        assert hand.message_id == h.hand_message(user).message_id
        assert not welcome[user.id].deleted  # (what the bot said before the deal stays)


async def test_a_hand_dealt_just_after_a_restart_is_found_too(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The players started the bot with the process before: the one that deals knows their
    private chats from what that one kept (where it last wrote in each), so a hand it sent
    without storing its id is found once the next start sends it."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9404, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    await h.restart()  # (a moment after their /start)
    with monkeypatch.context() as patch:
        patch.setattr(screens, "_set_hand", lambda record, pid, message_id: False)
        await h.send(alice.send(group, "/newgame"))
        await h.send(bob.tap(h.lobby_message(group), "Join"))
        await h.send(alice.tap(h.lobby_message(group), "Start"))
    assert all(len(live_hands(h, u)) == 1 for u in (alice, bob))
    await h.restart()
    await h.settle()
    for user in (alice, bob):
        (hand,) = live_hands(h, user)
        assert hand.message_id == h.hand_message(user).message_id


async def test_a_practice_hand_is_found_before_its_table(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A practice game's table lies in the private chat too, after the hand: the copy the
    sweep finds first is the hand's, and the table stays."""
    h = harness
    solo = h.user(1, "Solo")
    with monkeypatch.context() as patch:
        patch.setattr(screens, "_set_hand", lambda record, pid, message_id: False)
        await start_practice(h, solo)
    (first,) = live_hands(h, solo)
    await h.restart()
    await h.settle()
    (hand,) = live_hands(h, solo)
    assert hand.message_id > first.message_id
    tables = [m for m in h.fake.messages(solo.id) if m.text.startswith("Durak · ")]
    assert len(tables) == 1


async def test_a_turn_alert_a_killed_bot_never_stored_is_deleted_after_a_restart(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's turn comes after a pause: his old hand is deleted and the new one lands, and the
    bot dies before it stores the new id. The next start finds the stored hand gone and
    sends it again: the alert that landed lies after the stored one, and goes."""
    h = harness
    _, alice, bob = await two_at(h, -9405)
    old = h.hand_message(bob)
    h.clock.advance(PAUSE)
    with monkeypatch.context() as patch:
        patch.setattr(screens, "_set_hand", lambda record, pid, message_id: False)
        await play(h, alice, "6♠")  # Bob must defend now
    (alert,) = live_hands(h, bob)
    assert alert.message_id != old.message_id
    await h.restart()
    await h.settle()
    (hand,) = live_hands(h, bob)
    assert hand.message_id == h.hand_message(bob).message_id
    assert "9♠" in hand.button_texts


async def test_a_copy_deleted_before_the_crash_does_not_end_the_search(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's first hand landed with its answer lost; the second landed and the first was
    deleted as its copy; the bot died before it stored the second's id. The next start's
    search meets the deleted one first, and goes on to the second."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9406, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    h.fake.timeout_next("sendMessage", chat_id=bob.id, applied=True)
    with monkeypatch.context() as patch:
        patch.setattr(screens, "_set_hand", lambda record, pid, message_id: False)
        await h.send(alice.send(group, "/newgame"))
        await h.send(bob.tap(h.lobby_message(group), "Join"))
        await h.send(alice.tap(h.lobby_message(group), "Start"))
    assert len(h.fake.messages(bob.id, include_deleted=True)) == 3  # the welcome, 2 hands
    assert len(live_hands(h, bob)) == 1
    await h.restart()
    await h.settle()
    (hand,) = live_hands(h, bob)
    assert hand.message_id == h.hand_message(bob).message_id
