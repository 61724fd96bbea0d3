"""A chat's lock for a unit of work, and the queries that tell a worker whether its copy of
a game is current (#20).

On every backend: `Database.chat_lock` serialises units of work on one chat, `games.current`
names the chat's active game and its version, `games.running_with` finds a player's running
games. On PostgreSQL, with two `Database` objects on one database as two workers would have:
the lock holds across them, is released when its holder's connection drops, keeps apart from
the named advisory locks, and cannot empty a small pool however many chats are busy at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from storage import Database, DatabaseBusy, DatabaseUnreachable
from storage.postgres import chat_lock_key
from storage.repositories import RESULTS_LOCK
from storage.schema import MIGRATION_LOCK
from storage.sends import SEND_LOCK, SendWindow
from tests import postgres

from .conftest import lobby_record, result, running_record

WAIT = 20.0  # seconds a test waits for what must happen well before (a hang fails the test)


# ---------------------------------------------------------------- every backend


async def test_current_names_the_active_game_and_its_version(db: Database) -> None:
    async with db.transaction() as tx:
        assert await tx.games.current(chat_id=-100) is None
        lobby = await tx.games.create(record=lobby_record(-100))
        assert await tx.games.current(chat_id=-100) == (lobby.id, 1)
    lobby.lobby.message_id = 78
    lobby.version = await db.save_game(lobby)
    async with db.transaction(readonly=True) as tx:
        assert await tx.games.current(chat_id=-100) == (lobby.id, 2)
    assert await db.current_game(-100) == (lobby.id, 2)  # the same, as one statement
    lobby.status = "cancelled"
    await db.save_game(lobby)
    async with db.transaction(readonly=True) as tx:
        assert await tx.games.current(chat_id=-100) is None  # ended: no active game
    assert await db.current_game(-100) is None


async def test_running_with_finds_the_games_a_player_has_a_seat_in(db: Database) -> None:
    async with db.transaction() as tx:
        first = await tx.games.create(record=running_record(-100, 1, 2, 3))
        second = await tx.games.create(record=running_record(-200, 3, 12, 21))
        await tx.games.create(record=lobby_record(-300, 1, 4))  # a lobby: not running
        await tx.games.create(record=running_record(-400, 110, 211))  # "1" inside other ids
    async with db.transaction(readonly=True) as tx:
        assert [r.id for r in await tx.games.running_with(player_id="3")] == [first.id, second.id]
        assert [r.id for r in await tx.games.running_with(player_id="1")] == [first.id]
        assert [r.chat_id for r in await tx.games.running_with(player_id="12")] == [-200]
        assert await tx.games.running_with(player_id="5") == []
        assert await tx.games.running_with(player_id="%") == []
        found = (await tx.games.running_with(player_id="2"))[0]
    assert found.game is not None and list(found.game.players) == [
        "1",
        "2",
        "3",
    ]  # the whole record


async def test_units_of_work_on_one_chat_run_one_after_the_other(db: Database) -> None:
    order: list[str] = []
    holding, release = asyncio.Event(), asyncio.Event()

    async def unit(name: str) -> None:
        async with db.chat_lock(-100):
            order.append(f"{name} in")
            if name == "first":
                holding.set()
                await release.wait()
            order.append(f"{name} out")

    first = asyncio.create_task(unit("first"))
    await asyncio.wait_for(holding.wait(), WAIT)
    second = asyncio.create_task(unit("second"))
    other = asyncio.create_task(_locked_once(db, -200))  # another chat does not wait
    await asyncio.wait_for(other, WAIT)
    assert order == ["first in"]
    release.set()
    await asyncio.wait_for(asyncio.gather(first, second), WAIT)
    assert order == ["first in", "first out", "second in", "second out"]


async def _locked_once(db: Database, chat_id: int) -> None:
    async with db.chat_lock(chat_id), db.transaction(readonly=True) as tx:
        await tx.games.current(chat_id=chat_id)


# ---------------------------------------------------------------- PostgreSQL: two workers


@pytest.fixture
async def pg_url(pg_server: postgres.PostgresServer) -> AsyncIterator[str]:
    async with postgres.fresh_database(pg_server) as url:
        yield url


@pytest.fixture
async def workers(pg_url: str) -> AsyncIterator[tuple[Database, Database]]:
    """Two workers' databases on one PostgreSQL database."""
    a = await Database.open(pg_url)
    b = await Database.open(pg_url)
    try:
        yield a, b
    finally:
        await b.close()
        await a.close()


async def advisory_locks(url: str, *, granted: bool) -> list[tuple[int, int]]:
    """The server's advisory locks (granted, or waited for) as (key, backend pid)."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT ((classid::bigint << 32) | objid::bigint) AS key, pid FROM pg_locks "
            "WHERE locktype = 'advisory' AND objsubid = 1 AND granted = $1",
            granted,
        )
    finally:
        await conn.close()
    return [(int(row["key"]), int(row["pid"])) for row in rows]


async def until_waiting(url: str, key: int) -> None:
    """Until a session waits on the server for advisory lock ``key``: what the test looks
    at is the other worker's state on the server, which only the server can tell."""
    async with asyncio.timeout(WAIT):
        # Another process's state: no event crosses processes, so the server is asked.
        while not any(k == key for k, _ in await advisory_locks(url, granted=False)):  # noqa: ASYNC110
            await asyncio.sleep(0.01)


def _unsigned(key: int) -> int:
    return key & 0xFFFF_FFFF_FFFF_FFFF


@pytest.mark.postgres
async def test_a_second_worker_waits_for_the_chat_and_then_sees_the_first_ones_commit(
    workers: tuple[Database, Database], pg_url: str
) -> None:
    a, b = workers
    async with a.transaction() as tx:
        created = await tx.games.create(record=running_record(-100))
    entered = asyncio.Event()

    async def worker_b() -> tuple[int, int] | None:
        async with b.chat_lock(-100):
            entered.set()
            async with b.transaction() as tx:
                seen = await tx.games.current(chat_id=-100)
                record = await tx.games.active_for_chat(chat_id=-100)
                await tx.games.save(record=record, expected_version=record.version)  # no Conflict
            return seen

    async with a.chat_lock(-100):
        async with a.transaction(readonly=True) as tx:
            record = await tx.games.active_for_chat(chat_id=-100)
        waiting = asyncio.create_task(worker_b())
        await until_waiting(pg_url, _unsigned(chat_lock_key(-100)))
        assert not entered.is_set()
        record.deadline = None
        version = await a.save_game(record)
    assert await asyncio.wait_for(waiting, WAIT) == (created.id, version)
    async with a.transaction(readonly=True) as tx:
        assert await tx.games.current(chat_id=-100) == (created.id, version + 1)


@pytest.mark.postgres
async def test_the_lock_of_a_worker_that_died_is_released_by_the_server(
    workers: tuple[Database, Database], pg_url: str
) -> None:
    a, b = workers
    key = _unsigned(chat_lock_key(-100))
    admin = await asyncpg.connect(pg_url)
    try:
        async with a.chat_lock(-100):
            waiting = asyncio.create_task(_locked_once(b, -100))
            await until_waiting(pg_url, key)
            [holder] = [pid for k, pid in await advisory_locks(pg_url, granted=True) if k == key]
            await admin.execute("SELECT pg_terminate_backend($1)", holder)  # worker A is gone
            await asyncio.wait_for(waiting, WAIT)  # worker B goes on
            with pytest.raises(DatabaseUnreachable):  # and A's unit does not, without its lock
                async with a.transaction(readonly=True) as tx:
                    await tx.games.current(chat_id=-100)
    finally:
        await admin.close()
    await asyncio.wait_for(_locked_once(a, -100), WAIT)  # A takes it again, on a new connection
    assert await advisory_locks(pg_url, granted=True) == []


@pytest.mark.postgres
async def test_a_worker_whose_connections_are_all_cut_leaves_no_lock_behind(
    pg_url: str, workers: tuple[Database, Database]
) -> None:
    _, b = workers
    doomed = await Database.open(f"{pg_url}?application_name=doomed")
    holding = asyncio.Event()

    async def hold_forever() -> None:
        async with doomed.chat_lock(-100):
            holding.set()
            await asyncio.Event().wait()

    holder = asyncio.create_task(hold_forever())
    await asyncio.wait_for(holding.wait(), WAIT)
    waiting = asyncio.create_task(_locked_once(b, -100))
    await until_waiting(pg_url, _unsigned(chat_lock_key(-100)))
    admin = await asyncpg.connect(pg_url)
    try:  # the worker's process is killed: the server sees every connection of it drop
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'doomed'"
        )
    finally:
        await admin.close()
    await asyncio.wait_for(waiting, WAIT)
    holder.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holder
    await doomed.close()


@pytest.mark.postgres
async def test_chat_locks_are_apart_from_the_named_advisory_locks(
    workers: tuple[Database, Database], pg_url: str
) -> None:
    a, b = workers
    named = (MIGRATION_LOCK, RESULTS_LOCK, SEND_LOCK)
    assert len({chat_lock_key(c) for c in (*named, -1001234567890, 7, -7)}) == 6
    for key in named:  # a chat whose id happens to be a named key's number
        async with a.chat_lock(key):  # the named locks themselves stay free:
            async with b.transaction() as tx:
                window = SendWindow(count=30, seconds=1.0)
                assert await tx.sends.claim(chat_id=5, chat=window, bot=window, now=1.0) == 0.0
                await tx.results.record(result=result(-1, ["1", "2"], "2"))
            opened = await asyncio.wait_for(Database.open(pg_url), WAIT)  # migrating
            await opened.close()


@pytest.mark.postgres
@pytest.mark.parametrize("pool_max", [1, 2])
async def test_many_chats_at_once_cannot_empty_a_small_pool(pg_url: str, pool_max: int) -> None:
    """Each unit holds a chat's lock and then reads and saves (both ways: `save_game`'s one
    statement and the full transaction): with the transactions on connections of their own,
    a pool of two would be held by two lock holders each waiting for a third connection."""
    url = f"{pg_url}?pool_max={pool_max}"
    chats = list(range(-100, -140, -1))
    dbs = [await Database.open(url), await Database.open(url)]  # two workers
    try:
        async with dbs[0].transaction() as tx:
            for chat_id in chats:
                await tx.games.create(record=running_record(chat_id))

        async def unit(db: Database, chat_id: int) -> None:
            async with db.chat_lock(chat_id):
                async with db.transaction(readonly=True) as tx:
                    record = await tx.games.active_for_chat(chat_id=chat_id)
                record.table_message_id = (record.table_message_id or 0) + 1
                record.version = await db.save_game(record)
                async with db.transaction() as tx:
                    record.version = await tx.games.save(
                        record=record, expected_version=record.version
                    )

        units = [unit(dbs[n % 2], chat_id) for n in range(4) for chat_id in chats]
        await asyncio.wait_for(asyncio.gather(*units), WAIT)
        async with dbs[1].transaction(readonly=True) as tx:
            for chat_id in chats:
                record = await tx.games.active_for_chat(chat_id=chat_id)
                assert record.table_message_id == 501 + 4  # every unit's change, none lost
                assert record.version == 1 + 4 * 2
        assert await advisory_locks(pg_url, granted=True) == []  # every lock given back
    finally:
        for db in dbs:
            await db.close()


@pytest.mark.postgres
async def test_a_lock_is_taken_outside_transactions_and_once_per_task(
    workers: tuple[Database, Database],
) -> None:
    a, b = workers
    async with a.transaction(readonly=True):
        with pytest.raises(RuntimeError, match="a transaction is already open"):
            async with a.chat_lock(-100):
                pass
    async with a.chat_lock(-100):
        with pytest.raises(RuntimeError, match="holds the lock of chat -100"):
            async with a.chat_lock(-100):
                pass
        async with a.chat_lock(-200):  # a second chat: on the same connection
            await _locked_in_task(a, -300)
    await _locked_in_task(b, -100)  # both released, for the other worker too
    await _locked_in_task(b, -200)


async def _locked_in_task(db: Database, chat_id: int) -> None:
    await asyncio.wait_for(asyncio.create_task(_locked_once(db, chat_id)), WAIT)


@pytest.mark.postgres
async def test_waiting_longer_than_the_busy_timeout_for_a_chat_is_database_busy(
    pg_url: str, workers: tuple[Database, Database]
) -> None:
    a, _ = workers
    impatient = await Database.open(f"{pg_url}?busy_timeout=200")
    try:
        async with a.chat_lock(-100):
            with pytest.raises(DatabaseBusy):
                async with impatient.chat_lock(-100):
                    pass
        await _locked_in_task(impatient, -100)  # free again: taken at once
    finally:
        await impatient.close()
