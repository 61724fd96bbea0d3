"""The one interface between the repositories and a database driver.

Repositories write portable SQL (``?`` placeholders, ``INSERT ... ON CONFLICT ... DO UPDATE``,
``RETURNING``, partial indexes) and hand it to a `Backend`. Everything dialect-specific lives in
a backend: connecting, pragmas, how a transaction takes the write lock, mapping driver errors to
`Conflict` / `InvalidRecord` / `DatabaseBusy`, splitting migration scripts, integrity checks.
`storage.postgres` rewrites ``?`` to ``$n`` and brings its own migration DDL
(``storage/migrations/postgresql/``).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

import aiosqlite

from storage.errors import Conflict, DatabaseBusy, DatabaseUnusable, InvalidRecord, StorageError
from storage.sqlite_files import database_file, quick_check, unusable
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

    @property
    @abstractmethod
    def began(self) -> bool:
        """In an open transaction: whether a statement ran, so that committing it issues a
        COMMIT (a transaction that ran nothing commits nothing)."""

    async def start_commit(self) -> asyncio.Future[None]:
        """Issue the COMMIT and return a future of its outcome.

        Statements issued after this returns run after the COMMIT, so the caller may let the
        next transaction begin before awaiting the future; until then, nothing is known to be
        committed. If it fails, roll back (the transaction may still be open).
        """
        await self.commit()
        return _completed()

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

    async def lock(self, key: int) -> None:
        """Hold the named lock ``key`` until the open transaction ends: another connection's
        transaction asking for it waits (PostgreSQL: an advisory lock). SQLite: nothing to
        do, its write transaction already keeps every other writer out."""
        return

    async def new_ids(self, table: str, count: int) -> list[int]:
        """``count`` new ids for rows of ``table`` (its ``id`` column), ascending, in a write
        transaction. SQLite: after the largest one stored, safe since the transaction holds
        the write lock; PostgreSQL draws them from the column's identity sequence."""
        row = await self.fetchone(f"SELECT COALESCE(MAX(id), 0) AS last FROM {table}")
        last = int(row["last"]) if row else 0
        return list(range(last + 1, last + 1 + count))

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


def read_outcome(future: asyncio.Future[None]) -> None:
    """A done callback for a future nobody may be left to await (its caller was cancelled):
    reads the outcome, so a failure is not reported as "never retrieved"."""
    if not future.cancelled():
        future.exception()


def _completed() -> asyncio.Future[None]:
    future = asyncio.get_running_loop().create_future()
    future.set_result(None)
    return future


def _is_query(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "SELECT"


def _translated_from(error: BaseException, file: str) -> BaseException:
    """The error to raise for ``error``: its storage error (caused by it), or itself."""
    translated = _translate(error, file) if isinstance(error, sqlite3.Error) else None
    if translated is None:
        return error
    translated.__cause__ = error
    return translated


def _translate(error: sqlite3.Error, file: str) -> StorageError | None:
    message = str(error)
    if isinstance(error, sqlite3.IntegrityError):
        if "UNIQUE" in message or "PRIMARY KEY" in message:
            return Conflict(message)
        return InvalidRecord(message)
    if _is_busy(error):
        return DatabaseBusy(message)
    return unusable(error, file)


class _Driver(ABC):
    """How statements reach the one ``sqlite3`` connection: raw ``sqlite3`` errors, no policy.

    Statements run in the order they are issued, also when the caller that issued one was
    cancelled while waiting for it (so a ROLLBACK issued afterwards really comes afterwards).
    """

    @abstractmethod
    async def execute(self, sql: str, params: Params = ()) -> None: ...

    @abstractmethod
    async def executemany(self, sql: str, rows: Iterable[Params]) -> None: ...

    @abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]: ...

    async def begin_and_fetchall(
        self, begin: str, sql: str, params: Params = ()
    ) -> tuple[BaseException | None, list[Row]]:
        """`begin`, then the read-only query ``sql``; the BEGIN's error (if it failed, the
        query's rows mean nothing and the query ran outside any transaction), else its rows."""
        try:
            await self.execute(begin)
        except sqlite3.Error as error:
            return error, []
        return None, await self.fetchall(sql, params)

    @abstractmethod
    async def rollback(self) -> None:
        """ROLLBACK if a transaction is open (decided after every statement issued before)."""

    @abstractmethod
    async def close(self) -> None: ...


class _AiosqliteDriver(_Driver):
    """Through aiosqlite: the ``sqlite3`` connection lives on aiosqlite's own thread.

    Each call is one round trip to that thread; the event loop never blocks, not even while
    SQLite waits (up to the busy timeout) for another process's write lock. aiosqlite runs the
    calls of a connection strictly in order from one queue, and a call whose caller was
    cancelled still runs.
    """

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._conn = connection

    @classmethod
    async def connect(cls, url: DatabaseURL) -> _AiosqliteDriver:
        # SQLite's own busy wait holds aiosqlite's thread, and with it every other call of the
        # connection (the reads too): a short one, then `_retry_busy`'s asyncio.sleep, so
        # that all of a wait for another process's lock is the busy timeout, once.
        busy_ms = min(url.busy_timeout_ms, _THREAD_BUSY_MS)
        connection = await aiosqlite.connect(url.path, isolation_level=None, timeout=busy_ms / 1000)
        # aiosqlite annotates row_factory as a type; sqlite3 takes any (cursor, row) callable.
        connection.row_factory = _dict_row  # type: ignore[assignment]
        return cls(connection)

    async def execute(self, sql: str, params: Params = ()) -> None:
        # execute_fetchall: one round trip, and every row is consumed, so the statement is
        # finished (never left active, holding a lock) when the call returns.
        await self._conn.execute_fetchall(sql, params)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._conn.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        rows = await self._conn.execute_fetchall(sql, params)
        return cast(list[Row], rows)

    async def begin_and_fetchall(
        self, begin: str, sql: str, params: Params = ()
    ) -> tuple[BaseException | None, list[Row]]:
        # Both statements go to aiosqlite's queue at once (gather starts its tasks in order),
        # so they cost one wait for its thread instead of two.
        began, rows = await asyncio.gather(
            self._conn.execute_fetchall(begin),
            self._conn.execute_fetchall(sql, params),
            return_exceptions=True,
        )
        if isinstance(began, BaseException):
            return began, []
        if isinstance(rows, BaseException):
            raise rows
        return None, cast(list[Row], rows)

    async def rollback(self) -> None:
        # sqlite3's rollback() sends ROLLBACK only if a transaction is open, checked on
        # aiosqlite's thread in queue order (a BEGIN still queued from a cancelled caller runs
        # first), not on the event loop's view of the connection.
        await self._conn.rollback()

    async def close(self) -> None:
        await self._conn.close()


# How long one BEGIN attempt may block the event loop (inline executor), or aiosqlite's
# thread, before backing off with asyncio.sleep.
_INLINE_BUSY_MS = 2
_THREAD_BUSY_MS = 50
LOCKED_RETRY_SECONDS = 0.1
"""How long a writer waits for another process's lock while it is held past the busy
timeout already (see `SqliteBackend._retry_busy`)."""


class _InlineDriver(_Driver):
    """Plain ``sqlite3`` on the event loop thread: each statement blocks the loop while it runs.

    A statement takes microseconds, a thread round trip about 100 us; but a slow statement
    (a big import, a checkpoint, a slow disk) stalls everything else the loop does.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._conn = connection

    @classmethod
    async def connect(cls, url: DatabaseURL) -> _InlineDriver:
        # SQLite's own busy wait would block the loop: only a short one, then asyncio.sleep.
        busy_ms = min(url.busy_timeout_ms, _INLINE_BUSY_MS)
        connection = sqlite3.connect(url.path, isolation_level=None, timeout=busy_ms / 1000)
        connection.row_factory = _dict_row
        return cls(connection)

    async def execute(self, sql: str, params: Params = ()) -> None:
        self._conn.execute(sql, params).close()

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        self._conn.executemany(sql, rows).close()

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        rows: list[Row] = self._conn.execute(sql, params).fetchall()
        return rows

    async def rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    async def close(self) -> None:
        self._conn.close()


class SqliteBackend(Backend):
    """SQLite through one ``sqlite3`` connection.

    WAL journal, ``synchronous`` NORMAL or stronger, foreign keys on. Transactions are explicit
    (the driver's implicit ones are off). A write transaction is ``BEGIN IMMEDIATE``, sent
    right before its first statement: the write lock is held before anything is read, so
    there is no lock upgrade to deadlock on. If another process holds the lock, the BEGIN is
    retried with ``asyncio.sleep`` back-off until the busy timeout, then `DatabaseBusy`.

    ``executor="aiosqlite"`` (the default) runs the connection on aiosqlite's thread: the event
    loop never blocks on the database. ``"inline"`` runs each statement directly on the event
    loop thread: faster (no thread round trip per statement) but the loop is blocked for as
    long as each statement takes.
    """

    dialect = "sqlite"

    def __init__(self, driver: _Driver, url: DatabaseURL) -> None:
        self._driver = driver
        self._url = url
        self._file = database_file(url)
        self._pending_begin: str | None = None
        self._locked_out = False  # the last wait for another process's lock ran out

    @classmethod
    async def check(cls, url: DatabaseURL, *, time_limit: float) -> bool:
        """A quick check of the file before anything opens it for writing (see
        `sqlite_files.quick_check`): True if it is sound or does not exist yet, False if time
        ran out; raises `DatabaseUnusable`. Runs on a thread of its own."""
        if url.in_memory:
            return True
        return await asyncio.to_thread(quick_check, database_file(url), time_limit)

    @classmethod
    async def open(cls, url: DatabaseURL) -> SqliteBackend:
        file = database_file(url)
        if not url.in_memory:
            folder = Path(url.path).parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise DatabaseUnusable(
                    f"database file {file}: its folder {folder} cannot be made "
                    f"({error.strerror}): create it, writable for the bot",
                    where=file,
                ) from error
        driver: _Driver
        try:
            if url.executor == "inline":
                driver = await _InlineDriver.connect(url)
            else:
                driver = await _AiosqliteDriver.connect(url)
        except sqlite3.Error as error:
            refused = unusable(error, file)
            if refused is None:
                raise
            raise refused from error
        backend = cls(driver, url)
        try:
            # Switching a new file to WAL needs an exclusive lock, which SQLite does not wait
            # for: several processes starting at once retry here.
            await backend._retry_busy(backend._configure)
        except BaseException:
            await backend.close()
            raise
        return backend

    async def _configure(self) -> None:
        rows = await self._call(self._driver.fetchall("PRAGMA journal_mode = WAL"))
        mode = str(rows[0]["journal_mode"])
        if mode.lower() != "wal" and not self._url.in_memory:
            raise StorageError(f"{self._url}: could not switch to WAL journal mode ({mode!r})")
        await self._call(self._driver.execute(f"PRAGMA synchronous = {self._url.synchronous}"))
        await self._call(self._driver.execute("PRAGMA foreign_keys = ON"))

    @property
    def where(self) -> str:
        return str(self._url)

    async def _call(self, work: Awaitable[T]) -> T:
        """Await a driver call, translating its ``sqlite3`` errors to storage errors."""
        try:
            return await work
        except sqlite3.Error as error:
            translated = _translate(error, self._file)
            if translated is None:
                raise
            raise translated from error

    async def _statement(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run one statement, preceded by the pending BEGIN if this is the first one."""
        begin = self._pending_begin
        if begin is not None:
            await self._opening(
                lambda: self._call(self._driver.execute(begin)), write=begin != "BEGIN DEFERRED"
            )
            self._pending_begin = None  # the transaction is open from here on
        return await self._call(work())

    async def _opening(self, attempt: Callable[[], Awaitable[T]], *, write: bool) -> T:
        """Run ``attempt``, which sends the BEGIN: retried while another connection holds the
        lock, and once more after rolling back a transaction that a failed COMMIT left open.

        (A COMMIT is awaited after the next transaction may have begun: see `start_commit`.)
        """
        try:
            return await self._retry_busy(attempt, write=write)
        except sqlite3.OperationalError as error:
            if "within a transaction" not in str(error):
                raise
        await self._call(self._driver.rollback())
        return await self._retry_busy(attempt, write=write)

    async def _retry_busy(self, attempt: Callable[[], Awaitable[T]], *, write: bool = False) -> T:
        """Retry ``attempt`` while it raises DatabaseBusy, sleeping, until the busy timeout.
        A ``write`` (a BEGIN IMMEDIATE) while another process keeps the lock past it (the
        last write's wait ran out) waits `LOCKED_RETRY_SECONDS` only: each writer would wait
        the whole timeout behind the one before it, and every tap would take seconds to be
        answered."""
        patience = self._url.busy_timeout_ms / 1000
        if write and self._locked_out:
            patience = min(patience, LOCKED_RETRY_SECONDS)
        deadline = time.monotonic() + patience
        delay = 0.0005
        while True:
            try:
                result = await attempt()
            except DatabaseBusy:
                if time.monotonic() >= deadline:
                    self._locked_out = self._locked_out or write
                    raise DatabaseBusy(
                        f"{self.where}: another process held its write lock for more than "
                        f"{self._url.busy_timeout_ms} ms (an sqlite3 shell or a tool left in a "
                        f"transaction?)"
                    ) from None
            else:
                if write:
                    self._locked_out = False  # the write lock was had
                return result
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.02)

    @property
    def began(self) -> bool:
        return self._pending_begin is None

    async def begin(self, *, write: bool) -> None:
        if self._pending_begin is not None:
            raise RuntimeError("a transaction is already open on this connection")
        self._pending_begin = "BEGIN IMMEDIATE" if write else "BEGIN DEFERRED"

    async def commit(self) -> None:
        if self._pending_begin is not None:  # nothing ran: nothing to commit
            self._pending_begin = None
            return
        # An explicit COMMIT (not sqlite3's commit(), which does nothing outside a transaction):
        # a transaction SQLite already rolled back on its own must not look committed.
        await self._call(self._driver.execute("COMMIT"))

    async def start_commit(self) -> asyncio.Future[None]:
        if self._pending_begin is not None:  # nothing ran: nothing to commit
            self._pending_begin = None
            return _completed()
        # As `commit`, in a task of its own: its first step issues the COMMIT (on aiosqlite,
        # puts it in the queue; inline, runs it). One turn of the loop lets that step run, so
        # the COMMIT comes before anything issued after this returns (tasks start in the order
        # they are created), and the caller need not wait for its thread meanwhile.
        committing = asyncio.ensure_future(self._call(self._driver.execute("COMMIT")))
        # If this caller is cancelled in the turn below, nobody awaits the task: read its
        # outcome anyway (no "never retrieved" warning; the next BEGIN cleans up a failure).
        committing.add_done_callback(read_outcome)
        await asyncio.sleep(0)
        return committing

    async def rollback(self) -> None:
        self._pending_begin = None
        await self._call(self._driver.rollback())

    async def execute(self, sql: str, params: Params = ()) -> None:
        await self._statement(lambda: self._driver.execute(sql, params))

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._statement(lambda: self._driver.executemany(sql, rows))

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        begin = self._pending_begin
        if begin is not None and _is_query(sql):
            # A transaction that starts with a query (loading a game, say): BEGIN and the
            # query together. If the BEGIN fails, the query ran outside it and is retried.
            return await self._opening(
                lambda: self._begin_and_fetchall(begin, sql, params),
                write=begin != "BEGIN DEFERRED",
            )
        return await self._statement(lambda: self._driver.fetchall(sql, params))

    async def _begin_and_fetchall(self, begin: str, sql: str, params: Params) -> list[Row]:
        try:
            error, rows = await self._driver.begin_and_fetchall(begin, sql, params)
        except sqlite3.Error as query_error:
            self._pending_begin = None  # the BEGIN went through: the transaction is open
            translated = _translate(query_error, self._file)
            if translated is None:
                raise
            raise translated from query_error
        if error is not None:
            raise _translated_from(error, self._file)
        self._pending_begin = None
        return rows

    async def execute_script(self, script: str) -> None:
        # Statement by statement, not sqlite3's executescript(): that one COMMITs any open
        # transaction first, and a migration must apply together with its version row.
        for statement in split_statements(script):
            await self.execute(statement)

    async def integrity_check(self) -> list[str]:
        rows = await self.fetchall("PRAGMA integrity_check")
        return [str(next(iter(row.values()))) for row in rows]

    async def close(self) -> None:
        await self._call(self._driver.close())


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
