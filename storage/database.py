"""`Database`: the entry point. Opens the backend, migrates, hands out transactions."""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime

from storage.backend import Backend, SqliteBackend, read_outcome
from storage.errors import DatabaseBusy, DatabaseUnavailable, Fenced, StorageError
from storage.lease import Lease, SoleLease, worker_name
from storage.records import GameRecord
from storage.repositories import (
    ChatRepository,
    GameRepository,
    InboxRepository,
    PlayerRepository,
    ResultRepository,
    Session,
    StateRepository,
)
from storage.schema import current_version, migrate
from storage.sqlite_files import new_file, remove_unmade
from storage.url import DatabaseURL, parse_database_url

logger = logging.getLogger(__name__)


QUICK_CHECK_SECONDS = 10.0
"""How long the start-up check of a database may take before it is cut short."""


async def check_database(
    url: str | DatabaseURL, *, time_limit: float = QUICK_CHECK_SECONDS
) -> bool:
    """Check the database before anything writes to it (SQLite: ``PRAGMA quick_check`` on a
    read-only connection). Raises `DatabaseUnusable` (one line naming the file, the cause and
    what to do) for a damaged file, one that is not a database, or one that cannot be read.
    Returns True if the whole database was checked (or there is none yet), False if the
    check ran out of ``time_limit`` seconds first (a very large file: it was not finished).
    """
    parsed = parse_database_url(url) if isinstance(url, str) else url
    if parsed.scheme == "postgresql":
        return True  # the server keeps its own files sound; opening it finds what is wrong
    return await SqliteBackend.check(parsed, time_limit=time_limit)


class Transaction:
    """Repositories bound to one open transaction (a unit of work).

    Everything done through ``games``, ``players``, ``chats`` and ``results`` commits together
    when the ``async with db.transaction()`` block ends normally, or not at all.
    """

    __slots__ = ("_session", "chats", "games", "inbox", "players", "results", "state")

    def __init__(self, session: Session) -> None:
        self._session = session
        self.games = GameRepository(session)
        self.players = PlayerRepository(session)
        self.chats = ChatRepository(session)
        self.results = ResultRepository(session)
        self.inbox = InboxRepository(session)
        self.state = StateRepository(session)

    async def migrate_chat(self, *, old_chat_id: int, new_chat_id: int) -> int:
        """A group became a supergroup: move its games, settings, results and statistics.

        Returns how many games moved (see `GameRepository.migrate_chat`).
        """
        moved = await self.games.migrate_chat(old_chat_id=old_chat_id, new_chat_id=new_chat_id)
        await self.chats.migrate_chat(old_chat_id=old_chat_id, new_chat_id=new_chat_id)
        await self.results.migrate_chat(old_chat_id=old_chat_id, new_chat_id=new_chat_id)
        return moved


class ChatLocks:
    """One `asyncio.Lock` per chat, kept only while a task holds it or waits for it: a
    process that has seen many chats keeps no lock for each of them."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    def __getitem__(self, chat_id: int) -> asyncio.Lock:
        lock = self._locks.get(chat_id)
        if lock is None:
            lock = self._locks[chat_id] = asyncio.Lock()
        return lock

    def __len__(self) -> int:
        return len(self._locks)


class Database:
    """One database, reached through one connection; transactions run one at a time.

    ``await Database.open(url)`` or ``async with Database.connect(url) as db``. A
    ``postgresql://`` URL opens a `storage.postgres.PostgresDatabase` instead: the same
    methods, over a pool of connections. Opening applies
    any pending migrations (raising `SchemaTooNew` if the database is ahead of this code) and
    raises `DatabaseUnusable` for a file it cannot use (not a database, damaged, read-only).
    It does not check the whole file first: `check_database` does, before opening.
    """

    def __init__(self, backend: Backend, url: DatabaseURL, name: str = "durak") -> None:
        self._backend = backend
        self.url = url
        self.name = name  # this process's among the workers (`storage.lease.worker_name`)
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[object] | None = None
        self._closed = False
        self._committing: asyncio.Future[None] | None = None  # the last COMMIT issued
        # One-statement saves waiting to go out, and the task sending them (see save_game).
        self._saves: list[tuple[GameRecord, asyncio.Future[int | None]]] = []
        self._batch: list[tuple[GameRecord, asyncio.Future[int | None]]] = []  # on its way
        self._saver: asyncio.Future[None] | None = None
        # Told the kind ("write", "read", "save": `save_game`'s one statement) and the seconds
        # of each transaction that committed, from holding the database to the COMMIT's
        # outcome. Set by whoever measures (the bot's metrics); storage knows nothing of them.
        self.observer: Callable[[str, float], None] | None = None
        self.fence: Lease | None = None

    def lease(self, name: str, *, clock: Callable[[], float] = time.monotonic) -> Lease:
        """The lease of the worker that plays, for this process (named `name`; `clock`: this
        process's, by which it reckons its lease). SQLite: one process owns the file, so it
        always leads (`SoleLease`); PostgreSQL: the one row of table ``leader``
        (`storage.postgres.PostgresLease`)."""
        return SoleLease(name)

    def fence_with(self, lease: Lease | None) -> None:
        """From now on, write transactions and game saves belong to `lease`'s holder: each
        first checks that it still leads (`Lease.held`) and raises `Fenced` if not, and
        every game save and inbox mark is checked against its epoch in the database too.
        None: no such checks (SQLite, where one process owns the file, needs none)."""
        self.fence = lease

    def _epoch(self, readonly: bool) -> int | None:
        """The epoch this write transaction's game saves must still hold (None: unchecked);
        raises `Fenced` if this process no longer leads."""
        lease = self.fence
        if lease is None or readonly:
            return None
        if not lease.held():
            raise Fenced(f"this worker ({lease.name}) does not lead: nothing was written")
        return lease.epoch

    @classmethod
    async def open(cls, url: str | DatabaseURL, *, name: str | None = None) -> Database:
        """Open (and migrate) the database; `name`: this process's name among the workers
        (PostgreSQL: every connection's ``application_name``; default `worker_name()`)."""
        parsed = parse_database_url(url) if isinstance(url, str) else url
        if parsed.scheme == "postgresql":  # a pool of connections, not one (storage.postgres)
            from storage.postgres import PostgresDatabase

            return await PostgresDatabase.open(parsed, name=name)
        made = new_file(parsed)  # (a file made here and not set up is removed: no 0-byte file)
        try:
            backend = await SqliteBackend.open(parsed)
        except BaseException:
            if made is not None:
                remove_unmade(made)
            raise
        try:
            await migrate(backend)
        except BaseException:
            await backend.close()
            if made is not None:
                remove_unmade(made)
            raise
        db = cls(backend, parsed, name or worker_name())
        try:
            await db._rate_unrated()
        except BaseException:
            await db.close()
            raise
        return db

    async def _rate_unrated(self) -> None:
        """Games recorded before ratings existed (schema < 4) get rated once, from scratch."""
        async with self.transaction() as tx:
            if await tx.results.unrated():
                await tx.results.recompute_ratings()

    @classmethod
    @asynccontextmanager
    async def connect(cls, url: str | DatabaseURL) -> AsyncIterator[Database]:
        db = await cls.open(url)
        try:
            yield db
        finally:
            await db.close()

    async def close(self) -> None:
        """Wait for the running transaction, then close. Idempotent."""
        if self._closed:
            return
        async with self._lock:
            if not self._closed:
                self._closed = True
                await self._backend.close()

    @asynccontextmanager
    async def _exclusive(self) -> AsyncIterator[asyncio.Task[object] | None]:
        """The database's lock, for the current task (returned). Refuses a second hold by
        the same task (RuntimeError instead of a deadlock) and a closed database."""
        task = asyncio.current_task()
        if task is not None and self._owner is task:
            raise RuntimeError("a transaction is already open in this task; nest nothing")
        async with self._lock:
            if self._closed:
                raise RuntimeError("the database is closed")
            yield task

    @asynccontextmanager
    async def transaction(
        self, *, readonly: bool = False, fenced: bool = True
    ) -> AsyncIterator[Transaction]:
        """A unit of work: commit on normal exit, roll back on any exception.

        A write transaction (the default) takes the database's write lock when it begins.
        Transactions of this `Database` queue behind each other; opening one inside another in
        the same task raises RuntimeError instead of deadlocking. ``fenced=False``: a write
        any worker may make, leading or not (the inbox's), unchecked by `fence_with`.
        """
        epoch = self._epoch(readonly or not fenced)
        async with self._exclusive() as task:
            started = time.perf_counter()
            self._owner = task
            session = Session(self._backend, epoch)
            try:
                await self._backend.begin(write=not readonly)
                try:
                    yield Transaction(session)
                except BaseException:
                    session.active = False
                    await self._backend.rollback()
                    raise
                session.active = False
                try:
                    issued = self._backend.began  # a COMMIT goes out (see save_game)
                    committed = await self._backend.start_commit()
                    if issued:
                        self._committing = committed
                except BaseException:
                    await self._backend.rollback()
                    raise
            finally:
                session.active = False
                self._owner = None
        # The COMMIT is issued ahead of whatever the next transaction does: that one may begin
        # while this one waits for the outcome. A task of its own, shielded: a cancelled
        # caller stops neither the COMMIT nor the clean-up after one that failed.
        finishing = asyncio.ensure_future(self._finish_commit(committed))
        finishing.add_done_callback(read_outcome)
        await asyncio.shield(finishing)
        if self.observer is not None:
            self.observer("read" if readonly else "write", time.perf_counter() - started)

    async def save_game(self, record: GameRecord) -> int:
        """Save one game in a transaction of its own, as ``games.save`` in `transaction` would
        (same errors); return its new version. The record itself is not changed.

        The usual move (the game at ``record.version``, keeping its chat and status) is one
        UPDATE that the database commits by itself: one round trip instead of three (BEGIN,
        UPDATE, COMMIT), and on aiosqlite each round trip is a wait for its thread. Saves of
        different games that arrive while one is on its way go out together, each still its
        own statement and its own transaction: aiosqlite's thread runs them one after another
        without waiting for the loop in between, and the loop hears of them together.

        Anything else takes the full transaction. So does a save that comes right after a
        COMMIT that failed: that COMMIT's transaction may still be open, and a statement sent
        into it would be rolled back with it.
        """
        task = asyncio.current_task()
        if task is not None and self._owner is task:  # the batch would wait for this task
            raise RuntimeError("a transaction is already open in this task; nest nothing")
        if self._closed:
            raise RuntimeError("the database is closed")
        started = time.perf_counter()
        saved: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self._saves.append((record, saved))
        if self._saver is None or self._saver.done():
            self._saver = asyncio.ensure_future(self._send_saves())
            # Also when it is cancelled before its first step, or fails: nobody waits forever.
            self._saver.add_done_callback(self._saver_done)
        version = await saved
        if version is not None:
            if self.observer is not None:
                self.observer("save", time.perf_counter() - started)
            return version
        async with self.transaction() as tx:
            return await tx.games.save(record=record, expected_version=record.version)

    async def _send_saves(self) -> None:
        """Send the waiting one-statement saves, a batch per hold of the lock (a transaction
        waiting for the lock goes between two batches), until none waits. Each save's future
        gets its new version, None (take the full transaction) or its error."""
        while self._saves:
            async with self._exclusive():
                self._batch = [(r, saved) for r, saved in self._saves if not saved.done()]
                self._saves.clear()
                outcomes = await self._save_in_place([r for r, _ in self._batch])
                for (_, saved), outcome in zip(self._batch, outcomes, strict=True):
                    if saved.done():  # its caller was cancelled meanwhile
                        continue
                    if isinstance(outcome, BaseException):
                        saved.set_exception(outcome)
                    else:
                        saved.set_result(outcome)
                self._batch = []

    def _saver_done(self, saver: asyncio.Future[None]) -> None:
        """The task sending saves ended. If it did not finish its work (the database closed;
        the task cancelled, at shutdown, when its statements may or may not have been
        stored), every save it leaves waiting hears why, each with an error of its own."""
        current = saver is self._saver
        if current:
            self._saver = None
        error = None if saver.cancelled() else saver.exception()
        if not saver.cancelled() and error is None:
            return  # it ends only when no save waits
        waiting = self._batch + (self._saves if current else [])  # else: the next one's
        self._batch = []
        if current:
            self._saves = []
        for _, saved in waiting:
            if saved.done():
                continue
            if isinstance(error, RuntimeError):  # "the database is closed"
                failure: Exception = RuntimeError(*error.args)
            else:
                failure = StorageError("the save was interrupted: it may or may not be stored")
            failure.__cause__ = error
            saved.set_exception(failure)

    async def _save_in_place(self, records: list[GameRecord]) -> list[int | BaseException | None]:
        """`GameRepository.save_in_place` for each record, all sent at once (holding the lock):
        its new version, None where the full transaction must do it, or its error."""
        committing = self._committing
        if committing is not None and not committing.done():
            # Issued before these statements, so done before they run anyway: no extra wait.
            await asyncio.wait([committing])
        if committing is not None and (committing.cancelled() or committing.exception()):
            return [None] * len(records)
        games = GameRepository(Session(self._backend))
        outcomes: list[int | BaseException | None] = await asyncio.gather(
            *(games.save_in_place(record=r, expected_version=r.version) for r in records),
            return_exceptions=True,
        )
        # Another process writes: a statement waits 2 ms (inline) or 50 ms (aiosqlite's
        # thread) at most, and the full path backs off with asyncio.sleep.
        return [None if isinstance(o, DatabaseBusy) else o for o in outcomes]

    async def _finish_commit(self, committed: asyncio.Future[None]) -> None:
        """Wait for the COMMIT; if it failed, roll back what it may have left open (holding the
        write lock), unless the database was closed meanwhile (closing rolls back)."""
        try:
            await committed
        except Exception as error:
            # Logged here too: a caller cancelled meanwhile never hears of it. A database that
            # cannot store (a full disk) fails every COMMIT: its caller reports the outage.
            outage = isinstance(error, (DatabaseUnavailable, DatabaseBusy))
            log = logger.debug if outage else logger.warning
            log("a COMMIT failed, the transaction is rolled back: %s", error)
            async with self._lock:
                if not self._closed:
                    await self._backend.rollback()
            raise

    async def accept_update(self, *, update_id: int, body: str, at: datetime) -> bool:
        """Store an update Telegram posted, for the leader (any worker may, leading or not);
        True if it was new, False if the inbox has it already (a redelivery)."""
        async with self.transaction(fenced=False) as tx:
            return await tx.inbox.accept(update_id=update_id, body=body, at=at)

    async def schema_version(self) -> int:
        async with self._lock:
            return await current_version(self._backend)

    async def integrity_check(self) -> list[str]:
        """``["ok"]`` if the database file is sound (SQLite ``PRAGMA integrity_check``)."""
        async with self._lock:
            return await self._backend.integrity_check()
