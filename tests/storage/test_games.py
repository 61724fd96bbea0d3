"""Games: round trips, optimistic concurrency, one active game per chat, the unit of work."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import pytest

from engine import RandomPlayer, Rules
from storage import (
    Conflict,
    Database,
    GameMeta,
    GameRecord,
    InvalidRecord,
    LogEntry,
    NotFound,
    Player,
    Seat,
    StorageError,
)

from .conftest import T0, lobby_record, result, running_record


async def test_lobby_round_trip(db: Database) -> None:
    record = lobby_record(-100, 5, 6)
    record.lobby.seats.append(
        Seat(player_id="cpu-easy-1", user_id=None, name="Бот", is_computer=True, level="easy")
    )
    async with db.transaction() as tx:
        created = await tx.games.create(record=record)
    assert created.id is not None
    assert created.version == 1
    assert record.id is None  # the argument is not modified
    async with db.transaction() as tx:
        loaded = await tx.games.get(game_id=created.id)
    assert loaded == created
    assert loaded.game is None
    assert loaded.lobby.seats[2].is_computer


async def test_running_game_round_trip_continues_identically(db: Database) -> None:
    record = running_record(-100, 1, 2, 3, seed=7)
    record.timeouts = {"2": 1}
    record.meta = GameMeta(
        title="Дурачки",
        left={"2": "resigned"},
        log=[LogEntry("attack", "1"), LogEntry("picked", "2", count=3)],
        extra={"events": [["attack", "7♠"]]},  # a key of a newer release survives
    )
    record.rules = Rules.preset("perevodnoy")
    assert record.game is not None
    async with db.transaction() as tx:
        created = await tx.games.create(record=record)
    async with db.transaction() as tx:
        loaded = await tx.games.active_for_chat(chat_id=-100)
    assert loaded == created
    assert loaded.deadline == T0 + timedelta(seconds=90)
    assert loaded.deadline is not None and loaded.deadline.utcoffset() == timedelta(0)
    original, restored = record.game, loaded.game
    assert restored is not None
    players = [RandomPlayer(3), RandomPlayer(3)]
    for _ in range(30):
        if original.is_over:
            break
        mover = sorted(original.to_act)[0]
        action = players[0].choose(original, mover)
        assert players[1].choose(restored, mover) == action
        original.apply(mover, action)
        restored.apply(mover, action)
    assert original == restored


async def test_save_bumps_version_and_stores_everything(db: Database) -> None:
    async with db.transaction() as tx:
        record = await tx.games.create(record=lobby_record())
    assert record.id is not None
    started = running_record()
    started.id, started.version, started.created_at = record.id, record.version, record.created_at
    async with db.transaction() as tx:
        started.version = await tx.games.save(record=started, expected_version=record.version)
    assert started.version == 2
    async with db.transaction() as tx:
        assert await tx.games.get(game_id=record.id) == started


async def test_stale_save_raises_conflict_and_writes_nothing(db: Database) -> None:
    async with db.transaction() as tx:
        record = await tx.games.create(record=running_record())
    assert record.id is not None
    first = dataclasses.replace(record, table_message_id=1)
    second = dataclasses.replace(record, table_message_id=2)
    async with db.transaction() as tx:
        assert await tx.games.save(record=first, expected_version=1) == 2

    async def finish_with_stale_copy() -> None:
        async with db.transaction() as tx:
            await tx.results.record(result=result(-100, ["1", "2"], "2"))
            await tx.games.save(record=second, expected_version=1)

    with pytest.raises(Conflict, match="expected version 1, stored version is 2"):
        await finish_with_stale_copy()
    async with db.transaction() as tx:
        stored = await tx.games.get(game_id=record.id)
        assert stored.table_message_id == 1
        assert stored.version == 2
        assert await tx.results.count() == 0  # the whole unit of work rolled back


async def test_conflict_between_two_connections(db_url: str) -> None:
    async with Database.connect(db_url) as one, Database.connect(db_url) as two:
        async with one.transaction() as tx:
            created = await tx.games.create(record=running_record())
        assert created.id is not None
        async with one.transaction() as tx:
            a = await tx.games.get(game_id=created.id)
        async with two.transaction() as tx:
            b = await tx.games.get(game_id=created.id)
        a.timeouts = {"1": 1}
        b.timeouts = {"2": 1}
        async with two.transaction() as tx:
            await tx.games.save(record=b, expected_version=b.version)
        with pytest.raises(Conflict):
            async with one.transaction() as tx:
                await tx.games.save(record=a, expected_version=a.version)
        async with one.transaction() as tx:
            assert (await tx.games.get(game_id=created.id)).timeouts == {"2": 1}


async def test_save_unknown_game_is_not_found(db: Database) -> None:
    record = dataclasses.replace(running_record(), id=999, version=1)
    with pytest.raises(NotFound):
        async with db.transaction() as tx:
            await tx.games.save(record=record, expected_version=1)
    with pytest.raises(ValueError, match="never created"):
        async with db.transaction() as tx:
            await tx.games.save(record=running_record(), expected_version=1)


async def test_missing_games_are_not_found(db: Database) -> None:
    async with db.transaction() as tx:
        with pytest.raises(NotFound, match="game 42"):
            await tx.games.get(game_id=42)
        with pytest.raises(NotFound, match="chat -5"):
            await tx.games.active_for_chat(chat_id=-5)


async def test_one_active_game_per_chat(db: Database) -> None:
    async with db.transaction() as tx:
        first = await tx.games.create(record=lobby_record(-100))
        await tx.games.create(record=lobby_record(-200))
    with pytest.raises(Conflict, match="chat -100 already has a game"):
        async with db.transaction() as tx:
            await tx.games.create(record=running_record(-100))
    # Once finished (or cancelled), the chat may start another one.
    first.status = "cancelled"
    async with db.transaction() as tx:
        await tx.games.save(record=first, expected_version=first.version)
        second = await tx.games.create(record=running_record(-100))
    # Reviving the old one would give the chat two active games.
    first.status = "lobby"
    with pytest.raises(Conflict):
        async with db.transaction() as tx:
            await tx.games.save(record=first, expected_version=2)
    async with db.transaction() as tx:
        assert (await tx.games.active_for_chat(chat_id=-100)).id == second.id


async def test_create_refuses_bad_records(db: Database) -> None:
    async with db.transaction() as tx:
        with pytest.raises(ValueError, match="lobby or running"):
            await tx.games.create(record=dataclasses.replace(lobby_record(), status="finished"))
        with pytest.raises(ValueError, match="already stored"):
            await tx.games.create(record=dataclasses.replace(lobby_record(), id=3))
        with pytest.raises(ValueError, match="timezone"):
            await tx.games.create(
                record=dataclasses.replace(lobby_record(), created_at=T0.replace(tzinfo=None))
            )


async def test_all_active_and_due(db: Database) -> None:
    async with db.transaction() as tx:
        lobby = await tx.games.create(record=lobby_record(-1))
        early = running_record(-2)
        early.deadline = T0
        early = await tx.games.create(record=early)
        late = running_record(-3)
        late.deadline = T0 + timedelta(minutes=5)
        late = await tx.games.create(record=late)
        no_deadline = running_record(-4)
        no_deadline.deadline = None
        no_deadline = await tx.games.create(record=no_deadline)
        done = await tx.games.create(record=running_record(-5))
        done.status = "finished"
        await tx.games.save(record=done, expected_version=1)
    async with db.transaction(readonly=True) as tx:
        active = await tx.games.all_active()
        assert [g.id for g in active] == [lobby.id, early.id, late.id, no_deadline.id]
        assert [g.id for g in await tx.games.due(now=T0 - timedelta(seconds=1))] == []
        assert [g.id for g in await tx.games.due(now=T0)] == [early.id]
        due = await tx.games.due(now=T0 + timedelta(hours=1))
        assert [g.id for g in due] == [early.id, late.id]


async def test_migrate_chat_moves_games_and_bumps_versions(db: Database) -> None:
    async with db.transaction() as tx:
        old = await tx.games.create(record=running_record(-100))
        assert await tx.games.migrate_chat(old_chat_id=-100, new_chat_id=-100200) == 1
    async with db.transaction() as tx:
        moved = await tx.games.active_for_chat(chat_id=-100200)
        assert moved.id == old.id
        assert moved.version == 2
        with pytest.raises(NotFound):
            await tx.games.active_for_chat(chat_id=-100)
    with pytest.raises(Conflict):  # the stale copy still names the old chat
        async with db.transaction() as tx:
            await tx.games.save(record=old, expected_version=old.version)
    async with db.transaction() as tx:
        await tx.games.create(record=lobby_record(-100))
    with pytest.raises(Conflict, match="both have a game"):
        async with db.transaction() as tx:
            await tx.games.migrate_chat(old_chat_id=-100, new_chat_id=-100200)


async def test_exception_rolls_back_the_unit_of_work(db: Database) -> None:
    async def failing_unit() -> None:
        async with db.transaction() as tx:
            await tx.games.create(record=lobby_record())
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await failing_unit()
    async with db.transaction() as tx:
        assert await tx.games.all_active() == []


async def test_cancellation_rolls_back(db: Database) -> None:
    entered = asyncio.Event()

    async def writer() -> None:
        async with db.transaction() as tx:
            await tx.games.create(record=lobby_record())
            entered.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(writer())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with db.transaction() as tx:
        assert await tx.games.all_active() == []


async def test_repositories_die_with_their_transaction(db: Database) -> None:
    async with db.transaction() as tx:
        pass
    with pytest.raises(RuntimeError, match="transaction is over"):
        await tx.games.all_active()


async def test_nested_transaction_is_refused(db: Database) -> None:
    async with db.transaction():
        with pytest.raises(RuntimeError, match="already open"):
            async with db.transaction():
                pass


async def test_concurrent_read_then_save_loses_no_update(db: Database, backend: str) -> None:
    """Ten writers, each reading the game and saving it ten times at once: every save is
    counted once. SQLite runs one transaction at a time (no save is refused); PostgreSQL
    runs them side by side, and a save of a version another writer replaced meanwhile is a
    `Conflict` (its writer reads again), never a lost update."""
    async with db.transaction() as tx:
        created = await tx.games.create(record=running_record())
    assert created.id is not None
    game_id = created.id
    conflicts = 0

    async def bump(n: int) -> None:
        nonlocal conflicts
        done = 0
        while done < n:
            try:
                async with db.transaction() as tx:
                    record = await tx.games.get(game_id=game_id)
                    await asyncio.sleep(0)  # let the others try to get in
                    record.timeouts = {"1": record.timeouts.get("1", 0) + 1}
                    await tx.games.save(record=record, expected_version=record.version)
            except Conflict:
                conflicts += 1
                continue
            done += 1

    await asyncio.gather(*(bump(10) for _ in range(10)))
    async with db.transaction() as tx:
        final = await tx.games.get(game_id=game_id)
    assert final.timeouts == {"1": 100}
    assert final.version == 101
    if backend != "postgresql":
        assert conflicts == 0


async def test_closed_database_refuses_transactions(db_url: str) -> None:
    db = await Database.open(db_url)
    await db.close()
    await db.close()
    with pytest.raises(RuntimeError, match="closed"):
        async with db.transaction():
            pass


def test_record_fields_match_the_design() -> None:
    names = [f.name for f in dataclasses.fields(GameRecord)]
    assert set(names) == {
        "id",
        "chat_id",
        "status",
        "language",
        "rules",
        "game",
        "lobby",
        "table_message_id",
        "hand_messages",
        "deadline",
        "timeouts",
        "created_at",
        "started_at",
        "meta",
        "version",
        "result_message_id",
        "hand_floors",
    }


# ------------------------------------------------------------------ Database.save_game


def _statements_sent(db: Database) -> list[str]:
    """From now on, the first word of each statement the driver is given, in order, and
    "(answered)" where a query's rows came back."""
    sent: list[str] = []
    driver = db._backend._driver  # type: ignore[attr-defined]
    real_execute, real_fetchall = driver.execute, driver.fetchall

    async def execute(sql: str, params: tuple[object, ...] = ()) -> None:
        sent.append(sql.split()[0])
        await real_execute(sql, params)

    async def fetchall(sql: str, params: tuple[object, ...] = ()) -> list[dict[str, object]]:
        sent.append(sql.split()[0])
        try:
            return await real_fetchall(sql, params)
        finally:
            sent.append("(answered)")

    driver.execute, driver.fetchall = execute, fetchall
    return sent


@pytest.mark.sqlite_only(reason="SQLite's one connection: its statements, its batches of saves")
async def test_save_game_stores_a_move_in_one_statement_of_its_own(db: Database) -> None:
    """The bot's save per move: the same outcome as `games.save` in a transaction, from one
    UPDATE the database commits by itself (another connection reads it at once)."""
    async with db.transaction() as tx:
        record = await tx.games.create(record=running_record())
    assert record.id is not None
    record.timeouts = {"1": 2}
    record.table_message_id = 777
    sent = _statements_sent(db)
    assert await db.save_game(record) == 2
    sent.remove("(answered)")
    assert sent == ["UPDATE"]  # no BEGIN, no COMMIT: one statement, committed by itself
    record.version = 2
    async with Database.connect(db.url) as other, other.transaction(readonly=True) as tx:
        assert await tx.games.get(game_id=record.id) == record


async def test_save_game_refuses_a_stale_record_and_writes_nothing(db: Database) -> None:
    async with db.transaction() as tx:
        record = await tx.games.create(record=running_record())
    assert record.id is not None
    first = dataclasses.replace(record, table_message_id=1)
    assert await db.save_game(first) == 2
    stale = dataclasses.replace(record, table_message_id=2)  # still at version 1
    with pytest.raises(Conflict, match="expected version 1, stored version is 2"):
        await db.save_game(stale)
    async with db.transaction(readonly=True) as tx:
        assert (await tx.games.get(game_id=record.id)).table_message_id == 1
    with pytest.raises(NotFound):
        await db.save_game(dataclasses.replace(record, id=999))


async def test_save_game_takes_the_full_transaction_for_a_new_status(db: Database) -> None:
    """Finishing a game, or reviving one into a chat that has another: as `games.save`."""
    async with db.transaction() as tx:
        first = await tx.games.create(record=running_record(-100))
    first.status = "finished"
    first.version = await db.save_game(first)
    async with db.transaction() as tx:
        await tx.games.create(record=running_record(-100))
        assert (await tx.games.get(game_id=first.id or 0)).status == "finished"
    first.status = "running"
    with pytest.raises(Conflict, match="already has another game"):
        await db.save_game(first)


@pytest.mark.sqlite_only(reason="SQLite's one connection: its statements, its batches of saves")
async def test_save_game_right_after_a_failing_commit_is_stored(db: Database) -> None:
    """A COMMIT that fails leaves its transaction open: a statement sent into it would go
    down with it. The save that follows must still be stored, and nothing of the other."""
    async with db.transaction() as tx:
        record = await tx.games.create(record=running_record())
        await db._backend.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        await db._backend.execute(
            "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER "
            "REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        )
    assert record.id is not None
    record.table_message_id = 4242

    async def failing_at_commit() -> None:  # another chat's unit of work, say
        async with db.transaction() as tx:
            await tx.players.upsert(player=Player(user_id=1, name="Alice"))
            await db._backend.execute("INSERT INTO child (id, parent) VALUES (1, 99)")

    async def nothing_to_commit() -> None:  # a unit of work that ends up running nothing
        async with db.transaction():
            pass

    # The empty one commits nothing: it must not hide that the COMMIT before it failed.
    outcomes = await asyncio.gather(
        failing_at_commit(), nothing_to_commit(), db.save_game(record), return_exceptions=True
    )
    assert isinstance(outcomes[0], InvalidRecord)
    assert outcomes[1:] == [None, 2]
    async with Database.connect(db.url) as other, other.transaction(readonly=True) as tx:
        stored = await tx.games.get(game_id=record.id)
        with pytest.raises(NotFound):
            await tx.players.get(user_id=1)
    assert (stored.table_message_id, stored.version) == (4242, 2)


async def _games(db: Database, count: int) -> list[GameRecord]:
    async with db.transaction() as tx:
        return [await tx.games.create(record=running_record(-100 - i)) for i in range(count)]


async def _another_chats_work(
    db: Database, *, inside: asyncio.Event | None = None, leave: asyncio.Event | None = None
) -> None:
    """A unit of work of another chat, holding the database meanwhile; it sets `inside`
    once in, and stays until `leave` is set."""
    async with db.transaction() as tx:
        await tx.players.upsert(player=Player(user_id=1, name="Alice"))
        if inside is not None:
            inside.set()
        if leave is not None:
            await leave.wait()


async def _saves_and_stores(db: Database, record: GameRecord, table_message_id: int) -> None:
    """The next save of `record` (at version 1) goes through and is read back."""
    assert await db.save_game(dataclasses.replace(record, table_message_id=table_message_id)) == 2
    async with db.transaction(readonly=True) as tx:
        assert (await tx.games.get(game_id=record.id or 0)).table_message_id == table_message_id


@pytest.mark.sqlite_only(reason="SQLite's one connection: its statements, its batches of saves")
async def test_saves_of_several_games_go_out_together_each_its_own_transaction(
    db: Database, executor: str
) -> None:
    """Saves that arrive while the database is busy go out as one batch of statements (on
    aiosqlite: all sent before the first comes back), and each stands alone: a stale one is a
    `Conflict` and the others are stored all the same."""
    first, second, third, fourth = await _games(db, 4)
    third.version = await db.save_game(dataclasses.replace(third, table_message_id=3))
    stale = dataclasses.replace(third, version=1, table_message_id=33)
    for record in (first, second, fourth):
        record.table_message_id = 1000 + (record.id or 0)

    sent = _statements_sent(db)
    outcomes = await asyncio.gather(
        _another_chats_work(db),
        *(db.save_game(r) for r in (first, second, stale, fourth)),
        return_exceptions=True,
    )
    assert outcomes[0] is None
    assert outcomes[1:3] == [2, 2]
    assert isinstance(outcomes[3], Conflict)
    assert outcomes[4] == 2
    batch = sent[sent.index("COMMIT") + 1 :][:8]  # after the busy one's COMMIT: the batch
    assert batch.count("UPDATE") == 4
    if executor == "aiosqlite":
        assert batch[:4] == ["UPDATE"] * 4  # all four sent before the first came back
    async with Database.connect(db.url) as other, other.transaction(readonly=True) as tx:
        stored = {r.id: await tx.games.get(game_id=r.id or 0) for r in (first, second, third)}
        assert await tx.players.get(user_id=1)
        assert (await tx.games.get(game_id=fourth.id or 0)).table_message_id == 1000 + (
            fourth.id or 0
        )
    assert stored[third.id].table_message_id == 3  # the stale save wrote nothing
    assert stored[first.id].table_message_id == 1000 + (first.id or 0)
    assert stored[second.id].version == 2


@pytest.mark.sqlite_only(reason="SQLite's one connection: its statements, its batches of saves")
async def test_a_save_whose_caller_gave_up_before_it_went_out_is_not_written(
    db: Database,
) -> None:
    (record,) = await _games(db, 1)
    record.table_message_id = 4242
    inside, leave = asyncio.Event(), asyncio.Event()
    holder = asyncio.create_task(_another_chats_work(db, inside=inside, leave=leave))
    await inside.wait()
    saving = asyncio.create_task(db.save_game(record))
    await asyncio.sleep(0)  # a step of the loop: the save waits for the database
    saving.cancel()
    leave.set()
    await holder
    with pytest.raises(asyncio.CancelledError):
        await saving
    await _saves_and_stores(db, record, 7)


@pytest.mark.sqlite_only(reason="SQLite's one connection: its statements, its batches of saves")
async def test_a_save_waiting_when_the_database_closes_is_refused_not_left_hanging(
    db: Database,
) -> None:
    (record,) = await _games(db, 1)

    outcomes = await asyncio.gather(
        _another_chats_work(db), db.close(), db.save_game(record), return_exceptions=True
    )
    assert outcomes[:2] == [None, None]
    assert isinstance(outcomes[2], RuntimeError)
    assert "closed" in str(outcomes[2])
    with pytest.raises(RuntimeError, match="closed"):
        await db.save_game(record)


@pytest.mark.sqlite_only(reason="SQLite's one connection: its statements, its batches of saves")
async def test_saves_survive_the_task_sending_them_being_cancelled_before_it_starts(
    db: Database,
) -> None:
    """At shutdown, say: the save it leaves waiting is told so (not left hanging), and the
    next save starts a new one."""
    (record,) = await _games(db, 1)
    saving = asyncio.create_task(db.save_game(dataclasses.replace(record, table_message_id=5)))
    await asyncio.sleep(0)  # a step of the loop: the save waits for the task sending saves
    saver = db._saver
    assert saver is not None
    saver.cancel()  # before that task's first step
    with pytest.raises(StorageError, match="interrupted"):
        async with asyncio.timeout(10):  # a failure, not a hang, if it is left waiting
            await saving
    await _saves_and_stores(db, record, 7)


@pytest.mark.sqlite_only(reason="SQLite's one connection: its statements, its batches of saves")
async def test_a_save_interrupted_on_its_way_is_a_storage_error_not_a_cancellation(
    db: Database,
) -> None:
    """The task sending saves cancelled while a statement is on its way: its caller, which
    nobody cancelled, gets a `StorageError` (the bot answers the tap and reloads the game),
    not a `CancelledError`; the database goes on saving."""
    first, second = await _games(db, 2)
    driver = db._backend._driver  # type: ignore[attr-defined]
    real_fetchall = driver.fetchall
    on_its_way, go_on = asyncio.Event(), asyncio.Event()

    async def fetchall(sql: str, params: tuple[object, ...] = ()) -> list[dict[str, object]]:
        if sql.startswith("UPDATE"):
            on_its_way.set()
            await go_on.wait()
        return await real_fetchall(sql, params)

    driver.fetchall = fetchall
    saving = asyncio.create_task(db.save_game(dataclasses.replace(first, table_message_id=5)))
    await on_its_way.wait()
    assert db._saver is not None
    db._saver.cancel()
    with pytest.raises(StorageError, match="interrupted"):
        async with asyncio.timeout(10):  # a failure, not a hang, if it is left waiting
            await saving
    go_on.set()
    driver.fetchall = real_fetchall
    await _saves_and_stores(db, second, 8)


async def test_save_game_inside_a_transaction_of_the_same_task_is_refused(db: Database) -> None:
    async with db.transaction() as tx:
        record = await tx.games.create(record=running_record())
        with pytest.raises(RuntimeError, match="nest nothing"):
            await db.save_game(record)
