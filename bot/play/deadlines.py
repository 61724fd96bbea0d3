"""Deadlines: the half-time warning, a turn or lobby that runs out, and resuming after a
restart.

Deadlines live in the database (`GameRecord.deadline`); the scheduler sleeps until the
next one among the live games, then handles each chat that is due in a task of its own,
so a chat whose lock is held holds back no other. At the deadline the bot moves for the
players it waits for (`engine.advice.timeout_action`: a defender takes, an opener plays
the lowest card, others pass); the third timeout in a row removes the player as the durak
(R18). After a restart, a turn that ran out (or nearly) while the bot was down gets
`RESUME_GRACE` more, once per move (stored), so that taps sent meanwhile count.

On a shared database (PostgreSQL, several workers) the work is found in the database, not
in this process's memory: every save stores when the game is next due (`due_of`: the
deadline, the half-time warning, a computer's move). Each worker's scheduler claims the
chats that are due (`GameRepository.claim_due`: a lease of `DEADLINE_RETRY`, FOR UPDATE
SKIP LOCKED), looks at least every `POLL_SECONDS` (other workers' saves do not wake it), and
handles each claimed chat in a task under the chat's lock, where it checks that the game is
still the version it claimed: so each deadline, warning and computer move is done once,
and what was due on a worker that died is done by another when its lease runs out.
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
from bot.kit import MAX_TIMEOUTS, title
from bot.log import Move, RemovedForTimeouts, TimedOut
from bot.play.computers import Computers, computer_to_move
from bot.play.lobby import Lobbies
from bot.play.room import Room
from engine.advice import forced_resign, timeout_action
from storage import DatabaseUnavailable, GameRecord

logger = logging.getLogger(__name__)

DEADLINE_RETRY: Final = timedelta(seconds=15)  # after handling a deadline failed
RESUME_GRACE: Final = timedelta(seconds=30)  # at least this long to move after a restart
POLL_SECONDS: Final = 1.0  # shared database: the scheduler looks for due work this often
CLAIM_BATCH: Final = 64  # shared database: chats claimed per look


@dataclass(eq=False, repr=False)
class Deadlines(Room):
    computers: Computers
    lobbies: Lobbies
    _changed: asyncio.Event = field(default_factory=asyncio.Event, init=False)
    _sleeping_until: datetime | None = field(default=None, init=False)  # the next wake-up
    # chat id -> not before: a deadline whose handling failed is retried later, not in a loop
    _retry_at: dict[int, datetime] = field(default_factory=dict, init=False)
    # chat id -> the task handling its deadline now
    _due_tasks: dict[int, asyncio.Task[Any]] = field(default_factory=dict, init=False)
    # chat id -> (move number, when): the computer's move planned at that move (`due_of`)
    _computer_at: dict[int, tuple[int, datetime]] = field(default_factory=dict, init=False)
    # shared database: one claiming look at a time (the scheduler's, or `run_due`'s)
    _claiming: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)

    # ---------------------------------------------------------------- when

    def saved(self, record: GameRecord) -> None:
        """A record was stored: the chat works again (its deadline as set), and the
        scheduler wakes if this record's next time is earlier than its alarm."""
        self._retry_at.pop(record.chat_id, None)
        self.wake_if_earlier(record)

    def forget(self, record: GameRecord) -> None:
        self._retry_at.pop(record.chat_id, None)
        self._computer_at.pop(record.chat_id, None)

    def due_of(self, record: GameRecord) -> datetime | None:
        """When the bot next has work on the record without an update: its deadline, the
        half-time warning, or a computer's move (stored with each save as `due_at`)."""
        if record.status not in ("lobby", "running"):
            self._computer_at.pop(record.chat_id, None)
            return None
        times = [t for t in (record.deadline, self._warn_at(record)) if t is not None]
        computer_at = self._computer_due(record)
        if computer_at is not None:
            times.append(computer_at)
        return min(times, default=None)

    def _computer_due(self, record: GameRecord) -> datetime | None:
        """When a computer the game waits for moves: `COMPUTER_DELAY` after the move that
        gave it the turn (as this process saw it: a copy loaded from another worker counts
        from its first save here). With no delay the computer moves at once, in the same
        unit of work; the time stored then is for a worker that died before it did."""
        game = record.game
        if game is None or computer_to_move(record) is None:
            self._computer_at.pop(record.chat_id, None)
            return None
        planned = self._computer_at.get(record.chat_id)
        if planned is not None and planned[0] == game.move_number:
            return planned[1]
        delay = self.kit.settings.computer_delay
        wait = timedelta(seconds=delay) if delay > 0 else DEADLINE_RETRY
        at = self.kit.clock() + wait
        self._computer_at[record.chat_id] = (game.move_number, at)
        return at

    def wake_if_earlier(self, record: GameRecord) -> None:
        if self.kit.db.shared:
            times = [record.due_at] if record.due_at is not None else []
        else:
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
        """Half time of a turn: when players the game waits for are warned privately."""
        if record.status != "running" or record.deadline is None or record.meta.warned:
            return None
        return record.deadline - timedelta(seconds=self.kit.turn_timeout(record) / 2)

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
        if self.kit.db.shared:
            await self.claim_due(now)
            done = await asyncio.gather(*list(self._due_tasks.values()))
            return sum(1 for kind in done if kind == "expired")
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

    async def claim_due(self, now: datetime) -> datetime | None:
        """Shared database: claim the chats that are due at `now` (any worker's) and start
        handling each in a task of its own; return when the next one is due (None: none)."""
        async with self._claiming:
            async with self.kit.db.transaction() as tx:
                claimed = await tx.games.claim_due(
                    now=now, until=now + DEADLINE_RETRY, limit=CLAIM_BATCH
                )
                nxt = await tx.games.next_due()
            for chat_id, version, redraw in claimed:
                if chat_id in self._due_tasks:  # still at it here (its lease ran out first)
                    continue
                handle = self._handle_claimed(chat_id, version, now, redraw=redraw)
                task = self.store.background.spawn(handle)
                self._due_tasks[chat_id] = task
                task.add_done_callback(functools.partial(self._due_done, chat_id))
            return nxt

    async def _handle_claimed(
        self, chat_id: int, version: int, now: datetime, *, redraw: bool = False
    ) -> str | None:
        """A chat claimed as due at `now`, at `version`: under the chat's lock, whatever was
        due is done, if the game is still that version (else a save since has stored when it
        is due next). `redraw`: no worker drew the table of its state in time. Returns what
        was done. A failure leaves the claim's lease to run out: then any worker tries
        again."""
        try:
            async with self.store.for_chat(chat_id) as unit:
                record = unit.record
                if record is None or record.version != version:
                    return None
                if record.deadline is not None and record.deadline <= now:
                    await self._expire_record(record)
                    return "expired"
                # A computer the game waits for moves before any warning: the computer's time
                # is due, or only the warning's, which comes later in any sensible setting
                # (COMPUTER_DELAY is less than half a turn): then it moves a little early, and
                # its move starts a new turn with a new deadline anyway.
                if computer_to_move(record) is not None:
                    await self.computers.move_due(record)
                    return "computer"
                if self._warn_due(record, now):
                    record.meta.warned = True  # stored first: no other worker warns again
                    await self.store.save(record)
                    with contextlib.suppress(Exception):  # a courtesy: never retried
                        await self._warn(record)
                    return "warned"
                if redraw and record.status == "running":
                    # No worker drew the table of its state (one died with the edit pending):
                    # this one does, or marks it drawn if its own message shows it already.
                    if not self.screens.table(record):
                        async with self.kit.db.transaction() as tx:
                            await tx.games.drawn([(record.id or 0, record.version)])
                    return "redrawn"
                # Due by its stored time, yet nothing is (it was stored by an older release,
                # say): its time is stored again, as this process reckons it.
                await self.store.save_quietly(record)
                return None
        except DatabaseUnavailable as exc:  # the store has warned once for the outage
            logger.info("due work of chat %s waits for the database: %s", chat_id, exc)
        except Exception:
            logger.exception("handling the due work of chat %s failed", chat_id)
        return None

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
                    record.meta.warned = True  # kept in memory; stored with the next move
                    await self._warn(record)
        except Exception:
            record.meta.warned = True  # a warning is a courtesy: never retried
            logger.exception("warning chat %s of its deadline failed", record.chat_id)

    async def _warn(self, record: GameRecord) -> None:
        """Half time of a turn: a private warning to each player the game waits for, and the
        time left shown on the table and in their hands brought up to date (once per turn)."""
        game = record.game
        assert game is not None
        kit = self.kit
        seconds = kit.seconds_left(record) or 0
        for seat in record.lobby.seats:
            if seat.user_id is None or seat.is_computer or seat.player_id not in game.to_act:
                continue
            lang = kit.lang_of(record, seat.player_id)
            text = kit.t(lang, "warn-time", seconds=seconds, chat=title(record))
            with contextlib.suppress(Blocked, SendError):
                await self.out.send(seat.user_id, render.Rendered(text))
        # (Not a hand showing a choice of covers: the refresh would take that choice away.)
        plain = {p for p in game.to_act if self.screens.has_hand(record, p)}
        await self.screens.hands(record, only=plain, force=True)
        self.screens.table(record)

    async def _expire_chat(self, chat_id: int, now: datetime) -> None:
        try:
            await self.expire(chat_id, now)
        except DatabaseUnavailable as exc:  # the store has warned once for the outage
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
        if record.status == "lobby":
            await self.store.close_game(record)
            await self.lobbies.closed(record, "expired")
            return
        game = record.game
        assert game is not None
        moves: list[Move] = []
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
        if self.kit.db.shared:
            await self._run_shared_scheduler()
            return
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

    async def _run_shared_scheduler(self) -> None:
        """Shared database: claim what is due, then sleep until the next due time, a save
        here that is due earlier, or `POLL_SECONDS` (another worker's saves wake no one
        here), whichever comes first."""
        while True:
            try:
                self._changed.clear()
                clock = self.kit.clock
                nxt = await self.claim_due(clock())
                self._sleeping_until = nxt
                timeout = POLL_SECONDS
                if nxt is not None:
                    # not 0: a due chat another worker is claiming right now is skipped here
                    timeout = min(timeout, max(0.05, (nxt - clock()).total_seconds()))
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._changed.wait()
            except DatabaseUnavailable as exc:
                logger.debug("the deadline scheduler waits for the database: %s", exc)
                await asyncio.sleep(POLL_SECONDS)
            except Exception:
                logger.exception("the deadline scheduler hit an error; it goes on")
                await asyncio.sleep(POLL_SECONDS)

    # ---------------------------------------------------------------- start-up

    async def resume_all(self) -> int:
        """After a (re)start: load every lobby and game, re-render, re-arm deadlines."""
        async with self.kit.db.transaction(readonly=True) as tx:
            records = await tx.games.all_active()
        now = self.kit.clock()
        extended = {r.chat_id for r in records if self._grant_grace(r, now)}
        for stored in records:
            if self.store.live(stored.chat_id) is None:  # (a worker taking the lead: its own)
                self.store.remember(stored)
        for stored in records:
            try:
                # The chat's unit of work: on a shared database another worker may have
                # moved the game on meanwhile (then its record is the one shown).
                async with self.store.for_chat(stored.chat_id) as unit:
                    live = unit.record
                    if live is None:
                        continue
                    if live is stored and live.chat_id in extended:
                        await self.store.save(live)  # kept after a reload, and given once
                    await self.show_again(live)
            except DatabaseUnavailable as exc:  # the store has warned once for the outage
                logger.info("game %s resumes as stored: %s", stored.id, exc)
            except Exception:
                logger.exception("could not resume game %s", stored.id)
        self._changed.set()
        return len(records)

    def _grant_grace(self, record: GameRecord, now: datetime) -> bool:
        """Nobody could move while the bot was down, and taps sent meanwhile arrive only
        now: a turn that ran out (or nearly) meanwhile gets `RESUME_GRACE` more, once per
        move (a bot that keeps crashing must not hold the game up for ever)."""
        game = record.game
        if record.status != "running" or record.deadline is None or game is None:
            return False
        grace = min(RESUME_GRACE, timedelta(seconds=self.kit.turn_timeout(record)))
        if record.deadline >= now + grace or record.meta.grace_move == game.move_number:
            return False
        record.deadline = now + grace
        record.meta.grace_move = game.move_number
        return True

    async def show_again(self, record: GameRecord) -> None:
        """Show a game as loaded (after a restart or a failed save): lobby, or table and
        hands; then let its computer players move."""
        if record.status == "lobby":
            await self.lobbies.refresh(record)
        elif record.game is not None:
            self.screens.table(record)
            await self.screens.hands(record, force=True)
            await self.computers.drive(record)
