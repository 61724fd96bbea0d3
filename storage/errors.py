"""Errors raised by the storage layer. Callers never see driver exceptions for these cases."""

from __future__ import annotations


class StorageError(Exception):
    """Base class of every error the storage layer raises on purpose."""


class NotFound(StorageError, LookupError):
    """The record asked for does not exist."""


class Conflict(StorageError):
    """The write lost a race or broke a uniqueness rule; nothing was written.

    Raised when a game is saved at a version another writer already replaced, when a chat
    already has an active game, or when a finished game is recorded twice.
    """


class Fenced(StorageError):
    """This worker no longer leads (its lease ran out, or another worker took it): nothing
    was written. Several workers on PostgreSQL; the leader's writes check its lease
    (`storage.lease`)."""


class InvalidRecord(StorageError, ValueError):
    """The database refused a record (a foreign key, CHECK or NOT NULL constraint)."""


class DatabaseBusy(StorageError):
    """Another process held the write lock for longer than the busy timeout."""


class DatabaseUnusable(StorageError):
    """The database cannot be used as it is: damaged, not a database, not writable, written
    by a newer release. The message is one line naming the file, the cause and what to do;
    the bot does not start on such a database."""

    def __init__(self, message: str, *, where: str) -> None:
        self.where = where
        super().__init__(message)


class DatabaseUnavailable(DatabaseUnusable):
    """The database refused a statement for a reason outside what it holds: its file system
    is full, the file is read-only for this process, an I/O error, it cannot be opened.
    Nothing of that transaction was stored. At start-up the bot does not start (as for any
    `DatabaseUnusable`); while it runs, each update is answered "could not be saved", and it
    carries on once the operator has fixed the cause (freed space, say)."""


class DatabaseUnreachable(StorageError):
    """The database server did not answer (PostgreSQL: not running, a wrong host or port, the
    network, the connection lost). Starting again later may work. The message is one line
    naming the server (never the password) and what to check."""

    def __init__(self, message: str, *, where: str) -> None:
        self.where = where
        super().__init__(message)


class SchemaTooNew(DatabaseUnusable):
    """The database was migrated by a newer version of the code than this one."""

    def __init__(self, *, found: int, known: int, where: str) -> None:
        self.found = found
        self.known = known
        super().__init__(
            f"database {where} has schema version {found}, but this code only knows migrations "
            f"up to version {known}; it was written by a newer release. Upgrade the bot (or "
            f"restore a backup) instead of running this version against it; nothing was changed.",
            where=where,
        )


class StoredGameError(StorageError):
    """A stored game's engine state (or rules) could not be loaded by this engine."""

    def __init__(self, *, game_id: int | None, format: object, reason: str) -> None:
        self.game_id = game_id
        self.format = format
        if format is None:
            version = "no engine format version"
        else:
            version = f"engine format version {format!r}"
        super().__init__(f"stored game {game_id} ({version}) cannot be loaded: {reason}")
