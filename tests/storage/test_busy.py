"""Two connections (as two processes would have) on one file: waiting for the write lock."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from storage import Database, DatabaseBusy

from .conftest import lobby_record


async def _hold_write_lock(db: Database, held: asyncio.Event, release: asyncio.Event) -> None:
    async with db.transaction() as tx:
        await tx.games.create(record=lobby_record(-1))
        held.set()
        await release.wait()


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
