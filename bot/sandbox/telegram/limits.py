"""Telegram's flood limits, as the fake enforces them when asked (`FakeTelegram.enforce`).

Telegram asks bots to send at most about one message a second into one chat (short bursts
allowed), 20 a minute into one group, and about 30 a second over all chats; edits count
the same as new messages, answers to button taps not at all. Past that it answers 429 with
`retry_after`. Each limit here is a sliding window: at most `count` calls in any `seconds`.
A refused call does not count. `FloodControl.over` counts the refusals by the limit they
met ("private", "group", "bot"; a call over two counts for both).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

COUNTED: Final = frozenset({"sendMessage", "editMessageText", "deleteMessage"})
"""The methods that count against a chat's limits (not answerCallbackQuery)."""


@dataclass(frozen=True, slots=True)
class Window:
    count: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Limits:
    private: Window = Window(3, 3.0)  # about one a second, a burst of three
    group: Window = Window(20, 60.0)
    bot: Window = Window(30, 1.0)


class FloodControl:
    """Counts the calls of each chat and of the whole bot in their windows."""

    def __init__(self, limits: Limits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self.clock = clock
        self._calls: dict[int | None, deque[float]] = {}  # chat id (None: the bot) -> times
        self.over: Counter[str] = Counter()  # refusals by the limit met

    def retry_after(self, chat_id: int) -> int | None:
        """None if a call to `chat_id` may go now (it is counted); else the whole seconds
        until it may, as Telegram's retry_after says them."""
        now = self.clock()
        chat = self.limits.private if chat_id > 0 else self.limits.group
        waits = [self._wait(chat_id, chat, now), self._wait(None, self.limits.bot, now)]
        if any(wait is not None for wait in waits):
            for limit, wait in zip(
                ("private" if chat_id > 0 else "group", "bot"), waits, strict=True
            ):
                if wait is not None:
                    self.over[limit] += 1
            return max(1, math.ceil(max(wait or 0.0 for wait in waits)))
        self._calls.setdefault(chat_id, deque()).append(now)
        self._calls.setdefault(None, deque()).append(now)
        return None

    def _wait(self, key: int | None, window: Window, now: float) -> float | None:
        calls = self._calls.get(key)
        if calls is None:
            return None
        while calls and calls[0] <= now - window.seconds:
            calls.popleft()
        if len(calls) < window.count:
            return None
        return calls[0] + window.seconds - now
