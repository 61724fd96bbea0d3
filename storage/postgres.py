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

Across workers, a unit of work holds its chat's lock (`PostgresDatabase.chat_lock`): a
session advisory lock (``pg_advisory_lock``, keys of their own: `chat_lock_key`) on a
connection of the pool that the task keeps for the block. Its transactions run on that same
connection, so a task holding a chat's lock never waits for a second connection: however
many updates run at once, the pool cannot be emptied by holders waiting for more of it. The
lock ends with the block, or with the connection when its worker dies. It needs a session
of its own on the server: a pooler in front of PostgreSQL (pgbouncer) must pool sessions,
not transactions.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import asyncpg

from storage.backend import Backend, Params, Row
from storage.database import ChatLocks, Database, Transaction
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

LEAD_LOCK = 0x44_75_72_61_6B_03
"""Session advisory lock key of the leading worker (`PostgresDatabase.try_lead`)."""

CONNECT_SECONDS = 10.0
"""How long opening the pool's first connection may take before the server counts as
unreachable."""

CHAT_LOCK_SPACE: Final = 0x43  # "C": the top byte of every chat's advisory lock key
"""The chats' advisory lock keys carry this top byte; the named keys (`MIGRATION_LOCK`,
`RESULTS_LOCK`, `SEND_LOCK`, `LEAD_LOCK`: "Durak" and a number, 48 bits) have 0 there, so
none is ever a chat's."""

_CHAT_BITS: Final = 56


def chat_lock_key(chat_id: int) -> int:
    """The advisory lock key of a chat (a signed 64-bit number): `CHAT_LOCK_SPACE` in the top
    byte, the chat id (two's complement) in the 56 bits below it. Telegram's ids fit in 52
    bits, so each chat has a key of its own."""
    if not -(1 << (_CHAT_BITS - 1)) <= chat_id < 1 << (_CHAT_BITS - 1):
        raise ValueError(f"chat id {chat_id} is out of range for a lock key")
    return (CHAT_LOCK_SPACE << _CHAT_BITS) | (chat_id & ((1 << _CHAT_BITS) - 1))


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
        isinstance(error, asyncpg.InterfaceError)
        and ("connection is closed" in message or "released back to the pool" in message)
    ):  # the second: a connection the pool took back when it closed (a session held on)
        translated = DatabaseUnreachable(f"database {where}: {message}", where=where)
    else:
        return error
    translated.__cause__ = error
    return translated


class _Connection(asyncpg.Connection):  # type: ignore[misc]
    """asyncpg's connection, reset on its way back into the pool only as far as the bot
    changes a session: the chat locks it held (`pg_advisory_unlock_all`). asyncpg's own
    reset also closes cursors, stops listening and resets every setting, a round trip after
    every transaction for what the bot never does (its settings are given when connecting);
    an open transaction is rolled back whatever this says."""

    __slots__ = ("_session_locks",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._session_locks = False

    def holds_session_locks(self) -> None:
        """A session advisory lock is (or may be) held: released when the pool takes it back."""
        self._session_locks = True

    def get_reset_query(self) -> str:
        if self._session_locks:
            self._session_locks = False
            return "SELECT pg_advisory_unlock_all()"
        return ""


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
        except asyncpg.InternalClientError as error:
            # The server ended the session while the connection sat idle (terminated, shut
            # down) and asyncpg heard its last words before the socket closed: no use now.
            self.terminate()
            raise DatabaseUnreachable(
                f"database {self.where}: the connection broke ({_reason(error)})",
                where=self.where,
            ) from error

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
        if self.in_transaction:
            await self._call("execute", "ROLLBACK")

    async def lock(self, key: int) -> None:
        await self._call("execute", "SELECT pg_advisory_xact_lock(?)", key)

    async def lock_session(self, key: int) -> None:
        """Hold advisory lock ``key`` until `unlock_session` or the connection's end (not
        the transaction's); a wait past ``lock_timeout`` is `DatabaseBusy`."""
        self._conn.holds_session_locks()  # even a wait cut short may have been granted
        await self._call("execute", "SELECT pg_advisory_lock(?)", key)

    async def unlock_session(self, key: int) -> None:
        await self._call("execute", "SELECT pg_advisory_unlock(?)", key)

    @property
    def in_transaction(self) -> bool:
        try:
            return bool(not self._conn.is_closed() and self._conn.is_in_transaction())
        except asyncpg.InterfaceError:  # closed, and taken back by the pool already
            return False

    def terminate(self) -> None:
        """Drop the connection at once: the server ends its session and every lock of it."""
        with contextlib.suppress(asyncpg.InterfaceError):  # gone already
            self._conn.terminate()

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
                connection_class=_Connection,
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
            # it, or closes it if a statement was cut short). A connection the server cut
            # (the worker's connections terminated) can fail its reset: asyncpg closes it then
            # (the pool makes a new one), and the block's own outcome (its error, its
            # cancellation) is what the caller hears.
            try:
                await asyncio.shield(self._pool.release(connection))
            except (asyncpg.InterfaceError, asyncpg.InternalClientError, OSError) as error:
                logger.info("a cut connection could not go back into the pool: %s", error)

    async def close(self) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._pool.close(), timeout=10)
            return
        self._pool.terminate()  # a connection still busy after 10 s


@dataclass(slots=True)
class _Holding:
    """A task's chat locks: the connection they are held on, and the chats."""

    backend: PostgresBackend
    chats: set[int] = field(default_factory=set)


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
        self._chat_locks = ChatLocks()
        self._holders: dict[asyncio.Task[object], _Holding] = {}  # task -> its lock connection
        self._leading: Any = None  # the connection holding LEAD_LOCK, once it got it
        self._side: Any = None  # the connection of `side_transaction`, once opened
        self._side_lock = asyncio.Lock()

    @property
    def shared(self) -> bool:
        """Other workers may use this database at the same time."""
        return True

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
        await self._stop_leading()
        side, self._side = self._side, None
        if side is not None:
            with contextlib.suppress(Exception):
                await side.close(timeout=5)
        await self._pool.close()

    @asynccontextmanager
    async def side_transaction(self) -> AsyncIterator[Transaction]:
        """A write transaction on a connection of its own, outside the pool, one at a time:
        for short bookkeeping that units of work wait for (the send ledger's claims). A
        unit holds its pool connection while it waits, so such work must not need one: with
        every connection held by a unit waiting for it, nothing would move."""
        if self._closed:
            raise RuntimeError("the database is closed")
        async with self._side_lock:
            try:
                if self._side is None or self._side.is_closed():
                    self._side = await asyncpg.connect(self.url.dsn, timeout=CONNECT_SECONDS)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as error:
                raise self._own_connection_error(error) from error
            backend = PostgresBackend(self._side, self.url)
            session = Session(backend)
            await backend.begin(write=True)
            try:
                yield Transaction(session)
            except BaseException:
                session.active = False
                with contextlib.suppress(Exception):
                    await backend.rollback()
                raise
            session.active = False
            await backend.commit()

    async def try_lead(self) -> bool:
        """Whether this process holds the leader's lock (``LEAD_LOCK``, a session advisory
        lock on a connection of its own, outside the pool, kept until `close`): taken if
        no other process holds it. A leader whose connection broke (the lock went with it)
        tries to take it again. Errors are the storage layer's, as for a transaction."""
        if self._closed:
            raise RuntimeError("the database is closed")
        connection = self._leading
        try:
            if connection is not None and not connection.is_closed():
                await connection.fetchval("SELECT 1")  # still there: still the leader
                return True
            self._leading = None
            connection = await asyncpg.connect(self.url.dsn, timeout=CONNECT_SECONDS)
            try:
                took = await connection.fetchval("SELECT pg_try_advisory_lock($1)", LEAD_LOCK)
            except BaseException:
                await connection.close()
                raise
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as error:
            await self._stop_leading()
            raise self._own_connection_error(error) from error
        if not took:
            await connection.close()
            return False
        self._leading = connection
        return True

    def _own_connection_error(self, error: BaseException) -> BaseException:
        """The storage layer's error for a failure on a connection of its own (outside the
        pool): as `_translate` says, else `DatabaseUnreachable`."""
        translated = _translate(error, str(self.url))
        if translated is error:
            return DatabaseUnreachable(
                f"database {self.url}: {_reason(error)}", where=str(self.url)
            )
        return translated

    async def _stop_leading(self) -> None:
        connection, self._leading = self._leading, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close(timeout=5)  # the session's lock goes with it

    def _enter(self) -> asyncio.Task[object] | None:
        task = asyncio.current_task()
        if task is not None and task in self._owners:
            raise RuntimeError("a transaction is already open in this task; nest nothing")
        if self._closed:
            raise RuntimeError("the database is closed")
        return task

    @asynccontextmanager
    async def chat_lock(self, chat_id: int) -> AsyncIterator[None]:
        """Hold the chat's lock across every worker on this database for the block.

        First this process's `asyncio.Lock` for the chat (so one process keeps at most one
        connection per chat, waiting or holding), then a connection of the pool with the
        chat's session advisory lock on it. Every transaction (and `save_game`) that this
        task opens inside the block runs on that connection, so the holder never needs a
        second one. A second chat locked inside the block (in a fixed order, as migrating a
        chat does) takes its advisory lock on the same connection.

        The lock is released when the block ends, and by the server when the connection
        drops (a worker that died, a connection cut). Waiting longer than ``busy_timeout``
        for it is `DatabaseBusy`; a server out of reach `DatabaseUnreachable`. Taking it
        inside an open transaction, or the same chat twice in one task, is a RuntimeError.
        """
        task = self._enter()
        if task is None:
            raise RuntimeError("a chat's lock is held by a task; take it inside one")
        held = self._holders.get(task)
        if held is not None and chat_id in held.chats:
            raise RuntimeError(f"this task holds the lock of chat {chat_id} already")
        key = chat_lock_key(chat_id)
        async with self._chat_locks[chat_id]:
            if held is not None:  # another chat's lock, on the connection held already
                await held.backend.lock_session(key)
                held.chats.add(chat_id)
                try:
                    yield
                finally:
                    held.chats.discard(chat_id)
                    await asyncio.shield(self._unlock(held.backend, key))
                return
            async with self._pool.connection() as backend:
                # Released with the connection: the pool's reset runs pg_advisory_unlock_all
                # (or drops a connection it cannot reset), so a lock that was granted while
                # its wait was cancelled is not left behind either.
                await backend.lock_session(key)
                self._holders[task] = _Holding(backend, {chat_id})
                try:
                    yield
                finally:
                    del self._holders[task]

    @staticmethod
    async def _unlock(backend: PostgresBackend, key: int) -> None:
        try:
            await backend.unlock_session(key)
        except Exception:
            logger.warning("could not release a chat's lock: its connection is dropped")
            backend.terminate()

    @asynccontextmanager
    async def _connection(
        self, task: asyncio.Task[object] | None
    ) -> AsyncIterator[PostgresBackend]:
        """The connection of the task's chat lock, if it holds one; else one of the pool."""
        held = self._holders.get(task) if task is not None else None
        if held is not None:
            yield held.backend
            return
        async with self._pool.connection() as backend:
            yield backend

    @asynccontextmanager
    async def transaction(self, *, readonly: bool = False) -> AsyncIterator[Transaction]:
        task = self._enter()
        if task is not None:
            self._owners.add(task)
        try:
            async with self._connection(task) as backend:
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
                    if backend.in_transaction and task in self._holders:
                        # A chat lock's connection that cannot be rolled back is no use to
                        # the rest of the unit: dropped, its lock with it (and what the unit
                        # does next fails, rather than running without the lock).
                        backend.terminate()
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
        task = self._enter()
        async with self._connection(task) as backend:
            version = await GameRepository(Session(backend)).save_in_place(
                record=record, expected_version=record.version
            )
        if version is not None:
            return version
        async with self.transaction() as tx:
            return await tx.games.save(record=record, expected_version=record.version)

    async def current_game(self, chat_id: int) -> tuple[int, int] | None:
        """As `Database.current_game`: one statement (on the chat lock's connection, if the
        task holds one), no BEGIN and COMMIT around it."""
        task = self._enter()
        async with self._connection(task) as backend:
            return await GameRepository(Session(backend)).current(chat_id=chat_id)

    async def schema_version(self) -> int:
        async with self._pool.connection() as backend:
            return await current_version(backend)

    async def integrity_check(self) -> list[str]:
        async with self._pool.connection() as backend:
            return await backend.integrity_check()
