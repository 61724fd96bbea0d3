"""Several workers sending into one chat keep to its limit together (#20): each counted
call is claimed in the send ledger on PostgreSQL (`bot.delivery.ledger`), which counts every
worker's calls. Two workers' senders here, each with its own count, into one private chat
against the fake Bot API enforcing Telegram's limit: no 429, and every message arrives.

On a wall clock with the limit scaled down (3 calls in 0.3 s rather than 3 s), so that the
test takes about a second: the ledger's claims are database round trips, which the virtual
clock of the other bot tests would jump across.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest

from bot.delivery import Outbox, Priority, Sender
from bot.delivery.budget import Budgets, Limits, Window
from bot.delivery.ledger import Ledger
from bot.render import Rendered
from storage import Database
from tests import postgres
from tests.bot.conftest import BotHarness
from tests.fakes import telegram as fake_api

pytestmark = pytest.mark.postgres

LIMITS = Limits(private=Window(3, 0.3))


@contextlib.asynccontextmanager
async def two_senders(h: BotHarness, url: str) -> AsyncIterator[list[Sender]]:
    """Two workers' senders: each its own count and its own pool, one ledger database."""
    workers = [await Database.open(url) for _ in range(2)]
    senders: list[Sender] = []
    try:
        for db in workers:
            out = Outbox(h.app.bot, Budgets(LIMITS))
            out.ledger = Ledger(db, LIMITS, clock=time.monotonic)
            senders.append(Sender(out, out.budgets))
        yield senders
    finally:
        for sender in senders:
            await sender.close()
        for db in workers:
            await db.close()


async def two_workers_send(h: BotHarness, url: str, chat_id: int) -> None:
    async with two_senders(h, url) as senders:
        for n in range(12):
            senders[n % 2].put(("m", n), chat_id, Rendered(f"message {n}"), priority=Priority.ONCE)
        await asyncio.gather(*(sender.settled() for sender in senders))


async def test_two_workers_sending_into_one_chat_keep_its_limit_together(
    harness: BotHarness, pg_server: postgres.PostgresServer
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    await h.send(alice.start_private())
    h.fake.clear_calls()
    h.fake.enforce(fake_api.Limits(private=fake_api.Window(3, 0.3)), clock=time.monotonic)
    async with postgres.fresh_database(pg_server) as url:
        await two_workers_send(h, url, alice.id)
    texts = sorted(c.params["text"] for c in h.fake.calls_for("sendMessage"))
    assert texts == sorted(f"message {n}" for n in range(12))
    assert h.fake.flooded == []


async def test_a_unit_of_work_holding_the_last_pool_connection_can_still_claim_a_send(
    pg_server: postgres.PostgresServer,
) -> None:
    """A unit of work holds its chat's lock on a pool connection and may wait for a send it
    makes (an answer, a reply), which the ledger claims first: with every connection held by
    such units, a claim that needed one of the pool would wait for ever (seen: twelve
    /newgame at once on a pool of ten stalled). The ledger has a connection of its own."""
    async with postgres.fresh_database(pg_server) as url:
        db = await Database.open(url + ("&" if "?" in url else "?") + "pool_max=1")
        try:
            ledger = Ledger(db, LIMITS, clock=time.monotonic)
            async with db.chat_lock(-1001), asyncio.timeout(30):
                assert await ledger.claim(7) == 0.0
                ledger.answered(7)
                assert await ledger.claim(7) == 0.0
        finally:
            await db.close()


async def test_a_slow_workers_older_content_never_overwrites_a_newer_one(
    harness: BotHarness, pg_server: postgres.PostgresServer
) -> None:
    """Two workers hold content for one message (a hand): the second rendered the game's
    newer state and sent it first; the first, slow to send, would overwrite it with the
    older state. The ledger refuses the older version: the player keeps seeing the newer
    one, and the slow worker hears that its content was superseded."""
    h = harness
    alice = h.user(1, "Alice")
    await h.send(alice.start_private())
    h.fake.enforce(fake_api.Limits(private=fake_api.Window(3, 0.3)), clock=time.monotonic)
    async with postgres.fresh_database(pg_server) as url, two_senders(h, url) as senders:
        slow, quick = senders
        heard: list[BaseException] = []
        key = ("hand", 5, "p1")
        slow.put(key, alice.id, Rendered("move 1"), priority=Priority.AWAITED, version=1)
        await slow.settled()
        mid = h.fake.last_message(alice.id).message_id
        quick.put(
            key,
            alice.id,
            Rendered("move 3"),
            priority=Priority.AWAITED,
            message_id=mid,
            version=3,
        )
        await quick.settled()
        slow.put(
            key,
            alice.id,
            Rendered("move 2"),
            priority=Priority.AWAITED,
            version=2,
            on_failed=lambda error, _: heard.append(error),
        )
        await slow.settled()
    assert h.fake.message(alice.id, mid).text == "move 3"
    assert slow.superseded == 1
    assert [type(error).__name__ for error in heard] == ["Superseded"]
