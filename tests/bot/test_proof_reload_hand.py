"""A hand message whose id could not be stored (the database away, or this worker not sure
it leads) is kept in memory, to be stored with the next save. When a move's save then fails
too, the game is loaded again as stored and shown again: it must show itself in the hand
message the player has now, not in the one before it, so that no player is left with two
hands whose buttons are live (the workers proof met it after the database's outage)."""

from __future__ import annotations

import pytest

from tests.bot.conftest import BotHarness
from tests.bot.test_database_outage import attacker_tap, game_of_two, unavailable_writes
from tests.fakes.telegram import FakeUser


def _live_hands(h: BotHarness, user: FakeUser) -> list[int]:
    """The player's messages that still have buttons to tap."""
    return [
        m.message_id
        for m in h.fake.messages(user.id)
        if any(b.callback_data for row in m.buttons for b in row)
    ]


async def test_a_game_loaded_again_shows_itself_in_the_hand_message_whose_id_was_not_stored(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    h.rooms.store.reload_delays = (0.0,) * 5  # as many attempts as a bot makes, unslept
    group, alice, bob = await game_of_two(h, -9021)
    undo = unavailable_writes(h, monkeypatch)
    for user in (alice, bob):  # a new hand message each, the old one closed above it
        await h.send(user.send_private("/hand"))
    newest = {u.id: h.fake.messages(u.id)[-1].message_id for u in (alice, bob)}
    assert all(_live_hands(h, u) == [newest[u.id]] for u in (alice, bob))
    await h.send(attacker_tap(h, group))  # not stored: the game is loaded again, shown again
    for _ in range(10):  # every reload to its end
        await h.settle()
    for user in (alice, bob):
        assert _live_hands(h, user) == [newest[user.id]]
    undo()
    tap = attacker_tap(h, group)  # on the hand the game shows itself in
    await h.send(tap)
    assert h.rooms.store.live(group.id).game.move_number == 1  # type: ignore[union-attr]
