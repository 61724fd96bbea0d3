"""A transaction commits all of its writes or none, also when the COMMIT itself fails."""

from __future__ import annotations

import asyncio

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
