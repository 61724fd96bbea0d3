"""PostgreSQL through asyncpg: a pool of connections, each transaction on one of them.

`PostgresBackend` is one pooled connection behind the `Backend` interface, so the
repositories and `schema.migrate` run on it unchanged: it rewrites their ``?`` placeholders
to ``$n`` and maps asyncpg's errors to the storage layer's (`_translate`). `PostgresDatabase`
is `Database` for a pool: transactions run side by side, each on a connection of its own,
instead of one after another on SQLite's single connection.

What SQLite's single writer gave for free, and how it holds here (READ COMMITTED):

- saving a game is a conditional ``UPDATE ... WHERE id = $n AND version = $m``: of two
  writers of one version, the second finds no row and gets `Conflict`;
- a transaction takes named locks where it needs a sequence of statements to itself
  (`Backend.lock`: ``pg_advisory_xact_lock``): migrating, and recording finished games (the
  ids drawn from the table's identity in the order the games are recorded, the rating rows
  of the overall scope read and written by one recorder at a time, locked in a fixed order);
- a lock wait longer than ``busy_timeout`` (``lock_timeout``) or a deadlock is
  `DatabaseBusy`, a unique violation `Conflict`, another constraint `InvalidRecord`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any, ClassVar

import asyncpg

from storage.backend import Backend, Params, Row
from storage.database import Database, Transaction
from storage.errors import (
    Conflict,
    DatabaseBusy,
    DatabaseUnreachable,
    DatabaseUnusable,
    InvalidRecord,
    StorageError,
)
from storage.records import GameRecord
from storage.repositories import GameRepository, Session
from storage.schema import current_version, migrate
from storage.url import DatabaseURL, parse_database_url

logger = logging.getLogger(__name__)

CONNECT_SECONDS = 10.0
"""How long opening the pool's first connection may take before the server counts as
unreachable."""


@functools.lru_cache(maxsize=512)
def numbered(sql: str) -> str:
    """``sql`` with its ``?`` placeholders as ``$1``, ``$2``, ... (none inside quotes)."""
    out: list[str] = []
    count = 0
    for part in re.split(r"('(?:[^']|'')*'|\"[^\"]*\")", sql):
        if part.startswith(("'", '"')):
            out.append(part)
            continue
        pieces = part.split("?")
        out.append(pieces[0])
        for piece in pieces[1:]:
            count += 1
            out.append(f"${count}{piece}")
    return "".join(out)


def _translate(error: BaseException, where: str) -> BaseException:
    """The storage error for an asyncpg or connection error (caused by it), else itself."""
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    translated: StorageError
    if isinstance(error, asyncpg.UniqueViolationError):
        translated = Conflict(message)
    elif isinstance(error, asyncpg.IntegrityConstraintViolationError | asyncpg.DataError):
        translated = InvalidRecord(message)
    elif isinstance(
        error,
        asyncpg.DeadlockDetectedError
        | asyncpg.LockNotAvailableError
        | asyncpg.SerializationError
        | asyncpg.QueryCanceledError,
    ):
        translated = DatabaseBusy(f"{where}: {message}")
    elif isinstance(
        error, asyncpg.ReadOnlySQLTransactionError | asyncpg.InsufficientPrivilegeError
    ):
        translated = DatabaseUnusable(
            f"database {where}: {message}: the bot's user must be allowed to write "
            f"(and to create tables, for its migrations)",
            where=where,
        )
    elif isinstance(error, OSError | asyncpg.PostgresConnectionError) or (
        isinstance(error, asyncpg.InterfaceError) and "connection is closed" in message
    ):
        translated = DatabaseUnreachable(f"database {where}: {message}", where=where)
    else:
        return error
    translated.__cause__ = error
    return translated


class PostgresBackend(Backend):
    """One connection of the pool, for one transaction (or a statement that commits itself)."""

    dialect: ClassVar[str] = "postgresql"

    def __init__(self, connection: Any, url: DatabaseURL) -> None:
        self._conn = connection
        self._url = url
        self._open = False

    @property
    def where(self) -> str:
        return str(self._url)

    @property
    def began(self) -> bool:
        return self._open

    async def _call(self, method: str, sql: str, *args: Any) -> Any:
        try:
            return await getattr(self._conn, method)(numbered(sql), *args)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as error:
            translated = _translate(error, self.where)
            if translated is error:
                raise
            raise translated from error

    async def begin(self, *, write: bool) -> None:
        if self._open:
            raise RuntimeError("a transaction is already open on this connection")
        await self._call("execute", "BEGIN" if write else "BEGIN READ ONLY")
        self._open = True

    async def commit(self) -> None:
        self._open = False
        await self._call("execute", "COMMIT")

    async def rollback(self) -> None:
        self._open = False
        if not self._conn.is_closed() and self._conn.is_in_transaction():
            await self._call("execute", "ROLLBACK")

    async def lock(self, key: int) -> None:
        await self._call("execute", "SELECT pg_advisory_xact_lock(?)", key)

    async def new_ids(self, table: str, count: int) -> list[int]:
        rows = await self._call(
            "fetch",
            "SELECT nextval(pg_get_serial_sequence(?, 'id')) AS id FROM generate_series(1, ?)",
            table,
            count,
        )
        return sorted(int(row["id"]) for row in rows)

    async def execute(self, sql: str, params: Params = ()) -> None:
        await self._call("execute", sql, *params)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        batch = [tuple(row) for row in rows]
        if batch:
            await self._call("executemany", sql, batch)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        records = await self._call("fetch", sql, *params)
        return [dict(record) for record in records]

    async def execute_script(self, script: str) -> None:
        # A script without parameters goes as one simple query: inside the open transaction,
        # all of it or none.
        try:
            await self._conn.execute(script)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as error:
            translated = _translate(error, self.where)
            if translated is error:
                raise
            raise translated from error

    async def integrity_check(self) -> list[str]:
        """PostgreSQL keeps its own files sound (checksums, WAL): a statement that answers
        is all there is to check from here."""
        await self._call("fetch", "SELECT 1")
        return ["ok"]

    async def close(self) -> None:
        """Nothing: the pool owns the connection (`PostgresPool.connection` gives it back)."""


class PostgresPool:
    """asyncpg's pool for one ``postgresql://`` URL."""

    def __init__(self, pool: Any, url: DatabaseURL) -> None:
        self._pool = pool
        self.url = url

    @classmethod
    async def open(cls, url: DatabaseURL, *, seconds: float = CONNECT_SECONDS) -> PostgresPool:
        """Open the pool (its first ``pool_min`` connections); `DatabaseUnreachable` if the
        server does not answer in ``seconds``, `DatabaseUnusable` if it refuses (the
        password, a database that does not exist)."""
        try:
            pool = await asyncpg.create_pool(
                url.dsn,
                min_size=url.pool_min,
                max_size=url.pool_max,
                timeout=seconds,
                # Waiting longer than this for a row lock or an advisory lock: DatabaseBusy.
                server_settings={"lock_timeout": str(url.busy_timeout_ms)},
                # No cache of prepared statements across a pooler (pgbouncer) is needed: the
                # bot's statements are few and fixed, so asyncpg's own cache is kept.
            )
        except (TimeoutError, OSError) as error:
            reason = "no answer" if isinstance(error, TimeoutError) else _reason(error)
            raise DatabaseUnreachable(
                f"cannot reach the database server of {url} ({reason}): check that PostgreSQL "
                f"runs there and DATABASE_URL's host and port",
                where=str(url),
            ) from error
        except (
            asyncpg.InvalidAuthorizationSpecificationError,
            asyncpg.InvalidCatalogNameError,
            asyncpg.InsufficientPrivilegeError,
        ) as error:
            raise DatabaseUnusable(
                f"database {url}: the server refused it ({_reason(error)}): check DATABASE_URL's "
                f"user, password and database name",
                where=str(url),
            ) from error
        except (asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            raise DatabaseUnreachable(
                f"database {url}: {_reason(error)}", where=str(url)
            ) from error
        return cls(pool, url)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[PostgresBackend]:
        """A connection of the pool for the block; back into the pool after it (rolled back
        if a transaction is still open, with its advisory locks released)."""
        try:
            connection = await self._pool.acquire()
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as error:
            translated = _translate(error, str(self.url))
            if translated is error:
                raise
            raise translated from error
        try:
            yield PostgresBackend(connection, self.url)
        finally:
            # Shielded: a caller cancelled here still returns the connection (asyncpg resets
            # it, or closes it if a statement was cut short).
            await asyncio.shield(self._pool.release(connection))

    async def close(self) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._pool.close(), timeout=10)
            return
        self._pool.terminate()  # a connection still busy after 10 s


def _reason(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return text or type(error).__name__


class PostgresDatabase(Database):
    """`Database` on PostgreSQL: each transaction on a connection of the pool, side by side.

    The same methods and errors as `Database` (a transaction nested in one task is refused
    with RuntimeError, as is one on a closed database), without its single connection: it
    does not call `Database.__init__`, and overrides every method that uses it.
    """

    def __init__(self, pool: PostgresPool, url: DatabaseURL) -> None:
        self._pool = pool
        self.url = url
        self._closed = False
        self._owners: set[asyncio.Task[object]] = set()

    @classmethod
    async def open(cls, url: str | DatabaseURL) -> PostgresDatabase:
        parsed = parse_database_url(url) if isinstance(url, str) else url
        pool = await PostgresPool.open(parsed)
        try:
            async with pool.connection() as backend:
                await migrate(backend)
        except BaseException:
            await pool.close()
            raise
        db = cls(pool, parsed)
        try:
            await db._rate_unrated()
        except BaseException:
            await db.close()
            raise
        return db

    async def close(self) -> None:
        """Refuse new transactions, wait for the running ones, close the pool. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._pool.close()

    def _enter(self) -> asyncio.Task[object] | None:
        task = asyncio.current_task()
        if task is not None and task in self._owners:
            raise RuntimeError("a transaction is already open in this task; nest nothing")
        if self._closed:
            raise RuntimeError("the database is closed")
        return task

    @asynccontextmanager
    async def transaction(self, *, readonly: bool = False) -> AsyncIterator[Transaction]:
        task = self._enter()
        if task is not None:
            self._owners.add(task)
        try:
            async with self._pool.connection() as backend:
                session = Session(backend)
                await backend.begin(write=not readonly)
                try:
                    yield Transaction(session)
                except BaseException:
                    session.active = False
                    # A statement cut short by a cancellation may leave the connection busy
                    # or closed: the pool resets it on release, and the error raised is the
                    # one that ended the block, never the rollback's.
                    with contextlib.suppress(Exception):
                        await backend.rollback()
                    raise
                session.active = False
                # In a task of its own, awaited to its end even by a caller cancelled
                # meanwhile: the connection goes back to the pool only once its COMMIT is
                # answered (whether it committed is then known to the database, not cut off).
                committing = asyncio.ensure_future(backend.commit())
                try:
                    await asyncio.shield(committing)
                except asyncio.CancelledError:
                    with contextlib.suppress(Exception):
                        await committing
                    raise
        finally:
            if task is not None:
                self._owners.discard(task)

    async def save_game(self, record: GameRecord) -> int:
        """As `Database.save_game`: the usual move is one UPDATE that commits by itself (on
        a connection of the pool), anything else the full transaction."""
        self._enter()
        async with self._pool.connection() as backend:
            version = await GameRepository(Session(backend)).save_in_place(
                record=record, expected_version=record.version
            )
        if version is not None:
            return version
        async with self.transaction() as tx:
            return await tx.games.save(record=record, expected_version=record.version)

    async def schema_version(self) -> int:
        async with self._pool.connection() as backend:
            return await current_version(backend)

    async def integrity_check(self) -> list[str]:
        async with self._pool.connection() as backend:
            return await backend.integrity_check()
