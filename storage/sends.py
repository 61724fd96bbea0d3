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
        s = self._s
        await s.lock(SEND_LOCK)
        row = await s.fetchone("SELECT until FROM send_pauses WHERE chat_id = ?", (chat_id,))
        if row is not None and float(row["until"]) > now:
            return float(row["until"]) - now
        for key, window in ((chat_id, chat), (BOT, bot)):
            wait = await self._wait(key, window, now)
            if wait > 0:
                return wait
        await s.executemany(
            "INSERT INTO send_calls (chat_id, at) VALUES (?, ?)", [(chat_id, now), (BOT, now)]
        )
        await s.execute(
            "DELETE FROM send_calls WHERE chat_id IN (?, ?) AND at < ?", (chat_id, BOT, now - KEEP)
        )
        return 0.0

    async def _wait(self, chat_id: int, window: SendWindow, now: float) -> float:
        if window.count <= 0:
            return window.seconds
        row = await self._s.fetchone(
            "SELECT at FROM send_calls WHERE chat_id = ? AND at > ? "
            "ORDER BY at DESC LIMIT 1 OFFSET ?",
            (chat_id, now - window.seconds, window.count - 1),
        )
        return 0.0 if row is None else max(0.0, float(row["at"]) + window.seconds - now)

    async def pause(self, *, chat_id: int, until: float) -> None:
        """Telegram answered 429 for this chat: no worker sends into it before `until`."""
        await self._s.execute(
            "INSERT INTO send_pauses (chat_id, until) VALUES (?, ?) "
            "ON CONFLICT (chat_id) DO UPDATE SET until = CASE "
            "WHEN excluded.until > send_pauses.until THEN excluded.until "
            "ELSE send_pauses.until END",
            (chat_id, until),
        )
