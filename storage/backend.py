"""The one interface between the repositories and a database driver.

Repositories write portable SQL (``?`` placeholders, ``INSERT ... ON CONFLICT ... DO UPDATE``,
``RETURNING``, partial indexes) and hand it to a `Backend`. Everything dialect-specific lives in
a backend: connecting, pragmas, how a transaction takes the write lock, mapping driver errors to
`Conflict` / `InvalidRecord` / `DatabaseBusy`, splitting migration scripts, integrity checks.
A PostgreSQL backend would rewrite ``?`` to ``$n`` and bring its own migration DDL.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from storage.errors import Conflict, DatabaseBusy, InvalidRecord, StorageError
from storage.url import DatabaseURL

Row = dict[str, Any]
Params = Sequence[Any]
T = TypeVar("T")


class Backend(ABC):
    """One connection to one database. Not safe for concurrent use: `Database` serializes."""

    dialect: ClassVar[str]

    @abstractmethod
    async def begin(self, *, write: bool) -> None:
        """Start a transaction; ``write`` takes the write lock before the first statement runs."""

    @abstractmethod
    async def commit(self) -> None: ...

    @abstractmethod
    async def rollback(self) -> None:
        """Roll back the open transaction, if any (never raises for "no transaction")."""

    @abstractmethod
    async def execute(self, sql: str, params: Params = ()) -> None: ...

    @abstractmethod
    async def executemany(self, sql: str, rows: Iterable[Params]) -> None: ...

    @abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]: ...

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    @abstractmethod
    async def execute_script(self, script: str) -> None:
        """Run a migration script statement by statement, inside the current transaction."""

    @abstractmethod
    async def integrity_check(self) -> list[str]:
        """``["ok"]`` when the database is sound, else the problems found."""

    @abstractmethod
    async def close(self) -> None: ...

    @property
    @abstractmethod
    def where(self) -> str:
        """A human description of the database for error messages (path, host)."""


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}


def _is_busy(error: sqlite3.Error) -> bool:
    message = str(error)
    return isinstance(error, sqlite3.OperationalError) and (
        "database is locked" in message or "database is busy" in message
    )


def _translate(error: sqlite3.Error) -> StorageError | None:
    message = str(error)
    if isinstance(error, sqlite3.IntegrityError):
        if "UNIQUE" in message or "PRIMARY KEY" in message:
            return Conflict(message)
        return InvalidRecord(message)
    if _is_busy(error):
        return DatabaseBusy(message)
    return None


class _BeginBusy(Exception):
    """BEGIN IMMEDIATE found another connection holding the write lock."""


# How long one BEGIN attempt may block the event loop before backing off with asyncio.sleep.
_INLINE_BUSY_MS = 2


class SqliteBackend(Backend):
    """SQLite through one ``sqlite3`` connection.

    WAL journal, ``synchronous`` NORMAL or stronger, foreign keys on. Transactions are explicit
    (the driver's implicit ones are off). A write transaction is ``BEGIN IMMEDIATE``, sent
    together with its first statement: the write lock is held before anything is read, so
    there is no lock upgrade to deadlock on. If another process holds the lock, the BEGIN is
    retried with ``asyncio.sleep`` back-off until the busy timeout, then `DatabaseBusy`.

    ``executor="inline"`` runs each statement directly on the event loop thread (a statement
    takes microseconds; a thread hop costs ~100 us twice), ``"thread"`` on one worker thread.
    """

    dialect = "sqlite"

    def __init__(
        self, connection: sqlite3.Connection, url: DatabaseURL, pool: ThreadPoolExecutor | None
    ) -> None:
        self._conn = connection
        self._url = url
        self._pool = pool
        self._pending_begin: str | None = None

    @classmethod
    async def open(cls, url: DatabaseURL) -> SqliteBackend:
        if not url.in_memory:
            Path(url.path).parent.mkdir(parents=True, exist_ok=True)
        pool = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
            if url.executor == "thread"
            else None
        )
        busy_ms = (
            url.busy_timeout_ms if pool is not None else min(url.busy_timeout_ms, _INLINE_BUSY_MS)
        )

        def connect() -> sqlite3.Connection:
            connection = sqlite3.connect(url.path, isolation_level=None, timeout=busy_ms / 1000)
            connection.row_factory = _dict_row
            return connection

        def configure(connection: sqlite3.Connection) -> None:
            mode = str(connection.execute("PRAGMA journal_mode = WAL").fetchone()["journal_mode"])
            if mode.lower() != "wal" and not url.in_memory:
                raise StorageError(f"{url}: could not switch to WAL journal mode ({mode!r})")
            connection.execute(f"PRAGMA synchronous = {url.synchronous}")
            connection.execute("PRAGMA foreign_keys = ON")

        try:
            if pool is None:
                connection = connect()
            else:
                connection = await asyncio.get_running_loop().run_in_executor(pool, connect)
        except BaseException:
            if pool is not None:
                pool.shutdown(wait=False)
            raise
        backend = cls(connection, url, pool)
        try:
            # Switching a new file to WAL needs an exclusive lock, which SQLite does not wait
            # for: several processes starting at once retry here.
            await backend._retry_busy(lambda: backend._call(lambda: configure(connection)))
        except BaseException:
            await backend.close()
            raise
        return backend

    @property
    def where(self) -> str:
        return str(self._url)

    async def _call(self, work: Callable[[], T]) -> T:
        try:
            if self._pool is None:
                return work()
            # Shielded: a cancelled caller must not cancel a statement still queued for the
            # worker (a lost COMMIT or ROLLBACK would leave the transaction open). The worker
            # runs calls in order, so a rollback issued after a cancellation still comes after.
            return await asyncio.shield(
                asyncio.get_running_loop().run_in_executor(self._pool, work)
            )
        except sqlite3.Error as error:
            translated = _translate(error)
            if translated is None:
                raise
            raise translated from error

    async def _statement(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run one statement, preceded (in the same call) by a pending BEGIN."""
        begin = self._pending_begin
        if begin is None:
            return await self._call(lambda: work(self._conn))

        def begin_then_work() -> T:
            try:
                self._conn.execute(begin)
            except sqlite3.OperationalError as error:
                if _is_busy(error):
                    raise _BeginBusy from error
                raise
            self._pending_begin = None  # the transaction is open from here on
            return work(self._conn)

        async def attempt() -> T:
            try:
                return await self._call(begin_then_work)
            except _BeginBusy as busy:
                raise DatabaseBusy(str(busy.__cause__)) from None

        return await self._retry_busy(attempt)

    async def _retry_busy(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Retry ``attempt`` while it raises DatabaseBusy, sleeping, until the busy timeout."""
        deadline = time.monotonic() + self._url.busy_timeout_ms / 1000
        delay = 0.0005
        while True:
            try:
                return await attempt()
            except DatabaseBusy:
                if time.monotonic() >= deadline:
                    raise DatabaseBusy(
                        f"{self.where}: another connection held the lock for more than "
                        f"{self._url.busy_timeout_ms} ms"
                    ) from None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.02)

    async def begin(self, *, write: bool) -> None:
        if self._pending_begin is not None:
            raise RuntimeError("a transaction is already open on this connection")
        self._pending_begin = "BEGIN IMMEDIATE" if write else "BEGIN DEFERRED"

    async def commit(self) -> None:
        if self._pending_begin is not None:  # nothing ran: nothing to commit
            self._pending_begin = None
            return
        await self._call(lambda: self._conn.execute("COMMIT"))

    async def rollback(self) -> None:
        self._pending_begin = None

        def rollback() -> None:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")

        await self._call(rollback)

    async def execute(self, sql: str, params: Params = ()) -> None:
        await self._statement(lambda conn: conn.execute(sql, params).close())

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._statement(lambda conn: conn.executemany(sql, rows).close())

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        def fetch(conn: sqlite3.Connection) -> list[Row]:
            rows: list[Row] = conn.execute(sql, params).fetchall()
            return rows

        return await self._statement(fetch)

    async def execute_script(self, script: str) -> None:
        for statement in split_statements(script):
            await self.execute(statement)

    async def integrity_check(self) -> list[str]:
        rows = await self.fetchall("PRAGMA integrity_check")
        return [str(next(iter(row.values()))) for row in rows]

    async def close(self) -> None:
        try:
            await self._call(self._conn.close)
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)


def split_statements(script: str) -> list[str]:
    """Split an SQL script into complete statements (semicolons inside strings are fine)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statement = pending.strip()
            if _has_code(statement):
                statements.append(statement)
            pending = ""
    if _has_code(pending):
        raise ValueError(f"incomplete SQL statement at end of script: {pending.strip()[:80]!r}")
    return statements


def _has_code(text: str) -> bool:
    return any(line.strip() and not line.strip().startswith("--") for line in text.splitlines())
