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

Several workers may share the database; one of them plays (`PostgresLease`, the row of table
``leader``): see `storage.lease`. Every connection a worker opens carries its name as
``application_name``, so that a new leader can end the sessions of one that hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, ClassVar, Final

import asyncpg

from storage.backend import Backend, Params, Row
from storage.codec import to_us
from storage.database import Database, Transaction
from storage.errors import (
    Conflict,
    DatabaseBusy,
    DatabaseUnreachable,
    DatabaseUnusable,
    InvalidRecord,
    StorageError,
)
from storage.lease import (
    FENCED_CHANNEL,
    INBOX_CHANNEL,
    LEASE_SECONDS,
    SAFETY,
    Lease,
    worker_name,
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


_CLOSED: Final = (
    "connection is closed",
    "released back to the pool",  # (a connection the pool took back when it closed)
    "pool is closing",
    "pool is closed",
)


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
    elif isinstance(
        # (a server that shuts down or starts, or ended the session: operator intervention)
        error,
        OSError | asyncpg.PostgresConnectionError | asyncpg.OperatorInterventionError,
    ) or (
        isinstance(error, asyncpg.InterfaceError) and any(words in message for words in _CLOSED)
    ):  # the second: a connection or the pool closed under the caller (a worker stopping)
        translated = DatabaseUnreachable(f"database {where}: {message}", where=where)
    else:
        return error
    translated.__cause__ = error
    return translated


class _Connection(asyncpg.Connection):  # type: ignore[misc]
    """asyncpg's connection, not reset on its way back into the pool: asyncpg's reset closes
    cursors, stops listening and resets every setting, a round trip after every transaction
    for what the bot never does (its settings are given when connecting); an open
    transaction is rolled back whatever this says."""

    __slots__ = ()

    def get_reset_query(self) -> str:
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
    async def open(
        cls, url: DatabaseURL, *, name: str = "durak", seconds: float = CONNECT_SECONDS
    ) -> PostgresPool:
        """Open the pool (its first ``pool_min`` connections), each connection named `name`
        (its ``application_name``); `DatabaseUnreachable` if the server does not answer in
        ``seconds``, `DatabaseUnusable` if it refuses (the password, a database that does
        not exist)."""
        try:
            pool = await asyncpg.create_pool(
                url.dsn,
                min_size=url.pool_min,
                max_size=url.pool_max,
                timeout=seconds,
                connection_class=_Connection,
                server_settings=_session_settings(url, name),
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


def _reason(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return text or type(error).__name__


def _session_settings(url: DatabaseURL, name: str) -> dict[str, str]:
    """Every connection's settings: its worker's name (a new leader ends the sessions of one
    that hangs by it), and waiting longer than ``busy_timeout`` for a lock is
    `DatabaseBusy`."""
    return {"application_name": name[:63], "lock_timeout": str(url.busy_timeout_ms)}


class PostgresDatabase(Database):
    """`Database` on PostgreSQL: each transaction on a connection of the pool, side by side.

    The same methods and errors as `Database` (a transaction nested in one task is refused
    with RuntimeError, as is one on a closed database), without its single connection: it
    does not call `Database.__init__`, and overrides every method that uses it.
    """

    def __init__(self, pool: PostgresPool, url: DatabaseURL, name: str) -> None:
        self._pool = pool
        self.url = url
        self.name = name
        self._closed = False
        self._owners: set[asyncio.Task[object]] = set()
        self.observer = None
        self.fence = None

    @classmethod
    async def open(cls, url: str | DatabaseURL, *, name: str | None = None) -> PostgresDatabase:
        parsed = parse_database_url(url) if isinstance(url, str) else url
        name = name or worker_name()
        pool = await PostgresPool.open(parsed, name=name)
        try:
            async with pool.connection() as backend:
                await migrate(backend)
        except BaseException:
            await pool.close()
            raise
        db = cls(pool, parsed, name)
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

    def lease(self, name: str, *, clock: Callable[[], float] = time.monotonic) -> PostgresLease:
        """The lease of the worker that plays, as worker `name` sees it (`PostgresLease`)."""
        return PostgresLease(self.url, name, clock=clock)

    def _enter(self) -> asyncio.Task[object] | None:
        task = asyncio.current_task()
        if task is not None and task in self._owners:
            raise RuntimeError("a transaction is already open in this task; nest nothing")
        if self._closed:
            raise RuntimeError("the database is closed")
        return task

    @asynccontextmanager
    async def transaction(
        self, *, readonly: bool = False, fenced: bool = True
    ) -> AsyncIterator[Transaction]:
        epoch = self._epoch(readonly or not fenced)
        task = self._enter()
        if task is not None:
            self._owners.add(task)
        try:
            async with self._pool.connection() as backend:
                session = Session(backend, epoch)
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
        epoch = self._epoch(False)
        self._enter()
        async with self._pool.connection() as backend:
            version = await GameRepository(Session(backend, epoch)).save_in_place(
                record=record, expected_version=record.version
            )
        if version is not None:
            return version
        async with self.transaction() as tx:
            return await tx.games.save(record=record, expected_version=record.version)

    async def accept_update(self, *, update_id: int, body: str, at: datetime) -> bool:
        """As `Database.accept_update`, in one statement that also tells the leader
        (``NOTIFY`` on `INBOX_CHANNEL`: the update's id, this worker's name and, where it
        fits a notification, the update itself, so the leader need not read it)."""
        self._enter()
        async with self._pool.connection() as backend:
            rows = await backend.fetchall(
                "WITH new AS (INSERT INTO inbox (update_id, body, received_us) VALUES (?, ?, ?) "
                "ON CONFLICT (update_id) DO NOTHING RETURNING update_id, body) "
                "SELECT update_id, pg_notify(?, update_id::text || ' ' || ? || "
                f"CASE WHEN octet_length(body) <= {NOTIFY_BODY} THEN ' ' || body ELSE '' END) "
                "AS told FROM new",
                (update_id, body, to_us(at), INBOX_CHANNEL, self.name),
            )
        return bool(rows)

    async def schema_version(self) -> int:
        async with self._pool.connection() as backend:
            return await current_version(backend)

    async def integrity_check(self) -> list[str]:
        async with self._pool.connection() as backend:
            return await backend.integrity_check()


NOTIFY_BODY: Final = 7000
"""The largest update (in bytes) a notification carries (PostgreSQL takes 8000 at most)."""

_NOW_US: Final = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT"
"""The database server's clock in microseconds: every worker's lease is reckoned by it."""


class PostgresLease(Lease):
    """The lease on PostgreSQL: the one row of table ``leader``, read and written on a
    connection of its own (outside the pool, named after the worker like all of its
    connections), by the database server's clock.

    A standby takes the lease when it is free, ran out (its holder hangs or cannot reach the
    database), or its holder's lease connection is gone (the process died: the server ended
    its session), and then ends the sessions of the worker it took the lease from, so that
    nothing that worker still had open (a transaction and its row locks) holds up the new
    leader. The leader renews it on the same connection; losing that connection ends the
    lead at once (`held` is False) until a renewal on a new one finds the lease still
    this worker's. The leader's connection also carries `listen`'s channels."""

    def __init__(
        self,
        url: DatabaseURL,
        name: str,
        *,
        seconds: float = LEASE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(name[:63])
        self.url = url
        self.seconds = seconds
        self._clock = clock
        self._until = -math.inf  # this process's clock: leads until then
        self._conn: Any = None
        self._lock = asyncio.Lock()  # one statement at a time on the connection
        self._listeners: dict[str, Callable[[str], None]] = {}
        self._seen: str | None = None  # the holder, as last seen
        self._closed = False

    def held(self) -> bool:
        return self.epoch is not None and self._clock() < self._until

    def holder(self) -> str | None:
        return self.name if self.held() else self._seen or None

    async def acquire(self) -> bool:
        started = self._clock()
        row = await self._fetchrow(
            "WITH old AS (SELECT holder, pid, expires_us FROM leader WHERE id = 1 FOR UPDATE), "
            "taken AS (UPDATE leader SET holder = $1, pid = pg_backend_pid(), "
            f"epoch = leader.epoch + 1, expires_us = {_NOW_US} + $2 FROM old "
            f"WHERE leader.id = 1 AND (old.holder = '' OR old.expires_us < {_NOW_US} "
            "OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a "
            "WHERE a.pid = old.pid AND a.application_name = old.holder)) "
            "RETURNING leader.epoch) "
            "SELECT old.holder, (SELECT epoch FROM taken) AS epoch FROM old",
            self.name,
            round(self.seconds * 1e6),
        )
        if row is None:
            raise DatabaseUnusable(
                f"database {self.url}: table leader has no row (schema damaged?)",
                where=str(self.url),
            )
        previous = str(row["holder"])
        if row["epoch"] is None:
            self._seen = previous
            return False
        self.epoch = int(row["epoch"])
        self._until = started + self.seconds - SAFETY
        self._seen = self.name
        if previous and previous != self.name:
            await self._end_sessions_of(previous)
        logger.info("this worker (%s) leads now (epoch %s)", self.name, self.epoch)
        return True

    async def _end_sessions_of(self, worker: str) -> None:
        """End every session of `worker` (the leader this one replaces): a transaction it
        still has open is rolled back, its locks released."""
        try:
            ended = await self._fetchval(
                "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = $1 AND pid <> pg_backend_pid()) AS t",
                worker,
            )
        except StorageError as error:
            logger.warning("could not end the sessions of %s: %s", worker, error)
            return
        if ended:
            logger.info("ended %s database sessions of the previous leader %s", ended, worker)

    async def renew(self) -> bool:
        if self.epoch is None:
            return False
        started = self._clock()
        renewed = await self._fetchval(
            f"UPDATE leader SET expires_us = {_NOW_US} + $1, pid = pg_backend_pid() "
            "WHERE id = 1 AND holder = $2 AND epoch = $3 RETURNING epoch",
            round(self.seconds * 1e6),
            self.name,
            self.epoch,
        )
        if renewed is None:
            logger.warning("this worker (%s) lost the lead (epoch %s)", self.name, self.epoch)
            self.epoch = None
            self._until = -math.inf
            # A call it had on its way when it hung may have landed since it woke: the
            # leader shows its games again over it (`FENCED_CHANNEL`).
            with contextlib.suppress(StorageError):
                await self._fetchval("SELECT pg_notify($1, $2)", FENCED_CHANNEL, self.name)
            return False
        self._until = started + self.seconds - SAFETY
        return True

    async def release(self) -> None:
        epoch, self.epoch = self.epoch, None
        self._until = -math.inf
        if epoch is None:
            return
        try:
            released = await self._fetchval(
                "UPDATE leader SET expires_us = 0 WHERE id = 1 AND holder = $1 AND epoch = $2 "
                "RETURNING epoch",
                self.name,
                epoch,
            )
        except StorageError as error:  # it runs out by itself
            logger.warning("could not hand the lead over: %s", error)
            return
        if released is not None:
            logger.info("this worker (%s) handed the lead over", self.name)
        else:
            logger.info("this worker (%s) had lost the lead already", self.name)

    async def listen(self, channel: str, callback: Callable[[str], None]) -> None:
        """Call `callback` with the payload of each notification on `channel`, on this
        lease's connection (and on every connection it opens later), until `unlisten`."""
        self._listeners[channel] = callback
        async with self._lock:
            conn = await self._connection()
            await conn.add_listener(channel, self._relay)

    async def unlisten(self, channel: str) -> None:
        self._listeners.pop(channel, None)
        conn = self._conn
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(Exception):
                async with self._lock:
                    await conn.remove_listener(channel, self._relay)

    def _relay(self, _conn: Any, _pid: int, channel: str, payload: object) -> None:
        callback = self._listeners.get(channel)
        if callback is not None:
            callback(str(payload))

    async def close(self) -> None:
        self._closed = True
        self.epoch = None
        self._until = -math.inf
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close(timeout=5)

    def _lost(self, conn: Any) -> None:
        """The lease's connection ended: the lead with it, until a renewal on a new one."""
        if conn is self._conn:
            self._until = -math.inf

    async def _connection(self) -> Any:
        if self._closed:
            raise RuntimeError("the lease is closed")
        conn = self._conn
        if conn is None or conn.is_closed():
            self._conn = None
            conn = await asyncpg.connect(
                self.url.dsn,
                timeout=CONNECT_SECONDS,
                server_settings=_session_settings(self.url, self.name),
            )
            conn.add_termination_listener(self._lost)
            for channel in self._listeners:
                await conn.add_listener(channel, self._relay)
            self._conn = conn
        return conn

    async def _fetchrow(self, sql: str, *args: Any) -> Any:
        async with self._lock:
            try:
                conn = await self._connection()
                return await conn.fetchrow(sql, *args)
            except (
                asyncpg.PostgresError,
                asyncpg.InterfaceError,
                asyncpg.InternalClientError,  # the server ended the session (see `_call`)
                OSError,
                TimeoutError,
            ) as error:
                conn, self._conn = self._conn, None
                if conn is not None:  # a connection in doubt: a new one, and no lead until
                    conn.terminate()  # a renewal on it says the lease is still ours
                self._until = -math.inf
                translated = _translate(error, str(self.url))
                if translated is error:
                    translated = DatabaseUnreachable(
                        f"database {self.url}: {_reason(error)}", where=str(self.url)
                    )
                raise translated from error

    async def _fetchval(self, sql: str, *args: Any) -> Any:
        row = await self._fetchrow(sql, *args)
        return None if row is None else row[0]
