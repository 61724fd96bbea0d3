"""Several workers on one PostgreSQL database (#30): one leads and plays, the others stand
by, take Telegram's posts into the inbox and take over when the leader stops, dies or hangs.

Two whole bots here (the harness, each with its own web server on loopback, in webhook
mode), on one PostgreSQL database and one fake Telegram: the first to start leads. What
each test proves is what players would notice: an update posted to either worker is handled
once, by the leader; a new leader shows every game as stored (a hand the old leader never
sent included) and keeps each deadline once; a leader that hung and wakes sends and writes
nothing.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from bot import leader
from bot.leader import DATABASE_KEY, inbox_reader, leadership
from bot.telegram import inbox
from bot.telegram.inbox import InboxReader
from bot.telegram.webhook import SECRET_HEADER
from bot.web import WebServer
from storage import Database, GameRecord
from storage.lease import LEASE_SECONDS
from tests import postgres
from tests.bot.conftest import (
    TOKEN,
    WEBHOOK_SECRET,
    BotHarness,
    ManualClock,
    make_settings,
    start_hooked,
)
from tests.fakes.telegram import FakeGroup, FakeMessage, FakeTelegram, FakeUser

pytestmark = pytest.mark.postgres

TAKE_OVER = 10.0  # seconds a standby may take to take the lead in these tests (it takes ~0.5)


class LeaseClock:
    """A worker's own clock for its lease: the loop's, moved on by hand (`ahead`: a hang,
    as the worker sees it when it wakes)."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.ahead


@dataclass
class Worker:
    """A whole bot in webhook mode with its web server, posted to over HTTP."""

    h: BotHarness
    web: WebServer
    client: httpx.AsyncClient
    clock: LeaseClock

    @property
    def leading(self) -> bool:
        lead = leadership(self.h.app)
        return lead is not None and lead.leading

    @property
    def name(self) -> str:
        lead = leadership(self.h.app)
        assert lead is not None
        return lead.lease.name

    @property
    def reader(self) -> InboxReader:
        reader = inbox_reader(self.h.app)
        assert reader is not None, "this worker does not lead"
        return reader

    async def post(self, update: dict[str, Any]) -> int:
        response = await self.client.post(
            f"http://127.0.0.1:{self.web.port}/hook",
            content=orjson.dumps(update),
            headers={SECRET_HEADER: WEBHOOK_SECRET},
        )
        return response.status_code

    async def settle(self) -> None:
        """Until this worker (the leader) handled what it took and sent what it caused."""
        await self.reader.caught_up()
        while self.reader.busy() or self.h.rooms.store.background.busy():
            await self.reader.settled()
            await self.h.settle()
        await self.h.settle()

    async def until_leading(self) -> None:
        lead = leadership(self.h.app)
        assert lead is not None
        async with asyncio.timeout(TAKE_OVER):
            while not self.leading:
                lead.changed.clear()
                await lead.changed.wait()


@pytest.fixture
async def pg_url(pg_server: postgres.PostgresServer) -> AsyncIterator[str]:
    async with postgres.fresh_database(pg_server) as url:
        yield url


@pytest.fixture
async def workers(pg_url: str, tmp_path: Path) -> AsyncIterator[list[Worker]]:
    """Two workers, A (started first: it leads) and B (it stands by)."""
    fake = FakeTelegram(token=TOKEN)
    clock = ManualClock()
    started: list[Worker] = []
    async with httpx.AsyncClient(trust_env=False) as client:
        try:
            for name in ("a", "b"):
                started.append(await _start_worker(name, fake, clock, pg_url, tmp_path, client))
            yield started
        finally:
            for worker in started:
                await worker.web.close()
                await worker.h.stop()


async def _start_worker(
    name: str,
    fake: FakeTelegram,
    clock: ManualClock,
    pg_url: str,
    tmp_path: Path,
    client: httpx.AsyncClient,
) -> Worker:
    db_path = tmp_path / f"{name}.sqlite3"  # never made: the database is PostgreSQL's
    lease_clock = LeaseClock()
    h = BotHarness(
        fake=fake,
        db_path=db_path,
        clock=clock,
        settings=make_settings(db_path, database_url=pg_url),
        lease_clock=lease_clock,
    )
    _, web = await start_hooked(h)
    return Worker(h, web, client, lease_clock)


async def stored(db: Database, group: FakeGroup) -> GameRecord:
    async with db.transaction(readonly=True) as tx:
        return await tx.games.latest_for_chat(chat_id=group.id)


def a_hand(fake: FakeTelegram, user: FakeUser, record: GameRecord) -> FakeMessage:
    mid = record.hand_messages.get(str(user.id))
    assert mid is not None
    return fake.message(user.id, mid)


async def open_game(
    a: Worker, post_to: Callable[[int], Worker], chat_id: int
) -> tuple[FakeGroup, FakeUser, FakeUser]:
    """Alice and Bob start a game, each update posted to the worker `post_to` picks."""
    fake = a.h.fake
    alice, bob = a.h.user(chat_id * -10 + 1, "Alice"), a.h.user(chat_id * -10 + 2, "Bob")
    group = fake.group(chat_id, "Club", admins={alice})
    steps = [
        lambda: alice.start_private(),
        lambda: bob.start_private(),
        lambda: alice.send(group, "/newgame"),
        lambda: bob.tap(_lobby(fake, group), "Join"),
        lambda: alice.tap(_lobby(fake, group), "Start"),
    ]
    for n, step in enumerate(steps):
        assert await post_to(n).post(step()) == 200
        await a.settle()
    return group, alice, bob


def _lobby(fake: FakeTelegram, group: FakeGroup) -> FakeMessage:
    return next(m for m in reversed(fake.messages(group.id)) if "Join" in m.button_texts)


# ---------------------------------------------------------------- who leads


async def test_the_first_worker_leads_and_the_other_stands_by(workers: list[Worker]) -> None:
    a, b = workers
    assert a.leading and not b.leading
    lead_b = leadership(b.h.app)
    assert lead_b is not None and lead_b.lease.holder() == a.name
    assert inbox_reader(b.h.app) is None  # it handles nothing: it only stores posts
    # Telegram heard the command menus and the webhook once, from the leader.
    assert a.h.fake.call_counts.get("setWebhook") == 1
    assert a.h.fake.call_counts.get("setMyCommands") == 8


async def test_a_post_to_either_worker_is_handled_once_by_the_leader(
    workers: list[Worker], monkeypatch: pytest.MonkeyPatch
) -> None:
    """B stores what it is posted and tells A, which handles it at once (A looks at the
    inbox itself only every hour here: what reaches it comes through the notification)."""
    a, b = workers
    monkeypatch.setattr(inbox, "SWEEP_SECONDS", 3600.0)
    fake = a.h.fake
    alice = a.h.user(1, "Alice")
    replied = asyncio.Event()
    unwatch = fake.watch(lambda message, _: replied.set() if message.chat_id == alice.id else None)
    try:
        update = alice.send_private("/help")
        assert await b.post(update) == 200
        async with asyncio.timeout(10):
            await replied.wait()
    finally:
        unwatch()
    await a.settle()
    replies = len(fake.messages(alice.id))
    assert replies >= 1
    assert await a.post(update) == 200  # Telegram posts it again, to the other worker
    await a.settle()
    assert len(fake.messages(alice.id)) == replies


async def test_a_game_posted_to_both_workers_goes_as_on_one(workers: list[Worker]) -> None:
    """Each update goes to a random worker: the game goes tap by tap, to its end."""
    a = workers[0]
    rng = random.Random(5)
    group, alice, bob = await open_game(a, lambda _: rng.choice(workers), -7301)
    users = {alice.id: alice, bob.id: bob}
    db = a.h.app.bot_data[DATABASE_KEY]
    taps = 0
    while (record := await stored(db, group)).status == "running":
        assert record.game is not None
        actor = users[int(rng.choice(sorted(record.game.to_act)))]
        hand = a_hand(a.h.fake, actor, record)
        buttons = [x.callback_data for row in hand.buttons for x in row if x.callback_data]
        tap = actor.tap(hand, rng.choice(buttons))
        assert await rng.choice(workers).post(tap) == 200
        await a.settle()
        assert a.h.fake.answer_for(tap) is not None  # every tap answered
        taps += 1
        assert taps < 3000, "the game does not end"
    assert record.status == "finished"
    async with db.transaction(readonly=True) as tx:
        assert await tx.results.count(chat_id=group.id) == 1
        assert await tx.inbox.count_waiting() == 0


# ---------------------------------------------------------------- taking over


async def test_a_leader_that_stops_hands_over_and_the_next_shows_every_game(
    workers: list[Worker],
) -> None:
    a, b = workers
    group, alice, bob = await open_game(a, lambda n: workers[n % 2], -7302)
    db = a.h.app.bot_data[DATABASE_KEY]
    before = await stored(db, group)
    await a.web.close()
    await a.h.stop()  # SIGTERM: it finishes, sends what is pending, hands over
    await b.until_leading()
    await b.settle()
    record = await stored(b.h.app.bot_data[DATABASE_KEY], group)
    assert record.game is not None and before.game is not None
    assert record.game.move_number == before.game.move_number
    # B plays on: a tap posted to B is applied.
    attacker = {alice.id: alice, bob.id: bob}[int(record.game.attacker)]
    hand = a_hand(b.h.fake, attacker, record)
    card = next(x for row in hand.buttons for x in row if "·" not in x.text)
    tap = attacker.tap(hand, card.callback_data or "")
    assert await b.post(tap) == 200
    await b.settle()
    after = await stored(b.h.app.bot_data[DATABASE_KEY], group)
    assert after.game is not None and after.game.move_number == record.game.move_number + 1
    workers.remove(a)  # (stopped already)


async def test_a_dead_leaders_unsent_hand_is_sent_by_the_next(workers: list[Worker]) -> None:
    """A stored Alice's move and died before Bob's hand went out: B takes over at once (A's
    database session is gone), and Bob's hand shows the move without anyone tapping."""
    a, b = workers
    group, alice, bob = await open_game(a, lambda n: workers[n % 2], -7303)
    db = a.h.app.bot_data[DATABASE_KEY]
    record = await stored(db, group)
    assert record.game is not None
    attacker, defender = (alice, bob) if record.game.attacker == str(alice.id) else (bob, alice)
    hand = a_hand(a.h.fake, attacker, record)
    card = next(x for row in hand.buttons for x in row if "·" not in x.text)
    waiting = a_hand(a.h.fake, defender, record)
    edits = waiting.edits

    def die(_: GameRecord) -> None:  # right after the move's commit: nothing more goes out
        a.clock.ahead = 10 * LEASE_SECONDS

    a.h.rooms.store.saved.append(die)
    assert await a.post(attacker.tap(hand, card.callback_data or "")) == 200
    await a.reader.settled()
    moved = await stored(db, group)
    assert moved.game is not None and moved.game.move_number == 1
    assert a.h.fake.message(defender.id, waiting.message_id).edits == edits  # never sent
    lead_a = leadership(a.h.app)
    assert lead_a is not None
    await lead_a.lease.close()  # its session ends with it, as a killed process's does
    await b.until_leading()
    await b.settle()
    shown = a_hand(b.h.fake, defender, await stored(db, group))
    assert shown.edits > edits or shown.message_id != waiting.message_id
    assert any(text.startswith("Take") for text in shown.button_texts)


async def test_a_leader_that_hung_sends_and_writes_nothing_when_it_wakes(
    workers: list[Worker], pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hangs past its lease (no renewal; its own clock says so when it wakes); B takes the
    lead once the lease ran out. A tap still reaching A finds it fenced: no answer, no edit,
    nothing stored; at its next renewal it stops playing and says so, B shows its games
    again (over anything A had on its way when it hung), and goes on."""
    a, b = workers
    group, alice, bob = await open_game(a, lambda n: workers[n % 2], -7304)
    db = a.h.app.bot_data[DATABASE_KEY]
    record = await stored(db, group)
    assert record.game is not None
    lead_a = leadership(a.h.app)
    assert lead_a is not None
    wakes = asyncio.Event()
    renew = lead_a.lease.renew

    async def hung() -> bool:
        await wakes.wait()
        return await renew()

    monkeypatch.setattr(lead_a.lease, "renew", hung)
    a.clock.ahead = LEASE_SECONDS  # A slept through its lease ...
    await _run_out(pg_url)  # ... and so did the database's clock
    await b.until_leading()
    attacker = {alice.id: alice, bob.id: bob}[int(record.game.attacker)]
    hand = a_hand(a.h.fake, attacker, record)
    card = next(x for row in hand.buttons for x in row if "·" not in x.text)
    tap = attacker.tap(hand, card.callback_data or "")
    calls = len(a.h.fake.calls)
    await a.h.deliver(tap)  # as A's long polling would hand it over, still in A's memory
    await a.h.rooms.store.background.settle()
    assert len(a.h.fake.calls) == calls  # not even an answer
    after = await stored(db, group)
    assert after.game is not None and after.game.move_number == record.game.move_number
    shown_again = asyncio.Event()  # B shows its games again over what A may have sent
    show_all_again = b.h.rooms.show_all_again

    async def spy() -> None:
        await show_all_again()
        shown_again.set()

    monkeypatch.setattr(b.h.rooms, "show_all_again", spy)
    monkeypatch.setattr(leader, "SHOW_AGAIN_AFTER", 0.0)
    wakes.set()
    async with asyncio.timeout(TAKE_OVER):
        while lead_a.term is not None:  # its next renewal: another leads, it stops
            lead_a.changed.clear()
            await lead_a.changed.wait()
        await shown_again.wait()
    assert len(a.h.fake.calls) == calls
    # The tap, posted as Telegram would (nobody answered it), is handled by B.
    assert await b.post(tap) == 200
    await b.settle()
    moved = await stored(db, group)
    assert moved.game is not None and moved.game.move_number == record.game.move_number + 1


async def test_a_deadline_is_kept_once_across_a_change_of_leader(workers: list[Worker]) -> None:
    """The turn's deadline was set under A; B, leading after A's stop, times the turn out
    once (a second look finds nothing due)."""
    a, b = workers
    group, _, _ = await open_game(a, lambda n: workers[n % 2], -7305)
    await a.web.close()
    await a.h.stop()
    workers.remove(a)
    await b.until_leading()
    await b.settle()
    b.h.clock.advance(61)
    assert await b.h.run_due() == 1
    assert await b.h.run_due() == 0
    record = await stored(b.h.app.bot_data[DATABASE_KEY], group)
    assert sum(record.timeouts.values()) == 1


async def _run_out(pg_url: str) -> None:
    """The lease's time is over by the database's clock (as if its holder hung that long)."""
    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute("UPDATE leader SET expires_us = 1 WHERE id = 1")
    finally:
        await conn.close()


async def test_a_turn_that_ran_out_while_the_leader_paused_gets_time_again(
    workers: list[Worker], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cannot tell for a while whether it still leads (its lease connection broke: it
    sends and writes nothing), and the turn runs out meanwhile; nobody could move. Its next
    renewal finds the lease still its own: the turn gets time again, as after a restart,
    instead of timing the player out for the bot's pause."""
    a, _ = workers
    group, _, _ = await open_game(a, lambda n: workers[n % 2], -7306)
    lead_a = leadership(a.h.app)
    assert lead_a is not None and lead_a.term is not None
    deadlines = lead_a.term.rooms.deadlines
    again = asyncio.Event()
    after_pause = deadlines.after_pause

    async def spy() -> None:
        await after_pause()
        again.set()

    monkeypatch.setattr(deadlines, "after_pause", spy)
    a.clock.ahead = LEASE_SECONDS  # A's lease ran out by its own clock: a pause ...
    assert not lead_a.lease.held()
    a.h.clock.advance(61)  # ... through which the turn ran out
    async with asyncio.timeout(TAKE_OVER):
        await again.wait()  # its next renewal: still A's
    assert a.leading
    assert await a.h.run_due() == 0
    record = await stored(a.h.app.bot_data[DATABASE_KEY], group)
    assert record.deadline is not None and record.deadline > a.h.clock()
    assert sum(record.timeouts.values()) == 0
