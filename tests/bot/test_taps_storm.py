"""A tap storm cannot stall a game (#34 item 6): two players tap the buttons their phones
show as fast as the bot answers; every tap is answered, the game moves on to its end, no
429 comes, and no hand lags the game by more than about 3 s."""

from __future__ import annotations

import asyncio
import random

from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeUser

TAP_EVERY = 0.02  # 50 taps a second
LAG = 3.5  # the private chat's budget (about 3 s), and one call on its way


def buttons_of(h: BotHarness, user: FakeUser) -> list[str]:
    """The buttons the user's phone shows now that look playable (not a ·greyed· card)."""
    message = h.hand_message(user)
    return [
        b.callback_data
        for row in message.buttons
        for b in row
        if b.callback_data and "·" not in b.text
    ]


async def test_a_storm_of_taps_does_not_stall_the_game(harness: BotHarness) -> None:
    h = harness
    rng = random.Random(34)
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-3405, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    assert record is not None and record.game is not None
    game = record.game
    screens = h.rooms.screens
    behind_since: dict[str, float] = {}
    worst = 0.0
    taps: list[dict] = []
    with h.timing.update():  # the clock moves only as the taps come: 50 a second
        for _ in range(6000):  # two minutes of taps
            if game.is_over:
                break
            user = rng.choice((alice, bob))
            data = buttons_of(h, user)
            if data:
                tap = user.tap_raw(h.hand_message(user), rng.choice(data))
                taps.append(tap)
                await h.deliver(tap)
            h.clock.advance(TAP_EVERY)
            h.timing.advance(TAP_EVERY)
            for _ in range(20):  # the sender's turn: what is due may go out
                await asyncio.sleep(0)
            now = h.timing.now()
            for pid in ("1", "2"):
                if screens.sees_current(record, pid):
                    behind_since.pop(pid, None)
                else:
                    worst = max(worst, now - behind_since.setdefault(pid, now))
    assert game.is_over, f"the game stalled at move {game.move_number}"
    await h.settle()
    assert worst <= LAG, f"a hand lagged the game by {worst:.1f} s"
    assert h.fake.unanswered_callbacks() == []
    assert all(h.fake.answer_for(t) is not None for t in taps)
    assert h.fake.flooded == []
    assert "Game over" in h.fake.last_message(group.id).text
