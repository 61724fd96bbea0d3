"""SQLite files the bot cannot use: what SQLite's refusal of a file tells the operator
(`unusable`: one line naming the file, the cause and what to do), at start-up and while the
bot runs (a full disk), and the start-up check (`quick_check`), on a read-only connection
of its own."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

from storage.errors import DatabaseUnavailable, DatabaseUnusable
from storage.url import DatabaseURL


def database_file(url: DatabaseURL) -> str:
    """The file of ``url`` as an operator finds it: its absolute path."""
    return url.path if url.in_memory else os.path.abspath(url.path)


def new_file(url: DatabaseURL) -> str | None:
    """The file of ``url`` if it does not exist yet (opening it makes it), else None."""
    if url.in_memory:
        return None
    file = database_file(url)
    return None if os.path.lexists(file) else file


def remove_unmade(file: str) -> None:
    """After an open that made ``file`` and failed (a full disk, say): remove it, with its
    ``-wal`` and ``-shm``, if it is still empty, so that no 0-byte database is left for the
    next start to find. Nothing of anyone's is in it: the bot made it a moment ago."""
    try:
        if os.path.getsize(file) != 0:
            return
        for path in (file, f"{file}-wal", f"{file}-shm", f"{file}-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    except OSError:
        pass  # (never made, or its folder unreadable: nothing to tidy)


def unusable(error: sqlite3.Error, file: str) -> DatabaseUnusable | None:
    """What SQLite's refusal of the file itself (``file``: its path) tells the operator, in
    one line, or None for any other error: `DatabaseUnavailable` where the cause lies outside
    the file's contents (a full file system, permissions, the disk), which fixing it ends."""
    code = error.sqlite_errorcode & 0xFF  # the primary code of an extended one
    if code == sqlite3.SQLITE_CORRUPT:
        return damaged(file, str(error))
    if code == sqlite3.SQLITE_NOTADB:
        problem = "is not an SQLite database: check DATABASE_URL, or restore it from a backup"
        return DatabaseUnusable(f"database file {file} {problem}", where=file)
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM):
        problem = (
            "is read-only for the bot: let it write the file and its folder "
            "(check their owner and permissions)"
        )
    elif code == sqlite3.SQLITE_CANTOPEN:
        problem = "cannot be opened: check that it is a file, in a folder the bot may write"
    elif code == sqlite3.SQLITE_FULL:
        problem = "cannot grow: its file system is full; free space there"
    elif code == sqlite3.SQLITE_IOERR:
        problem = f"could not be read or written ({error}): check its disk and file system"
    else:
        return None
    return DatabaseUnavailable(f"database file {file} {problem}", where=file)


def damaged(file: str, problem: str) -> DatabaseUnusable:
    return DatabaseUnusable(
        f"database file {file} is damaged ({problem}): restore it from a backup",
        where=file,
    )


# How often (in SQLite virtual machine steps) the quick check looks at the clock.
_CHECK_STEPS = 1000


def quick_check(file: str, time_limit: float) -> bool:
    """``PRAGMA quick_check`` of ``file`` on a read-only connection of its own (nothing is
    written, not even a checkpoint of a journal left by a crash): True if the whole file was
    checked and is sound, False if it took longer than ``time_limit`` seconds (stopped there).
    Raises `DatabaseUnusable` for a damaged file, one that is not a database, or one that
    cannot be read."""
    if not Path(file).is_file():
        return True  # a new database (or none: opening it says so)
    try:
        connection = sqlite3.connect(f"{Path(file).as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        refused = unusable(error, file)
        if refused is None:
            raise
        raise refused from error
    deadline = time.monotonic() + time_limit
    connection.set_progress_handler(lambda: time.monotonic() > deadline, _CHECK_STEPS)
    try:
        rows = connection.execute("PRAGMA quick_check(1)").fetchall()  # the first problem
    except sqlite3.Error as error:
        if error.sqlite_errorcode == sqlite3.SQLITE_INTERRUPT:
            return False
        refused = unusable(error, file)
        if refused is None:
            raise
        raise refused from error
    finally:
        connection.close()
    found = [str(row[0]) for row in rows]
    if found != ["ok"]:
        # "*** in database main ***\nOn tree page 266 cell 1: Rowid 105 out of order\n..."
        lines = [line for text in found for line in text.splitlines() if "***" not in line]
        raise damaged(file, lines[0] if lines else "PRAGMA quick_check failed")
    return True
