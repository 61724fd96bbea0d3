"""One worker plays: the leader.

Several workers may share one PostgreSQL database, for availability: a worker's death, a
hang or an upgrade goes unnoticed by the players, because another worker takes over within
seconds. They do not add throughput (Telegram's limits are the ceiling, and one process
handles far more than they allow), so only one of them plays at a time: the leader, the
holder of the lease (`storage.lease`). It runs the games exactly as one process on SQLite
does: the rooms with their locks and caches, the timers, the sender and its budgets, all in
its memory. The others (standbys) take Telegram's posts into the inbox
(`bot.telegram.webhook`) and look for the lease. On SQLite the one process always leads.

`Leadership` runs in every worker from its start to its stop: it takes the lead when it can
(a standby looks every `storage.lease.ACQUIRE_SECONDS`), keeps it (renewed every
`storage.lease.RENEW_SECONDS`), and plays while it holds it, in a `Term`.

A `Term` is one worker's time as the leader, and everything the games need is made anew
for it: the outbox with its budgets, the rooms (`bot.play.Rooms`), and the updates (long
polling, or the inbox's reader in webhook mode). It begins by setting the command menus and
the webhook as Telegram should have them (only what differs), showing every stored lobby
and game again (so a table or hand edit the previous leader never sent is sent now) and
re-arming their deadlines; then it takes updates. It ends in one of two ways:

- handing over (a stop signal): it takes no new update, finishes the ones under way, sends
  what is pending (`STOP_SECONDS` for both), then releases the lease, and a standby takes it
  at its next look;
- fenced: another worker holds the lease now (this one hung past its lease, or lost the
  database). Nothing more is sent or written (`Outbox.fence`, `Database.fence_with` refuse
  it); what it held in memory is dropped, and the new leader shows every game as stored.

While this worker cannot tell whether it still leads (its lease connection broke, the
database is out of reach) it sends and writes nothing, and goes on once a renewal says the
lease is still its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from typing import Any, Final

import orjson
from telegram.ext import Application

from bot.config import Settings
from bot.delivery import Outbox, SendError
from bot.delivery.budget import Budgets, Limits, Window
from bot.delivery.outbox import UNWRITTEN
from bot.i18n import Translator
from bot.kit import Kit
from bot.ops import games, metrics
from bot.play import Rooms
from bot.telegram.handlers import ROOMS_KEY
from bot.telegram.inbox import InboxReader
from bot.telegram.polling import TrackedUpdates
from bot.telegram.request import JsonRequest
from bot.telegram.webhook import Webhook
from storage import Database, GameRecord, Lease, NotFound, SoleLease, StorageError
from storage.lease import ACQUIRE_SECONDS, FENCED_CHANNEL, INBOX_CHANNEL, RENEW_SECONDS

logger = logging.getLogger(__name__)

DATABASE_KEY = "database"  # the open database, from open_database until stop_services
TIMING_KEY = "timing"  # the sender's clock (tests: a virtual one)
USERNAME_KEY = "username"  # the bot's @username, asked of Telegram at start-up
UPDATES_KEY = "updates"  # where updates come from: a Webhook, "polling", or None (tests)
POLLING_ERRORS_KEY = "polling_errors"  # long polling's error callback
LEADERSHIP_KEY = "leadership"  # this worker's `Leadership`, from its start to its stop
COMMANDS_KEY: Final = "commands"  # (bot_state) what the command menus were last set to
BUDGETS_KEY: Final = "budgets"  # (bot_state) the leader's calls in Telegram's open windows
ANSWERS_KEY: Final = "answers"  # (bot_state) tap answers being tried again (`Outbox.keep_retrying`)
KEEP_BUDGETS_EVERY: Final = 0.25  # seconds between two writes of them (when they changed)
UNSEEN: Final = 0.5  # the seconds before a write that stand for the moments after it
SHOW_AGAIN_AFTER: Final = 1.0  # after a fenced worker woke (its last calls have landed)
STOP_SECONDS: Final = 6.0
"""A leader that stops: how long the updates under way and what is pending may take to go
out, all together (then the budgets, the lease and the database: a stop ends within 8 s,
inside a service manager's grace, Docker's 10 s). A reply still waiting for its chat's
budget then is not sent; the next start shows every lobby, table and hand again."""

GROUP_COMMANDS = (
    "newgame",
    "stats",
    "rules",
    "hand",
    "leave",
    "cancel",
    "settings",
    "kick",
    "howto",
    "help",
)
PRIVATE_COMMANDS = (
    "start",
    "practice",
    "howto",
    "stats",
    "hand",
    "rules",
    "leave",
    "cancel",
    "help",
)
ALLOWED_UPDATES = ("message", "callback_query", "my_chat_member")


def limits(settings: Settings) -> Limits:
    """Telegram's limits as the settings give them (see `bot.delivery.budget`)."""
    return Limits(
        private=Window(settings.private_sends, settings.private_window),
        group=Window(settings.group_sends, settings.group_window),
        bot=Window(settings.bot_sends, 1.0),
        reserve=min(settings.group_reserve, settings.group_sends - 1),
        tables=min(settings.table_sends, settings.bot_sends - 1),
    )


class Term:
    """One worker's time as the leader (see the module's docstring)."""

    def __init__(self, application: Application, lease: Lease, db: Database) -> None:  # type: ignore[type-arg]
        self.application = application
        self.lease = lease
        self.db = db
        data = application.bot_data
        self.settings: Settings = data["settings"]
        out = Outbox(application.bot, Budgets(limits(self.settings)), data[TIMING_KEY])
        out.fence = lease.held
        request = application.bot.request
        if isinstance(request, JsonRequest):  # (and at the last moment of each call)
            request.fence = lease.held
        self.kit = Kit(
            db=db,
            out=out,
            tr=data["translator"],
            settings=self.settings,
            bot_username=data[USERNAME_KEY],
            clock=data["clock"],
            seeds=data["seeds"],
        )
        self.rooms = Rooms(self.kit)
        self.reader: InboxReader | None = None
        self.begun = False  # set up, games shown, updates taken
        self._saved_budgets = -1  # `Budgets.changes` as last written
        self._writing = asyncio.Lock()  # one write of the budgets ahead of a burst at a time
        self._ahead = True  # whether to write them ahead (not while writes fail)
        out.keep = self._write_ahead
        out.keep_answers = self._keep_answers
        self._tasks: list[asyncio.Task[Any]] = []
        self._polling = False

    @property
    def source(self) -> Webhook | str | None:
        updates: Webhook | str | None = self.application.bot_data.get(UPDATES_KEY)
        return updates

    async def begin(self) -> int:
        """Set Telegram up, show every stored game, take updates; how many games it resumed."""
        rooms, kit, source = self.rooms, self.kit, self.source
        metrics.watch_games(lambda: games.census(rooms.store.live_records()))
        await register_commands(kit.out, kit.tr, self.db)
        if isinstance(source, Webhook):
            await source.register(kit.out, self.db)
        self.application.bot_data[ROOMS_KEY] = rooms
        await self._carry_budgets()
        # Kept even if this leader dies at once, with the call into each chat that showing
        # every game again is about to make (its burst, before the next write).
        await self._save_budgets(final=False, expected=await self._chats_to_show())
        resumed = await rooms.start()
        await self.lease.listen(FENCED_CHANNEL, self._fenced_elsewhere)
        self._tasks.append(asyncio.create_task(rooms.deadlines.run_scheduler()))
        self._tasks.append(asyncio.create_task(self._keep_budgets()))
        if isinstance(source, Webhook):
            self.reader = reader = InboxReader(
                self.application, self.db, clock=kit.clock, name=self.db.name
            )
            # told of the updates other workers stored (PostgreSQL's NOTIFY)
            await self.lease.listen(INBOX_CHANNEL, reader.notified)
            self._tasks.append(asyncio.create_task(reader.run()))
            self._tasks.append(asyncio.create_task(source.run_pruning(self.db)))
        elif source == "polling":
            updater = self.application.updater
            assert updater is not None
            await self._answer_kept()
            processor = self.application.update_processor
            if isinstance(processor, TrackedUpdates):
                processor.unconfirmed.overdue = kit.out.keep_retrying
            await updater.start_polling(
                allowed_updates=ALLOWED_UPDATES,
                error_callback=self.application.bot_data.get(POLLING_ERRORS_KEY),
            )
            self._polling = True
        return resumed

    async def end(self, *, handover: bool) -> None:
        """Stop playing: handing over (finish what is under way, send what is pending) or
        fenced (drop everything: another worker plays), within `STOP_SECONDS`."""
        out = self.kit.out
        processor = self.application.update_processor
        if isinstance(processor, TrackedUpdates) and processor.unconfirmed.overdue is not None:
            processor.unconfirmed.overdue = None
            if handover:  # the answers still tried again: tried on by the next start
                await out.keep_retrying()
        out.keep_answers = None
        out.stop_retrying()  # (Telegram's faults hold no stop up)
        until = out.timing.now() + STOP_SECONDS
        out.stop_by(until)  # a reply waiting for its chat's budget past it is not sent
        if not handover:
            out.keep = None  # (another leads: nothing more is written)

        def left() -> float:
            return max(0.0, until - out.timing.now())

        reader, updater = self.reader, self.application.updater
        if self._polling and updater is not None and updater.running:
            with contextlib.suppress(Exception):
                await updater.stop()
            if handover:  # the updates under way finished (python-telegram-bot's tasks)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left()):
                        await self.application.update_queue.join()
        if reader is not None:
            if handover:
                await reader.drain(left())
            await reader.close()
            await self.lease.unlisten(INBOX_CHANNEL)
        await self.lease.unlisten(FENCED_CHANNEL)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if handover:  # what is under way (a deadline, a warning) is finished, not cut off
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left()):
                    await self.rooms.store.background.settle()
        if self.application.bot_data.get(ROOMS_KEY) is self.rooms:
            del self.application.bot_data[ROOMS_KEY]
        metrics.watch_games(lambda: (0, 0))
        await self.rooms.close(flush=handover, within=left())
        if handover:
            await self._save_budgets(final=True)
        out.keep = None  # (what is still under way writes nothing more: the database closes)

    def _fenced_elsewhere(self, worker: str) -> None:
        """A worker that led before found it lost the lead: what it had on its way when it
        hung may have landed since it woke. Every game is shown again, once what it sent
        has arrived (`SHOW_AGAIN_AFTER`)."""
        logger.info("%s woke after it lost the lead: every game is shown again", worker)
        self.rooms.store.background.spawn(self._show_again_later())

    async def _show_again_later(self) -> None:
        await asyncio.sleep(SHOW_AGAIN_AFTER)
        await self.rooms.show_all_again()

    # ---------------------------------------------------------------- Telegram's windows

    async def _keep_budgets(self) -> None:
        """While leading: the calls in Telegram's open windows, written every
        `KEEP_BUDGETS_EVERY` seconds when a call was made (or a 429 paused a chat) since,
        for the next leader (a restart)."""
        while True:
            await asyncio.sleep(KEEP_BUDGETS_EVERY)
            await self._save_budgets(final=False)

    async def _write_ahead(self, chat_id: int) -> None:
        """A reply into group `chat_id`, which had `UNWRITTEN` calls since the last write:
        write first (a burst: a /rules storm), so that a kill loses at most `UNWRITTEN`
        calls per group, which the next leader reckons (`_carry_budgets`). Not while writes
        fail (the database cannot store): the periodic write tries."""
        if not self._ahead:
            return
        async with self._writing:
            if self.kit.out.budgets.unwritten(chat_id) > UNWRITTEN:
                await self._save_budgets(final=False)

    async def _keep_answers(self, answers: list[dict[str, Any]]) -> None:
        """The tap answers still tried again through Telegram's faults, kept before long
        polling confirms their updates (`Outbox.keep_retrying`)."""
        try:
            async with self.db.transaction() as tx:
                await tx.state.put(key=ANSWERS_KEY, value=orjson.dumps(answers).decode())
        except StorageError as exc:  # (an outage: a kill meanwhile leaves them unanswered)
            logger.info("could not keep the tap answers being tried again: %s", exc)

    async def _answer_kept(self) -> None:
        """The tap answers the process before this one was still trying again when it
        stopped or died, tried on while Telegram takes them (`Outbox.answer_kept`)."""
        try:
            async with self.db.transaction() as tx:
                stored = await tx.state.get(key=ANSWERS_KEY)
                if stored is None or stored == "[]":
                    return
                await tx.state.put(key=ANSWERS_KEY, value="[]")
            kept = orjson.loads(stored)
            count = self.kit.out.answer_kept(list(kept))
        except (StorageError, TypeError, ValueError, KeyError, orjson.JSONDecodeError) as exc:
            logger.info("no tap answers carried over: %s", exc)
            return
        if count:
            logger.info("answering %s taps the process before was still answering", count)

    async def _active(self) -> list[GameRecord]:
        """Every lobby and running game as stored (none if the database cannot say)."""
        try:
            async with self.db.transaction(readonly=True) as tx:
                return await tx.games.all_active()
        except StorageError:
            return []

    async def _games(self, ids: list[int]) -> list[GameRecord]:
        """The games stored under `ids` (those there are; none if the database cannot say)."""
        found: list[GameRecord] = []
        if not ids:
            return found
        try:
            async with self.db.transaction(readonly=True) as tx:
                for game_id in ids:
                    with contextlib.suppress(NotFound):
                        found.append(await tx.games.get(game_id=game_id))
        except StorageError:
            return []
        return found

    async def _chats_to_show(self) -> set[int]:
        """The chats a new leader shows a game in: each lobby's or table's group, and each
        seated person's private chat."""
        records = await self._active()
        chats = {r.chat_id for r in records}
        chats |= {s.user_id for r in records for s in r.lobby.seats if s.user_id is not None}
        return chats

    async def _save_budgets(self, *, final: bool, expected: set[int] | None = None) -> None:
        out = self.kit.out
        changes = out.budgets.changes
        if not final and expected is None and changes == self._saved_budgets:
            return
        recent = out.budgets.recent(out.timing.now())
        unwritten = out.budgets.keeping()
        for chat_id in expected or ():
            recent.setdefault(chat_id, []).append(0.0)
        # Each game's version as this leader holds it: the next one tells the games that
        # moved after this write (`_carry_budgets`).
        live = self.rooms.store.live_records()
        versions = {str(r.id): r.version for r in live}
        # (and of every seated player's private chat: a game dealt after a restart, however
        # long after the bot last wrote to them, has its hands' copies looked for)
        seated = {s.user_id for r in live for s in r.lobby.seats if s.user_id is not None}
        value = orjson.dumps(
            {
                "at": out.timing.epoch(),
                "final": final,
                "calls": {str(k): v for k, v in recent.items()},
                "games": versions,
                # Where a copy of the next send into each private chat would lie: the next
                # leader searches from there (`Outbox.carry_floors`).
                "floors": out.floors({chat for chat in recent if chat > 0} | seated),
            }
        ).decode()
        try:
            async with self.db.transaction() as tx:
                await tx.state.put(key=BUDGETS_KEY, value=value)
        except StorageError as exc:  # (an outage, or no longer leading: the next write)
            logger.debug("could not keep the send budgets: %s", exc)
            out.budgets.not_kept(unwritten)
            self._ahead = False
            return
        self._saved_budgets = changes
        self._ahead = True

    async def _carry_budgets(self) -> None:
        """Count what the previous leader (or this process before a restart) sent in the
        windows that are still open, so that this one keeps within Telegram's limits
        with it. What it sent after its last write (at most `KEEP_BUDGETS_EVERY` seconds,
        unless it handed over) is not known, and is reckoned made now: the kill may have
        come just before this start, and a burst right after the write, reckoned at the
        write, would leave Telegram's window later than this count (a 429 a moment after a
        restart). A private chat it sent to in the `UNSEEN` seconds before that write is
        reckoned full (a player who was playing: their hand waits a window at most, 3 s), a
        group as busy as in those seconds (its table is paced: its window is seldom full,
        and a full one would hold it back a minute). And the private chat of each player of
        a game that moved (or began) after that write is reckoned full too: the moves
        edited every seated player's hand, a burst the write does not show (into a chat
        that may have been quiet before it: a game that had just started), and so did a
        game's last move (a game running at the write and not now). Every chat the
        write shows calls in gets `UNWRITTEN` more: the replies into a group a kill may
        have left unwritten (`_write_ahead`)."""
        try:
            async with self.db.transaction(readonly=True) as tx:
                stored = await tx.state.get(key=BUDGETS_KEY)
            if stored is None:  # the first leader of this database
                return
            kept = orjson.loads(stored)
            at, final, calls = float(kept["at"]), bool(kept["final"]), dict(kept["calls"])
            carried = {int(chat): [float(age) for age in ages] for chat, ages in calls.items()}
            versions = kept.get("games")  # (None: written by a version that kept none)
            if versions is not None:
                versions = {str(game): int(version) for game, version in dict(versions).items()}
        except (StorageError, TypeError, ValueError, KeyError, orjson.JSONDecodeError) as exc:
            logger.info("no send budgets carried over: %s", exc)
            return
        out = self.kit.out
        since = max(0.0, out.timing.epoch() - at)
        recent: dict[int, list[float]] = {}
        limits = out.budgets.limits
        # (The calls after the write: made now, at the latest moment the kill may have come.)
        for chat_id, ages in carried.items():
            now_ages = [age + since for age in ages]
            if not final and chat_id != 0 and any(age >= 0 for age in ages):
                now_ages += [0.0] * UNWRITTEN  # the calls it may have made unwritten
            busy = [age for age in ages if 0 <= age <= UNSEEN]
            if not final and busy:  # the unseen last moments
                if chat_id > 0:  # a private chat: full
                    known = sum(1 for age in ages if age >= 0)
                    now_ages += [0.0] * max(len(busy), limits.private.count - known)
                else:  # a group, or the bot's own window: as busy as before them
                    now_ages += [0.0] * len(busy)
            recent[chat_id] = now_ages
        if not final and versions is not None:
            active = await self._active()
            moved = [r for r in active if versions.get(str(r.id)) != r.version]
            live = {str(r.id) for r in active}  # (a game running at the write and not now
            moved += await self._games([int(g) for g in versions if g not in live])  # ended)
            for record in moved:
                for seat in record.lobby.seats:
                    if seat.user_id is not None and not seat.is_computer:
                        recent.setdefault(seat.user_id, []).extend([0.0] * limits.private.count)
        out.budgets.carry(recent, out.timing.now())
        floors = kept.get("floors")
        if isinstance(floors, dict):
            out.carry_floors({int(chat): int(mid) for chat, mid in floors.items()})


class Leadership:
    """Takes, keeps and hands over the lead for this worker, and plays while it holds it
    (see the module's docstring)."""

    def __init__(self, application: Application, db: Database, lease: Lease) -> None:  # type: ignore[type-arg]
        self.application = application
        self.db = db
        self.lease = lease
        self.term: Term | None = None
        self._task: asyncio.Task[None] | None = None
        self._failing = False  # the database could not be asked: said once
        self.changed = asyncio.Event()  # set whenever this worker begins or ends a term

    @property
    def leading(self) -> bool:
        """Whether this worker plays now."""
        return self.term is not None and self.term.begun and self.lease.held()

    async def start(self) -> None:
        """Look for the lead once (SQLite: taken, and the term begun, before this returns),
        then keep looking (or renewing) in a task of its own."""
        self.db.fence_with(self.lease)
        await self._look(first=True)
        if not isinstance(self.lease, SoleLease):  # several workers may share the database
            self._task = asyncio.create_task(self.run())

    async def run(self) -> None:
        """Every `ACQUIRE_SECONDS` a standby looks for the lead; every `RENEW_SECONDS` the
        leader renews it. Runs until cancelled."""
        while True:
            try:
                if self.term is None:
                    await asyncio.sleep(ACQUIRE_SECONDS)
                    await self._look()
                else:
                    await asyncio.sleep(RENEW_SECONDS)
                    await self._keep()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("leadership: an error; it goes on")
                await asyncio.sleep(RENEW_SECONDS)

    async def _look(self, *, first: bool = False) -> None:
        try:
            took = await self.lease.acquire()
        except StorageError as exc:
            self._could_not_ask(exc)
            return
        self._asked()
        if not took:
            return
        term = Term(self.application, self.lease, self.db)
        self.term = term
        try:
            resumed = await term.begin()
        except Exception:
            if first:  # a start-up that fails (a refused webhook, say) stops the bot
                await self._end(handover=False)
                await self.lease.release()
                raise
            logger.exception("taking the lead failed; handing it over")
            await self._end(handover=False)
            await self.lease.release()
            return
        term.begun = True
        metrics.leading(True)
        self.changed.set()
        logger.info("this worker leads: %d games resumed", resumed)

    async def _keep(self) -> None:
        paused = not self.lease.held()  # (its lease connection broke: nothing went out)
        try:
            kept = await self.lease.renew()
        except StorageError as exc:  # cannot tell: nothing is sent or written meanwhile
            self._could_not_ask(exc)
            return
        self._asked()
        if not kept:
            logger.warning("another worker leads now: this one stops playing (fenced)")
            await self._end(handover=False)
        elif paused and self.term is not None:  # the lead is still this worker's
            logger.info("this worker leads again after a pause")
            await self.term.rooms.deadlines.after_pause()

    async def _end(self, *, handover: bool) -> None:
        term, self.term = self.term, None
        if term is None:
            return
        metrics.leading(False)
        self.changed.set()
        await term.end(handover=handover)

    def _could_not_ask(self, error: StorageError) -> None:
        if not self._failing:
            logger.warning("leadership: the database cannot be asked (%s); trying again", error)
        self._failing = True

    def _asked(self) -> None:
        if self._failing:
            logger.info("leadership: the database answers again")
        self._failing = False

    async def stop(self) -> None:
        """A stop: a leader finishes what it holds and hands the lead over at once."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.term is not None:
            # A leader that cannot tell whether it still leads (its lease connection broke)
            # hands over nothing: it drops what it holds, as a fenced one does.
            await self._end(handover=self.lease.held())
            await self.lease.release()
        await self.lease.close()


async def register_commands(out: Outbox, tr: Translator, db: Database) -> None:
    """Command menus per scope (groups, private chats) and per language, unless they are
    set as they should be already (a digest of them is kept in the database)."""
    menus = [
        (scope, lang, [(n, tr.t(lang or tr.default, f"cmd-{n}")) for n in names])
        for lang in (None, *tr.languages)
        for scope, names in (
            ("all_group_chats", GROUP_COMMANDS),
            ("all_private_chats", PRIVATE_COMMANDS),
        )
    ]
    digest = hashlib.sha256(repr(menus).encode()).hexdigest()
    try:
        async with db.transaction(readonly=True) as tx:
            if await tx.state.get(key=COMMANDS_KEY) == digest:
                return
        for scope, lang, commands in menus:
            await out.set_commands(commands, scope=scope, language=lang)
        async with db.transaction() as tx:
            await tx.state.put(key=COMMANDS_KEY, value=digest)
    except (SendError, StorageError) as exc:
        logger.warning("could not register the command menus: %s", exc)


def leadership(application: Application) -> Leadership | None:  # type: ignore[type-arg]
    """The worker's leadership, once started."""
    found: Leadership | None = application.bot_data.get(LEADERSHIP_KEY)
    return found


def inbox_reader(application: Application) -> InboxReader | None:  # type: ignore[type-arg]
    """The inbox's reader while this worker leads in webhook mode (else None): a post this
    worker stored goes straight to it."""
    lead = leadership(application)
    term = lead.term if lead is not None else None
    if term is None or lead is None or not lead.leading:
        return None
    return term.reader


__all__ = [
    "ALLOWED_UPDATES",
    "DATABASE_KEY",
    "LEADERSHIP_KEY",
    "Leadership",
    "Term",
    "limits",
]
