from __future__ import annotations

import random

from tests.bot.conftest import BotHarness


async def test_two_player_game_to_the_end(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-100500, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    rng = random.Random(1)
    for _ in range(3000):
        record = next(iter(h.rooms.store.live_records()), None)
        if record is None or record.status != "running":
            break
        game = record.game
        assert game is not None
        actor = sorted(game.to_act)[0]
        await h.tap_random(h.users[int(actor)], rng)
    result = h.fake.last_message(group.id)
    assert "Game over" in result.text
