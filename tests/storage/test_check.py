"""`check_database`, the start-up check, and the errors of a file the bot cannot use: one
line naming the file, the cause and what to do (`DatabaseUnusable`), and nothing written."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from storage import Database, DatabaseUnusable, check_database
from tests.storage.conftest import read_only


def contents(path: Path) -> bytes:
    return path.read_bytes()


async def filled(path: Path, rows: int = 3000) -> bytes:
    """A migrated database with some pages of data, checkpointed; its bytes."""
    async with Database.connect(f"sqlite:///{path}"):
        pass
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, text TEXT)")
        connection.executemany(
            "INSERT INTO filler (text) VALUES (?)", [(f"row {n} " * 20,) for n in range(rows)]
        )
    connection.close()
    return contents(path)


def damage(path: Path) -> bytes:
    """Garbage over three pages in the middle of the file; its new bytes."""
    data = bytearray(contents(path))
    middle = len(data) // 4096 // 2
    data[middle * 4096 : (middle + 3) * 4096] = random.Random(7).randbytes(3 * 4096)
    path.write_bytes(data)
    return bytes(data)


async def test_a_sound_database_passes_and_a_new_one_is_not_made(db_path: Path) -> None:
    assert await check_database(f"sqlite:///{db_path}") is True
    assert not db_path.parent.exists()  # checking makes nothing
    await filled(db_path)
    assert await check_database(f"sqlite:///{db_path}") is True


async def test_a_damaged_file_is_named_and_not_written(db_path: Path) -> None:
    await filled(db_path)
    data = damage(db_path)
    with pytest.raises(DatabaseUnusable) as caught:
        await check_database(f"sqlite:///{db_path}")
    message = str(caught.value)
    assert message.startswith(f"database file {db_path} is damaged (")
    assert message.endswith("): restore it from a backup")
    assert "\n" not in message and "***" not in message
    assert caught.value.where == str(db_path)
    assert contents(db_path) == data


async def test_a_check_that_runs_out_of_time_says_so(db_path: Path) -> None:
    await filled(db_path)
    assert await check_database(f"sqlite:///{db_path}", time_limit=0) is False


@pytest.mark.parametrize("refuse", [check_database, Database.open], ids=["check", "open"])
async def test_a_file_that_is_no_database_is_named_by_check_and_open(
    tmp_path: Path, refuse: Callable[[str], Awaitable[object]]
) -> None:
    path = tmp_path / "notes.sqlite3"
    path.write_text("not a database\n" * 200)
    with pytest.raises(DatabaseUnusable, match="is not an SQLite database: check DATABASE_URL"):
        await refuse(f"sqlite:///{path}")
    assert contents(path) == b"not a database\n" * 200


async def test_a_folder_in_the_way_is_named(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file where the folder should be")
    with pytest.raises(DatabaseUnusable, match=r"its folder .* cannot be made"):
        await Database.open(f"sqlite:///{tmp_path / 'data' / 'durak.sqlite3'}")
    (tmp_path / "dir.sqlite3").mkdir()
    with pytest.raises(DatabaseUnusable, match="cannot be opened"):
        await Database.open(f"sqlite:///{tmp_path / 'dir.sqlite3'}")


async def test_a_read_only_file_is_refused_at_open_not_at_the_first_save(db_path: Path) -> None:
    """SQLite opens a file it may not write read-only, without a word; opening the database
    finds out at once."""
    data = await filled(db_path, rows=0)
    with read_only(db_path), pytest.raises(DatabaseUnusable, match="is read-only for the bot"):
        await Database.open(f"sqlite:///{db_path}")
    assert contents(db_path) == data
