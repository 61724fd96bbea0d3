"""Send budgets shared by several workers: each counted call claimed in the database's send
ledger (`storage.sends`) before it goes.

`Budgets` counts what this process sent; with several workers on one PostgreSQL, each of
them sending into the same chats, that count alone would let them together go over
Telegram's limits. So on PostgreSQL every counted call (a send, an edit, a deletion) is
also claimed in the ledger, which counts every worker's calls: a claim that the chat's
window, the bot's or a 429 pause refuses says how long to wait, and the call waits that
long (the sender takes another chat meanwhile). The local count stays in front of it: it
keeps this worker's own order and pacing, and the ledger adds what the others sent.

A call into a kept message (a table, a hand, a lobby) claims with the message's key and the
game version its content shows (`Screen`): the ledger then refuses content older than what
another worker sent there (`STALE`: the sender drops it), holds it back while another
worker's call into that message is on its way, and keeps a table's interval across workers.
When a table's call is answered, the ledger also marks that version's table drawn
(`GameRepository.drawn`), in the same transaction as the next claims: the game's redraw
(`GameRecord.redraw_at`, for a worker that died with a table edit pending) is then off.

A claim is one short transaction (a few milliseconds on a local PostgreSQL); a ledger that
cannot be reached (`StorageError`) lets the call go on the local count alone, and says so
in the log once, rather than holding every message back.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import deque
from collections.abc import Callable

from bot.delivery.budget import SLACK, Limits
from storage import StorageError
from storage.database import Database
from storage.sends import Screen, SendWindow

logger = logging.getLogger(__name__)


class Ledger:
    def __init__(
        self, db: Database, limits: Limits, clock: Callable[[], float] = time.time
    ) -> None:
        self.db = db
        self.limits = limits
        self.clock = clock
        self._failing = False
        # Claims wait here while one transaction claims those before them, then go together
        # in the next: one transaction (and one pool connection) at a time, however many the
        # sender wants at once. A claim per transaction would cap the sender at about a
        # thousand calls a second, and hundreds of them at once would hold every connection
        # of the pool while they wait for `SEND_LOCK`, leaving none for the games' saves.
        self._queue: list[tuple[int, bool, Screen | None, asyncio.Future[float]]] = []
        # Calls answered since: each moved in the ledger from its claim to its answer, in
        # the next transaction (see `answered`).
        self._answers: list[tuple[int, float, float]] = []
        self._screen_answers: list[tuple[str, float, float]] = []  # (key, claimed, answered)
        self._drawn: list[tuple[int, int]] = []  # (game id, version) of tables shown since
        self._claimed: dict[int, deque[float]] = {}  # chat -> times of its claims, oldest first
        # kept message -> when its call in flight was claimed (one at a time per message: the
        # sender's; the chat's times above also hold the outbox's own calls into the chat)
        self._screen_claimed: dict[str, float] = {}
        self._claiming: asyncio.Task[None] | None = None
        self.transactions = 0  # claiming transactions so far (the benchmark prints it)

    async def claim(
        self, chat_id: int, *, once: bool = False, screen: Screen | None = None
    ) -> float:
        """Claim one counted call into `chat_id`: 0.0 when it may go now (and is counted),
        else the seconds to wait before claiming again, or `STALE` (`screen`: the kept
        message it is for holds a newer version already). One that matters `once` may use a
        group's reserve (`Limits.reserve`), as in `Budgets.chat_ready_at`."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[float] = loop.create_future()
        self._queue.append((chat_id, once, screen, answer))
        self._run()
        return await answer

    def answered(
        self, chat_id: int, *, screen: str | None = None, drawn: tuple[int, int] | None = None
    ) -> None:
        """A call this worker claimed into `chat_id` (the oldest not yet answered) got its
        answer: in the ledger it counts from now. Telegram counted it when it arrived, which
        from a busy process can be well after its claim; counted from the claim, a window
        another worker sees as free would not be, for Telegram (as `Budgets.answered`).
        `screen`: the key of the kept message it was for; `drawn`: (game id, version) of a
        table the group now sees."""
        claimed = self._claimed.get(chat_id)
        if not claimed:
            return
        at = claimed.popleft()
        if not claimed:
            del self._claimed[chat_id]
        now = self.clock()
        self._answers.append((chat_id, at, now))
        screen_at = None if screen is None else self._screen_claimed.pop(screen, None)
        if screen is not None and screen_at is not None:
            self._screen_answers.append((screen, screen_at, now))
        if drawn is not None:
            self._drawn.append(drawn)
        self._run()

    def _run(self) -> None:
        if self._claiming is None or self._claiming.done():
            # In a context of its own: the claims belong to no update.
            loop = asyncio.get_running_loop()
            self._claiming = loop.create_task(self._claim_queued(), context=contextvars.Context())

    def _window(self, chat_id: int, once: bool) -> SendWindow:
        limits = self.limits
        window = limits.chat(chat_id)
        room = window.count - (limits.reserve if chat_id < 0 and not once else 0)
        return SendWindow(room, window.seconds + SLACK)

    async def _claim_queued(self) -> None:
        bot = SendWindow(self.limits.bot.count, self.limits.bot.seconds + SLACK)
        while self._queue or self._answers:
            batch, self._queue = self._queue, []
            answers, self._answers = self._answers, []
            screen_answers, self._screen_answers = self._screen_answers, []
            drawn, self._drawn = self._drawn, []
            claims = [(chat_id, self._window(chat_id, once)) for chat_id, once, _, _ in batch]
            screens = [screen for _, _, screen, _ in batch]
            now = self.clock()
            try:
                async with self.db.side_transaction() as tx:  # (no pool connection)
                    await tx.sends.answered(answers, screen_answers)
                    await tx.games.drawn(drawn)
                    waits = (
                        await tx.sends.claim_many(claims, bot=bot, now=now, screens=screens)
                        if claims
                        else []
                    )
                self.transactions += 1
            except StorageError as exc:
                self._trouble(exc)
                waits = [0.0] * len(batch)
            except BaseException as exc:  # a bug, or the stop: every waiting claim hears it
                for _, _, _, answer in batch:
                    if not answer.done():
                        answer.set_exception(exc)
                raise
            else:
                self._ok()
            for (chat_id, _, screen, answer), wait in zip(batch, waits, strict=True):
                if wait == 0.0:
                    self._claimed.setdefault(chat_id, deque()).append(now)
                    if screen is not None:
                        self._screen_claimed[screen.key] = now
                if not answer.done():  # (a caller cancelled meanwhile: its call is counted)
                    answer.set_result(wait)

    async def pause(self, chat_id: int, seconds: float) -> None:
        """Telegram answered this worker 429 for the chat: no worker sends into it sooner."""
        try:
            async with self.db.side_transaction() as tx:
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
