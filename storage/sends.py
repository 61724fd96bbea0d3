"""The send ledger: what every worker sent to each chat, so that several workers on one
database keep to Telegram's limits together (issue #20).

One process keeps its own count (`bot.delivery.budget.Budgets`); several processes sending
to one chat would each keep within the limits and together go over them. So before a
counted call, a worker on a shared database `claim`s it here: the claim looks at the calls
every worker made into that chat (and into all chats, for the bot's ceiling) within the
window, and either records the call (0.0: send it now) or says how many seconds to wait.
One claim at a time across the workers (`SEND_LOCK`), each a short transaction of a few
statements: the ledger serves a few hundred claims a second, ten times Telegram's ceiling
for a bot. A 429 that a worker met is recorded too (`pause`), so that no other worker sends
into that chat before Telegram allows it.

A claim may also be for a kept message (`Screen`: a table, a hand, a lobby) and the game
version its content shows. Then the ledger keeps the messages in order across workers: it
refuses (`STALE`) content older than what a worker sent there already (a worker that was
slow to send it would overwrite the newer state), holds a claim back while another worker's
call into that message may still be on its way (until it is answered, `HOLD` at most), and
keeps the message's own interval (a table's 3 s) whichever worker sent last.

Times are the workers' wall clocks (seconds since the epoch): workers on several machines
need synchronised clocks (NTP); a skew of a few tens of milliseconds is within the bot's
own margin (`bot.delivery.budget.SLACK`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from storage.repositories import Session

SEND_LOCK: Final = 0x44_75_72_61_6B_02  # (advisory lock key: "Durak" 2)
BOT: Final = 0  # the ledger's chat id for the bot's own window (no Telegram chat is 0)
KEEP: Final = 120.0  # seconds a call is kept: longer than any window
SCREEN_KEEP: Final = 3600.0  # seconds a kept message's last version is kept after its last call
HOLD: Final = 10.0  # seconds a claimed call into a kept message may be on its way, at most
BUSY_POLL: Final = 0.1  # a claim held back by another worker's call asks again this soon
STALE: Final = -1.0
"""A claim's answer: a newer version of that message was sent already; do not send this."""


@dataclass(frozen=True, slots=True)
class SendWindow:
    """At most `count` calls in any `seconds` (the room a claim may use)."""

    count: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Screen:
    """The kept message a claim is for: its `key` (unique across chats), the game `version`
    its content shows, and at least `gap` seconds since the message's last call (any
    worker's)."""

    key: str
    version: int
    gap: float = 0.0


@dataclass(slots=True)
class _Shown:
    version: int
    at: float
    busy_until: float


class SendRepository:
    def __init__(self, session: Session) -> None:
        self._s = session

    async def claim(self, *, chat_id: int, chat: SendWindow, bot: SendWindow, now: float) -> float:
        """Record one counted call into `chat_id` now, if the chat's window, the bot's and a
        429 pause all allow it: 0.0. Else nothing is recorded, and the answer is how many
        seconds to wait before claiming again."""
        [wait] = await self.claim_many([(chat_id, chat)], bot=bot, now=now)
        return wait

    async def claim_many(
        self,
        claims: list[tuple[int, SendWindow]],
        *,
        bot: SendWindow,
        now: float,
        screens: list[Screen | None] | None = None,
    ) -> list[float]:
        """`claim` for each (chat id, its window) in turn, under one hold of the lock: the
        answers in the same order. `screens`, in the same order: the kept message each claim
        is for (None: not one), whose answer may be `STALE`. A few statements for the whole
        batch, however long."""
        s = self._s
        await s.lock(SEND_LOCK)
        chats = sorted({chat_id for chat_id, _ in claims})
        marks = ", ".join("?" * len(chats))
        longest = max(window.seconds for _, window in claims)
        calls: dict[int, list[float]] = {chat_id: [] for chat_id in (*chats, BOT)}
        for row in await s.fetchall(
            f"SELECT chat_id, at FROM send_calls WHERE chat_id IN ({marks}) AND at > ?",
            (*chats, now - longest),
        ):
            calls[int(row["chat_id"])].append(float(row["at"]))
        for row in await s.fetchall(
            "SELECT at FROM send_calls WHERE chat_id = ? AND at > ?", (BOT, now - bot.seconds)
        ):
            calls[BOT].append(float(row["at"]))
        paused = {
            int(row["chat_id"]): float(row["until"])
            for row in await s.fetchall(
                f"SELECT chat_id, until FROM send_pauses WHERE chat_id IN ({marks}) AND until > ?",
                (*chats, now),
            )
        }
        for_screens = screens or [None] * len(claims)
        shown = await self._shown([screen.key for screen in for_screens if screen is not None])
        waits: list[float] = []
        made: list[tuple[int, float]] = []
        sent: list[tuple[str, int, float, float]] = []
        for (chat_id, window), screen in zip(claims, for_screens, strict=True):
            last = None if screen is None else shown.get(screen.key)
            if screen is not None and last is not None and last.version > screen.version:
                waits.append(STALE)
                continue
            wait = max(
                paused.get(chat_id, now) - now,
                _wait(calls[chat_id], window, now),
                _wait(calls[BOT], bot, now),
            )
            if last is not None and screen is not None:
                if last.busy_until > now:  # another call into it may be on its way
                    wait = max(wait, min(last.busy_until - now, BUSY_POLL))
                wait = max(wait, last.at + screen.gap - now)
            if wait <= 0:
                wait = 0.0
                calls[chat_id].append(now)
                calls[BOT].append(now)
                made += [(chat_id, now), (BOT, now)]
                if screen is not None:
                    shown[screen.key] = _Shown(screen.version, now, now + HOLD)
                    sent.append((screen.key, screen.version, now, now + HOLD))
            waits.append(wait)
        if made:
            if s.dialect == "postgresql":  # a claim lost in a crash costs nothing: no fsync
                await s.execute("SET LOCAL synchronous_commit TO OFF")
            await s.executemany("INSERT INTO send_calls (chat_id, at) VALUES (?, ?)", made)
            await s.execute(
                f"DELETE FROM send_calls WHERE chat_id IN ({marks}, ?) AND at < ?",
                (*chats, BOT, now - KEEP),
            )
        if sent:
            await s.executemany(
                "INSERT INTO send_screens (key, version, at, busy_until) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET version = excluded.version, "
                "at = excluded.at, busy_until = excluded.busy_until",
                sent,
            )
            await s.execute("DELETE FROM send_screens WHERE at < ?", (now - SCREEN_KEEP,))
        return waits

    async def _shown(self, keys: list[str]) -> dict[str, _Shown]:
        if not keys:
            return {}
        rows = await self._s.fetchall(
            "SELECT key, version, at, busy_until FROM send_screens "
            f"WHERE key IN ({', '.join('?' * len(keys))})",
            tuple(keys),
        )
        return {
            str(row["key"]): _Shown(int(row["version"]), float(row["at"]), float(row["busy_until"]))
            for row in rows
        }

    async def answered(
        self,
        calls: list[tuple[int, float, float]],
        screens: list[tuple[str, float, float]] | None = None,
    ) -> None:
        """Each (chat id, claimed at, answered at): that call counts in its chat's window
        from its answer (the bot's own window keeps the claim: its pace). `screens`: each
        (key, claimed at, answered at) of a kept message's call: no longer on its way, and
        its interval counts from the answer."""
        if calls:
            await self._s.executemany(
                "UPDATE send_calls SET at = ? WHERE chat_id = ? AND at = ?",
                [(answered, chat_id, claimed) for chat_id, claimed, answered in calls],
            )
        if screens:
            await self._s.executemany(
                "UPDATE send_screens SET at = ?, busy_until = 0 WHERE key = ? AND at = ?",
                [(answered, key, claimed) for key, claimed, answered in screens],
            )

    async def pause(self, *, chat_id: int, until: float) -> None:
        """Telegram answered 429 for this chat: no worker sends into it before `until`."""
        await self._s.execute(
            "INSERT INTO send_pauses (chat_id, until) VALUES (?, ?) "
            "ON CONFLICT (chat_id) DO UPDATE SET until = CASE "
            "WHEN excluded.until > send_pauses.until THEN excluded.until "
            "ELSE send_pauses.until END",
            (chat_id, until),
        )


def _wait(calls: list[float], window: SendWindow, now: float) -> float:
    """Seconds until `window` has room for one more call, given the `calls` made (times)."""
    if window.count <= 0:
        return window.seconds
    if len(calls) < window.count:
        return 0.0
    recent = sorted(at for at in calls if at > now - window.seconds)
    if len(recent) < window.count:
        return 0.0
    return max(0.0, recent[-window.count] + window.seconds - now)
