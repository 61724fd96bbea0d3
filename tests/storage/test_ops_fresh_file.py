"""A start on a full disk leaves no empty database file behind: a file the bot made and
could not set up is removed with its `-wal` and `-shm`, so that the next start (with space
freed) makes it anew rather than finding a 0-byte file. A file that was there is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import Database, DatabaseUnavailable
from tests.storage.conftest import fill, small_file_system

pytestmark = pytest.mark.sqlite_only(reason="the files of an SQLite database")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("durak"))


async def test_a_start_on_a_full_disk_leaves_no_database_file(tmp_path: Path) -> None:
    with small_file_system(tmp_path / "data") as folder:
        filler = fill(folder)
        url = f"sqlite:///{folder / 'durak.sqlite3'}"
        with pytest.raises(DatabaseUnavailable, match="its file system is full"):
            await Database.open(url)
        assert leftovers(folder) == []
        filler.unlink()  # space freed: the next start makes the database
        db = await Database.open(url)
        await db.close()
        assert "durak.sqlite3" in leftovers(folder)


async def test_a_file_that_was_there_is_kept_when_the_start_fails(tmp_path: Path) -> None:
    with small_file_system(tmp_path / "data") as folder:
        (folder / "durak.sqlite3").touch()  # the operator's, say: not the bot's to remove
        fill(folder)
        with pytest.raises(DatabaseUnavailable, match="its file system is full"):
            await Database.open(f"sqlite:///{folder / 'durak.sqlite3'}")
        assert "durak.sqlite3" in leftovers(folder)
