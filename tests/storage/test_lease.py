"""The lease of the worker that plays (`storage.lease`): on PostgreSQL one worker holds it,
another takes it when it runs out, when its holder's session is gone or when it is handed
over, and a leader whose lease passed writes nothing (fenced). On SQLite the one process
always leads.

The lease's time is the database server's: a lease that ran out is made so by moving its
end into the past in the table, not by waiting."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from engine import Rules
from storage import Database, DatabaseUnreachable, Fenced, GameRecord, Lobby, Seat
from storage.postgres import PostgresLease
from storage.url import DatabaseURL, parse_database_url
from tests import postgres

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)


class Clock:
    """This process's clock for a lease: moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def pg_url(pg_server: postgres.PostgresServer) -> AsyncIterator[str]:
    async with postgres.fresh_database(pg_server) as url:
        yield url


@pytest.fixture
async def open_db(pg_url: str) -> AsyncIterator[Callable[[str], asyncio.Future[Database]]]:
    """Open the test's database as a worker of the given name; closed afterwards."""
    opened: list[Database] = []

    async def open_as(name: str) -> Database:
        db = await Database.open(pg_url, name=name)
        opened.append(db)
        return db

    yield open_as  # type: ignore[misc]
    for db in opened:
        await db.close()


async def _leader_row(url: str) -> dict[str, object]:
    conn = await asyncpg.connect(url)
    try:
        row = await conn.fetchrow("SELECT holder, epoch, expires_us FROM leader WHERE id = 1")
    finally:
        await conn.close()
    assert row is not None
    return dict(row)


async def _run_out(url: str) -> None:
    """The lease's time is over (as if its holder had hung that long)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("UPDATE leader SET expires_us = 1 WHERE id = 1")
    finally:
        await conn.close()


def _lobby(chat_id: int) -> GameRecord:
    return GameRecord(
        chat_id=chat_id,
        status="lobby",
        language="en",
        rules=Rules(),
        lobby=Lobby(opener_id=1, seats=[Seat("1", 1, "A")]),
    )


async def test_sqlite_has_one_process_and_it_always_leads(tmp_path: Path) -> None:
    async with Database.connect(f"sqlite:///{tmp_path / 'd.sqlite3'}") as db:
        lease = db.lease("solo")
        assert await lease.acquire() and lease.held() and lease.epoch is None
        assert await lease.renew()
        db.fence_with(lease)
        async with db.transaction() as tx:  # nothing checked against an epoch
            await tx.games.create(record=_lobby(-1))
        await lease.release()
        assert not lease.held()


@pytest.mark.postgres
async def test_one_worker_leads_and_the_others_see_who(pg_url: str) -> None:
    first, second = PostgresLease(_url(pg_url), "w-a"), PostgresLease(_url(pg_url), "w-b")
    try:
        assert await first.acquire()
        assert first.held() and first.epoch == 1
        assert not await second.acquire()
        assert not second.held() and second.holder() == "w-a"
        assert await first.renew() and first.held()
        assert (await _leader_row(pg_url))["holder"] == "w-a"
    finally:
        await first.close()
        await second.close()


@pytest.mark.postgres
async def test_a_lease_that_ran_out_is_taken_and_its_old_holder_is_fenced(pg_url: str) -> None:
    """A leader that hung: once its lease ran out a standby takes it under a new epoch, and
    the old leader, waking, can renew nothing, and its clock says it does not lead."""
    clock = Clock()
    old = PostgresLease(_url(pg_url), "w-old", clock=clock)
    new = PostgresLease(_url(pg_url), "w-new")
    try:
        assert await old.acquire()
        clock.now += old.seconds  # its own reckoning ran out first
        assert not old.held()
        await _run_out(pg_url)
        assert await new.acquire() and new.epoch == 2
        assert not await _renew(old)
        assert not old.held() and old.epoch is None
    finally:
        await old.close()
        await new.close()


@pytest.mark.postgres
async def test_a_leader_whose_session_ended_is_replaced_at_once(pg_url: str) -> None:
    """The leader's process died: its database session went with it, and a standby takes the
    lease at its next look, long before the lease would run out."""
    old = PostgresLease(_url(pg_url), "w-dead")
    new = PostgresLease(_url(pg_url), "w-next")
    try:
        assert await old.acquire()
        assert not await new.acquire()
        await old.close()  # the session ends (without handing over)
        assert await new.acquire() and new.epoch == 2
    finally:
        await new.close()


@pytest.mark.postgres
async def test_a_leader_that_stops_hands_over_at_once(pg_url: str) -> None:
    old = PostgresLease(_url(pg_url), "w-leaving")
    new = PostgresLease(_url(pg_url), "w-staying")
    try:
        assert await old.acquire()
        await old.release()
        assert not old.held()
        assert await new.acquire() and new.epoch == 2
        assert not await _renew(old)
    finally:
        await old.close()
        await new.close()


@pytest.mark.postgres
async def test_a_lost_lease_connection_ends_the_lead_until_a_renewal_finds_it_still_ours(
    pg_url: str,
) -> None:
    """The server ended the leader's lease session (restarted, say): the lead stops with the
    connection, and a renewal on a new one finds the lease still this worker's."""
    lease = PostgresLease(_url(pg_url), "w-blip")
    admin = await asyncpg.connect(pg_url)
    try:
        assert await lease.acquire()
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            "w-blip",
        )
        try:  # the connection is found gone now (or was already): no lead without it
            renewed = await lease.renew()
        except DatabaseUnreachable:
            assert not lease.held()
            renewed = await lease.renew()
        assert renewed and lease.held() and lease.epoch == 1
    finally:
        await admin.close()
        await lease.close()


@pytest.mark.postgres
async def test_a_fenced_leader_writes_nothing(
    open_db: Callable[[str], asyncio.Future[Database]], pg_url: str
) -> None:
    """After the lease passed, the old leader's saves, new games and inbox marks are refused
    by the database itself, and its own clock refuses any write before it is sent."""
    old_db, new_db = await open_db("w-one"), await open_db("w-two")
    clock = Clock()
    old = PostgresLease(old_db.url, "w-one", clock=clock)
    new = new_db.lease("w-two")
    try:
        assert await old.acquire()
        old_db.fence_with(old)
        async with old_db.transaction() as tx:
            lobby = await tx.games.create(record=_lobby(-10))
        await new_db.accept_update(update_id=1, body="{}", at=NOW)
        await _run_out(pg_url)
        assert await new.acquire()
        assert old.held()  # its clock has not noticed yet: the database refuses
        lobby.lobby.seats.append(Seat("2", 2, "B"))
        # (The new leader ended the old one's sessions: a write on one of them finds it gone.)
        with pytest.raises((Fenced, DatabaseUnreachable)):
            await old_db.save_game(lobby)
        with pytest.raises(Fenced):
            await old_db.save_game(lobby)
        with pytest.raises(Fenced):
            async with old_db.transaction() as tx:
                await tx.games.save(record=lobby, expected_version=lobby.version)
        with pytest.raises(Fenced):
            async with old_db.transaction() as tx:
                await tx.games.create(record=_lobby(-11))
        with pytest.raises(Fenced):
            async with old_db.transaction() as tx:
                await tx.inbox.done(update_id=1, at=NOW)
        clock.now += old.seconds  # and now its clock knows
        with pytest.raises(Fenced):
            async with old_db.transaction() as tx:
                await tx.players.set_can_message(user_id=1, value=True)
        async with new_db.transaction(readonly=True) as tx:
            stored = await tx.games.active_for_chat(chat_id=-10)
            assert len(stored.lobby.seats) == 1 and stored.version == 1
            assert not await tx.inbox.handled(update_id=1)
            with pytest.raises(Exception, match="no game"):
                await tx.games.active_for_chat(chat_id=-11)
        # The new leader's own writes go through; any worker may store an update.
        new_db.fence_with(new)
        async with new_db.transaction() as tx:
            await tx.inbox.done(update_id=1, at=NOW)
        assert await old_db.accept_update(update_id=2, body="{}", at=NOW)
    finally:
        await old.close()
        await new.close()


@pytest.mark.postgres
async def test_taking_the_lead_ends_what_the_old_leader_held_open(
    open_db: Callable[[str], asyncio.Future[Database]], pg_url: str
) -> None:
    """A leader stopped in the middle of a transaction holds its row locks: the new leader
    ends its sessions, so its own save of that game does not wait for them."""
    old_db, new_db = await open_db("w-stuck"), await open_db("w-fresh")
    old, new = old_db.lease("w-stuck"), new_db.lease("w-fresh")
    try:
        assert await old.acquire()
        old_db.fence_with(old)
        async with old_db.transaction() as tx:
            lobby = await tx.games.create(record=_lobby(-20))
        stuck = asyncio.Event()

        async def hang_in_a_transaction() -> None:
            async with old_db.transaction() as tx:
                await tx.games.save(record=lobby, expected_version=lobby.version)
                stuck.set()
                await asyncio.Event().wait()  # never commits

        hanging = asyncio.create_task(hang_in_a_transaction())
        await stuck.wait()
        await _run_out(pg_url)
        assert await new.acquire()
        new_db.fence_with(new)
        async with new_db.transaction() as tx:
            record = await tx.games.active_for_chat(chat_id=-20)
            assert record.version == 1  # the hung save was rolled back
            record.version = await tx.games.save(record=record, expected_version=1)
        assert record.version == 2
        hanging.cancel()
        with pytest.raises((asyncio.CancelledError, Exception)):
            await hanging
    finally:
        await old.close()
        await new.close()


@pytest.mark.postgres
async def test_the_leader_hears_of_each_update_another_worker_stored(
    open_db: Callable[[str], asyncio.Future[Database]],
) -> None:
    leader_db, other_db = await open_db("w-lead"), await open_db("w-take")
    lease = leader_db.lease("w-lead")
    heard: asyncio.Queue[str] = asyncio.Queue()
    assert isinstance(lease, PostgresLease)
    try:
        assert await lease.acquire()
        await lease.listen("durak_inbox", heard.put_nowait)
        assert await other_db.accept_update(update_id=41, body="{}", at=NOW)
        assert not await other_db.accept_update(update_id=41, body="{}", at=NOW)  # told once
        assert await other_db.accept_update(update_id=42, body="{}", at=NOW)
        assert await asyncio.wait_for(heard.get(), 10) == "41 w-take {}"
        assert await asyncio.wait_for(heard.get(), 10) == "42 w-take {}"
        large = '{"update_id": 43, "text": "' + "x" * 8000 + '"}'  # (more than NOTIFY takes)
        assert await other_db.accept_update(update_id=43, body=large, at=NOW)
        assert await asyncio.wait_for(heard.get(), 10) == "43 w-take"  # read from the inbox
        assert heard.empty()
    finally:
        await lease.close()


async def _renew(lease: PostgresLease) -> bool:
    """`renew`, once more if its connection was found gone (ended by a new leader)."""
    try:
        return await lease.renew()
    except DatabaseUnreachable:
        assert not lease.held()
        return await lease.renew()


def _url(pg_url: str) -> DatabaseURL:
    return parse_database_url(pg_url)
