"""Send budgets shared by several workers: each counted call claimed in the database's send
ledger (`storage.sends`) before it goes.

`Budgets` counts what this process sent; with several workers on one PostgreSQL, each of
them sending into the same chats, that count alone would let them together go over
Telegram's limits. So on PostgreSQL every counted call (a send, an edit, a deletion) is
also claimed in the ledger, which counts every worker's calls: a claim that the chat's
window, the bot's or a 429 pause refuses says how long to wait, and the call waits that
long (the sender takes another chat meanwhile). The local count stays in front of it: it
keeps this worker's own order and pacing, and the ledger adds what the others sent.

A claim is one short transaction (a few milliseconds on a local PostgreSQL); a ledger that
cannot be reached (`StorageError`) lets the call go on the local count alone, and says so
in the log once, rather than holding every message back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from bot.delivery.budget import SLACK, Limits
from storage import StorageError
from storage.database import Database
from storage.sends import SendWindow

logger = logging.getLogger(__name__)


class Ledger:
    def __init__(
        self, db: Database, limits: Limits, clock: Callable[[], float] = time.time
    ) -> None:
        self.db = db
        self.limits = limits
        self.clock = clock
        self._failing = False

    async def claim(self, chat_id: int, *, once: bool = False) -> float:
        """Claim one counted call into `chat_id`: 0.0 when it may go now (and is counted),
        else the seconds to wait before claiming again. One that matters `once` may use a
        group's reserve (`Limits.reserve`), as in `Budgets.chat_ready_at`."""
        limits = self.limits
        window = limits.chat(chat_id)
        room = window.count - (limits.reserve if chat_id < 0 and not once else 0)
        try:
            async with self.db.transaction() as tx:
                wait = await tx.sends.claim(
                    chat_id=chat_id,
                    chat=SendWindow(room, window.seconds + SLACK),
                    bot=SendWindow(limits.bot.count, limits.bot.seconds + SLACK),
                    now=self.clock(),
                )
        except StorageError as exc:
            self._trouble(exc)
            return 0.0
        self._ok()
        return wait

    async def pause(self, chat_id: int, seconds: float) -> None:
        """Telegram answered this worker 429 for the chat: no worker sends into it sooner."""
        try:
            async with self.db.transaction() as tx:
                await tx.sends.pause(chat_id=chat_id, until=self.clock() + seconds)
        except StorageError as exc:
            self._trouble(exc)

    def _trouble(self, exc: StorageError) -> None:
        if not self._failing:
            self._failing = True
            logger.warning("the send ledger cannot be reached (%s): counting locally only", exc)

    def _ok(self) -> None:
        if self._failing:
            self._failing = False
            logger.warning("the send ledger works again")
