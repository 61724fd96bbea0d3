"""Handled Telegram updates (webhook mode): a redelivered update is recognised, a second
record of one rolls its transaction back, old ids are pruned. On each backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engine import Rules
from storage import Conflict, Database, GameRecord, Lobby, NotFound, Seat


async def test_an_update_is_handled_once_recorded(db: Database) -> None:
    async with db.transaction() as tx:
        assert not await tx.updates.handled(update_id=7)
        await tx.updates.record(update_id=7)
    async with db.transaction(readonly=True) as tx:
        assert await tx.updates.handled(update_id=7)
        assert not await tx.updates.handled(update_id=8)


async def test_a_second_record_rolls_back_what_came_with_it(db: Database) -> None:
    """Two workers handled the same update: the second one's changes are not stored."""
    async with db.transaction() as tx:
        await tx.updates.record(update_id=2**40)  # update ids are large
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
            await tx.updates.record(update_id=2**40)

    with pytest.raises(Conflict, match="handled already"):
        await handle_again()
    async with db.transaction(readonly=True) as tx:
        with pytest.raises(NotFound):
            await tx.games.active_for_chat(chat_id=-5)


async def test_note_records_once_and_says_whether_it_was_new(db: Database) -> None:
    async with db.transaction() as tx:
        assert await tx.updates.note(update_id=3)
    async with db.transaction() as tx:
        assert not await tx.updates.note(update_id=3)


async def test_prune_forgets_only_the_old(db: Database) -> None:
    now = datetime(2026, 5, 1, 12, tzinfo=UTC)
    async with db.transaction() as tx:
        await tx.updates.record(update_id=1, at=now - timedelta(hours=49))
        await tx.updates.record(update_id=2, at=now - timedelta(hours=1))
        assert await tx.updates.prune(before=now - timedelta(hours=48)) == 1
    async with db.transaction(readonly=True) as tx:
        assert not await tx.updates.handled(update_id=1)
        assert await tx.updates.handled(update_id=2)
