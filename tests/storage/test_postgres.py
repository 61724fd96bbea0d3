"""PostgreSQL only: what SQLite's single writer gave for free, with several connections (and
several workers) at once; migrations; a server that cannot be reached or refuses."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from storage import (
    Conflict,
    Database,
    DatabaseBusy,
    DatabaseUnusable,
    Player,
    SchemaTooNew,
)
from storage.errors import DatabaseUnreachable
from storage.schema import migrations_for
from tests import postgres

from .conftest import result, running_record
from .test_results import _stats

pytestmark = pytest.mark.postgres


@pytest.fixture
async def pg_url(pg_server: postgres.PostgresServer) -> AsyncIterator[str]:
    async with postgres.fresh_database(pg_server) as url:
        yield url


@pytest.fixture
async def empty_pg_url(pg_server: postgres.PostgresServer) -> AsyncIterator[str]:
    async with postgres.fresh_database(pg_server, migrated=False) as url:
        yield url


async def _versions(url: str) -> list[tuple[int, str]]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT version, name FROM schema_version ORDER BY version")
    finally:
        await conn.close()
    return [(row["version"], row["name"]) for row in rows]


async def test_several_workers_starting_at_once_migrate_an_empty_database_once(
    empty_pg_url: str,
) -> None:
    latest = len(migrations_for("postgresql"))
    dbs = await asyncio.gather(*(Database.open(empty_pg_url) for _ in range(4)))
    for db in dbs:
        assert await db.schema_version() == latest
        assert await db.integrity_check() == ["ok"]
        await db.close()
    assert [v for v, _ in await _versions(empty_pg_url)] == list(range(1, latest + 1))
    async with Database.connect(empty_pg_url) as db:  # opening again changes nothing
        assert await db.schema_version() == latest
    assert len(await _versions(empty_pg_url)) == latest


async def test_a_newer_schema_is_refused_untouched(pg_url: str) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute("INSERT INTO schema_version VALUES (99, 'from_the_future', 0)")
    finally:
        await conn.close()
    before = await _versions(pg_url)
    with pytest.raises(SchemaTooNew, match="schema version 99"):
        await Database.open(pg_url)
    assert await _versions(pg_url) == before


def _sqlite_columns(path: Path) -> dict[str, set[str]]:
    with sqlite3.connect(path) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        columns = {t: {row[1] for row in conn.execute(f"PRAGMA table_info({t})")} for t in tables}
    conn.close()
    return columns


async def test_both_backends_migrate_to_the_same_tables_and_columns(
    pg_url: str, tmp_path: Path
) -> None:
    """A change of the schema is a migration in both folders: the newest of each must
    give the same tables with the same columns."""
    path = tmp_path / "durak.sqlite3"
    async with Database.connect(f"sqlite:///{path}"):
        pass
    conn = await asyncpg.connect(pg_url)
    try:
        rows = await conn.fetch(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public'"
        )
    finally:
        await conn.close()
    on_postgres: dict[str, set[str]] = {}
    for row in rows:
        on_postgres.setdefault(row["table_name"], set()).add(row["column_name"])
    assert on_postgres.pop("leader") == {"id", "holder", "pid", "epoch", "expires_us"}
    assert on_postgres == _sqlite_columns(path)


async def test_two_workers_saving_one_version_of_a_game_one_wins(pg_url: str) -> None:
    """The optimistic check holds across processes: of two saves of one version, sent at
    once from two pools, exactly one is stored and the other is a `Conflict`."""
    async with Database.connect(pg_url) as one, Database.connect(pg_url) as two:
        async with one.transaction() as tx:
            record = await tx.games.create(record=running_record())
        for attempt in range(20):
            mine = dataclasses.replace(record, table_message_id=1000 + attempt)
            theirs = dataclasses.replace(record, table_message_id=2000 + attempt)
            outcomes = await asyncio.gather(
                one.save_game(mine), two.save_game(theirs), return_exceptions=True
            )
            won = [o for o in outcomes if not isinstance(o, BaseException)]
            assert won == [record.version + 1], outcomes
            assert sum(isinstance(o, Conflict) for o in outcomes) == 1
            async with one.transaction(readonly=True) as tx:
                record = await tx.games.get(game_id=record.id or 0)
            assert record.table_message_id in (1000 + attempt, 2000 + attempt)


async def test_a_status_change_racing_another_writer_is_a_conflict_not_a_lost_update(
    pg_url: str,
) -> None:
    """`games.save`'s full path (the status changes): it reads the version, then writes. A
    writer that saved the same version in between holds the row until it commits; the
    waiting one then finds the version gone and gets `Conflict`, writing nothing."""
    async with Database.connect(pg_url) as one, Database.connect(pg_url) as two:
        async with one.transaction() as tx:
            record = await tx.games.create(record=running_record())
        saved, release = asyncio.Event(), asyncio.Event()

        async def first() -> None:
            async with one.transaction() as tx:
                moved = dataclasses.replace(record, table_message_id=1)
                await tx.games.save(record=moved, expected_version=record.version)
                saved.set()
                await release.wait()

        holding = asyncio.create_task(first())
        await saved.wait()

        async def second() -> None:
            async with two.transaction() as tx:
                finished = dataclasses.replace(record, status="finished")
                await tx.games.save(record=finished, expected_version=record.version)

        racing = asyncio.create_task(second())
        await asyncio.sleep(0.1)  # it waits for the row, the loop runs meanwhile
        assert not racing.done()
        release.set()
        await holding
        with pytest.raises(Conflict, match="saved by another writer"):
            await racing
        async with one.transaction(readonly=True) as tx:
            stored = await tx.games.get(game_id=record.id or 0)
        assert (stored.status, stored.table_message_id, stored.version) == ("running", 1, 2)


async def test_finished_games_recorded_by_several_workers_at_once_count_and_rate_in_order(
    pg_url: str,
) -> None:
    """Three workers record games of the same players (the overall scope's rows, shared by
    every game) at once: ids are distinct and in the order the games were recorded, every
    game is counted once, and the ratings equal a replay of the games in id order."""
    rng = random.Random(7)
    players = [str(n) for n in range(1, 7)]

    def some_result(chat: int) -> object:
        seated = rng.sample(players, rng.randint(2, 4))
        return result(chat, seated, rng.choice([*seated, None]))

    async with (
        Database.connect(pg_url) as a,
        Database.connect(pg_url) as b,
        Database.connect(pg_url) as c,
    ):

        async def worker(db: Database, chat: int) -> list[int]:
            ids = []
            for _ in range(15):
                async with db.transaction() as tx:
                    ids.append(await tx.results.record(result=some_result(chat)))  # type: ignore[arg-type]
            return ids

        got = await asyncio.gather(worker(a, -1), worker(b, -2), worker(c, -1))
        every = [i for ids in got for i in ids]
        assert len(set(every)) == 45
        for ids in got:
            assert ids == sorted(ids)
        live = await _stats(a)
        async with a.transaction() as tx:
            assert await tx.results.recompute_ratings() == 45
            assert await tx.results.count() == 45
        assert await _stats(a) == live


async def test_a_row_lock_held_past_the_busy_timeout_is_database_busy(pg_url: str) -> None:
    async with (
        Database.connect(pg_url) as one,
        Database.connect(pg_url + "?busy_timeout=100") as two,
    ):
        async with one.transaction() as tx:
            await tx.players.upsert(player=Player(user_id=1, name="Alice"))
        held, release = asyncio.Event(), asyncio.Event()

        async def holder() -> None:
            async with one.transaction() as tx:
                await tx.players.set_can_message(user_id=1, value=False)
                held.set()
                await release.wait()

        holding = asyncio.create_task(holder())
        await held.wait()
        async with two.transaction(readonly=True) as tx:  # readers never wait
            assert (await tx.players.get(user_id=1)).name == "Alice"
        started = time.monotonic()
        with pytest.raises(DatabaseBusy, match="lock timeout"):
            async with two.transaction() as tx:
                await tx.players.set_can_message(user_id=1, value=True)
        assert time.monotonic() - started >= 0.1
        release.set()
        await holding
        async with two.transaction() as tx:  # usable again afterwards
            await tx.players.set_can_message(user_id=1, value=True)


async def test_a_server_that_does_not_answer_is_unreachable_without_the_password() -> None:
    port = postgres.free_port()  # nobody listens there
    url = f"postgresql://bot:hunter2@127.0.0.1:{port}/durak"
    with pytest.raises(DatabaseUnreachable) as refused:
        await Database.open(url)
    message = str(refused.value)
    assert f"127.0.0.1:{port}" in message
    assert "check that PostgreSQL runs there" in message
    assert "hunter2" not in message
    assert "\n" not in message


async def test_a_database_that_does_not_exist_is_named(
    pg_server: postgres.PostgresServer,
) -> None:
    with pytest.raises(DatabaseUnusable, match="no_such_database") as refused:
        await Database.open(pg_server.url("no_such_database"))
    assert "database name" in str(refused.value)
