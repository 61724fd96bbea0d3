"""A restart (or a new leader) does not know when each player last heard from the bot: it
counts from its first look at their hand. A player who was playing when the lead changed
hands gets silent edits at their next turn, not a new message (every player would get one
just after each change of leader, each a new hand that a leader dying before it stored its
id would leave behind with live buttons); one who then pauses is alerted as before."""

from __future__ import annotations

from tests.bot.conftest import BotHarness
from tests.bot.test_turn_alerts import PAUSE, play, two_at


async def test_a_player_who_was_playing_when_the_bot_restarted_gets_a_silent_edit(
    harness: BotHarness,
) -> None:
    h = harness
    _, alice, bob = await two_at(h, -7431)
    old = h.hand_message(bob)
    heard = len(h.fake.notifications(bob.id))
    await h.restart()
    await h.settle()
    await play(h, alice, "6♠")  # Bob must defend now; he got his hand a moment ago
    assert h.hand_message(bob).message_id == old.message_id and not old.deleted
    assert len(h.fake.notifications(bob.id)) == heard


async def test_after_a_restart_a_turn_after_a_pause_is_still_an_alert(
    harness: BotHarness,
) -> None:
    h = harness
    _, alice, bob = await two_at(h, -7432)
    old = h.hand_message(bob)
    await h.restart()
    await h.settle()
    h.clock.advance(PAUSE)
    await play(h, alice, "6♠")
    new = h.hand_message(bob)
    assert new.message_id != old.message_id and new.notified and old.deleted
