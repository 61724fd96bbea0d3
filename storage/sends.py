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


@dataclass(frozen=True, slots=True)
class SendWindow:
    """At most `count` calls in any `seconds` (the room a claim may use)."""

    count: int
    seconds: float


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
        self, claims: list[tuple[int, SendWindow]], *, bot: SendWindow, now: float
    ) -> list[float]:
        """`claim` for each (chat id, its window) in turn, under one hold of the lock: the
        answers in the same order. A few statements for the whole batch, however long."""
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
        waits: list[float] = []
        made: list[tuple[int, float]] = []
        for chat_id, window in claims:
            wait = max(
                paused.get(chat_id, now) - now,
                _wait(calls[chat_id], window, now),
                _wait(calls[BOT], bot, now),
            )
            if wait <= 0:
                wait = 0.0
                calls[chat_id].append(now)
                calls[BOT].append(now)
                made += [(chat_id, now), (BOT, now)]
            waits.append(wait)
        if made:
            if s.dialect == "postgresql":  # a claim lost in a crash costs nothing: no fsync
                await s.execute("SET LOCAL synchronous_commit TO OFF")
            await s.executemany("INSERT INTO send_calls (chat_id, at) VALUES (?, ?)", made)
            await s.execute(
                f"DELETE FROM send_calls WHERE chat_id IN ({marks}, ?) AND at < ?",
                (*chats, BOT, now - KEEP),
            )
        return waits

    async def answered(self, calls: list[tuple[int, float, float]]) -> None:
        """Each (chat id, claimed at, answered at): that call counts in its chat's window
        from its answer (the bot's own window keeps the claim: its pace)."""
        if calls:
            await self._s.executemany(
                "UPDATE send_calls SET at = ? WHERE chat_id = ? AND at = ?",
                [(answered, chat_id, claimed) for chat_id, claimed, answered in calls],
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
