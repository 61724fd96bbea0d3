"""The bot's own count of what it sent, per chat and in all, against Telegram's limits.

Telegram asks for about one message a second per chat (short bursts allowed), at most 20 a
minute per group, and about 30 a second for the whole bot; edits and deletions count the
same as new messages, answers to button taps not at all. Past that it answers 429 with
`retry_after`. `Budgets` keeps a sliding window per chat and one for the bot (at most
`count` calls in any `seconds`, not a burst then a rate), so that the sender sends only what
Telegram will take, and it remembers each chat's 429 pause: a 429 pauses that chat alone,
for exactly the `retry_after` Telegram asked.

A group keeps `Limits.reserve` calls of each window for messages that matter once (the
lobby, the start, the result, a notice): the table and the hands, which are edited again and
again, may use only the rest.

Telegram counts a bot's calls whichever process made them, so a leader that takes over (or
a process that restarts) must count what the one before it sent in the windows that are
still open: `recent` gives those calls, `carry` counts another process's (`bot.leader`
keeps them in the database while it leads).
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

PACE: Final = 5  # the bot's window is kept in this many parts too (see `Budgets`)

SLACK: Final = 0.05
"""Seconds added to a window's end before its oldest call counts as gone: Telegram's clock
and ours are not the same one, and a call that reaches it a moment early is refused."""


@dataclass(frozen=True, slots=True)
class Window:
    """At most `count` calls in any `seconds`."""

    count: int
    seconds: float

    @property
    def gap(self) -> float:
        """The steady spacing that uses the window evenly."""
        return self.seconds / self.count


@dataclass(frozen=True, slots=True)
class Limits:
    private: Window = Window(3, 3.0)  # about one a second, a burst of three
    group: Window = Window(20, 60.0)
    bot: Window = Window(30, 1.0)
    reserve: int = 3  # of a group's window, for messages that matter once
    tables: int = 5  # of the bot's window, for tables that waited long (`bot.delivery.sender`)

    def chat(self, chat_id: int) -> Window:
        return self.private if chat_id > 0 else self.group


class _Calls:
    """The times of the calls in one window (oldest first)."""

    __slots__ = ("slack", "times", "window")

    def __init__(self, window: Window, slack: float = SLACK) -> None:
        self.window = window
        self.slack = slack
        self.times: deque[float] = deque()

    def ready_at(self, now: float, room: int) -> float:
        """When a call may go if only `room` of the window's calls may be used: now, or when
        enough of the older calls have left the window."""
        times = self.times
        horizon = now - self.window.seconds - self.slack
        while times and times[0] <= horizon:
            times.popleft()
        if room <= 0:
            return now + self.window.seconds  # never, in effect: check again later
        excess = len(times) - room
        if excess < 0:
            return now
        return times[excess] + self.window.seconds + self.slack

    def free(self, now: float, room: int) -> int:
        """How many calls may go now if only `room` of the window's calls may be used."""
        self.ready_at(now, room)  # (drops the calls that left the window)
        return max(0, room - len(self.times))


class Budgets:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._chats: dict[int, _Calls] = {}
        self._bot = _Calls(limits.bot)
        # The bot's window, also in fifths: its calls spread over the second rather than all
        # at its start, so that whatever becomes urgent waits a fifth of a second at most
        # for the next of them, not a whole second.
        bot = limits.bot
        # (Without slack: the bot's own spacing, not Telegram's limit.)
        self._bot_pace = _Calls(Window(max(1, bot.count // PACE), bot.seconds / PACE), 0.0)
        self._paused: dict[int, float] = {}  # chat id -> until when Telegram said wait
        self.changes = 0  # calls noted, moved or paused so far (`recent` is worth keeping anew)
        self._unwritten: dict[int, int] = {}  # chat id -> calls noted since `recent` was kept

    def _calls(self, chat_id: int) -> _Calls:
        calls = self._chats.get(chat_id)
        if calls is None:
            calls = self._chats[chat_id] = _Calls(self.limits.chat(chat_id))
        return calls

    def note(self, chat_id: int, now: float) -> None:
        """A counted call to `chat_id` goes out now."""
        self.changes += 1
        self._unwritten[chat_id] = self._unwritten.get(chat_id, 0) + 1
        self._calls(chat_id).times.append(now)
        self._bot.times.append(now)
        self._bot_pace.times.append(now)

    def answered(self, chat_id: int, at: float, now: float) -> None:
        """The call to `chat_id` noted `at` was answered `now`: in the chat's window it
        counts from now. Telegram counted it when it arrived, somewhere in between; with the
        event loop late (a busy process), a call can arrive well after it was noted, and a
        window the bot sees as free would not be, for Telegram. (The bot's own window keeps
        the start: there its pace counts, and `SLACK` covers the round trip.)"""
        times = self._calls(chat_id).times
        if now > at and at in times:
            self.changes += 1
            times.remove(at)
            bisect.insort(times, now)

    def pause(self, chat_id: int, now: float, seconds: float) -> None:
        """Telegram answered 429: nothing more to this chat for `seconds`."""
        self.changes += 1
        self._paused[chat_id] = max(self._paused.get(chat_id, 0.0), now + seconds)

    def chat_ready_at(self, chat_id: int, now: float, *, once: bool = False) -> float:
        """When the chat's next counted call may go. A call that may be repeated later (the
        table, a hand) leaves a group's reserve alone; one that matters `once` may use it."""
        calls = self._calls(chat_id)
        room = calls.window.count
        if chat_id < 0 and not once:
            room -= self.limits.reserve
        at = calls.ready_at(now, room)
        paused = self._paused.get(chat_id)
        if paused is not None:
            if paused <= now:
                del self._paused[chat_id]
            else:
                at = max(at, paused)
        return at

    def bot_ready_at(self, now: float) -> float:
        """When the bot's next counted call may go, whatever the chat."""
        return max(
            self._bot.ready_at(now, self.limits.bot.count),
            self._bot_pace.ready_at(now, self._bot_pace.window.count),
        )

    def bot_room(self, now: float) -> int:
        """How many counted calls the bot may make now, whatever the chats (its window and
        its pace both allowing)."""
        return min(
            self._bot.free(now, self.limits.bot.count),
            self._bot_pace.free(now, self._bot_pace.window.count),
        )

    def ready_at(self, chat_id: int, now: float, *, once: bool = False) -> float:
        return max(self.chat_ready_at(chat_id, now, once=once), self.bot_ready_at(now))

    def steady_gap(self, chat_id: int) -> float:
        """The spacing of a chat's repeated edits that leaves its window (and reserve) free."""
        window = self.limits.chat(chat_id)
        room = window.count - (self.limits.reserve if chat_id < 0 else 0)
        return window.seconds / max(1, room)

    def spacing(self, chat_id: int, now: float) -> float:
        """How far apart a chat's repeated edits (the table) should be now: the steady gap,
        or longer while earlier calls (a lobby's, a start's) fill the window, so that its
        room lasts until they leave it rather than being used up at once and then leaving
        the table stale for the rest of the window."""
        steady = self.steady_gap(chat_id)
        calls = self._calls(chat_id)
        times = calls.times
        room = calls.window.count - (self.limits.reserve if chat_id < 0 else 0)
        calls.ready_at(now, room)  # (drops the calls that left the window)
        free = room - len(times)
        if free <= 0 or not times:
            return steady
        return max(steady, (times[0] + calls.window.seconds - now) / free)

    def recent(self, now: float) -> dict[int, list[float]]:
        """Each chat's calls still in its window at `now` (the bot's own under chat id 0), as
        ages in seconds, and each chat's 429 pause as a negative age (what is left of it):
        what another process must count if it sends next."""
        found: dict[int, list[float]] = {}
        for chat_id, calls in [(0, self._bot), *self._chats.items()]:
            horizon = now - calls.window.seconds - calls.slack
            ages = [round(now - t, 3) for t in calls.times if t > horizon]
            if ages:
                found[chat_id] = ages
        for chat_id, until in self._paused.items():
            if until > now:
                found.setdefault(chat_id, []).append(round(now - until, 3))
        return found

    def unwritten(self, chat_id: int) -> int:
        """The calls to `chat_id` noted since `recent` was last kept (`keeping`)."""
        return self._unwritten.get(chat_id, 0)

    def keeping(self) -> dict[int, int]:
        """`recent` is about to be kept: the calls noted since it last was, no longer
        unwritten (`not_kept` gives them back if keeping it failed)."""
        unwritten, self._unwritten = self._unwritten, {}
        return unwritten

    def not_kept(self, unwritten: Mapping[int, int]) -> None:
        """Keeping `recent` failed: the calls `keeping` took are unwritten again."""
        for chat_id, count in unwritten.items():
            self._unwritten[chat_id] = self._unwritten.get(chat_id, 0) + count

    def carry(self, recent: Mapping[int, Sequence[float]], now: float) -> None:
        """Count the calls another process made (`recent`'s ages, as of `now`) and its
        pauses, so that together they keep within Telegram's limits."""
        for chat_id, ages in recent.items():
            calls = self._bot if chat_id == 0 else self._calls(chat_id)
            for age in sorted(ages, reverse=True):
                if age < 0:
                    self.pause(chat_id, now, -age)
                else:
                    bisect.insort(calls.times, now - age)
                    if chat_id == 0:
                        bisect.insort(self._bot_pace.times, now - age)

    def forget(self, chat_id: int) -> None:
        """The chat is quiet: its window need not be kept (a pause is)."""
        calls = self._chats.get(chat_id)
        if calls is not None and not calls.times:
            del self._chats[chat_id]
