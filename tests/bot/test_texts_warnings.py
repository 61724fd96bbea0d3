"""Half-time warnings do not pile up (#31): a player's warning is deleted once the game moves
on (they moved, someone else did, the bot moved for them at the deadline, the game ended),
after a restart too (its message id is stored with the game), within the private chat's
send budget (no 429)."""

from __future__ import annotations

from bot.kit import MAX_TIMEOUTS
from storage import GameMeta
from tests.bot.conftest import BotHarness
from tests.bot.test_hand_taps import two_player_position
from tests.fakes.telegram import FakeMessage, FakeUser

WARNING = "Half your time is gone: your move in Club"


def warnings(h: BotHarness, user: FakeUser) -> list[FakeMessage]:
    """The warnings the player can still see in their private chat."""
    return [m for m in h.fake.messages(user.id) if WARNING in m.text]


async def half_time(h: BotHarness) -> None:
    h.clock.advance(31)  # half of 60 s
    await h.run_due()
    await h.settle()


async def test_the_warning_goes_once_the_player_moves(harness: BotHarness) -> None:
    h = harness
    alice, bob, _group, _game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    await half_time(h)
    [warning] = warnings(h, alice)
    assert warning.notified  # it did reach the phone
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    assert warnings(h, alice) == [] and h.fake.message(alice.id, warning.message_id).deleted
    assert "8♠" in h.hand_message(bob).button_texts  # the game goes on: Bob covers
    await half_time(h)  # Bob's turn has its own warning, and it goes when he moves
    assert len(warnings(h, bob)) == 1
    await h.send(bob.tap(h.hand_message(bob), "8♠"))
    assert warnings(h, bob) == []
    assert h.fake.flooded == []  # the deletions kept within the private chats' budget


async def test_the_warning_goes_when_the_bot_moves_for_the_player(harness: BotHarness) -> None:
    h = harness
    alice, _bob, _group, game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    await half_time(h)
    assert len(warnings(h, alice)) == 1
    h.clock.advance(30)  # the deadline: the bot plays Alice's lowest card (1 of 3 timeouts)
    await h.run_due()
    await h.settle()
    assert game.move_number == 1 and MAX_TIMEOUTS > 1
    assert warnings(h, alice) == []
    assert "moved for you" in h.hand_message(alice).text


async def test_a_warning_sent_before_a_restart_goes_after_it(harness: BotHarness) -> None:
    h = harness
    alice, _bob, group, _game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    await half_time(h)
    [warning] = warnings(h, alice)
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        stored = await tx.games.latest_for_chat(chat_id=group.id)
    assert stored.meta.warnings  # stored with the game
    await h.restart()
    await h.settle()
    assert warnings(h, alice) == [warning]  # the turn still holds: the warning stays
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    assert warnings(h, alice) == []


async def test_a_warning_whose_deadline_passed_while_the_bot_was_down_goes(
    harness: BotHarness,
) -> None:
    """Down past the deadline, the bot gives the turn 30 s more (R18, after a restart): the
    warning, which names the old deadline ("4 minutes ago" in the reader's app), goes; the
    hand names the new one, and no second warning rings for the same turn."""
    h = harness
    alice, _bob, _group, _game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    await half_time(h)
    assert len(warnings(h, alice)) == 1
    await h.stop()
    h.clock.advance(300)
    await h.start()
    await h.settle()
    assert warnings(h, alice) == []
    assert "⏳ Your time runs out in 30 s." in h.read(h.hand_message(alice))
    await h.run_due()
    await h.settle()
    sent = [m for m in h.fake.messages(alice.id, include_deleted=True) if WARNING in m.text]
    assert len(sent) == 1


async def test_a_warning_goes_when_the_game_is_cancelled(harness: BotHarness) -> None:
    h = harness
    alice, _bob, group, _game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    await half_time(h)
    assert len(warnings(h, alice)) == 1
    await h.send(alice.send(group, "/cancel"))
    assert "cancelled" in h.fake.last_message(group.id).text
    assert warnings(h, alice) == []


def test_the_warnings_message_ids_are_stored_and_damaged_ones_read_as_none() -> None:
    meta = GameMeta(warned=True, warnings={"1": 41, "2": 42})
    assert meta.to_json()["warnings"] == {"1": 41, "2": 42}
    assert GameMeta.from_json(meta.to_json()) == meta
    assert GameMeta().to_json() == {"v": 2}  # none: not written
    damaged = GameMeta.from_json({"v": 2, "warnings": {"1": 7, "2": "8", "3": True, "4": None}})
    assert damaged.warnings == {"1": 7}
    assert GameMeta.from_json({"v": 2, "warnings": [7]}).warnings == {}
