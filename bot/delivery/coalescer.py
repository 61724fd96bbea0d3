"""At most one publication per key and interval, always of the latest state.

The table message of a group is edited through a `Coalescer` (one edit every
`TABLE_EDIT_INTERVAL` seconds at most), and so are hands that Telegram refused for a
while: a request in between only marks the key as due.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from telegram.error import RetryAfter, TelegramError

from bot.delivery.outbox import MIN_RETRY_WAIT, retry_after_seconds, transient

logger = logging.getLogger(__name__)

MAX_RETRIES: Final = 5  # a table or hands that failed to show, tried again at most this often


class Coalescer:
    """Runs `publish(key)` at most once per `interval` seconds per key, always with the
    latest state: requests that arrive in between are merged into one later run.

    A request that is due at once runs `publish` in the caller's context (which may hold
    a lock); a merged one runs later, in a task of its own, through `publish_later`
    (which takes what it needs itself; by default the same `publish`)."""

    def __init__(
        self,
        publish: Callable[[int], Awaitable[None]],
        interval: float,
        *,
        clock: Callable[[], float] | None = None,
        publish_later: Callable[[int], Awaitable[None]] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._publish = publish
        self._publish_later = publish_later or publish
        self.interval = interval
        self._clock = clock or (lambda: asyncio.get_running_loop().time())
        self._last: dict[int, float] = {}
        self._pending: dict[int, asyncio.Task[None]] = {}
        self._failures: dict[int, int] = {}  # retries in a row, per key
        self._closed = False
        self._sleep = sleep

    async def request(self, key: int) -> None:
        if key in self._pending:
            return  # a run is already scheduled and will publish the latest state
        now = self._clock()
        wait = self._last.get(key, -1e18) + self.interval - now
        if wait <= 0:
            await self._run(key)
            return
        self._pending[key] = asyncio.create_task(self._later(key, wait))

    async def _later(self, key: int, wait: float) -> None:
        me = asyncio.current_task()
        try:
            await self._sleep(wait)
        finally:
            if self._pending.get(key) is me:
                del self._pending[key]
        await self._run(key, self._publish_later)

    async def _run(self, key: int, publish: Callable[[int], Awaitable[None]] | None = None) -> None:
        self._last[key] = self._clock()
        try:
            await (publish or self._publish)(key)
        except TelegramError as exc:
            if not transient(exc):
                logger.warning("publishing chat %s failed: %s", key, exc)
                return
            logger.warning("publishing chat %s failed, retried later: %s", key, exc)
            self.retry_later(key, exc)
        except Exception:
            logger.exception("publishing chat %s failed", key)
        else:
            self._failures.pop(key, None)

    def retry_later(self, key: int, error: TelegramError) -> None:
        """Publish again once Telegram allows (429: after retry_after; a timeout or network
        error: after the interval, longer after each failure in a row, at most
        `MAX_RETRIES` times): the state that failed to show may be the last one for a while,
        as nobody moves while a player thinks. Errors that would only repeat (a 400, say)
        are not retried."""
        if self._closed or not transient(error):
            return
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        if failures > MAX_RETRIES:
            logger.warning("chat %s: giving up after %s failures in a row", key, MAX_RETRIES)
            self._failures.pop(key, None)
            return
        wait = max(self.interval, MIN_RETRY_WAIT) * 2 ** (failures - 1)
        if isinstance(error, RetryAfter):  # exactly as long as Telegram asks, no longer
            wait = retry_after_seconds(error)
            self._last[key] = self._clock() + wait
        if key not in self._pending:
            self._pending[key] = asyncio.create_task(self._later(key, wait))

    async def flush(self) -> None:
        """Publish everything pending now (shutdown, tests)."""
        pending = list(self._pending.items())
        self._pending.clear()
        for key, task in pending:
            task.cancel()
            await self._run(key, self._publish_later)

    async def flush_key(self, key: int) -> None:
        """Drop a scheduled run for `key` (the caller publishes right away instead)."""
        task = self._pending.pop(key, None)
        if task:
            task.cancel()

    def pending(self) -> frozenset[int]:
        return frozenset(self._pending)

    def reset(self, key: int) -> None:
        """`key` was published: failures before no longer count towards `MAX_RETRIES`."""
        self._failures.pop(key, None)

    def close(self) -> None:
        """Cancel what is scheduled and schedule nothing more (shutdown)."""
        self._closed = True
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()

    def forget(self, key: int) -> None:
        task = self._pending.pop(key, None)
        if task:
            task.cancel()
        self._last.pop(key, None)
        self._failures.pop(key, None)
