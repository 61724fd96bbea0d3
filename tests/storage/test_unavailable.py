"""A database that cannot store while the bot runs (its file system full, say) raises
`DatabaseUnavailable`, one line naming the file and the cause, stores nothing of the
transaction, still reads, and stores again once the cause is gone."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from storage import Database, DatabaseUnavailable, DatabaseUnusable, StorageError
from storage.sqlite_files import unusable
from tests.storage.conftest import (
    fill,
    lobby_record,
    read_only,
    running_record,
    small_file_system,
)


def test_sqlites_own_size_limit_reads_as_a_full_disk(tmp_path: Path) -> None:
    """SQLite's `max_page_count` refuses to grow the file with the error a full disk gives
    (SQLITE_FULL): it is named as that, on any machine."""
    path = tmp_path / "durak.sqlite3"
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("CREATE TABLE filler (text TEXT)")
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(sqlite3.OperationalError) as caught:
            connection.execute("INSERT INTO filler VALUES (?)", ("x" * 10_000,))
    finally:
        connection.close()
    error = unusable(caught.value, str(path))
    assert isinstance(error, DatabaseUnavailable) and isinstance(error, DatabaseUnusable)
    assert str(error) == (
        f"database file {path} cannot grow: its file system is full; free space there"
    )


@pytest.mark.parametrize("code", [sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY])
def test_an_io_error_and_a_read_only_file_are_unavailable_too(tmp_path: Path, code: int) -> None:
    error = sqlite3.OperationalError("disk I/O error")
    error.sqlite_errorcode = code | (3 << 8)  # an extended code
    refused = unusable(error, "/data/durak.sqlite3")
    assert isinstance(refused, DatabaseUnavailable)
    assert str(refused).startswith("database file /data/durak.sqlite3 ")


@pytest.mark.sqlite_only(reason="a full file system under an SQLite file")
async def test_a_full_disk_refuses_the_save_keeps_what_was_stored_and_passes(
    tmp_path: Path, executor: str
) -> None:
    with small_file_system(tmp_path / "data") as folder:
        url = f"sqlite:///{folder / 'durak.sqlite3'}?executor={executor}"
        async with Database.connect(url) as db:
            async with db.transaction() as tx:
                game = await tx.games.create(record=running_record(-1))
            filler = fill(folder)
            big = lobby_record(-2, *range(1, 400))  # a lobby of many seats: new pages
            with pytest.raises(DatabaseUnavailable, match="its file system is full"):
                async with db.transaction() as tx:
                    await tx.games.create(record=big)
            game.meta.title = "Club " * 10_000  # a move's save (one statement) that grows
            with pytest.raises(DatabaseUnavailable, match="its file system is full"):
                await db.save_game(game)
            for _ in range(3):  # and every time, not only the first
                with pytest.raises(StorageError):
                    async with db.transaction() as tx:
                        await tx.games.create(record=lobby_record(-2, *range(1, 400)))
            async with db.transaction(readonly=True) as tx:  # reading still works
                assert (await tx.games.active_for_chat(chat_id=-1)).id == game.id
                assert await tx.games.all_active() == [await tx.games.get(game_id=game.id)]
            filler.unlink()  # space is back
            async with db.transaction() as tx:
                created = await tx.games.create(record=lobby_record(-2, *range(1, 400)))
            assert created.version == 1
            assert await db.save_game(game) == game.version + 1  # the failed save stored nothing
            assert await db.integrity_check() == ["ok"]


@pytest.mark.sqlite_only(reason="an SQLite file made read-only")
async def test_a_file_made_read_only_while_open_refuses_writes_and_stores_again_after(
    db_path: Path, executor: str
) -> None:
    """The file (and its WAL) may no longer be written while the bot holds it open: as a
    file changed to another owner, or a volume remounted read-only, would."""
    if os.geteuid() != 0:
        pytest.skip("only the immutable attribute (root) stops writes through an open file")
    async with Database.connect(f"sqlite:///{db_path}?executor={executor}") as db:
        async with db.transaction() as tx:
            game = await tx.games.create(record=running_record(-1))
        with read_only(db_path), read_only(db_path.with_name(db_path.name + "-wal")):
            with pytest.raises(DatabaseUnavailable, match=f"database file {db_path} "):
                async with db.transaction() as tx:
                    await tx.games.create(record=lobby_record(-2))
            with pytest.raises(DatabaseUnavailable):
                await db.save_game(game)
            async with db.transaction(readonly=True) as tx:
                assert (await tx.games.get(game_id=game.id or 0)).version == game.version
        assert await db.save_game(game) == game.version + 1
        assert await db.integrity_check() == ["ok"]
