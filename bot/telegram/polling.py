"""What the log says of long polling's connection to the Bot API.

A network outage is one warning when a poll first fails, at most one line per failed poll
after it (with the wait before the next one), and one line when a poll is answered again. It
is not an update error: it never reaches the error handler (`handlers.on_error`), so it is
neither logged with a traceback nor reported to the operator chat.

Fed from two places: python-telegram-bot's polling loop hands every error of `getUpdates`
but a timeout to the `error_callback` of `Updater.start_polling` (`polling_errors`, which
passes the network errors to `failed` and any other to the error handler, as `run_polling`
does); `UpdatesRequest` tells of each timeout, which the loop retries at once without a word
(`timed_out`), and of each answer (`answered`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any, Final

from telegram import Update
from telegram.error import NetworkError, TelegramError
from telegram.ext import Application, SimpleUpdateProcessor

logger = logging.getLogger(__name__)

# python-telegram-bot's polling loop (`telegram.ext._utils.networkloop`, 22.x) waits 1 s
# after a network error, then 1.5 times as long after each further one, at most 30 s; after a
# timeout or an answer it starts again from no wait.
FIRST_WAIT = 1.0
WAIT_FACTOR = 1.5
LONGEST_WAIT = 30.0


class PollingWatch:
    """The state of the connection as long polling sees it: up, or down since when."""

    def __init__(self, where: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.where = where  # the Bot API's host, as the log names it
        self._clock = clock
        self._since: float | None = None
        self._failures = 0
        self._wait = 0.0
        self._answered_at: float | None = None

    @property
    def down(self) -> bool:
        return self._since is not None

    @property
    def down_since(self) -> float | None:
        """When (on its clock) the first of the polls failing since then failed; None: up."""
        return self._since

    @property
    def answered_at(self) -> float | None:
        """When (on its clock) the Bot API last answered a poll; None: not yet."""
        return self._answered_at

    def failed(self, error: TelegramError) -> None:
        """A poll failed on a network error; the loop waits before the next."""
        self._wait = FIRST_WAIT if self._wait == 0 else min(LONGEST_WAIT, self._wait * WAIT_FACTOR)
        self._note(error, f"polling again in {self._wait:.1f} s")

    def timed_out(self, error: TelegramError) -> None:
        """A poll timed out; the loop polls again at once."""
        self._wait = 0.0
        self._note(error, "polling again now")

    def answered(self) -> None:
        """The Bot API answered a poll."""
        self._wait = 0.0
        self._answered_at = self._clock()
        if self._since is None:
            return
        logger.info(
            "the connection to the Bot API (%s) is back after %.0f s and %d failed polls",
            self.where,
            self._clock() - self._since,
            self._failures,
        )
        self._since = None
        self._failures = 0

    def _note(self, error: TelegramError, then: str) -> None:
        self._failures += 1
        what = str(error).rstrip(": .")  # "httpx.ReadError: ": httpx had nothing to say
        if self._since is None:
            self._since = self._clock()
            logger.warning(
                "lost the connection to the Bot API (%s): %s; %s", self.where, what, then
            )
            return
        logger.info(
            "still no connection to the Bot API (%s), %d failed polls in %.0f s: %s; %s",
            self.where,
            self._failures,
            self._clock() - self._since,
            what,
            then,
        )


def polling_errors(
    application: Application,  # type: ignore[type-arg]
    watch: PollingWatch,
) -> Callable[[TelegramError], None]:
    """The `error_callback` for `Updater.start_polling`: network errors to ``watch``, any
    other error (a 409 Conflict: another process polls with this token) to the error
    handlers, with no update, as `Application.run_polling` passes them all."""

    def callback(error: TelegramError) -> None:
        if isinstance(error, NetworkError):
            watch.failed(error)
        else:
            application.create_task(application.process_error(update=None, error=error))

    return callback


UPDATE_WORK: ContextVar[Callable[[asyncio.Future[Any]], None] | None] = ContextVar(
    "update_work", default=None
)
"""Set while an update is handled (`TrackedUpdates`): what the update leaves running beside
it (a tap's answer tried again, `Outbox.answer`) is handed to it, so that the update counts
as handled once that is done too (a poll confirms it to Telegram only then)."""

CONFIRM_WITHIN: Final = 1.0
"""Seconds a poll waits for the updates it would confirm to be handled (`Unconfirmed`)."""


class Unconfirmed:
    """The updates long polling handed to python-telegram-bot and not yet handled.

    A poll confirms every update before its `offset`: Telegram forgets them. PTB polls again
    as soon as it has queued a batch, so a bot killed while it handles a tap (the move stored,
    its answer not yet sent) would lose it for good: the next process never hears of it and
    the tap is never answered. So a poll that would confirm an update still being handled
    waits until it is handled, for `CONFIRM_WITHIN` s at most (then it confirms it anyway:
    one slow update does not hold every chat's taps back); the next process gets the
    updates a killed one had not handled, and answers them (a move that was stored is
    judged against the game as it is now). An update confirmed before it was handled is a
    tap whose answer is still tried again through Telegram's faults (`Outbox.answer`), as a
    rule: `overdue` keeps those answers for the next process first
    (`Outbox.keep_retrying`), and the update holds no later poll back."""

    def __init__(self, within: float = CONFIRM_WITHIN) -> None:
        self.within = within
        self._ids: set[int] = set()
        self._changed = asyncio.Event()
        # Awaited before a poll confirms updates not handled yet (None: nothing to keep).
        self.overdue: Callable[[], Awaitable[None]] | None = None

    def fetched(self, update_ids: list[int]) -> None:
        self._ids.update(update_ids)

    def handled(self, update_id: int, left: Sequence[asyncio.Future[Any]] = ()) -> None:
        """Update `update_id` is handled once what it `left` running is done too."""
        running = [f for f in left if not f.done()]
        if not running:
            self._ids.discard(update_id)
            self._changed.set()
            return
        running[0].add_done_callback(lambda _: self.handled(update_id, running[1:]))

    async def confirm(self, offset: int) -> None:
        """Return once no update before `offset` is still being handled, or after
        `within` s (what `overdue` keeps kept first)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.within
        while any(i < offset for i in self._ids):
            left = deadline - loop.time()
            if left <= 0:
                await self._overdue()
                self._ids = {i for i in self._ids if i >= offset}  # (confirmed now)
                return
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self._changed.wait()

    async def _overdue(self) -> None:
        overdue = self.overdue
        if overdue is None:
            return
        try:
            await overdue()
        except Exception:  # (a poll goes on whatever happens here)
            logger.exception("could not keep the answers of updates not yet handled")


class TrackedUpdates(SimpleUpdateProcessor):
    """PTB's processor of concurrent updates that tells `Unconfirmed` when each is handled."""

    def __init__(self, max_concurrent_updates: int, unconfirmed: Unconfirmed) -> None:
        super().__init__(max_concurrent_updates)
        self.unconfirmed = unconfirmed

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        left: list[asyncio.Future[Any]] = []
        token = UPDATE_WORK.set(left.append)
        try:
            await coroutine
        finally:
            UPDATE_WORK.reset(token)
            if isinstance(update, Update):
                self.unconfirmed.handled(update.update_id, left)
