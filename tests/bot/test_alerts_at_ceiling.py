"""Turn alerts while the bot is at Telegram's bot-wide ceiling (#31, item 10).

A turn alert is a new message and the old hand deleted: two of the bot's 30 calls a second
instead of one edit. At 100 games the turns the ceiling slows leave players quiet long
enough for an alert, each alert takes a second call, and the turns slow further (handover
p95 17.7 s instead of 3.4 s, bench/human.py). So while the ceiling holds back hands the
game has waited for, only a player quiet for much longer is alerted; the rest see their
turn by an edit. A moment's burst at the ceiling changes nothing.
"""

from __future__ import annotations

import pytest

from bot.delivery import Priority
from bot.delivery.sender import BUSY_FOR
from bot.render import Rendered
from tests.bot.conftest import BotHarness
from tests.bot.test_turn_alerts import PAUSE, play, two_at
from tests.fakes.telegram import FakeUser


async def others(h: BotHarness, count: int) -> list[FakeUser]:
    users = [h.user(500 + n, f"P{n}") for n in range(count)]
    for user in users:
        await h.send(user.start_private())
    return users


def awaited_hands(h: BotHarness, users: list[FakeUser]) -> None:
    """Other games' players the games wait for, each wanting their hand shown."""
    for user in users:
        h.rooms.sender.put(
            ("hand", user.id), user.id, Rendered("your turn"), priority=Priority.AWAITED
        )


async def test_a_burst_at_the_ceiling_is_not_the_bot_at_its_ceiling(harness: BotHarness) -> None:
    h = harness
    users = await others(h, 30)  # the whole window at once: out within its second
    awaited_hands(h, users)
    await h.settle()
    assert not h.rooms.sender.at_ceiling()


async def test_hands_held_back_a_second_put_the_bot_at_its_ceiling_for_a_while(
    harness: BotHarness,
) -> None:
    h = harness
    users = await others(h, 90)  # 30 a second: the last 30 wait two seconds
    awaited_hands(h, users)
    await h.settle()
    assert h.rooms.sender.at_ceiling()
    assert all(h.fake.messages(u.id)[-1].text == "your turn" for u in users)
    await h.rooms.kit.out.sleep(BUSY_FOR)
    assert not h.rooms.sender.at_ceiling()


@pytest.mark.parametrize(("quiet", "alerted"), [(PAUSE, False), (3 * PAUSE, True)])
async def test_at_the_ceiling_only_a_player_quiet_for_long_is_alerted(
    harness: BotHarness, quiet: int, alerted: bool
) -> None:
    h = harness
    _, alice, bob = await two_at(h, -7420 - quiet)
    users = await others(h, 90)
    old = h.hand_message(bob)
    heard = len(h.fake.notifications(bob.id))
    h.clock.advance(quiet)  # Bob has not tapped for that long
    awaited_hands(h, users)  # the ceiling holds the last of them back two seconds
    await h.settle()
    assert h.rooms.sender.at_ceiling()
    await play(h, alice, "6♠")  # Bob must defend now
    new = h.hand_message(bob)
    assert "9♠" in new.button_texts
    assert (new.message_id != old.message_id) is alerted
    assert len(h.fake.notifications(bob.id)) == heard + alerted
    assert h.fake.flooded == []
