"""Several workers on one PostgreSQL (#20): deadlines, half-time warnings and computer moves
are due work stored with each game, claimed by whichever worker looks first, so that each is
done once and what a worker that died left due is done by another; only one worker, the
leader, sets the command menus and shows the stored games at start-up.

Two whole bots (`BotHarness`) against one fake Bot API and one database, on one manual clock
(the deadlines' clock, as in the other deadline tests). "Gone" is a worker stopped: nothing
of it runs any more, and what it had planned in memory is lost, as in a crash.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import lead
from bot.play.deadlines import DEADLINE_RETRY as LEASE
from bot.store import REDRAW_AFTER
from storage import Database, GameRecord
from tests import postgres
from tests.bot.conftest import TOKEN, BotHarness, ManualClock, make_settings
from tests.bot.test_computers import start_practice
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.postgres


class Workers:
    """Workers of one bot on one database, started in order (the first one leads)."""

    def __init__(self, fake: FakeTelegram, url: str, tmp_path: Path) -> None:
        self.fake = fake
        self.url = url
        self.tmp_path = tmp_path
        self.clock = ManualClock()
        self.running: list[BotHarness] = []

    async def start(self, **settings: Any) -> BotHarness:
        path = self.tmp_path / "unused.sqlite3"
        h = BotHarness(
            fake=self.fake,
            db_path=path,
            clock=self.clock,
            settings=make_settings(path, database_url=self.url, **settings),
        )
        await h.start()
        self.running.append(h)
        return h

    async def gone(self, h: BotHarness) -> None:
        await h.stop()
        self.running.remove(h)

    async def run_due(self) -> None:
        """Every running worker handles what is due on the clock, at once; then what they
        sent went out."""
        await asyncio.gather(*(h.rooms.deadlines.run_due() for h in self.running))
        for h in self.running:
            await h.settle()

    async def stored(self, chat_id: int) -> GameRecord:
        async with Database.connect(self.url) as db, db.transaction(readonly=True) as tx:
            return await tx.games.latest_for_chat(chat_id=chat_id)


@pytest.fixture
async def workers(tmp_path: Path, pg_server: postgres.PostgresServer) -> AsyncIterator[Workers]:
    async with postgres.fresh_database(pg_server) as url:
        w = Workers(FakeTelegram(token=TOKEN), url, tmp_path)
        try:
            yield w
        finally:
            for h in list(w.running):
                await w.gone(h)


def timeouts_logged(record: GameRecord) -> int:
    return sum(1 for entry in record.meta.log if entry.kind == "timeout")


async def test_a_deadline_left_by_a_worker_that_is_gone_fires_once_on_another(
    workers: Workers,
) -> None:
    a = await workers.start()
    b = await workers.start()
    alice, bob = a.user(1, "Alice"), a.user(2, "Bob")
    group = a.fake.group(-8101, "Club", admins={alice})
    await a.open_game(group, [alice, bob])  # every update of it went to A
    await workers.gone(a)
    workers.clock.advance(61)
    await workers.run_due()
    stored = await workers.stored(group.id)
    assert stored.game is not None and stored.game.move_number == 1  # the timeout move
    assert timeouts_logged(stored) == 1
    assert sum(stored.timeouts.values()) == 1
    await workers.run_due()  # nothing more is due: the next deadline is a minute away
    assert (await workers.stored(group.id)).version == stored.version
    assert b.rooms.store.live(group.id) is not None  # B goes on with the game


async def test_a_deadline_claimed_by_a_worker_that_died_is_done_after_its_lease(
    workers: Workers,
) -> None:
    b = await workers.start()
    alice, bob = b.user(1, "Alice"), b.user(2, "Bob")
    group = b.fake.group(-8105, "Club", admins={alice})
    await b.open_game(group, [alice, bob])
    workers.clock.advance(61)
    async with Database.connect(workers.url) as db, db.transaction() as tx:  # claimed, then
        now = workers.clock()  # the worker died before it handled the claim
        assert [c for c, _, _ in await tx.games.claim_due(now=now, until=now + LEASE, limit=9)] == [
            group.id
        ]
    await workers.run_due()
    assert (await workers.stored(group.id)).timeouts == {}  # the claim holds for its lease
    workers.clock.advance(LEASE.total_seconds())
    await workers.run_due()
    stored = await workers.stored(group.id)
    assert stored.game is not None and stored.game.move_number == 1
    assert timeouts_logged(stored) == 1


async def test_with_two_workers_running_a_deadline_fires_once(workers: Workers) -> None:
    a = await workers.start()
    await workers.start()
    alice, bob = a.user(1, "Alice"), a.user(2, "Bob")
    group = a.fake.group(-8102, "Club", admins={alice})
    await a.open_game(group, [alice, bob])
    workers.clock.advance(61)
    await workers.run_due()  # both look at once
    stored = await workers.stored(group.id)
    assert stored.game is not None and stored.game.move_number == 1
    assert timeouts_logged(stored) == 1 and sum(stored.timeouts.values()) == 1
    workers.clock.advance(61)  # the next turn's deadline, whichever worker moved last
    await workers.run_due()
    stored = await workers.stored(group.id)
    assert stored.game is not None and stored.game.move_number == 2
    assert timeouts_logged(stored) == 2


async def test_half_time_warns_once_with_two_workers_running(workers: Workers) -> None:
    a = await workers.start()
    await workers.start()
    alice, bob = a.user(1, "Alice"), a.user(2, "Bob")
    group = a.fake.group(-8103, "Club", admins={alice})
    await a.open_game(group, [alice, bob])
    stored = await workers.stored(group.id)
    assert stored.game is not None
    waiting = [int(p) for p in stored.game.to_act]
    a.fake.clear_calls()
    workers.clock.advance(31)
    await workers.run_due()
    warned = [c.params["chat_id"] for c in a.fake.calls_for("sendMessage")]
    assert sorted(warned) == sorted(waiting)  # one warning each, from one worker
    stored = await workers.stored(group.id)
    assert stored.meta.warned and stored.game is not None and stored.game.move_number == 0


async def test_a_computer_move_left_due_by_a_worker_that_is_gone_is_made_by_another(
    workers: Workers,
) -> None:
    a = await workers.start(computer_delay=30)
    await workers.start(computer_delay=30)
    solo = a.user(8, "Solo")
    await start_practice(a, solo, "P3e")  # three easy computers
    rng = random.Random(9)
    for _ in range(200):  # play until a computer must move; it "thinks" for 30 s
        stored = await workers.stored(solo.id)
        assert stored.game is not None
        if any(p.startswith("cpu-") for p in stored.game.to_act):
            break
        await a.tap_random(solo, rng)
    assert stored.game is not None
    moves = stored.game.move_number
    await workers.gone(a)
    workers.clock.advance(10)
    await workers.run_due()  # still thinking
    assert (await workers.stored(solo.id)).version == stored.version
    workers.clock.advance(21)
    await workers.run_due()
    after = await workers.stored(solo.id)
    assert after.game is not None and after.game.move_number == moves + 1


async def test_only_the_leader_sets_the_menus_and_another_takes_over_when_it_is_gone(
    workers: Workers,
) -> None:
    a = await workers.start()
    menus = len(a.fake.calls_for("setMyCommands"))
    assert menus > 0
    alice, bob = a.user(1, "Alice"), a.user(2, "Bob")
    group = a.fake.group(-8104, "Club", admins={alice})
    await a.open_game(group, [alice, bob])
    b = await workers.start()
    assert len(a.fake.calls_for("setMyCommands")) == menus  # B follows: no menus, no games
    assert b.rooms.store.live(group.id) is None
    await workers.gone(a)
    a.fake.clear_calls()
    assert await lead(b.app)  # (B's own look, every few seconds, does the same)
    await b.settle()
    assert len(a.fake.calls_for("setMyCommands")) == menus
    assert b.rooms.store.live(group.id) is not None  # the games shown again, by B
    assert any(c.params["chat_id"] in (1, 2) for c in a.fake.calls_for("editMessageText"))


async def test_a_table_left_undrawn_by_a_worker_that_is_gone_is_drawn_by_another(
    workers: Workers,
) -> None:
    """A worker stores a move and dies before its table edit went out: the save stored when
    to redraw the table (`REDRAW_AFTER`), and since no worker drew that state, another one
    claims it then and shows the group the move. Once drawn, nothing more is due."""
    a = await workers.start(turn_timeout=600)  # (no half-time warning in the way)
    b = await workers.start(turn_timeout=600)
    alice, bob = a.user(1, "Alice"), a.user(2, "Bob")
    group = a.fake.group(-8106, "Club", admins={alice})
    await a.open_game(group, [alice, bob])
    await a.settle()
    await b.settle()
    stored = await workers.stored(group.id)
    assert stored.game is not None and stored.table_message_id is not None
    table = stored.table_message_id
    before = a.fake.message(group.id, table).text
    async with a.rooms.store.for_chat(group.id) as unit:  # A's move, stored, never shown
        record = unit.record
        assert record is not None and record.game is not None
        player = record.game.attacker
        action = record.game.legal_actions(player)[0]
        await a.rooms.store.commit(record, [(player, record.game.apply(player, action))])
    await workers.gone(a)
    assert a.fake.message(group.id, table).text == before
    workers.clock.advance(REDRAW_AFTER.total_seconds() - 1)
    await workers.run_due()
    assert a.fake.message(group.id, table).text == before  # not yet: A had time to draw it
    workers.clock.advance(1)
    await workers.run_due()
    after = a.fake.message(group.id, table).text
    assert after != before and "table is empty" not in after  # the card on the table
    moved = await workers.stored(group.id)
    assert moved.version == record.version  # drawn: nothing stored but the mark
    workers.clock.advance(LEASE.total_seconds() + 1)
    calls = len(a.fake.calls)
    await workers.run_due()
    assert len(a.fake.calls) == calls  # drawn once: no more calls


async def test_a_hand_that_another_worker_sent_anew_is_the_one_every_worker_edits(
    workers: Workers,
) -> None:
    """The defender asked for his hand anew (/hand) on worker A: a new message, its id
    stored. Worker B, which showed his hand before, edits that new message from then on, not
    the old one (which keeps its one line pointing below): his newest message is his hand.
    (B's copy of the game is stale once A stored the new id: B loads it again, and its
    messages with it.)"""
    a = await workers.start()
    b = await workers.start()
    alice, bob = a.user(1, "Alice"), a.user(2, "Bob")
    group = a.fake.group(-8107, "Club", admins={alice})
    await a.open_game(group, [alice, bob])
    stored = await workers.stored(group.id)
    assert stored.game is not None
    first = stored.game.attacker
    attacker, defender = (alice, bob) if first == str(alice.id) else (bob, alice)
    old = stored.hand_messages[str(defender.id)]

    async def tap(h: BotHarness, user: Any, mid: int) -> None:
        message = h.fake.message(user.id, mid)
        data = next(
            b.callback_data
            for row in message.buttons
            for b in row
            if b.callback_data and not b.text.startswith("·")
        )
        await h.send(user.tap(message, data))
        await h.settle()

    await tap(b, attacker, stored.hand_messages[str(attacker.id)])  # B shows the hands

    await a.send(defender.send_private("/hand"))
    await a.settle()
    new = (await workers.stored(group.id)).hand_messages[str(defender.id)]
    assert new > old
    edits = a.fake.message(defender.id, new).edits
    await tap(b, defender, new)  # his move, on B
    assert a.fake.message(defender.id, new).edits > edits  # B edited the new one
    assert a.fake.message(defender.id, old).buttons == []  # still its line, no keyboard
