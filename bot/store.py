"""The one way any room gets at a chat's game: one unit of work per chat.

    async with store.for_game(data.game_id) as unit:   # or store.for_chat(chat_id)
        if unit is None: ...                           # no such game
        record = unit.game(data.game_id)               # that game, if it is the chat's now
        ... apply ...
        await store.commit(record, moves)              # log, deadline, save (with the result)
    # then hand the record to delivery (`Screens`)

A unit takes the chat's lock, loads the chat's lobby or running game (from memory, where
the last save left it, or from the database), and lets the room apply its change. `save`
and `commit` store the record in one transaction, with the finished game's record when it
ended; a move is acknowledged only once that commit succeeded. A save that fails drops the
in-memory copy (the stored state wins) and loads the game again soon, showing it as stored.
A quiet save (`save_quietly`: what does not move the game, such as message ids) that fails
keeps the live copy instead, so that what was sent is remembered and never sent again. A
database that cannot store at all (`DatabaseUnavailable`), or whose write lock another
process holds past the busy timeout (`DatabaseBusy`), is reported once per outage
(`DatabaseWatch`).

One process plays: the leader (`bot.leader`; on SQLite the one process, always). So a chat's
lock is this process's `asyncio.Lock`, the live copy is the truth between saves (no query
per update), and after a start or a change of leader every lobby and running game is
loaded (`bot.play.deadlines.Deadlines.resume_all`): `running_games_of` and `peek` read the
live copies. The leader's writes are fenced (`storage.Database.fence_with`): once another
worker leads, a save raises `storage.Fenced` and nothing of it is stored.

In webhook mode the update being handled (`bot.handling`) is marked handled in the inbox in
the transaction of its first save, so a change and its update are committed together.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from bot import handling
from bot.db_watch import DatabaseWatch, quiet
from bot.handling import OUTAGES
from bot.kit import Kit, Person, seated
from bot.log import Move, entries_for, trim
from bot.ops import games, logs
from engine import Passed
from storage import (
    ChatLocks,
    Conflict,
    FinishedGame,
    GameRecord,
    GameStatus,
    NotFound,
    Participant,
    ParticipantResult,
    StorageError,
)

logger = logging.getLogger(__name__)

RELOAD_DELAYS: Final = (0.0, 1.0, 5.0, 15.0, 60.0)


@dataclass(slots=True)
class Unit:
    """A chat's game, under the chat's lock: `record` is its lobby or running game (None:
    there is none)."""

    chat_id: int
    record: GameRecord | None

    def game(self, game_id: int, *statuses: GameStatus) -> GameRecord | None:
        """The chat's record if it is game `game_id` (and, given `statuses`, in one of them;
        a running game always with its engine state)."""
        record = self.record
        if record is None or record.id != game_id:
            return None
        if statuses and record.status not in statuses:
            return None
        if record.status == "running" and record.game is None:
            return None
        return record


class Background:
    """Tasks that run beside the updates (reloads, deadlines being handled), kept until
    they end, so that a test can wait for them and a shutdown can stop them."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run `work` in a task of its own, kept until it ends."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def busy(self) -> bool:
        """Whether any of that work is under way."""
        return bool(self._tasks)

    async def settle(self) -> None:
        """Wait until no work is left (what was started meanwhile included)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """Cancel the work (shutdown)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


class GameStore:
    """The chats' games: locks, the live copies, saving, and reloading after a failure."""

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.db = kit.db
        self.locks = ChatLocks()
        self._live: dict[int, GameRecord] = {}  # chat id -> its lobby or running game
        self._chat_of: dict[int, int] = {}  # game id -> chat id
        self._reloading: set[int] = set()  # chats whose game is being loaded again
        # chat id -> its live copy dropped after a failed save (`_loaded`: its message ids)
        self._dropped: dict[int, GameRecord] = {}
        self.background = Background()
        self.watch = DatabaseWatch(kit, self.background.spawn)  # outages, once each
        # Pauses before each attempt to load a game again after its save failed (a database
        # that is briefly locked or unreachable); then the chat waits for its next update.
        self.reload_delays: tuple[float, ...] = RELOAD_DELAYS
        # What the rooms and delivery want to hear (wired by `bot.play.Rooms`):
        self.saved: list[Callable[[GameRecord], None]] = []  # after every save
        self.loaded: list[Callable[[GameRecord], None]] = []  # made live from the database
        self.forgotten: list[Callable[[GameRecord], None]] = []  # a record no longer live
        self.show_again: Callable[[GameRecord], Awaitable[None]] | None = None  # reloaded

    # ---------------------------------------------------------------- units of work

    @contextlib.asynccontextmanager
    async def for_chat(self, chat_id: int) -> AsyncIterator[Unit]:
        """The chat's game under the chat's lock (the live copy, or loaded)."""
        with logs.ids(chat_id=chat_id):
            async with self.locks[chat_id]:
                record = await self.load(chat_id)
                with logs.ids(game_id=record.id if record is not None else None):
                    yield Unit(chat_id, record)

    @contextlib.asynccontextmanager
    async def locked(self, *chat_ids: int) -> AsyncIterator[None]:
        """The chats' locks for the block, without loading anything (callers that `load`
        or use the live copy themselves), each in the order given (callers that lock several
        chats keep to one order)."""
        async with contextlib.AsyncExitStack() as stack:
            for chat_id in chat_ids:
                await stack.enter_async_context(self.locks[chat_id])
            yield

    @contextlib.asynccontextmanager
    async def for_game(self, game_id: int) -> AsyncIterator[Unit | None]:
        """The chat of game `game_id` under its lock (None: the bot knows no such game)."""
        chat_id = await self.chat_of_game(game_id)
        if chat_id is None:
            yield None
            return
        async with self.for_chat(chat_id) as unit:
            yield unit

    # ---------------------------------------------------------------- reading

    def live(self, chat_id: int) -> GameRecord | None:
        """The chat's lobby or running game as held in memory (no lock, no database)."""
        return self._live.get(chat_id)

    def live_records(self) -> list[GameRecord]:
        return list(self._live.values())

    async def running_games_of(self, person: Person) -> list[GameRecord]:
        """The running games in which this person has a seat, for reading (a unit of work
        takes `for_chat` on the game's chat before changing it): the live copies, which hold
        every running game."""
        return [r for r in self._live.values() if r.status == "running" and seated(r, person)]

    async def stored(self, chat_id: int) -> GameRecord | None:
        """The chat's lobby or running game as stored, or None."""
        try:
            async with self.db.transaction(readonly=True) as tx:
                return await tx.games.active_for_chat(chat_id=chat_id)
        except NotFound:
            return None

    async def load(self, chat_id: int) -> GameRecord | None:
        """The chat's game, made the live copy if it came from the database (callers hold
        the chat's lock)."""
        record = self._live.get(chat_id)
        if record is None:
            record = await self.stored(chat_id)
            if record is not None:
                self._loaded(record)
        return record

    def _loaded(self, record: GameRecord) -> None:
        dropped = self._dropped.pop(record.chat_id, None)
        if dropped is not None and (dropped.id, dropped.version) == (record.id, record.version):
            # Nobody stored the game since the live copy was dropped: the messages it knew
            # are what Telegram shows (a new hand message whose id could not be stored,
            # the old one deleted or closed), newer than the stored ids. Shown as stored,
            # the game would edit the old message back into a live hand, or find it gone
            # and send yet another, leaving the newer one with live buttons.
            _keep_message_ids(record, dropped)
        self.remember(record)
        for listener in self.loaded:
            listener(record)

    def checked(self, chat_id: int) -> GameRecord | None:
        """The live copy, for callers that hold the chat's lock (`locked`) and act only on a
        game that is live; never loaded from the database."""
        return self._live.get(chat_id)

    async def peek(self, chat_id: int) -> GameRecord | None:
        """The chat's game for reading only, without the chat's lock: the live copy, else
        as stored (it does not become the live copy: only a locked `load` may put one in
        place)."""
        record = self._live.get(chat_id)
        return record if record is not None else await self.stored(chat_id)

    async def chat_of_game(self, game_id: int) -> int | None:
        chat_id = self._chat_of.get(game_id)
        if chat_id is not None:
            return chat_id
        try:
            async with self.db.transaction(readonly=True) as tx:
                record = await tx.games.get(game_id=game_id)
        except NotFound:
            return None
        self._chat_of[game_id] = record.chat_id
        return record.chat_id

    async def game(self, game_id: int) -> GameRecord:
        """Game `game_id` as stored, whatever its status (raises `NotFound`)."""
        async with self.db.transaction(readonly=True) as tx:
            return await tx.games.get(game_id=game_id)

    # ---------------------------------------------------------------- writing

    async def create(self, record: GameRecord) -> GameRecord:
        """Store a new lobby (or practice game) and make it the chat's live record."""
        update = handling.pending()  # webhook mode: the update's id goes with its change
        try:
            async with self.db.transaction() as tx:
                record = await tx.games.create(record=record)
                if update is not None:
                    await tx.inbox.done(update_id=update.update_id, at=self.kit.clock())
        except StorageError as exc:
            self.watch.failed(exc)
            raise
        if update is not None:
            update.recorded = True
        self.watch.stored()
        self.remember(record)
        return record

    def remember(self, record: GameRecord) -> None:
        assert record.id is not None
        self._live[record.chat_id] = record
        self._chat_of[record.id] = record.chat_id

    def forget(self, record: GameRecord) -> None:
        if self._live.get(record.chat_id) is record:
            del self._live[record.chat_id]
        self._chat_of.pop(record.id or 0, None)  # a later tap finds the game in the database
        for listener in self.forgotten:
            listener(record)

    async def save(self, record: GameRecord, result: FinishedGame | None = None) -> None:
        """Commit the record (and the finished game, if any) in one transaction."""
        try:
            await self._write(record, result)
        except BaseException:
            self._dropped[record.chat_id] = record  # (its message ids: `_loaded`)
            self.forget(record)  # the stored state wins ...
            self.reload_soon(record.chat_id)  # ... and keeps its deadlines and computers
            raise
        self._saved(record)

    async def save_quietly(self, record: GameRecord) -> bool:
        """Save what does not move the game (message ids, who blocked the bot, a warning
        given): the game goes on (hands, computers) even if this is not stored. If the
        database cannot store it now (busy, full, read-only), the live copy stays as it is,
        new message ids and all: stored with the next save, and never a reason to load the
        game again and send its messages anew. Only a conflict (another writer stored the
        game meanwhile) drops it. Returns whether it was stored."""
        try:
            await self._write(record, None, quiet=True)
        except Conflict:
            logger.warning("game %s lost a race; the stored game wins", record.id)
            self.forget(record)
            self.reload_soon(record.chat_id)
            return False
        except StorageError as exc:
            log = logger.debug if quiet(exc) else logger.warning
            log("game %s is kept in memory, not stored yet: %s", record.id, exc)
            return False
        except Exception:
            logger.exception("could not store game %s", record.id)
            return False
        self._saved(record)
        return True

    async def _write(
        self, record: GameRecord, result: FinishedGame | None, *, quiet: bool = False
    ) -> None:
        # Webhook mode: the update being handled is stored as handled with its first save
        # (not with message ids only), so that it is not handled twice.
        update = None if quiet else handling.pending()
        try:
            if result is None and update is None:  # one statement (see `Database.save_game`)
                record.version = await self.db.save_game(record)
            else:
                async with self.db.transaction() as tx:
                    record.version = await tx.games.save(
                        record=record, expected_version=record.version
                    )
                    if result is not None:
                        await tx.results.record(result=result)
                    if update is not None:
                        await tx.inbox.done(update_id=update.update_id, at=self.kit.clock())
        except StorageError as exc:
            self.watch.failed(exc)
            raise
        if update is not None:
            update.recorded = True
        self.watch.stored()

    def _saved(self, record: GameRecord) -> None:
        if record.status not in ("lobby", "running"):
            self.forget(record)
        self._notify_saved(record)

    async def commit(self, record: GameRecord, moves: Iterable[Move]) -> None:
        """After moves were applied to `record.game`: log them, set the next deadline (or
        end the game), and store it, with the finished game's record if it ended."""
        game = record.game
        assert game is not None
        moves = list(moves)
        log = record.meta.log
        for _, events in moves:
            log.extend(entries_for(events))
        trim(log)
        result = None
        if game.is_over:
            record.status = "finished"
            record.deadline = None
            result = finished_game(record, self.kit)
            # Where the result will land: a process that dies before it stored its id leaves
            # a copy after it, which the next start (posting it again) looks for.
            floor = self.kit.out.floor(record.chat_id)
            record.meta.result_floor = floor.floor if floor is not None else None
        elif not (self.kit.in_window(record) and _only_passes(moves)):
            self.set_deadline(record)  # (a Done within a throw-in window keeps its end)
        await self.save(record, result)
        if result is not None:
            games.ended(record)

    def set_deadline(self, record: GameRecord) -> None:
        """The current turn's deadline, from now (none outside a running game, or without
        a time limit); in a throw-in window, the window's end."""
        timeout = self.kit.wait_length(record)
        running = record.status == "running" and record.game is not None
        record.deadline = (
            self.kit.clock() + timedelta(seconds=timeout) if running and timeout else None
        )
        record.meta.warned = False

    async def close_game(self, record: GameRecord) -> None:
        """End a lobby or game without a result (raises `Conflict` if another writer got
        there first: then nothing was applied)."""
        record.status = "cancelled"
        record.deadline = None
        await self.save(record)
        if record.game is not None:  # a game that had started, not a lobby
            games.ended(record)

    async def migrate(self, old_chat_id: int, new_chat_id: int) -> None:
        """A group became a supergroup (callers hold both chats' locks): its games move
        with it, and the old chat has no live game any more (`load` the new one)."""
        async with self.db.transaction() as tx:
            await tx.migrate_chat(old_chat_id=old_chat_id, new_chat_id=new_chat_id)
        record = self._live.pop(old_chat_id, None)
        if record is not None:
            self._chat_of.pop(record.id or 0, None)

    def _notify_saved(self, record: GameRecord) -> None:
        for listener in self.saved:
            listener(record)

    # ---------------------------------------------------------------- after a failure

    def held(self) -> tuple[int, int, int]:
        """What the store holds in memory: live records, game ids known, chat locks."""
        return len(self._live), len(self._chat_of), len(self.locks)

    def reload_soon(self, chat_id: int) -> None:
        """After a failed save: load the stored game again (when the chat's lock is free) and
        show it, so that what players see is what is stored, and its deadline and computer
        players go on without waiting for a tap."""
        if chat_id in self._reloading:  # one at a time: a save failing within a reload
            return  # must not start another (new messages each time, for ever)
        self._reloading.add(chat_id)
        task = self.background.spawn(self._reload(chat_id))
        task.add_done_callback(lambda _: self._reloading.discard(chat_id))

    async def _reload(self, chat_id: int) -> None:
        for attempt, delay in enumerate(self.reload_delays, 1):
            await asyncio.sleep(delay)
            try:
                async with self.locked(chat_id):
                    if chat_id in self._live:
                        return  # an update of the chat has loaded it meanwhile
                    record = await self.load(chat_id)
                    if record is None:
                        return
                    if self.show_again is not None:
                        await self.show_again(record)  # the stored state, and on from it
                    if chat_id in self._live:
                        return
                    # a save within failed and dropped it again: try once more later
            except OUTAGES as exc:  # (an outage: warned once; or this worker no longer leads)
                logger.info(
                    "could not reload the game of chat %s (attempt %s): %s", chat_id, attempt, exc
                )
            except Exception:
                logger.exception(
                    "could not reload the game of chat %s (attempt %s)", chat_id, attempt
                )


def _keep_message_ids(record: GameRecord, dropped: GameRecord) -> None:
    """The message ids of `dropped` (the same game at the same version, as it was held in
    memory) where they differ from the stored ones."""
    record.hand_messages = {**record.hand_messages, **dropped.hand_messages}
    record.table_message_id = dropped.table_message_id or record.table_message_id
    record.lobby.message_id = dropped.lobby.message_id or record.lobby.message_id


def finished_game(record: GameRecord, kit: Kit) -> FinishedGame:
    """The permanent record of a game that just ended (R17, R18)."""
    game = record.game
    assert game is not None and game.outcome is not None and record.id is not None
    outcome = game.outcome
    left = record.meta.left
    seats = {s.player_id: s for s in record.lobby.seats}
    places = outcome.places(game.players)
    participants = []
    for seat_no, p in enumerate(game.players):
        seat = seats[p]
        res: ParticipantResult
        if outcome.draw:
            res = "draw"
        elif p == outcome.durak:
            # kicked, or left the group: resigned (R18); removed for timeouts: timed_out
            how = left.get(p)
            res = "durak" if how is None else "timed_out" if how == "timed_out" else "resigned"
        else:
            res = "won"
        participants.append(
            Participant(
                seat=seat_no,
                player_id=p,
                user_id=seat.user_id,
                name=seat.name,
                is_computer=seat.is_computer,
                result=res,
                place=places[p],
            )
        )
    return FinishedGame(
        chat_id=record.chat_id,
        game_id=record.id,
        rules=record.rules,
        started_at=record.started_at or record.created_at,
        ended_at=kit.clock(),
        bouts=outcome.bouts,
        draw=outcome.draw,
        durak=outcome.durak,
        participants=participants,
        practice=record.meta.practice,
    )


def _only_passes(moves: Iterable[Move]) -> bool:
    """Whether the moves were only Done taps (`Passed`): no card, no take."""
    return all(isinstance(event, Passed) for _, events in moves for event in events)
