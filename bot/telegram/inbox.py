"""The leader's side of webhook mode: the updates in the inbox, handled in order.

Every worker stores the updates Telegram posts to it in the inbox (`bot.telegram.webhook`)
and answers 200 once that is committed; the leader handles them from there. It hears of a
new one directly when the post came to it (`take`), through the database when it came to
another worker (PostgreSQL's NOTIFY on `storage.lease.INBOX_CHANNEL`: `notified`), and
finds any it did not hear of by looking at the inbox every `SWEEP_SECONDS` (what a previous
leader left, a notification lost with a connection).

Each update goes to python-telegram-bot (`Application.process_update`) in a task of its
own, at most `MAX_HANDLING` at once, in the order they are taken (a chat's lock in
`bot.store` keeps each chat's updates in that order). It is marked handled in the inbox in
the transaction of its first save (`bot.handling`, `bot.store`), or right after its
handling when it stored nothing. An update whose changes could not be stored (the database
out of reach, or this worker no longer leads) stays in the inbox: it is handled again
later (after `RETRY_FIRST` seconds, doubling up to `RETRY_LAST`), here or by the next
leader.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Final

import orjson
from telegram import Update
from telegram.ext import Application

from bot import handling
from bot.ops import metrics
from storage import Database, StorageError, Stored

logger = logging.getLogger(__name__)

SWEEP_SECONDS: Final = 1.0
MAX_HANDLING: Final = 256  # updates handled at once (python-telegram-bot's default in polling)
BATCH: Final = 500  # updates read from the inbox at a time
KNOWN: Final = 20_000  # ids taken this term, remembered so that none is handled twice
RETRY_FIRST: Final = 0.5
RETRY_LAST: Final = 2.0  # (a database back after an outage: what waited goes on at once)


class InboxReader:
    """Hands the inbox's waiting updates to the application (see the module's docstring).
    One per leader's term: `run` until `drain` or `close`."""

    def __init__(
        self,
        application: Application,  # type: ignore[type-arg]
        db: Database,
        *,
        clock: Callable[[], datetime],
        name: str,
        sweep: float | None = None,
    ) -> None:
        self.application = application
        self.db = db
        self.clock = clock
        self.name = name  # this worker's: its own notifications are for the others
        self.sweep = SWEEP_SECONDS if sweep is None else sweep
        self._known: collections.OrderedDict[int, None] = collections.OrderedDict()
        self._wanted: set[int] = set()  # heard of, not read yet
        self._retry: dict[int, tuple[float, int]] = {}  # id -> (not before, attempts)
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._limit = asyncio.Semaphore(MAX_HANDLING)
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._closed = False
        self._failing = False  # the inbox could not be read: said once
        self._now = False  # look at the whole inbox at once, retries included (`look`)
        self._looks = 0  # looks at the whole inbox begun
        self._looked = asyncio.Condition()  # notified at the end of each (`caught_up`)
        self._looks_done = 0

    # ---------------------------------------------------------------- hearing of updates

    def take(self, update: Update) -> None:
        """An update this worker just stored: handle it now."""
        self._start(update)

    def notified(self, payload: str) -> None:
        """The database says another worker stored update ``"<id> <worker>[ <json>]"``:
        handled at once where the update came with it, else read from the inbox."""
        update_id, _, rest = payload.partition(" ")
        worker, _, body = rest.partition(" ")
        if worker == self.name or not update_id.lstrip("-").isdigit():
            return
        if int(update_id) in self._known:
            return
        update = self._parse(Stored(int(update_id), body)) if body else None
        if update is not None and update.update_id == int(update_id):
            self._start(update)
            return
        self._wanted.add(int(update_id))
        self._wake.set()

    def look(self) -> None:
        """Look at the whole inbox now, updates waiting to be tried again included."""
        self._now = True
        self._wake.set()

    async def caught_up(self) -> None:
        """Until a look at the whole inbox begun from now on has handed on what it found
        (tests; `settled` then waits for their handling)."""
        wanted = self._looks + 1
        self.look()
        async with self._looked:
            await self._looked.wait_for(lambda: self._looks_done >= wanted or self._closed)

    # ---------------------------------------------------------------- the loop

    async def run(self) -> None:
        """Read and hand on what waits: what it was told of at once, the rest every
        `sweep` seconds. Runs until cancelled."""
        loop = asyncio.get_running_loop()
        next_sweep = loop.time()
        while not self._closed:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, next_sweep - loop.time())):
                    await self._wake.wait()
            self._wake.clear()
            wanted, self._wanted = self._wanted, set()
            now, self._now = self._now, False
            sweep = now or loop.time() >= next_sweep
            if sweep:
                next_sweep = loop.time() + self.sweep
                self._looks += 1
            try:
                if wanted:
                    await self._read(ids=wanted)
                if sweep:
                    await self._read(ids=None, retries=now)
                    async with self._looked:
                        self._looks_done = self._looks
                        self._looked.notify_all()
            except StorageError as exc:
                self._wanted |= wanted  # tried again at the next sweep
                if not self._failing:
                    logger.warning("the inbox cannot be read: %s; trying again", exc)
                self._failing = True
                continue
            if self._failing:
                logger.info("the inbox can be read again")
                self._failing = False

    async def _read(self, *, ids: Iterable[int] | None, retries: bool = False) -> None:
        async with self.db.transaction(readonly=True) as tx:
            waiting = await tx.inbox.waiting(limit=BATCH, ids=ids)
        now = math.inf if retries else asyncio.get_running_loop().time()
        for stored in waiting:
            retry = self._retry.get(stored.update_id)
            if stored.update_id in self._known or (retry is not None and retry[0] > now):
                continue
            update = self._parse(stored)
            if update is not None:
                self._start(update)
                continue
            logger.warning("update %s in the inbox cannot be read: dropped", stored.update_id)
            self._remember(stored.update_id)
            await self._mark(stored.update_id)

    def _parse(self, stored: Stored) -> Update | None:
        try:
            return Update.de_json(orjson.loads(stored.body), self.application.bot)
        except Exception:  # (the webhook stores only what it could read as an update)
            return None

    def _start(self, update: Update) -> None:
        update_id = update.update_id
        if self._closed or update_id in self._known:
            return
        self._remember(update_id)
        self._idle.clear()
        task = asyncio.get_running_loop().create_task(self._handle(update))
        self._tasks[update_id] = task
        task.add_done_callback(lambda _: self._done(update_id))

    def _remember(self, update_id: int) -> None:
        self._known[update_id] = None
        while len(self._known) > KNOWN:
            self._known.popitem(last=False)

    def _done(self, update_id: int) -> None:
        self._tasks.pop(update_id, None)
        if not self._tasks:
            self._idle.set()

    async def _handle(self, update: Update) -> None:
        update_id = update.update_id
        async with self._limit:
            with handling.handling(update_id) as state:
                try:
                    await self.application.process_update(update)
                except Exception:  # python-telegram-bot's error handlers have seen it
                    logger.exception("update %s could not be handled", update_id)
            metrics.inbox_handled(state.outage is None)
            if state.outage is not None:
                self._later(update_id, state.outage)
                return
            self._retry.pop(update_id, None)
            if not state.recorded:  # it stored nothing (a /help, a refused tap): marked now
                await self._mark(update_id)

    def _later(self, update_id: int, why: BaseException) -> None:
        """The update's changes were not stored: it is tried again later."""
        _, attempts = self._retry.get(update_id, (0.0, 0))
        wait = min(RETRY_LAST, RETRY_FIRST * 2**attempts)
        self._retry[update_id] = (asyncio.get_running_loop().time() + wait, attempts + 1)
        self._known.pop(update_id, None)
        logger.info("update %s waits in the inbox (%s); again in %.0f s", update_id, why, wait)

    async def _mark(self, update_id: int) -> None:
        try:
            async with self.db.transaction() as tx:
                await tx.inbox.note(update_id=update_id, at=self.clock())
        except Exception as exc:  # handled once here; another leader may handle it again
            logger.warning("update %s could not be marked handled: %s", update_id, exc)

    # ---------------------------------------------------------------- the end

    def busy(self) -> bool:
        """Whether updates are being handled."""
        return not self._idle.is_set()

    async def settled(self) -> None:
        """Until no update is being handled (tests, a stop)."""
        await self._idle.wait()

    async def drain(self, seconds: float) -> None:
        """Take nothing more; let the updates being handled finish (for at most `seconds`)."""
        self._closed = True
        self._wake.set()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._idle.wait()

    async def close(self) -> None:
        """Take nothing more and stop what is being handled (what it had not stored stays
        in the inbox for the next leader)."""
        self._closed = True
        self._wake.set()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def waiting_here(self) -> int:
        """Updates taken and not finished yet (for the metrics)."""
        return len(self._tasks)
