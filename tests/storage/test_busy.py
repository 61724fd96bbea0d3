"""Two connections (as two processes would have) on one file: waiting for the write lock."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from storage import Database, DatabaseBusy, Player

from .conftest import lobby_record


async def _hold_write_lock(db: Database, held: asyncio.Event, release: asyncio.Event) -> None:
    async with db.transaction() as tx:
        await tx.games.create(record=lobby_record(-1))
        held.set()
        await release.wait()


@pytest.mark.sqlite_only(reason="SQLite's single writer: one write lock for the whole file")
async def test_writer_waits_for_the_other_connection(db_url: str) -> None:
    async with Database.connect(db_url) as one, Database.connect(db_url) as two:
        held, release = asyncio.Event(), asyncio.Event()
        holder = asyncio.create_task(_hold_write_lock(one, held, release))
        await held.wait()

        async def second_writer() -> int:
            async with two.transaction() as tx:
                return len(await tx.games.all_active())

        waiter = asyncio.create_task(second_writer())
        await asyncio.sleep(0.05)
        assert not waiter.done()  # the event loop kept running while it waited
        release.set()
        await holder
        assert await waiter == 1  # it began after the other transaction committed


@pytest.mark.sqlite_only(reason="SQLite's single writer: one write lock for the whole file")
async def test_busy_timeout_raises_database_busy(db_path: Path, executor: str) -> None:
    url = f"sqlite:///{db_path}?executor={executor}"
    async with (
        Database.connect(url) as one,
        Database.connect(url + "&busy_timeout=100") as two,
    ):
        held, release = asyncio.Event(), asyncio.Event()
        holder = asyncio.create_task(_hold_write_lock(one, held, release))
        await held.wait()

        async def second_writer() -> None:
            async with two.transaction() as tx:
                await tx.games.all_active()

        started = time.monotonic()
        with pytest.raises(DatabaseBusy, match="100 ms"):
            await second_writer()
        assert time.monotonic() - started >= 0.1
        release.set()
        await holder
        async with two.transaction() as tx:  # usable again afterwards
            assert len(await tx.games.all_active()) == 1


async def test_readers_do_not_wait_for_writers(db_url: str) -> None:
    async with Database.connect(db_url) as one, Database.connect(db_url) as two:
        held, release = asyncio.Event(), asyncio.Event()
        holder = asyncio.create_task(_hold_write_lock(one, held, release))
        await held.wait()
        async with two.transaction(readonly=True) as tx:
            assert await tx.games.all_active() == []  # WAL: sees the last commit, no waiting
        release.set()
        await holder


@pytest.mark.sqlite_only(reason="SQLite's single writer: one write lock for the whole file")
async def test_save_game_waits_for_another_writer_or_gives_up_as_a_transaction(
    db_path: Path, executor: str
) -> None:
    """The bot's one-statement save under another process's write lock: it waits (the event
    loop runs meanwhile) and saves once the lock is free; held past the busy timeout, it is
    `DatabaseBusy` and writes nothing."""
    url = f"sqlite:///{db_path}?executor={executor}"
    async with (
        Database.connect(url) as one,
        Database.connect(url + "&busy_timeout=300") as two,
    ):
        async with two.transaction() as tx:
            record = await tx.games.create(record=lobby_record(-2))
        record.table_message_id = 99
        held, release = asyncio.Event(), asyncio.Event()
        holder = asyncio.create_task(_hold_write_lock(one, held, release))
        await held.wait()
        saving = asyncio.create_task(two.save_game(record))
        await asyncio.sleep(0.05)
        assert not saving.done()
        release.set()
        await holder
        assert await saving == 2

        held.clear()
        release.clear()

        async def hold_again() -> None:  # chat -1 has its lobby now: another write
            async with one.transaction() as tx:
                await tx.players.upsert(player=Player(user_id=7, name="Holder"))
                held.set()
                await release.wait()

        holder = asyncio.create_task(hold_again())
        await held.wait()
        record.version, record.table_message_id = 2, 100
        with pytest.raises(DatabaseBusy):
            await two.save_game(record)
        release.set()
        await holder
        async with two.transaction(readonly=True) as tx:
            stored = await tx.games.get(game_id=record.id or 0)
        assert (stored.table_message_id, stored.version) == (99, 2)
