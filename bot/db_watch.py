"""What the operator hears of a database that cannot store (its file system full, the file
read-only, an I/O error: `storage.DatabaseUnavailable`; or its write lock held by another
process past the busy timeout: `storage.DatabaseBusy`) while the bot runs.

An outage is one warning in the log and one message to ``OPERATOR_CHAT_ID`` (if set) when a
save first fails, and one line and one message when a save succeeds again, with how long it
took and how many saves failed meanwhile; the failures in between are debug lines, never a
warning or a traceback each. The players' taps and commands are answered "could not be
saved" meanwhile (`bot.telegram.handlers`), and the games go on when it is back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from bot import render
from bot.delivery import Blocked, SendError
from bot.kit import Kit
from storage import DatabaseBusy, DatabaseUnavailable

logger = logging.getLogger(__name__)

OUTAGES = (DatabaseUnavailable, DatabaseBusy)
"""Errors of a database that cannot store for a while: one warning and one operator
message each outage; each failure meanwhile a debug line (`quiet`)."""


def quiet(error: BaseException) -> bool:
    """Whether a failed save with ``error`` is logged at DEBUG (an outage's: said once)."""
    return isinstance(error, OUTAGES)


class DatabaseWatch:
    """The database as the bot's saves see it: storing, or not since when."""

    def __init__(
        self,
        kit: Kit,
        spawn: Callable[[Coroutine[Any, Any, None]], object],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kit = kit
        self._spawn = spawn  # runs the message to the operator beside the update
        self._clock = clock
        self._since: float | None = None
        self._failures = 0
        self._last: BaseException | None = None

    @property
    def down(self) -> bool:
        """Whether the last save failed because the database cannot store."""
        return self._since is not None

    def failed(self, error: BaseException) -> None:
        """A save failed with ``error``: an outage begins (or goes on) if the database could
        not store it (`OUTAGES`); any other error (a conflict) is no outage. The same error
        told twice (by the store, then by the handler) counts once."""
        if not isinstance(error, OUTAGES) or error is self._last:
            return
        self._last = error
        self._failures += 1
        if self._since is not None:
            logger.debug(
                "the database still cannot store (%d failed saves): %s", self._failures, error
            )
            return
        self._since = self._clock()
        logger.warning(
            "the database cannot store anything: %s; until it can, updates are answered "
            "'could not be saved' and games wait",
            error,
        )
        self._tell_operator("operator-database-down", cause=render.esc(str(error)))

    def stored(self) -> None:
        """A save succeeded: an outage, if there was one, is over."""
        if self._since is None:
            return
        seconds = round(self._clock() - self._since)
        failures = self._failures
        self._since = None
        self._failures = 0
        self._last = None
        logger.info("the database stores again, after %d s and %d failed saves", seconds, failures)
        self._tell_operator("operator-database-back", seconds=seconds, failures=failures)

    def _tell_operator(self, key: str, **args: str | int) -> None:
        chat_id = self.kit.settings.operator_chat_id
        if chat_id is None:
            return
        text = self.kit.t(self.kit.settings.default_language, key, **args)
        self._spawn(self._send(chat_id, text))

    async def _send(self, chat_id: int, text: str) -> None:
        try:
            await self.kit.out.send(chat_id, render.Rendered(text))
        except (Blocked, SendError) as exc:
            logger.warning("could not tell the operator chat about the database: %s", exc)
