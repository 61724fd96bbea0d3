"""Due work (#20): every save stores when the game is next due (`GameRecord.due_at`), and a
worker claims what is due with `GameRepository.claim_due`: each game to one claimer, its due
time pushed to the claim's lease, its version kept; on PostgreSQL two claimers at once take
different games. `Database.shared` tells the bot whether it must look there at all."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from storage import Database
from tests import postgres
from tests.storage.conftest import T0, lobby_record, running_record


async def test_the_due_time_is_stored_with_every_save(db: Database) -> None:
    record = running_record(-100)
    record.due_at = T0 + timedelta(seconds=45)
    async with db.transaction() as tx:
        record = await tx.games.create(record=record)
    record.due_at = T0 + timedelta(seconds=60)
    record.version = await db.save_game(record)
    async with db.transaction(readonly=True) as tx:
        stored = await tx.games.get(game_id=record.id or 0)
        assert stored.due_at == T0 + timedelta(seconds=60)
        assert await tx.games.next_due() == T0 + timedelta(seconds=60)


async def test_a_due_game_is_claimed_once_until_its_lease_runs_out(db: Database) -> None:
    early, late, never = running_record(-101), lobby_record(-102), running_record(-103)
    early.due_at, late.due_at, never.due_at = T0, T0 + timedelta(seconds=30), None
    async with db.transaction() as tx:
        early = await tx.games.create(record=early)
        late = await tx.games.create(record=late)
        await tx.games.create(record=never)
    lease = T0 + timedelta(seconds=15)
    async with db.transaction() as tx:
        assert await tx.games.claim_due(now=T0 - timedelta(seconds=1), until=lease, limit=9) == []
        claimed = await tx.games.claim_due(now=T0, until=lease, limit=9)
        assert claimed == [(-101, early.version, False)]
        assert await tx.games.claim_due(now=T0, until=lease, limit=9) == []  # claimed already
        assert await tx.games.next_due() == lease
    async with db.transaction() as tx:
        claimed = await tx.games.claim_due(now=T0 + timedelta(seconds=30), until=T0, limit=9)
        # the lease is over
        assert sorted(claimed) == [(-102, late.version, False), (-101, early.version, False)]
        stored = await tx.games.get(game_id=early.id or 0)
        assert stored.version == early.version  # a claim makes no copy stale


async def test_two_claimers_at_once_never_get_the_same_game(db: Database) -> None:
    for chat_id in range(-120, -100):
        record = running_record(chat_id)
        record.due_at = T0
        async with db.transaction() as tx:
            await tx.games.create(record=record)

    async def claim() -> list[tuple[int, int, bool]]:
        async with db.transaction() as tx:
            return await tx.games.claim_due(now=T0, until=T0 + timedelta(minutes=1), limit=7)

    rounds = await asyncio.gather(*(claim() for _ in range(4)))
    chats = [chat for claimed in rounds for chat, _, _ in claimed]
    assert sorted(chats) == list(range(-120, -100))  # every one, each once


async def test_only_postgresql_is_shared_by_several_workers(db: Database) -> None:
    assert db.shared == (db.url.scheme == "postgresql")
    assert await db.try_lead()  # alone here: the leader


@pytest.mark.postgres
async def test_one_worker_leads_until_it_closes_then_another(
    pg_server: postgres.PostgresServer,
) -> None:
    async with postgres.fresh_database(pg_server) as url:
        first, second = await Database.open(url), await Database.open(url)
        try:
            assert await first.try_lead()
            assert not await second.try_lead()
            assert await first.try_lead()  # still
            await first.close()  # (or its process died: the server ends its session)
            assert await second.try_lead()
        finally:
            await first.close()
            await second.close()


async def test_a_table_not_drawn_in_time_is_due_until_a_worker_draws_it(db: Database) -> None:
    """A worker that died with its table edit pending: the save that changed the game stored
    when to redraw (`redraw_at`); until some worker marks that state's table drawn, the game
    is due then (leased like any due work), and once drawn it is not."""
    record = running_record(-130)
    record.redraw_at = T0 + timedelta(seconds=20)
    async with db.transaction() as tx:
        record = await tx.games.create(record=record)
    assert record.state_version == 1
    lease = T0 + timedelta(seconds=35)
    async with db.transaction() as tx:
        assert await tx.games.next_due() == T0 + timedelta(seconds=20)
        assert await tx.games.claim_due(now=T0, until=lease, limit=9) == []
        claimed = await tx.games.claim_due(now=T0 + timedelta(seconds=20), until=lease, limit=9)
        assert claimed == [(-130, record.version, True)]
        assert await tx.games.next_due() == lease  # leased, not forgotten
        await tx.games.drawn([(record.id or 0, record.version)])
        assert await tx.games.next_due() is None  # drawn: nothing due
        assert await tx.games.claim_due(now=lease, until=lease, limit=9) == []
    # The game changes again: its new state is to be drawn.
    record.state_version = record.version + 1
    record.redraw_at = T0 + timedelta(seconds=60)
    record.version = await db.save_game(record)
    async with db.transaction() as tx:
        assert await tx.games.next_due() == T0 + timedelta(seconds=60)
        await tx.games.drawn([(record.id or 0, record.version - 1)])  # an older table
        assert await tx.games.next_due() == T0 + timedelta(seconds=60)
        await tx.games.drawn([(record.id or 0, record.version)])
        assert await tx.games.next_due() is None
