"""The send ledger (#20): several workers on one database keep to Telegram's limits
together. Each claim is checked against every worker's calls into the chat, the bot's
ceiling over all chats, and a 429 pause any worker met."""

from __future__ import annotations

import asyncio

import pytest

from bot.delivery.budget import Limits, Window
from bot.delivery.ledger import Ledger
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


async def test_a_batch_of_claims_counts_its_own_claims_in_turn(db: Database) -> None:
    """Claims that go together in one transaction (`claim_many`, the ledger's batches) are
    judged one after another, each seeing the ones before it."""
    bot = SendWindow(5, 1.0)
    claims = [(7, PRIVATE)] * 4 + [(8, PRIVATE)] * 3
    async with db.transaction() as tx:
        waits = await tx.sends.claim_many(claims, bot=bot, now=300.0)
    # chat 7: three in its window, the fourth waits 3 s; chat 8: the bot's five are used up
    assert waits == [0.0, 0.0, 0.0, pytest.approx(3.0), 0.0, 0.0, pytest.approx(1.0)]
    assert await claim(db, 9, 300.5, bot) == pytest.approx(0.5)


async def test_the_ledger_claims_many_calls_at_once_in_a_few_transactions(db: Database) -> None:
    """A sender that wants a hundred calls at once (a busy moment of many games) is not
    held to one transaction per call: the claims that wait meanwhile go together, and the
    windows hold as if they had gone one by one."""
    ledger = Ledger(db, Limits(private=Window(3, 3.0), bot=Window(1000, 1.0)), clock=lambda: 400.0)
    waits = await asyncio.gather(*(ledger.claim(1000 + n % 20) for n in range(100)))
    assert sum(1 for wait in waits if wait == 0.0) == 20 * 3  # three per chat, no more
    assert ledger.transactions <= 3


async def test_a_call_counts_from_its_answer_once_the_worker_says_so(db: Database) -> None:
    """A worker's call can reach Telegram well after its claim (a busy process): once its
    answer came, it counts in the chat's window from then, for every worker."""
    assert [await claim(db, 7, 100.0 + n * 0.1) for n in range(3)] == [0.0, 0.0, 0.0]
    async with db.transaction() as tx:
        await tx.sends.answered([(7, 100.0, 100.9)])
    assert await claim(db, 7, 103.15) == 0.0  # the second has left the window
    assert await claim(db, 7, 103.21) == 0.0  # the third too
    assert await claim(db, 7, 103.22) == pytest.approx(0.68)  # the first counts until 103.9
