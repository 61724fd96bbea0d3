"""The inbox of updates (webhook mode): any worker stores a posted update once, the leader
reads those waiting in order and marks each handled with its changes (a second mark rolls
its transaction back), old ones are pruned. On each backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engine import Rules
from storage import Conflict, Database, GameRecord, Lobby, NotFound, Seat

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)


async def test_an_update_is_stored_once_and_waits_until_handled(db: Database) -> None:
    """A redelivered update is recognised: the second accept stores nothing."""
    assert await db.accept_update(update_id=7, body='{"update_id": 7}', at=NOW)
    assert not await db.accept_update(update_id=7, body='{"update_id": 7}', at=NOW)
    async with db.transaction(readonly=True) as tx:
        assert not await tx.inbox.handled(update_id=7)
        assert [(s.update_id, s.body) for s in await tx.inbox.waiting(limit=10)] == [
            (7, '{"update_id": 7}')
        ]
    async with db.transaction() as tx:
        await tx.inbox.done(update_id=7, at=NOW)
    async with db.transaction(readonly=True) as tx:
        assert await tx.inbox.handled(update_id=7)
        assert await tx.inbox.waiting(limit=10) == []
        assert await tx.inbox.count_waiting() == 0


async def test_waiting_updates_come_in_order_and_by_id(db: Database) -> None:
    for update_id in (30, 10, 20, 2**40):  # update ids are large; posts come in any order
        await db.accept_update(update_id=update_id, body="{}", at=NOW)
    async with db.transaction() as tx:
        await tx.inbox.done(update_id=20, at=NOW)
    async with db.transaction(readonly=True) as tx:
        assert [s.update_id for s in await tx.inbox.waiting(limit=10)] == [10, 30, 2**40]
        assert [s.update_id for s in await tx.inbox.waiting(limit=2)] == [10, 30]
        chosen = await tx.inbox.waiting(limit=10, ids=[2**40, 20, 99])
        assert [s.update_id for s in chosen] == [2**40]
        assert await tx.inbox.waiting(limit=10, ids=[]) == []
        assert await tx.inbox.count_waiting() == 3


async def test_a_second_mark_rolls_back_what_came_with_it(db: Database) -> None:
    """An update handled twice: the second handling's changes are not stored."""
    await db.accept_update(update_id=2**40, body="{}", at=NOW)
    async with db.transaction() as tx:
        await tx.inbox.done(update_id=2**40, at=NOW)
    lobby = GameRecord(
        chat_id=-5,
        status="lobby",
        language="en",
        rules=Rules(),
        lobby=Lobby(opener_id=1, seats=[Seat("1", 1, "A")]),
    )

    async def handle_again() -> None:
        async with db.transaction() as tx:
            await tx.games.create(record=lobby)
            await tx.inbox.done(update_id=2**40, at=NOW)

    with pytest.raises(Conflict, match="handled already"):
        await handle_again()
    async with db.transaction(readonly=True) as tx:
        with pytest.raises(NotFound):
            await tx.games.active_for_chat(chat_id=-5)


async def test_an_update_the_inbox_never_had_is_stored_as_handled(db: Database) -> None:
    """Marked without having been accepted (handled straight from a post): recorded, and a
    second mark is refused as for any other."""
    async with db.transaction() as tx:
        await tx.inbox.done(update_id=5, at=NOW)
    async with db.transaction(readonly=True) as tx:
        assert await tx.inbox.handled(update_id=5)
    with pytest.raises(Conflict):
        async with db.transaction() as tx:
            await tx.inbox.done(update_id=5, at=NOW)


async def test_note_marks_once_and_says_whether_it_was_new(db: Database) -> None:
    await db.accept_update(update_id=3, body="{}", at=NOW)
    async with db.transaction() as tx:
        assert await tx.inbox.note(update_id=3, at=NOW)
    async with db.transaction() as tx:
        assert not await tx.inbox.note(update_id=3, at=NOW)
        assert await tx.inbox.note(update_id=4, at=NOW)  # never accepted: stored as handled


async def test_prune_forgets_only_the_old_and_handled(db: Database) -> None:
    await db.accept_update(update_id=1, body="{}", at=NOW - timedelta(hours=49))
    await db.accept_update(update_id=2, body="{}", at=NOW - timedelta(hours=1))
    await db.accept_update(update_id=3, body="{}", at=NOW - timedelta(hours=50))  # waiting
    async with db.transaction() as tx:
        await tx.inbox.done(update_id=1, at=NOW)
        await tx.inbox.done(update_id=2, at=NOW)
        assert await tx.inbox.prune(before=NOW - timedelta(hours=48)) == 1
    async with db.transaction(readonly=True) as tx:
        assert not await tx.inbox.handled(update_id=1)
        assert await tx.inbox.handled(update_id=2)
        assert [s.update_id for s in await tx.inbox.waiting(limit=10)] == [3]


async def test_the_bot_state_keeps_one_value_per_key(db: Database) -> None:
    async with db.transaction() as tx:
        assert await tx.state.get(key="webhook") is None
        await tx.state.put(key="webhook", value="a")
        await tx.state.put(key="webhook", value="b")
        await tx.state.put(key="commands", value="c")
    async with db.transaction(readonly=True) as tx:
        assert await tx.state.get(key="webhook") == "b"
        assert await tx.state.get(key="commands") == "c"
