"""A virtual clock for the bot's sender and the fake's flood limits, so that tests never sleep.

`VirtualTiming` is the sender's `Timing` (see `bot.delivery.sender`): when the sender (or an
`Outbox` call waiting for its budget) has nothing to do until a later time, the clock jumps
to that time, but only once no update is being handled (other than ones that themselves
wait for the clock): a tap handled meanwhile, waiting for its database thread, does not
see minutes pass. Give the same clock to the fake's `FakeTelegram.enforce`, and the bot's
own count and Telegram's agree: a test of a whole game plays its minutes of Telegram's
limits in milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
from collections.abc import Iterator

_IN_UPDATE: contextvars.ContextVar[bool] = contextvars.ContextVar("in_update", default=False)
MAX_SPINS = 1_000_000  # turns of the event loop a wait gives updates before it jumps anyway


class VirtualTiming:
    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self.jumps: list[float] = []  # each jump of a wait, in seconds
        self._updates = 0  # updates being handled
        self._held = 0  # of those, waiting for the clock

    def now(self) -> float:
        return self._now

    def epoch(self) -> float:
        """The virtual clock as wall time: one harness's processes share it."""
        return 1_800_000_000.0 + self._now

    def advance(self, seconds: float) -> None:
        """Move the clock on by hand (a test that holds it with `update`: taps at a pace)."""
        self._now += max(0.0, seconds)

    @contextlib.contextmanager
    def update(self) -> Iterator[None]:
        """Around the handling of an update: the clock does not jump meanwhile."""
        token = _IN_UPDATE.set(True)
        self._updates += 1
        try:
            yield
        finally:
            self._updates -= 1
            _IN_UPDATE.reset(token)

    async def wait(self, wake: asyncio.Event, seconds: float) -> None:
        if wake.is_set():
            return
        if math.isinf(seconds):
            await wake.wait()
            return
        until = self._now + max(0.0, seconds)
        held = _IN_UPDATE.get()
        self._held += held
        try:
            for _ in range(MAX_SPINS):
                await asyncio.sleep(0)
                if wake.is_set() or self._now >= until:
                    return
                if self._updates <= self._held:
                    break
            if until > self._now:
                self.jumps.append(round(until - self._now, 6))
                self._now = until
        finally:
            self._held -= held
