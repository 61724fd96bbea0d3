"""Numbered migrations: from empty, from every earlier version, refusing newer schemas."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from pathlib import Path

import pytest

from storage import LATEST_VERSION, Database, GameMeta, SchemaTooNew
from storage.backend import SqliteBackend
from storage.codec import to_us
from storage.repositories import LEADERBOARD_SQL
from storage.schema import MIGRATIONS, Migration, check_numbering, migrate
from storage.url import parse_database_url

from .conftest import result
from .test_results import _random_results, _stats


def _versions(path: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()
    conn.close()
    return rows


async def _migrate_to(path: Path, version: int) -> None:
    backend = await SqliteBackend.open(parse_database_url(f"sqlite:///{path}"))
    try:
        assert await migrate(backend, target=version) == version
    finally:
        await backend.close()


def test_migrations_are_numbered_without_gaps() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST_VERSION + 1))
    assert LATEST_VERSION >= 2
    with pytest.raises(RuntimeError, match="expected 0002"):
        check_numbering([MIGRATIONS[0], dataclasses.replace(MIGRATIONS[1], version=3)])


@pytest.mark.sqlite_only(reason="the SQLite file's migrations, read with sqlite3")
async def test_fresh_database_gets_every_migration(db_path: Path, db_url: str) -> None:
    async with Database.connect(db_url) as db:
        assert await db.schema_version() == LATEST_VERSION
        assert await db.integrity_check() == ["ok"]
        backend = db._backend
        assert (await backend.fetchone("PRAGMA foreign_keys")) == {"foreign_keys": 1}
        assert (await backend.fetchone("PRAGMA synchronous")) == {"synchronous": 1}  # NORMAL
        assert (await backend.fetchone("PRAGMA journal_mode")) == {"journal_mode": "wal"}
    assert [v for v, _ in _versions(db_path)] == list(range(1, LATEST_VERSION + 1))
    assert _versions(db_path)[1][1] == "player_stats"
    # Opening again changes nothing.
    async with Database.connect(db_url) as db:
        assert await db.schema_version() == LATEST_VERSION
    assert len(_versions(db_path)) == LATEST_VERSION


async def test_synchronous_full_option(tmp_path: Path) -> None:
    async with Database.connect(f"sqlite:///{tmp_path}/f.db?synchronous=full") as db:
        assert (await db._backend.fetchone("PRAGMA synchronous")) == {"synchronous": 2}


def _insert_v1(path: Path, results: list) -> None:  # type: ignore[type-arg]
    """Rows as a release at schema version 1 wrote them (no aggregates, no meta column)."""
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO games (id, chat_id, status, language, rules, state, lobby, "
            "table_message_id, hand_messages, deadline_us, timeouts, created_us, started_us, "
            "updated_us, version) VALUES (7, -100, 'lobby', 'ru', '{}', NULL, "
            '\'{"opener_id": 5, "seats": [{"player_id": "5", "user_id": 5, "name": "Пять"}]}\', '
            "NULL, '{}', NULL, '{}', 1000000, NULL, 1000000, 3)"
        )
        conn.execute("INSERT INTO players VALUES (5, 'Пять', 'ru', 1, 0)")
        conn.execute("INSERT INTO chat_settings VALUES (-100, 'uk', 'short', '{}', 40, 0)")
        for n, finished in enumerate(results, start=1):
            conn.execute(
                "INSERT INTO finished_games VALUES (?, ?, NULL, '{}', ?, ?, ?, ?, ?, ?)",
                (
                    n,
                    finished.chat_id,
                    to_us(finished.started_at),
                    to_us(finished.ended_at),
                    finished.bouts,
                    finished.draw,
                    finished.durak,
                    finished.practice,
                ),
            )
            for p in finished.participants:
                conn.execute(
                    "INSERT INTO finished_game_players VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (n, p.seat, p.player_id, p.user_id, p.name, p.is_computer, p.result, p.place),
                )
    conn.close()


@pytest.mark.parametrize("start", range(LATEST_VERSION))
async def test_upgrade_from_each_earlier_version(tmp_path: Path, start: int) -> None:
    """Data written at schema 1, database left at ``start``, then opened by this code."""
    results = _random_results(11, 60)
    path = tmp_path / "old.sqlite3"
    if start == 0:
        await _migrate_to(path, 0)  # just the schema_version table
    else:
        await _migrate_to(path, 1)
        _insert_v1(path, results)
        await _migrate_to(path, start)
    assert (max(v for v, _ in _versions(path)) if start else 0) == start

    async with Database.connect(f"sqlite:///{path}") as db:
        assert await db.schema_version() == LATEST_VERSION
        assert await db.integrity_check() == ["ok"]
        if start == 0:
            async with db.transaction() as tx:
                assert await tx.results.count() == 0
            return
        async with db.transaction() as tx:
            game = await tx.games.get(game_id=7)
            assert (game.status, game.version, game.meta) == ("lobby", 3, GameMeta())
            assert game.lobby.seats[0].name == "Пять"
            assert (await tx.players.get(user_id=5)).can_message is True
            assert (await tx.chats.get(chat_id=-100)).turn_timeout == 40
            assert await tx.results.count() == len(results)
            assert (await tx.results.get(result_id=3)).participants == results[2].participants
        migrated = await _stats(db)
    # The aggregates backfilled by the migration equal those kept up live.
    async with Database.connect(f"sqlite:///{tmp_path}/live.sqlite3") as live:
        async with live.transaction() as tx:
            for finished in results:
                await tx.results.record(result=finished)
        assert migrated == await _stats(live)


@pytest.mark.sqlite_only(reason="the SQLite file's migrations, read with sqlite3")
async def test_newer_schema_is_refused_untouched(db_path: Path, db_url: str) -> None:
    async with Database.connect(db_url) as db, db.transaction() as tx:
        await tx.results.record(result=result(-1, ["1", "2"], "1"))
    with sqlite3.connect(db_path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 'from_the_future', 0)", (99,))
    conn.close()
    before = _versions(db_path)
    with pytest.raises(SchemaTooNew) as caught:
        await Database.open(db_url)
    message = str(caught.value)
    assert "schema version 99" in message
    assert f"up to version {LATEST_VERSION}" in message
    assert "newer release" in message
    assert (caught.value.found, caught.value.known) == (99, LATEST_VERSION)
    assert _versions(db_path) == before


async def test_failed_migration_leaves_previous_version(db_path: Path) -> None:
    backend = await SqliteBackend.open(parse_database_url(f"sqlite:///{db_path}"))
    broken = [
        MIGRATIONS[0],
        Migration(2, "broken", "CREATE TABLE half (a INTEGER);\nINSERT INTO nowhere VALUES (1);"),
    ]
    try:
        with pytest.raises(sqlite3.OperationalError, match="nowhere"):
            await migrate(backend, migrations=broken)
        assert await backend.fetchone("SELECT name FROM sqlite_master WHERE name = 'half'") is None
    finally:
        await backend.close()
    assert _versions(db_path) == [(1, "initial")]


@pytest.mark.sqlite_only(reason="the SQLite file's migrations, read with sqlite3")
async def test_concurrent_start_ups_migrate_once(db_path: Path, db_url: str) -> None:
    dbs = await asyncio.gather(*(Database.open(db_url) for _ in range(4)))
    for db in dbs:
        assert await db.schema_version() == LATEST_VERSION
        await db.close()
    assert [v for v, _ in _versions(db_path)] == list(range(1, LATEST_VERSION + 1))


@pytest.mark.sqlite_only(reason="the SQLite file's migrations, read with sqlite3")
async def test_start_ups_wait_out_another_migrating_past_the_busy_timeout(
    db_path: Path, db_url: str
) -> None:
    """Processes started at once on a new file (a restart of several, a slow disk): each
    waits for the one migrating, however long its steps hold the file (here longer than a
    5 ms busy timeout), rather than stopping as if the file were locked by a stranger."""
    dbs = await asyncio.gather(*(Database.open(db_url + "&busy_timeout=5") for _ in range(4)))
    for db in dbs:
        assert await db.schema_version() == LATEST_VERSION
        await db.close()
    assert [v for v, _ in _versions(db_path)] == list(range(1, LATEST_VERSION + 1))


@pytest.mark.sqlite_only(reason="SQLite's query plans")
async def test_leaderboard_reads_the_index_in_order(db_path: Path, db_url: str) -> None:
    async with Database.connect(db_url):
        pass
    with sqlite3.connect(db_path) as conn:
        plan = conn.execute("EXPLAIN QUERY PLAN " + LEADERBOARD_SQL, (0, 1, 0, 10)).fetchall()
    conn.close()
    details = " / ".join(str(row[-1]) for row in plan)
    assert "player_stats_leaderboard" in details
    assert "TEMP B-TREE" not in details


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM games WHERE chat_id = ? ORDER BY id DESC LIMIT 1",  # latest_for_chat
        "SELECT id FROM games WHERE chat_id = ?",  # migrate_chat
    ],
)
@pytest.mark.sqlite_only(reason="SQLite's query plans")
async def test_a_chats_games_are_found_through_the_index(
    db_path: Path, db_url: str, sql: str
) -> None:
    """Finished games stay in `games`: a chat's games must not mean reading all of them."""
    async with Database.connect(db_url):
        pass
    with sqlite3.connect(db_path) as conn:
        plan = conn.execute("EXPLAIN QUERY PLAN " + sql, (-1,)).fetchall()
    conn.close()
    details = " / ".join(str(row[-1]) for row in plan)
    assert "games_chat" in details
    assert "SCAN games" not in details
