"""A virtual clock for the bot's sender and the fake's flood limits, so that tests never sleep.

`VirtualTiming` is the sender's `Timing` (see `bot.delivery.sender`): when the sender (or an
`Outbox` call waiting for its budget) has nothing to do until a later time, and nothing else
is ready to run, the clock jumps to that time. Give the same clock to the fake's
`FakeTelegram.enforce`, and the bot's own count and Telegram's agree: a test of a whole game
plays its minutes of Telegram's limits in milliseconds.
"""

from __future__ import annotations

import asyncio
import math

YIELDS = 8  # turns of the event loop given to everything else before the clock jumps


class VirtualTiming:
    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self.waited = 0.0  # seconds the clock jumped in all
        self.jumps: list[float] = []  # each jump of a wait, in seconds

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds
        self.waited += seconds

    async def wait(self, wake: asyncio.Event, seconds: float) -> None:
        until = self._now + max(0.0, seconds)
        for _ in range(YIELDS):
            if wake.is_set():
                return
            await asyncio.sleep(0)
        if wake.is_set():
            return
        if math.isinf(seconds):
            await wake.wait()
            return
        if until > self._now:
            self.jumps.append(round(until - self._now, 6))
            self.advance(until - self._now)
