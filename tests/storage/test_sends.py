"""The send ledger (#20): several workers on one database keep to Telegram's limits
together. Each claim is checked against every worker's calls into the chat, the bot's
ceiling over all chats, and a 429 pause any worker met."""

from __future__ import annotations

import asyncio

import pytest

from storage import Database
from storage.sends import SendWindow
from tests import postgres

PRIVATE = SendWindow(3, 3.0)  # as Telegram: about one a second, a burst of three
BOT = SendWindow(30, 1.0)


async def claim(db: Database, chat_id: int, now: float, bot: SendWindow = BOT) -> float:
    async with db.transaction() as tx:
        return await tx.sends.claim(chat_id=chat_id, chat=PRIVATE, bot=bot, now=now)


async def test_a_chats_window_admits_its_count_then_says_how_long_to_wait(db: Database) -> None:
    assert [await claim(db, 7, 100.0 + n * 0.1) for n in range(3)] == [0.0, 0.0, 0.0]
    # The fourth call in 3 s waits until the first leaves the window: at 103.0.
    assert await claim(db, 7, 100.5) == pytest.approx(2.5)
    assert await claim(db, 8, 100.5) == 0.0  # another chat has its own window
    assert await claim(db, 7, 103.0) == 0.0


async def test_the_bots_ceiling_counts_the_calls_into_every_chat(db: Database) -> None:
    bot = SendWindow(4, 1.0)
    assert [await claim(db, chat, 50.0, bot) for chat in (1, 2, 3, 4)] == [0.0] * 4
    assert await claim(db, 5, 50.2, bot) == pytest.approx(0.8)


async def test_a_429_that_one_worker_met_holds_back_every_worker(db: Database) -> None:
    async with db.transaction() as tx:
        await tx.sends.pause(chat_id=7, until=110.0)
        await tx.sends.pause(chat_id=7, until=105.0)  # an earlier end does not shorten it
    assert await claim(db, 7, 100.0) == pytest.approx(10.0)
    assert await claim(db, 7, 110.0) == 0.0


@pytest.mark.postgres
async def test_workers_claiming_at_once_never_go_over_a_window_together(
    pg_server: postgres.PostgresServer,
) -> None:
    """Three workers (three pools on one PostgreSQL) claim 20 calls into one chat at the
    same moment: the chat's window of three admits exactly three of them."""
    async with postgres.fresh_database(pg_server) as url:
        await several_workers_claim(url)


async def several_workers_claim(url: str) -> None:
    workers = [await Database.open(url) for _ in range(3)]
    try:
        waits = await asyncio.gather(*(claim(workers[n % 3], 9, 200.0) for n in range(20)))
    finally:
        for db in workers:
            await db.close()
    assert sorted(waits)[:4] == [0.0, 0.0, 0.0, pytest.approx(3.0)]
    assert sum(1 for w in waits if w == 0.0) == 3
