"""Several workers on one PostgreSQL database (#20): each worker's `GameStore` gives a unit of
work the chat's game as currently stored, under a lock that holds across the workers.

Two stores here, each on a `Database` of its own (as two processes would have), on one
PostgreSQL database: units of work on one chat take turns, each sees what the other stored
(no `Conflict`, no stale copy), a game the other ended is gone, a player's running games are
found whichever worker plays them, and many chats at once cannot empty a pool of two.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from bot.kit import Kit, Person
from bot.store import GameStore
from storage import Database
from storage.postgres import chat_lock_key
from tests import postgres
from tests.bot.conftest import ManualClock, make_settings
from tests.storage.conftest import lobby_record, running_record
from tests.storage.test_chat_locks import WAIT, until_waiting

pytestmark = pytest.mark.postgres

CHAT = -100


def store_on(db: Database, tmp_path: Path) -> GameStore:
    """A worker's store: what a unit of work needs of the kit is its database, settings and
    clock (nothing here sends to Telegram)."""
    kit = Kit(
        db=db,
        out=cast(Any, None),
        tr=cast(Any, None),
        settings=make_settings(tmp_path / "unused.sqlite3"),
        bot_username="durak_test_bot",
        clock=ManualClock(),
        seeds=lambda: 1,
    )
    return GameStore(kit)


@pytest.fixture
async def pg_url(pg_server: postgres.PostgresServer) -> AsyncIterator[str]:
    async with postgres.fresh_database(pg_server) as url:
        yield url


@pytest.fixture
async def stores(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[GameStore, GameStore]]:
    a, b = await Database.open(pg_url), await Database.open(pg_url)
    try:
        yield store_on(a, tmp_path), store_on(b, tmp_path)
    finally:
        await b.close()
        await a.close()


async def test_each_worker_sees_what_the_other_stored(
    stores: tuple[GameStore, GameStore],
) -> None:
    a, b = stores
    assert a.shared and b.shared
    created = await a.create(lobby_record(CHAT, 1, 2))
    async with a.for_chat(CHAT) as unit:
        assert unit.record is created  # A's live copy, still the stored one
        created.lobby.message_id = 1001
        await a.save(created)
    async with b.for_chat(CHAT) as unit:  # B never had it: loaded
        record = unit.record
        assert record is not None and record.lobby.message_id == 1001
        record.lobby.message_id = 1002
        await b.save(record)
    async with a.for_chat(CHAT) as unit:  # A's copy is stale now: loaded again
        again = unit.record
        assert again is not None and again is not created
        assert again.lobby.message_id == 1002 and again.version == record.version
        again.lobby.message_id = 1003
        await a.save(again)  # no Conflict
    async with b.for_chat(CHAT) as unit:
        assert unit.record is not None
        await b.close_game(unit.record)
    async with a.for_chat(CHAT) as unit:  # ended by B: A's copy is dropped
        assert unit.record is None
    assert a.live(CHAT) is None


async def test_a_second_worker_waits_for_the_first_ones_unit_of_work(
    stores: tuple[GameStore, GameStore], pg_url: str
) -> None:
    a, b = stores
    await a.create(lobby_record(CHAT, 1, 2))
    inside = asyncio.Event()

    async def unit_on_b() -> int | None:
        async with b.for_chat(CHAT) as unit:
            inside.set()
            return unit.record.lobby.message_id if unit.record else None

    async with a.for_chat(CHAT) as unit:
        assert unit.record is not None
        waiting = asyncio.create_task(unit_on_b())
        await until_waiting(pg_url, chat_lock_key(CHAT) & 0xFFFF_FFFF_FFFF_FFFF)
        assert not inside.is_set()
        unit.record.lobby.message_id = 2001
        await a.save(unit.record)
    assert await asyncio.wait_for(waiting, WAIT) == 2001


async def test_a_players_running_games_are_found_whichever_worker_plays_them(
    stores: tuple[GameStore, GameStore],
) -> None:
    a, b = stores
    first = await a.create(running_record(-100, 1, 2))
    second = await b.create(running_record(-200, 3, 1))
    await a.create(lobby_record(-300, 1, 4))
    alice = Person(user_id=1, name="Alice")
    for store in (a, b):
        assert [r.id for r in await store.running_games_of(alice)] == [first.id, second.id]
    assert await a.running_games_of(Person(user_id=4, name="Dan")) == []


async def test_many_chats_at_once_on_two_workers_cannot_empty_a_pool_of_two(
    pg_url: str, tmp_path: Path
) -> None:
    url = f"{pg_url}?pool_max=2"
    dbs = [await Database.open(url), await Database.open(url)]
    try:
        workers = [store_on(db, tmp_path) for db in dbs]
        chats = list(range(-100, -130, -1))
        for chat_id in chats:
            await workers[0].create(lobby_record(chat_id, 1, 2))

        async def tap(store: GameStore, chat_id: int) -> None:
            async with store.for_chat(chat_id) as unit:
                assert unit.record is not None
                unit.record.lobby.message_id = (unit.record.lobby.message_id or 0) + 1
                await store.save(unit.record)
                assert [r.chat_id for r in await store.running_games_of(Person(9, "Nobody"))] == []

        taps = [tap(workers[n % 2], chat_id) for n in range(6) for chat_id in chats]
        await asyncio.wait_for(asyncio.gather(*taps), WAIT)
        for chat_id in chats:
            record = await workers[1].stored(chat_id)
            assert record is not None and record.lobby.message_id == 77 + 6
    finally:
        for db in dbs:
            await db.close()
