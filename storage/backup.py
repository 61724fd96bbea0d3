"""An online backup of a SQLite database: `backup` (`python -m storage backup PATH`).

The copy is made with SQLite's backup API from a connection of its own that only reads, inside
one read transaction: it is the database as it was when the backup began (every transaction
committed before, the write-ahead log's included; none committed after), and in WAL mode a
reader never blocks a writer, so the bot goes on storing moves meanwhile. The pages are
copied a batch at a time, so Ctrl-C stops a long copy between two batches.

The copy goes to a temporary file beside PATH, which is checked (``PRAGMA quick_check``),
flushed to disk and only then renamed to PATH: PATH is never a half-written file. The
backup is one self-contained file (rollback journal mode, no ``-wal`` beside it); the bot
switches it back to WAL when it opens it after a restore.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from storage.errors import DatabaseUnusable
from storage.sqlite_files import database_file, quick_check, unusable
from storage.url import DatabaseURL

PAGES_PER_STEP = 1024
"""Pages copied per step of the backup (4 MiB at SQLite's default page size)."""


class BackupRefused(Exception):
    """The backup was not made: one line naming the file and what to do. Nothing was
    written to PATH (a temporary file made meanwhile is removed)."""


@dataclass(frozen=True, slots=True)
class BackupDone:
    source: str  # the database file, absolute
    target: str  # PATH, absolute
    size: int  # bytes
    seconds: float

    def __str__(self) -> str:
        return (
            f"backed up {self.source} to {self.target}: {_size(self.size)} in "
            f"{self.seconds:.1f} s, quick_check ok"
        )


def _size(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def backup(
    url: DatabaseURL, path: str | Path, *, force: bool = False, pages: int = PAGES_PER_STEP
) -> BackupDone:
    """Copy the database of ``url`` to ``path`` while it may be in use (see the module's
    docstring). Refuses (`BackupRefused`) an existing ``path`` unless ``force``, the database
    file itself, a database that does not exist, and a file that is no sound database."""
    started = time.monotonic()
    if url.in_memory:
        raise BackupRefused("an in-memory database (sqlite:///:memory:) has nothing to back up")
    source = database_file(url)
    target = os.path.abspath(path)
    if not os.path.isfile(source):
        raise BackupRefused(f"database file {source} does not exist: check DATABASE_URL")
    if os.path.exists(target):
        if os.path.samefile(target, source):
            raise BackupRefused(f"{target} is the database file itself: back up to another path")
        if not force:
            raise BackupRefused(f"{target} exists: choose another path, or pass --force")
        if not os.path.isfile(target):
            raise BackupRefused(f"{target} is not a file: choose another path")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise BackupRefused(f"folder {folder} does not exist: create it first")
    try:
        handle, temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder
        )
    except OSError as error:
        raise BackupRefused(
            f"cannot write in {folder} ({error.strerror}): choose a folder you may write"
        ) from error
    os.close(handle)
    try:
        _copy(source, temporary, pages)
        quick_check(temporary, time_limit=float("inf"))
        _flush(temporary)
        os.replace(temporary, target)
        _flush(folder)  # the rename itself
    except sqlite3.Error as error:  # the copy's, not the database's
        if error.sqlite_errorcode & 0xFF == sqlite3.SQLITE_FULL:
            raise BackupRefused(
                f"cannot write the backup {target}: its file system is full"
            ) from error
        raise BackupRefused(f"cannot write the backup {target} ({error})") from error
    except DatabaseUnusable as error:
        if error.where != temporary:
            raise BackupRefused(str(error)) from error
        raise BackupRefused(
            f"the copy of {source} did not pass PRAGMA quick_check: the database itself may "
            f"be damaged; nothing was written to {target}"
        ) from error
    except OSError as error:
        raise BackupRefused(
            f"cannot write the backup {target} ({error.strerror}): check the space and "
            f"permissions there"
        ) from error
    finally:
        for leftover in (temporary, f"{temporary}-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
    return BackupDone(source, target, os.path.getsize(target), time.monotonic() - started)


def _copy(source: str, temporary: str, pages: int) -> None:
    """The backup API from ``source`` (read only) into ``temporary``, in one read
    transaction of ``source``. Raises `DatabaseUnusable` for a source SQLite refuses."""
    try:
        # mode=rw: never creates the file; read-only where this user may not write it. Not
        # mode=ro, which would leave a -wal and -shm of this user's behind when the bot is not
        # running (a bot running as another user could not open them). Nothing is written
        # (query_only), but closing the last connection checkpoints, as the bot's does.
        reader = sqlite3.connect(f"{Path(source).as_uri()}?mode=rw", uri=True, isolation_level=None)
        reader.execute("PRAGMA query_only = ON")
    except sqlite3.Error as error:
        raise _refused(error, source) from error
    try:
        writer = sqlite3.connect(temporary, isolation_level=None)
        try:
            # One snapshot for every step: without it, each step would see the writes
            # committed since the last one and start the copy over.
            try:
                reader.execute("BEGIN")
                reader.execute("SELECT count(*) FROM sqlite_schema").fetchall()
            except sqlite3.Error as error:
                raise _refused(error, source) from error
            try:
                reader.backup(writer, pages=pages)
            except sqlite3.Error as error:
                # The reader only reads: a full disk or a write error is the copy's.
                code = error.sqlite_errorcode & 0xFF
                if code in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
                    raise
                raise _refused(error, source) from error
            reader.execute("COMMIT")
            writer.execute("PRAGMA journal_mode = DELETE").fetchall()  # one file, no -wal
        finally:
            writer.close()
    finally:
        reader.close()


def _refused(error: sqlite3.Error, file: str) -> Exception:
    refused = unusable(error, file)
    return refused if refused is not None else error


def _flush(path: str) -> None:
    """fsync a file or a folder (where the system allows opening a folder)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
