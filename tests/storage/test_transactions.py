"""A transaction commits all of its writes or none, also when the COMMIT itself fails."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from storage import Database, InvalidRecord, NotFound, Player


async def _deferred_check(db: Database) -> None:
    """A table whose foreign key is checked only at COMMIT: a way to make a COMMIT fail."""
    async with db.transaction():
        await db._backend.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        await db._backend.execute(
            "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER "
            "REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        )


async def _failing_at_commit(db: Database) -> None:
    """Stores Alice, in a transaction whose COMMIT fails."""
    async with db.transaction() as tx:
        await tx.players.upsert(player=Player(user_id=1, name="Alice"))
        await db._backend.execute("INSERT INTO child (id, parent) VALUES (1, 99)")


@pytest.mark.sqlite_only(reason="a COMMIT failing on SQLite's one connection, through its backend")
async def test_a_commit_that_fails_writes_nothing_and_the_next_transaction_runs(
    db: Database,
) -> None:
    await _deferred_check(db)
    with pytest.raises(InvalidRecord, match="FOREIGN KEY"):
        await _failing_at_commit(db)
    async with db.transaction() as tx:  # the failed transaction is not left open
        with pytest.raises(NotFound):
            await tx.players.get(user_id=1)
        await tx.players.upsert(player=Player(user_id=2, name="Bob"))
    async with db.transaction(readonly=True) as tx:
        assert (await tx.players.get(user_id=2)).name == "Bob"


@pytest.mark.sqlite_only(reason="a COMMIT failing on SQLite's one connection, through its backend")
async def test_a_transaction_queued_behind_a_failing_commit_still_commits(db: Database) -> None:
    """The next transaction may begin while a COMMIT is still on its way: it must neither see
    nor keep anything of a COMMIT that fails, nor fail itself."""
    await _deferred_check(db)

    async def next_one() -> None:
        async with db.transaction() as tx:
            await tx.players.upsert(player=Player(user_id=2, name="Bob"))

    outcomes = await asyncio.gather(_failing_at_commit(db), next_one(), return_exceptions=True)
    assert isinstance(outcomes[0], InvalidRecord)
    assert outcomes[1] is None
    async with db.transaction(readonly=True) as tx:
        with pytest.raises(NotFound):
            await tx.players.get(user_id=1)
        assert (await tx.players.get(user_id=2)).name == "Bob"


@pytest.mark.sqlite_only(reason="a COMMIT failing on SQLite's one connection, through its backend")
async def test_a_failed_commit_of_a_cancelled_caller_does_not_keep_the_write_lock(
    db: Database, db_url: str
) -> None:
    """Nobody is left to hear of the failure, yet the transaction is rolled back: another
    connection (another process, say) can write instead of waiting for ever."""
    await _deferred_check(db)
    loop = asyncio.get_running_loop()

    async def cancelled_while_committing() -> None:
        me = asyncio.current_task()
        assert me is not None
        async with db.transaction() as tx:
            await tx.players.upsert(player=Player(user_id=1, name="Alice"))
            await db._backend.execute("INSERT INTO child (id, parent) VALUES (1, 99)")
            # Cancelled two loop turns on: while it waits for the COMMIT's outcome.
            loop.call_soon(lambda: loop.call_soon(me.cancel))

    with pytest.raises(asyncio.CancelledError):
        await asyncio.ensure_future(cancelled_while_committing())
    async with Database.connect(db_url) as other, other.transaction() as tx:
        await tx.players.upsert(player=Player(user_id=2, name="Bob"))
        with pytest.raises(NotFound):
            await tx.players.get(user_id=1)


@pytest.mark.sqlite_only(reason="a COMMIT failing on SQLite's one connection, through its backend")
async def test_a_commit_failing_while_the_database_closes_reports_its_own_error(
    db: Database,
) -> None:
    await _deferred_check(db)
    closing: list[asyncio.Future[None]] = []

    async def failing_while_closing() -> None:
        async with db.transaction() as tx:
            await tx.players.upsert(player=Player(user_id=1, name="Alice"))
            await db._backend.execute("INSERT INTO child (id, parent) VALUES (1, 99)")
            closing.append(asyncio.ensure_future(db.close()))  # shutting down meanwhile

    with pytest.raises(InvalidRecord, match="FOREIGN KEY"):
        await failing_while_closing()
    await closing[0]


@pytest.mark.sqlite_only(reason="a COMMIT failing on SQLite's one connection, through its backend")
async def test_an_error_of_the_first_query_is_raised_as_itself(db: Database) -> None:
    with pytest.raises(sqlite3.OperationalError, match="no such table") as raised:
        async with db.transaction():
            await db._backend.fetchall("SELECT * FROM no_such_table")
    assert raised.value.__cause__ is not raised.value


async def _bump(db: Database, user_id: int, counter_id: int) -> None:
    """One transaction: read a counter (a player), yield, write it + 1 and a player. (Each
    caller its own counter: PostgreSQL runs the two side by side, and two read-then-writes
    of one row would both read the same count.)"""
    async with db.transaction() as tx:
        counter = await tx.players.get(user_id=counter_id)
        await asyncio.sleep(0)  # one turn of the loop: a point where it may be cancelled
        await tx.players.upsert(player=Player(user_id=counter_id, name=str(int(counter.name) + 1)))
        await tx.players.upsert(player=Player(user_id=user_id, name="x"))


async def test_cancelling_a_transaction_at_any_step_keeps_every_commit_whole(
    db: Database,
) -> None:
    """Two transactions at once, the first cancelled after 0, 1, 2, ... turns of the loop
    (while it waits for the lock, a BEGIN, a query, a write or its COMMIT): each commits
    whole or not at all, the other always commits, and the counter counts the commits."""
    async with db.transaction() as tx:
        await tx.players.upsert(player=Player(user_id=0, name="0"))
        await tx.players.upsert(player=Player(user_id=-1, name="0"))
    user_ids = iter(range(1, 1000))
    committed: list[int] = []
    for turns in range(60):
        first, second = next(user_ids), next(user_ids)
        cancelled = asyncio.ensure_future(_bump(db, first, 0))
        other = asyncio.ensure_future(_bump(db, second, -1))
        for _ in range(turns):
            await asyncio.sleep(0)  # a step of the loop, not a wait for anything
        cancelled.cancel()
        outcomes = await asyncio.gather(cancelled, other, return_exceptions=True)
        assert outcomes[1] is None, (turns, outcomes[1])
        assert outcomes[0] is None or isinstance(outcomes[0], asyncio.CancelledError)
        async with db.transaction(readonly=True) as tx:
            for user_id in (first, second):
                try:
                    await tx.players.get(user_id=user_id)
                except NotFound:
                    continue
                committed.append(user_id)
            firsts = sum(1 for user_id in committed if user_id % 2 == 1)
            assert int((await tx.players.get(user_id=0)).name) == firsts, turns
            assert int((await tx.players.get(user_id=-1)).name) == len(committed) - firsts
            if outcomes[0] is None:
                assert first in committed
    assert await db.integrity_check() == ["ok"]
