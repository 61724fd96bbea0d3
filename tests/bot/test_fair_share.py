"""The bot's ceiling shared (#31): awaited hands enough to take all of the bot's 30 calls a
second still leave every group's table edited within a bound, the oldest waiting first, and
they keep the rest of the ceiling, ahead of everything else.

Through the bot's own `Sender` (`Rooms.sender`) against the fake Bot API, which enforces
Telegram's limits on the same virtual clock (tests/fakes/timing.py): each hand and table
wants a new state again as soon as its last one is shown, as players at the ceiling do.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from bot.delivery import Delivered, Priority
from bot.delivery.sender import OVERDUE
from bot.render import Rendered
from tests.bot.conftest import TOKEN, BotHarness, ManualClock, make_settings
from tests.fakes.telegram import FakeMessage, FakeTelegram

RUN = 30.0  # virtual seconds of demand
HANDS, TABLES = 60, 30  # 60 awaited hands can ask for 60 calls a second, twice the ceiling


async def saturated(h: BotHarness) -> dict[int, list[float]]:
    """Every chat's arrivals (virtual times), awaited hands and tables wanting a new state
    again as soon as their last one is out, for `RUN` seconds."""
    players = [h.user(100 + n, f"P{n}") for n in range(HANDS)]
    for user in players:
        await h.send(user.start_private())
    groups = [h.fake.group(-5000 - n, f"Club {n}", admins={players[n]}) for n in range(TABLES)]
    h.fake.clear_calls()
    sender = h.rooms.sender
    start = h.timing.now()
    seen: dict[int, list[float]] = {}

    def watch(message: FakeMessage, _: Any) -> None:
        if h.timing.now() < start + RUN:
            seen.setdefault(message.chat_id, []).append(h.timing.now())

    h.fake.watch(watch)

    def hand(chat_id: int, n: int) -> None:
        def again(_: Delivered, __: Any) -> None:
            if h.timing.now() < start + RUN:
                hand(chat_id, n + 1)

        sender.put(
            ("hand", chat_id), chat_id, Rendered(f"move {n}"), priority=Priority.AWAITED,
            on_done=again,
        )  # fmt: skip

    def table(chat_id: int, n: int) -> None:
        def again(_: Delivered, __: Any) -> None:
            if h.timing.now() < start + RUN:
                table(chat_id, n + 1)

        sender.put(
            ("table", chat_id), chat_id, Rendered(f"table after move {n}"),
            priority=Priority.TABLE, gap=3.0, paced=True, on_done=again,
        )  # fmt: skip

    for user in players:
        hand(user.id, 0)
    for group in groups:
        table(group.id, 0)
    await h.settle()
    assert h.fake.flooded == []  # and all of it within Telegram's limits
    return seen


async def test_at_the_bots_ceiling_no_table_falls_far_behind(harness: BotHarness) -> None:
    """30 tables and the 5 calls a second kept for the overdue ones: after the first round,
    each table is edited every 6 s or so (overdue after 5 s, then 30 of them at 5 a second),
    never left waiting while the awaited hands take the whole ceiling."""
    h = harness
    start = h.timing.now()
    seen = await saturated(h)
    groups = [chat for chat in seen if chat < 0]
    assert len(groups) == TABLES
    for chat in groups:
        times = seen[chat]
        assert times[0] - start <= OVERDUE + TABLES / 5 + 2, (chat, times)
        gaps = [b - a for a, b in pairwise(times)]
        assert gaps and max(gaps) <= 8.0, (chat, times)
        assert times[-1] >= start + RUN - 8.0, (chat, times)


async def test_at_the_bots_ceiling_the_awaited_hands_keep_the_rest(harness: BotHarness) -> None:
    """The tables take 5 of each second's calls at most while hands wait; the awaited hands
    get the rest (about 24 of the 29 or so a second that the bot's window, with its margin
    for Telegram's clock, allows)."""
    h = harness
    seen = await saturated(h)
    first = min(t for times in seen.values() for t in times)
    seconds = range(2, int(RUN) - 2)  # whole seconds, past the first burst
    hands = 0
    for second in seconds:
        a, b = first + second, first + second + 1
        tables = sum(1 for chat, times in seen.items() if chat < 0 for t in times if a <= t < b)
        hands += sum(1 for chat, times in seen.items() if chat > 0 for t in times if a <= t < b)
        assert tables <= 5, (second, tables)
    assert hands >= 23 * len(seconds), hands


async def test_a_table_that_has_not_waited_long_goes_after_the_awaited_hands(
    harness: BotHarness,
) -> None:
    """A burst of awaited hands (45: a second and a half of the ceiling) goes before a table
    changed at the same moment: nothing is kept for a table that waited less than
    `OVERDUE`."""
    h = harness
    players = [h.user(100 + n, f"P{n}") for n in range(45)]
    for user in players:
        await h.send(user.start_private())
    group = h.fake.group(-5000, "Club", admins={players[0]})
    h.fake.clear_calls()
    seen: list[int] = []
    h.fake.watch(lambda message, _: seen.append(message.chat_id))
    sender = h.rooms.sender
    for user in players:
        sender.put(("hand", user.id), user.id, Rendered("your turn"), priority=Priority.AWAITED)
    sender.put(("table", group.id), group.id, Rendered("table"), priority=Priority.TABLE)
    await h.settle()
    assert seen[-1] == group.id and len(seen) == 46
    assert h.fake.flooded == []


@pytest.fixture
async def less_for_tables(tmp_path: Path) -> AsyncIterator[BotHarness]:
    """A bot with TABLE_SENDS=2 (of its 30 a second)."""
    h = BotHarness(
        fake=(fake := FakeTelegram(token=TOKEN)),
        db_path=tmp_path / "durak.sqlite3",
        clock=ManualClock(),
        settings=make_settings(tmp_path / "durak.sqlite3", table_sends=2),
    )
    fake.enforce(clock=h.timing.now)
    await h.start()
    try:
        yield h
    finally:
        await h.stop()


async def test_table_sends_sets_the_tables_share(less_for_tables: BotHarness) -> None:
    """With 2 of the 30 kept for them, the 30 overdue tables get 2 calls a second, not 5:
    each is edited every 15 s or so, and the hands take the rest."""
    seen = await saturated(less_for_tables)
    first = min(t for times in seen.values() for t in times)
    for second in range(2, int(RUN) - 2):
        a, b = first + second, first + second + 1
        assert sum(1 for c, times in seen.items() if c < 0 for t in times if a <= t < b) <= 2
    groups = [chat for chat in seen if chat < 0]
    assert len(groups) == TABLES  # each in its turn: overdue after 5 s, then 15 s for all
    assert all(seen[chat][0] <= first + OVERDUE + TABLES / 2 + 2 for chat in groups), seen
