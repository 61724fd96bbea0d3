"""The send ledger (#20): several workers on one database keep to Telegram's limits
together. Each claim is checked against every worker's calls into the chat, the bot's
ceiling over all chats, and a 429 pause any worker met."""

from __future__ import annotations

import asyncio

import pytest

from bot.delivery.budget import Limits, Window
from bot.delivery.ledger import Ledger
from storage import Database
from storage.sends import HOLD, STALE, Screen, SendWindow
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


async def shown(db: Database, screen: Screen, now: float, chat_id: int = 7) -> float:
    async with db.transaction() as tx:
        [wait] = await tx.sends.claim_many(
            [(chat_id, SendWindow(30, 3.0))], bot=BOT, now=now, screens=[screen]
        )
        return wait


async def test_an_older_version_of_a_message_is_refused_once_a_newer_one_went(
    db: Database,
) -> None:
    """Two workers, each with content for one table: the one that rendered the game's
    newer state sent it first; the slower worker's older content would overwrite it, so
    the ledger refuses it (`STALE`). The same or a newer version still goes."""
    assert await shown(db, Screen("table:5", version=8), 100.0) == 0.0
    async with db.transaction() as tx:
        await tx.sends.answered([(7, 100.0, 100.1)], [("table:5", 100.0, 100.1)])
    assert await shown(db, Screen("table:5", version=7), 101.0) == STALE
    assert await shown(db, Screen("table:6", version=7), 101.0) == 0.0  # another message
    assert await shown(db, Screen("table:5", version=8), 101.5) == 0.0
    async with db.transaction() as tx:
        await tx.sends.answered([(7, 101.5, 101.6)], [("table:5", 101.5, 101.6)])
    assert await shown(db, Screen("table:5", version=9), 102.0) == 0.0


async def test_a_call_into_a_message_waits_while_another_workers_call_is_on_its_way(
    db: Database,
) -> None:
    """Two edits of one message in flight at once could arrive in either order: the second
    claim waits until the first is answered (or, its worker dead, `HOLD` has passed)."""
    assert await shown(db, Screen("hand:5:p1", version=3), 200.0, chat_id=11) == 0.0
    wait = await shown(db, Screen("hand:5:p1", version=4), 200.05, chat_id=11)
    assert 0.0 < wait <= 0.1
    assert await shown(db, Screen("hand:5:p1", version=4), 200.0 + HOLD, chat_id=11) == 0.0
    async with db.transaction() as tx:  # the first one's answer comes late: no matter
        await tx.sends.answered([(11, 200.0, 210.5)], [("hand:5:p1", 200.0, 210.5)])
    assert await shown(db, Screen("hand:5:p1", version=3), 211.0, chat_id=11) == STALE


async def test_a_tables_interval_holds_whichever_worker_sent_it_last(db: Database) -> None:
    """A table is edited at most every 3 s (its `gap`): a worker that did not send the last
    edit waits out the rest of that interval too, counted from the last edit's answer."""
    table = Screen("table:9", version=1, gap=3.0)
    assert await shown(db, table, 300.0) == 0.0
    async with db.transaction() as tx:
        await tx.sends.answered([(7, 300.0, 300.5)], [("table:9", 300.0, 300.5)])
    assert await shown(db, Screen("table:9", version=2, gap=3.0), 301.5) == pytest.approx(2.0)
    assert await shown(db, Screen("table:9", version=2, gap=3.0), 303.5) == 0.0


async def test_a_messages_call_is_no_longer_in_flight_once_answered_whatever_came_between(
    db: Database,
) -> None:
    """A worker's call into a kept message, with another call of its own into the same chat
    answered in between (the outbox sending a message anew, a warning): the message's call
    is answered all the same, and another worker's next claim for it is not held back."""
    now = [500.0]
    limits = Limits(private=Window(30, 3.0), bot=Window(1000, 1.0))
    ours = Ledger(db, limits, clock=lambda: now[0])
    theirs = Ledger(db, limits, clock=lambda: now[0])
    assert await ours.claim(7, screen=Screen("hand:1:p1", 1)) == 0.0
    now[0] = 500.1
    assert await ours.claim(7) == 0.0  # the outbox's own call into the chat meanwhile
    now[0] = 500.2
    ours.answered(7)  # that one is answered first
    ours.answered(7, screen="hand:1:p1")
    assert await ours.claim(8) == 0.0  # (the answers go with this claim's transaction)
    assert await theirs.claim(7, screen=Screen("hand:1:p1", 2)) == 0.0
