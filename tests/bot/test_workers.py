"""Several workers on one PostgreSQL database (#20): each worker's `GameStore` gives a unit of
work the chat's game as currently stored, under a lock that holds across the workers.

Two stores here, each on a `Database` of its own (as two processes would have), on one
PostgreSQL database: units of work on one chat take turns, each sees what the other stored
(no `Conflict`, no stale copy), a game the other ended is gone, a player's running games are
found whichever worker plays them, and many chats at once cannot empty a pool of two. And
two whole bots against one fake Telegram: a game whose taps go to either bot goes tap by tap
as it goes on one.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from bot.kit import Kit, Person
from bot.store import GameStore
from storage import Database, GameRecord
from storage.postgres import chat_lock_key
from tests import postgres
from tests.bot.conftest import TOKEN, BotHarness, ManualClock, make_settings
from tests.fakes.telegram import FakeGroup, FakeTelegram
from tests.storage.conftest import lobby_record, running_record
from tests.storage.test_chat_locks import WAIT, until_waiting

pytestmark = pytest.mark.postgres

CHAT = -100


def store_on(db: Database, tmp_path: Path) -> GameStore:
    """A worker's store: what a unit of work needs of the kit is its database, settings and
    clock (nothing here sends to Telegram)."""
    kit = Kit(
        db=db,
        out=cast(Any, None),
        tr=cast(Any, None),
        settings=make_settings(tmp_path / "unused.sqlite3"),
        bot_username="durak_test_bot",
        clock=ManualClock(),
        seeds=lambda: 1,
    )
    return GameStore(kit)


@pytest.fixture
async def pg_url(pg_server: postgres.PostgresServer) -> AsyncIterator[str]:
    async with postgres.fresh_database(pg_server) as url:
        yield url


@pytest.fixture
async def stores(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[GameStore, GameStore]]:
    a, b = await Database.open(pg_url), await Database.open(pg_url)
    try:
        yield store_on(a, tmp_path), store_on(b, tmp_path)
    finally:
        await b.close()
        await a.close()


async def test_each_worker_sees_what_the_other_stored(
    stores: tuple[GameStore, GameStore],
) -> None:
    a, b = stores
    assert a.shared and b.shared
    created = await a.create(lobby_record(CHAT, 1, 2))
    async with a.for_chat(CHAT) as unit:
        assert unit.record is created  # A's live copy, still the stored one
        created.lobby.message_id = 1001
        await a.save(created)
    async with b.for_chat(CHAT) as unit:  # B never had it: loaded
        record = unit.record
        assert record is not None and record.lobby.message_id == 1001
        record.lobby.message_id = 1002
        await b.save(record)
    async with a.for_chat(CHAT) as unit:  # A's copy is stale now: loaded again
        again = unit.record
        assert again is not None and again is not created
        assert again.lobby.message_id == 1002 and again.version == record.version
        again.lobby.message_id = 1003
        await a.save(again)  # no Conflict
    async with b.for_chat(CHAT) as unit:
        assert unit.record is not None
        await b.close_game(unit.record)
    async with a.for_chat(CHAT) as unit:  # ended by B: A's copy is dropped
        assert unit.record is None
    assert a.live(CHAT) is None


async def test_a_second_worker_waits_for_the_first_ones_unit_of_work(
    stores: tuple[GameStore, GameStore], pg_url: str
) -> None:
    a, b = stores
    await a.create(lobby_record(CHAT, 1, 2))
    inside = asyncio.Event()

    async def unit_on_b() -> int | None:
        async with b.for_chat(CHAT) as unit:
            inside.set()
            return unit.record.lobby.message_id if unit.record else None

    async with a.for_chat(CHAT) as unit:
        assert unit.record is not None
        waiting = asyncio.create_task(unit_on_b())
        await until_waiting(pg_url, chat_lock_key(CHAT) & 0xFFFF_FFFF_FFFF_FFFF)
        assert not inside.is_set()
        unit.record.lobby.message_id = 2001
        await a.save(unit.record)
    assert await asyncio.wait_for(waiting, WAIT) == 2001


async def test_a_players_running_games_are_found_whichever_worker_plays_them(
    stores: tuple[GameStore, GameStore],
) -> None:
    a, b = stores
    first = await a.create(running_record(-100, 1, 2))
    second = await b.create(running_record(-200, 3, 1))
    await a.create(lobby_record(-300, 1, 4))
    alice = Person(user_id=1, name="Alice")
    for store in (a, b):
        assert [r.id for r in await store.running_games_of(alice)] == [first.id, second.id]
    assert await a.running_games_of(Person(user_id=4, name="Dan")) == []


async def test_many_chats_at_once_on_two_workers_cannot_empty_a_pool_of_two(
    pg_url: str, tmp_path: Path
) -> None:
    url = f"{pg_url}?pool_max=2"
    dbs = [await Database.open(url), await Database.open(url)]
    try:
        workers = [store_on(db, tmp_path) for db in dbs]
        chats = list(range(-100, -130, -1))
        for chat_id in chats:
            await workers[0].create(lobby_record(chat_id, 1, 2))

        async def tap(store: GameStore, chat_id: int) -> None:
            async with store.for_chat(chat_id) as unit:
                assert unit.record is not None
                unit.record.lobby.message_id = (unit.record.lobby.message_id or 0) + 1
                await store.save(unit.record)
                assert [r.chat_id for r in await store.running_games_of(Person(9, "Nobody"))] == []

        taps = [tap(workers[n % 2], chat_id) for n in range(6) for chat_id in chats]
        await asyncio.wait_for(asyncio.gather(*taps), WAIT)
        for chat_id in chats:
            record = await workers[1].stored(chat_id)
            assert record is not None and record.lobby.message_id == 77 + 6
    finally:
        for db in dbs:
            await db.close()


# ---------------------------------------------------------------- two whole bots


@pytest.fixture
async def two_bots(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[BotHarness, BotHarness]]:
    """Two bots (workers A and B) on one PostgreSQL database, answering one fake Telegram:
    each update goes to the worker the test hands it to."""
    fake = FakeTelegram(token=TOKEN)
    clock = ManualClock()
    bots = []
    for name in ("a", "b"):
        db_path = tmp_path / f"{name}.sqlite3"  # never made: the database is PostgreSQL's
        settings = make_settings(db_path, database_url=pg_url)
        bots.append(BotHarness(fake=fake, db_path=db_path, clock=clock, settings=settings))
    try:
        for h in bots:
            await h.start()
        yield bots[0], bots[1]
    finally:
        for h in bots:
            await h.stop()


async def stored_game(h: BotHarness, group: FakeGroup) -> GameRecord:
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        return await tx.games.latest_for_chat(chat_id=group.id)


async def play(bots: list[BotHarness], seed: int) -> list[tuple[str, str | None, int]]:
    """Alice and Bob play a game in a group, opened on the first bot: each tap is on a
    random button of the hand of a player the game waits for, and goes to a random bot.
    What happened, tap by tap: who tapped, the answer, and the stored game's move number."""
    first = bots[0]
    alice, bob = first.user(1, "Alice"), first.user(2, "Bob")
    group = first.fake.group(-7301, "Club", admins={alice})
    await first.open_game(group, [alice, bob])
    taps, workers = random.Random(seed), random.Random(seed + 1)
    trace: list[tuple[str, str | None, int]] = []
    while (record := await stored_game(first, group)).status == "running":
        assert record.game is not None
        actor = first.users[int(taps.choice(sorted(record.game.to_act)))]
        hand = first.fake.message(actor.id, record.hand_messages[str(actor.id)])
        buttons = [x.callback_data for row in hand.buttons for x in row if x.callback_data]
        tap = actor.tap(hand, taps.choice(buttons))
        await workers.choice(bots).send(tap)
        answer = first.fake.answer_for(tap)
        after = await stored_game(first, group)
        moves = after.game.move_number if after.game is not None else -1
        trace.append((actor.first_name, answer.text if answer else None, moves))
        assert len(trace) < 3000, "the game does not end"
    assert record.status == "finished"
    async with first.rooms.kit.db.transaction(readonly=True) as tx:
        assert await tx.results.count(chat_id=group.id) == 1
    return trace


async def test_a_game_played_on_two_workers_tap_by_tap_goes_as_on_one(
    two_bots: tuple[BotHarness, BotHarness], harness: BotHarness
) -> None:
    """Each tap goes to either worker, so each often taps a game the other moved last: it
    sees that move (its tap is not out of date, nor a conflict, nor lost), and the game goes
    tap by tap as it goes on one bot (SQLite), answers and all, to one result."""
    on_one = await play([harness], seed=7)
    on_two = await play(list(two_bots), seed=7)
    assert on_two == on_one
    assert len({moves for _, _, moves in on_two}) > 20  # a game of many moves


async def test_a_tap_finds_a_game_that_another_worker_moved_with_its_group(
    stores: tuple[GameStore, GameStore],
) -> None:
    """A group became a supergroup while worker B handled it: the game moved to the new
    chat. Worker A remembered the game in the old chat; a tap of it on A still finds it."""
    a, b = stores
    created = await a.create(running_record(CHAT, 1, 2))
    assert created.id is not None
    async with a.for_game(created.id) as unit:  # A remembers the game's chat
        assert unit is not None and unit.game(created.id) is not None
    async with b.locked(CHAT, -1009100):
        await b.migrate(CHAT, -1009100)
    async with a.for_game(created.id) as unit:
        assert unit is not None and unit.chat_id == -1009100
        record = unit.game(created.id)
        assert record is not None and record.chat_id == -1009100
