"""Deadlines: the half-time warning, a turn or lobby that runs out, and resuming after a
restart.

Deadlines live in the database (`GameRecord.deadline`); the scheduler sleeps until the
next one among the live games, then handles each chat that is due in a task of its own,
so a chat whose lock is held holds back no other. At the deadline the bot moves for the
players it waits for (`engine.advice.timeout_action`: a defender takes, an opener plays
the lowest card, others pass); the third timeout in a row removes the player as the durak
(R18). A half-time warning is deleted once the game moves on (a move of anyone starts the
turn's time again, and the game's end or cancel ends it), so warnings do not pile up in a
private chat; its message id is stored with the game, so a leader after a restart deletes
it too. A throw-in window (`Kit.in_window`: all is covered or taken, only throw-ins are
waited for) has the window's end as its deadline and no half-time warning; its end passes
for everyone who could still throw in, which ends the bout, and is no strike. After a
restart, a turn (or window) that ran out (or nearly) while the bot was down gets
`RESUME_GRACE` more (at most its own length), once per move (stored), so that taps sent
meanwhile count. The same
holds for a worker that takes the lead from another (`bot.leader`): it resumes every game
as stored, and the scheduler runs in the leader only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from bot import render
from bot.delivery import Blocked, SendError
from bot.handling import OUTAGES
from bot.kit import MAX_TIMEOUTS, title
from bot.log import Move, RemovedForTimeouts, TimedOut
from bot.play.again import Again
from bot.play.computers import Computers
from bot.play.lobby import Lobbies
from bot.play.room import Room
from engine import Pass
from engine.advice import forced_resign, timeout_action
from storage import GameRecord

logger = logging.getLogger(__name__)

DEADLINE_RETRY: Final = timedelta(seconds=15)  # after handling a deadline failed
WARN_RETRY: Final = timedelta(seconds=1)  # after a warning could not be stored
RESUME_GRACE: Final = timedelta(seconds=30)  # at least this long to move after a restart
SHOW_ENDED: Final = timedelta(minutes=10)  # games that ended this lately are shown again
MAX_GRACES: Final = 3  # graces a move gets at most (a bot that keeps failing must not stall)


@dataclass(eq=False, repr=False)
class Deadlines(Room):
    computers: Computers
    lobbies: Lobbies
    again: Again
    _changed: asyncio.Event = field(default_factory=asyncio.Event, init=False)
    _sleeping_until: datetime | None = field(default=None, init=False)  # the next wake-up
    # chat id -> not before: a deadline or warning whose handling failed is retried later,
    # not in a loop
    _retry_at: dict[int, datetime] = field(default_factory=dict, init=False)
    # chat id -> the task handling its deadline now
    _due_tasks: dict[int, asyncio.Task[Any]] = field(default_factory=dict, init=False)

    # ---------------------------------------------------------------- when

    def saved(self, record: GameRecord) -> None:
        """A record was stored: the chat works again (its deadline as set), its warnings
        that no longer hold are deleted, and the scheduler wakes if this record's next time
        is earlier than its alarm."""
        self._retry_at.pop(record.chat_id, None)
        self._retire_warnings(record)
        self._retire_questions(record)
        self.wake_if_earlier(record)

    def _retire_questions(self, record: GameRecord) -> None:
        """The /leave and /kick questions a game ended without an answer to: deleted from
        the group (they would look live under the result) and from the private chats
        /leave was sent in, within their budgets, after the
        messages that matter more. Forgotten here, and stored so with the next save."""
        meta = record.meta
        if not (meta.questions or meta.private_questions) or record.status == "running":
            return
        for message_id in meta.questions:
            self.screens.sender.retire(record.chat_id, message_id, None)
        for player_id, message_id in meta.private_questions.items():  # asked in private
            self.screens.sender.retire(int(player_id), message_id, None)
        meta.questions = []
        meta.private_questions = {}

    def _retire_warnings(self, record: GameRecord) -> None:
        """Delete the half-time warnings of a turn that is over (the game moved on: a new
        turn, `meta.warned` cleared; or it ended): each as a deletion the sender makes within
        the private chat's budget, after the hands that matter more. Forgotten here, and
        stored so with the record's next save; one deleted twice (a restart before that
        save) is refused by Telegram and left as it is."""
        meta = record.meta
        if not meta.warnings or (meta.warned and record.status == "running"):
            return
        self._delete_warnings(record)

    def _delete_warnings(self, record: GameRecord) -> None:
        meta = record.meta
        users = {seat.player_id: seat.user_id for seat in record.lobby.seats}
        for pid, message_id in meta.warnings.items():
            user_id = users.get(pid)
            if user_id is not None:
                self.screens.sender.retire(user_id, message_id, None)
        meta.warnings = {}

    def forget(self, record: GameRecord) -> None:
        self._retry_at.pop(record.chat_id, None)

    def wake_if_earlier(self, record: GameRecord) -> None:
        times = [t for t in (record.deadline, self._warn_at(record)) if t is not None]
        if not times:
            return
        alarm = self._sleeping_until
        if alarm is None or min(times) < alarm:
            self._changed.set()

    def _warn_due(self, record: GameRecord, now: datetime) -> bool:
        """Half time has come and the turn is not over yet."""
        warn_at = self._warn_at(record)
        deadline = record.deadline
        return warn_at is not None and warn_at <= now and deadline is not None and deadline > now

    def _warn_at(self, record: GameRecord) -> datetime | None:
        """Half time of a turn: when players the game waits for are warned privately (or
        later after a failure)."""
        if record.status != "running" or record.deadline is None or record.meta.warned:
            return None
        if self.kit.in_window(record):  # a throw-in window: seconds, and nobody must move
            return None
        half = record.deadline - timedelta(seconds=self.kit.turn_timeout(record) / 2)
        retry = self._retry_at.get(record.chat_id)
        return half if retry is None else max(half, retry)

    def next_deadline(self) -> datetime | None:
        """The next time something is due, leaving out chats being handled right now."""
        records = [r for r in self.store.live_records() if r.chat_id not in self._due_tasks]
        times = [self._due_at(r) for r in records if r.deadline is not None]
        now = self.kit.clock()
        times += [  # a turn already past its deadline gets no warning, only its timeout
            w
            for r in records
            if (w := self._warn_at(r)) is not None and r.deadline is not None and r.deadline > now
        ]
        return min(times, default=None)

    def _due_at(self, record: GameRecord) -> datetime:
        """When the record's deadline is handled: its deadline, or later after a failure."""
        assert record.deadline is not None
        retry = self._retry_at.get(record.chat_id)
        return record.deadline if retry is None else max(record.deadline, retry)

    # ---------------------------------------------------------------- handling what is due

    async def run_due(self, now: datetime | None = None) -> int:
        """Warn at half time; handle every lobby and turn whose deadline has passed.
        Returns how many deadlines expired.

        One chat's failure is logged and does not keep the others from their deadlines; its
        deadline is tried again after `DEADLINE_RETRY`, so a lasting fault does not spin.
        """
        now = now or self.kit.clock()
        due = [
            r.chat_id for r in self.store.live_records() if r.deadline and self._due_at(r) <= now
        ]
        self.start_due(now)
        await asyncio.gather(*list(self._due_tasks.values()))
        return len(due)

    def start_due(self, now: datetime) -> None:
        """Start handling every chat whose warning or deadline is due, each in a task of its
        own (one per chat at a time): a chat whose lock is held (a slow Telegram call, a
        computer thinking) holds back no other chat's deadline, not even a later one."""
        for record in self.store.live_records():
            chat_id = record.chat_id
            if chat_id in self._due_tasks:
                continue
            if record.deadline and self._due_at(record) <= now:
                work = self._expire_chat(chat_id, now)
            elif self._warn_due(record, now):
                work = self._warn_chat(record, now)
            else:
                continue
            task = self.store.background.spawn(work)
            self._due_tasks[chat_id] = task
            task.add_done_callback(functools.partial(self._due_done, chat_id))

    def handling(self, chat_id: int) -> asyncio.Task[Any] | None:
        """The task handling the chat's warning or deadline now, if any."""
        return self._due_tasks.get(chat_id)

    def _due_done(self, chat_id: int, task: asyncio.Task[Any]) -> None:
        if self._due_tasks.get(chat_id) is task:
            del self._due_tasks[chat_id]
        self._changed.set()  # the scheduler looks again

    async def _warn_chat(self, record: GameRecord, now: datetime) -> None:
        try:
            async with self.store.locks[record.chat_id]:
                # Checked again under the lock: meanwhile the game may have been cancelled,
                # moved on or dropped (the warning and refresh would be wrong).
                if self.store.live(record.chat_id) is record and self._warn_due(record, now):
                    # Stored first: a leader that takes over after this one does not warn
                    # again (a warning that is then lost with this one is a courtesy lost).
                    record.meta.warned = True
                    if not await self.store.save_quietly(record):
                        # Not stored (the game stays live as it is): warned once it can be.
                        record.meta.warned = False
                        self._retry_at[record.chat_id] = now + WARN_RETRY
                        logger.info("the warning of chat %s waits for the database", record.chat_id)
                        return
                    await self._warn(record)
        except Exception:
            logger.exception("warning chat %s of its deadline failed", record.chat_id)

    async def _warn(self, record: GameRecord) -> None:
        """Half time of a turn: a private warning to each player the game waits for (once per
        turn). The table and the hands need no edit: they show the deadline as a date_time
        entity, which each reader's client counts down (`render.time_html`)."""
        game = record.game
        assert game is not None and record.deadline is not None
        kit = self.kit
        for seat in record.lobby.seats:
            if seat.user_id is None or seat.is_computer or seat.player_id not in game.to_act:
                continue
            lang = kit.lang_of(record, seat.player_id)
            when = render.time_html(kit.tr, lang, record.deadline)
            text = kit.t(lang, "warn-time", time=when, chat=title(record))
            with contextlib.suppress(Blocked, SendError):
                sent = await self.out.send(seat.user_id, render.Rendered(text))
                record.meta.warnings[seat.player_id] = sent
        if record.meta.warnings:  # to be deleted when the game moves on, after a restart too
            await self.store.save_quietly(record)

    async def _expire_chat(self, chat_id: int, now: datetime) -> None:
        try:
            await self.expire(chat_id, now)
        except OUTAGES as exc:  # (an outage: warned once; or this worker no longer leads)
            logger.info("the deadline of chat %s waits for the database: %s", chat_id, exc)
            self._retry_at[chat_id] = now + DEADLINE_RETRY
        except Exception:
            logger.exception("handling the deadline of chat %s failed", chat_id)
            self._retry_at[chat_id] = now + DEADLINE_RETRY
        else:
            self._retry_at.pop(chat_id, None)

    async def expire(self, chat_id: int, now: datetime) -> None:
        """The chat's lobby or turn ran out at `now`: close the lobby, or move for the players
        the game waits for."""
        async with self.store.for_chat(chat_id) as unit:
            record = unit.record
            if record is None or record.deadline is None or record.deadline > now:
                return
            await self._expire_record(record)

    async def _expire_record(self, record: GameRecord) -> None:
        """`expire` of a record whose deadline has passed (the caller holds its lock)."""
        if record.status == "lobby" and record.meta.again_of is not None:
            await self.again.expired(record)  # Play again's minute: it starts, or waits on
            return
        if record.status == "lobby":
            await self.store.close_game(record)
            await self.lobbies.closed(record, "expired")
            return
        game = record.game
        assert game is not None
        moves: list[Move] = []
        if self.kit.in_window(record):
            # The throw-in window ran out: the bout ends as if all had tapped Done. Nobody
            # had to throw in, so nobody gets a strike (the timeouts in a row stay as
            # they were).
            for pid in [p for p in game.players if p in game.to_act]:
                if game.closing and pid in game.to_act:  # (the last Done ends the bout)
                    moves.append((pid, game.apply(pid, Pass())))
            await self.store.commit(record, moves)
            await self.computers.after_move(record)
            return
        for pid in [p for p in game.players if p in game.to_act]:
            if game.is_over or pid not in game.to_act:
                continue
            count = record.timeouts.get(pid, 0) + 1
            record.timeouts[pid] = count
            if count >= MAX_TIMEOUTS:
                record.meta.left[pid] = "timed_out"
                moves.append((pid, [RemovedForTimeouts(pid), *forced_resign(game, pid)]))
                break
            action = timeout_action(game, pid)
            moves.append((pid, [TimedOut(pid)]))
            moves.append((pid, game.apply(pid, action)))
        await self.store.commit(record, moves)
        await self.computers.after_move(record)

    async def run_scheduler(self) -> None:
        """Sleep until the next deadline (or a change), then handle what is due. Runs forever."""
        while True:
            try:
                self._changed.clear()
                nxt = self.next_deadline()
                self._sleeping_until = nxt
                clock = self.kit.clock
                timeout = None if nxt is None else max(0.0, (nxt - clock()).total_seconds())
                # asyncio.timeout, not wait_for: on Python 3.11, wait_for swallows a cancellation
                # that arrives just as the event is set, and stop_services would wait forever.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._changed.wait()
                self.start_due(clock())  # not awaited: each chat in a task of its own
            except Exception:  # run_due guards each chat; this keeps the scheduler alive anyway
                logger.exception("the deadline scheduler hit an error; it goes on")
                await asyncio.sleep(1)  # back off: an error that repeats must not spin

    # ---------------------------------------------------------------- start-up

    async def resume_all(self) -> int:
        """After a (re)start: load every lobby and game, re-render, re-arm deadlines; and
        show the end of the games that ended lately (their last table and hands), with the
        result of any that ended without it posted (the leader before died in between)."""
        async with self.kit.db.transaction(readonly=True) as tx:
            records = await tx.games.all_active()
            ended = await tx.games.ended(since=self.kit.clock() - SHOW_ENDED)
        for record in ended:
            if record.game is None or not record.game.is_over:
                continue
            if record.result_message_id is None:
                await self.screens.show_state(record, again=True)
            else:
                self.screens.table(record)
                await self.screens.hands(record, force=True)
        now = self.kit.clock()
        extended = {r.chat_id for r in records if self._grant_grace(r, now)}
        for stored in records:
            if self.store.live(stored.chat_id) is None:
                self.store.remember(stored)
        for stored in records:
            try:
                # The chat's unit of work: an update may have moved the game on meanwhile
                # (then its record is the one shown).
                async with self.store.for_chat(stored.chat_id) as unit:
                    live = unit.record
                    if live is None:
                        continue
                    if live is stored and live.chat_id in extended:
                        await self.store.save(live)  # kept after a reload, and given once
                    await self.show_again(live)
            except OUTAGES as exc:  # (an outage: warned once; or this worker no longer leads)
                logger.info("game %s resumes as stored: %s", stored.id, exc)
            except Exception:
                logger.exception("could not resume game %s", stored.id)
        self._changed.set()
        return len(records)

    async def after_pause(self) -> None:
        """The leader could do nothing for a while (its database went away, and with it the
        lead, which it has again): nobody could move, so a turn that ran out (or nearly)
        meanwhile gets time as after a restart, and its table says so."""
        now = self.kit.clock()
        for live in self.store.live_records():
            try:
                async with self.store.locked(live.chat_id):
                    record = self.store.checked(live.chat_id)
                    if record is not None and self._grant_grace(record, now):
                        await self.store.save(record)
                        self.screens.table(record)
                        await self.screens.hands(record)  # the awaited: their new deadline
            except OUTAGES as exc:
                logger.info("game %s keeps its deadline: %s", live.id, exc)
        self._changed.set()

    async def reloaded(self, record: GameRecord) -> None:
        """A game loaded again after a save failed (the database went away): nobody could
        move meanwhile, so a turn that ran out (or nearly) gets time as after a restart;
        then it is shown as loaded. The caller holds the chat's lock. (Kept in memory if
        the database still cannot store it: stored with the next save.)"""
        if self._grant_grace(record, self.kit.clock()):
            await self.store.save_quietly(record)
        await self.show_again(record)

    def _grant_grace(self, record: GameRecord, now: datetime) -> bool:
        """Nobody could move while the bot was down (or while the lead changed hands), and
        taps sent meanwhile arrive only now: a turn that ran out (or nearly) meanwhile gets
        `RESUME_GRACE` more (at most the turn's time, or the throw-in window's),
        `MAX_GRACES` times per move at most (a bot that keeps crashing must not hold the
        game up for ever)."""
        game = record.game
        if record.status != "running" or record.deadline is None or game is None:
            return False
        grace = min(RESUME_GRACE, timedelta(seconds=self.kit.wait_length(record)))
        meta = record.meta
        given = meta.graces if meta.grace_move == game.move_number else 0
        if record.deadline >= now + grace or given >= MAX_GRACES:
            return False
        passed = record.deadline <= now
        record.deadline = now + grace
        meta.grace_move, meta.graces = game.move_number, given + 1
        if passed:  # a warning sent names a deadline gone by: it goes (the hand, shown
            self._delete_warnings(record)  # again, names the new one; no second warning)
        return True

    async def show_again(self, record: GameRecord) -> None:
        """Show a game as loaded (after a restart or a failed save): lobby, or table and
        hands; then let its computer players move."""
        self._retire_warnings(record)  # of a turn that ended while they were not deleted
        if record.status == "lobby":
            await self.lobbies.refresh(record)
        elif record.game is not None:
            self.screens.table(record)
            await self.screens.hands(record, force=True)
            await self.computers.drive(record)
