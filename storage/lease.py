"""Who plays: the lease of the one worker that runs the games.

Several workers may share one PostgreSQL database, for availability: one of them, the
leader, plays every game (its rooms, timers, sender and caches, exactly as one process on
SQLite does); the others accept Telegram's updates into the inbox and stand ready to take
over. `Lease` is how a worker knows which it is:

- `acquire`: a worker that does not lead tries to take the lease (it is free, it ran out,
  or its holder's session is gone); True: it leads now, under a new `epoch`;
- `renew`: the leader keeps it (every `RENEW_SECONDS`); False: it lost it;
- `held`: whether this process may act as the leader right now, by its own clock and
  without asking the database: the lease's time from its last renewal has not run out.
  A leader that was stopped (SIGSTOP, a frozen VM) and wakes after its lease ran out
  finds `held` False before it writes or sends anything: it is fenced;
- `release`: a leader that stops hands the lease over at once.

`storage.database.Database.fence_with` makes the leader's writes check `held`, and its game
saves and inbox marks check `epoch` in the database as well, so a write that was on its way
when the lease changed hands cannot land afterwards.

SQLite: one process owns the file, so it always leads (`SoleLease`, no epoch, nothing
checked). PostgreSQL: `storage.postgres.PostgresLease`.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable
from typing import Final

LEASE_SECONDS: Final = 5.0
"""How long a lease lasts from its last renewal: a leader that hangs loses the lead this
long after its last renewal (plus the next standby's look, `ACQUIRE_SECONDS`)."""

RENEW_SECONDS: Final = 1.0
"""How often the leader renews its lease."""

ACQUIRE_SECONDS: Final = 0.5
"""How often a standby looks whether it can take the lease. A leader whose process died
(its database session ended with it) is replaced at the next look, without waiting for its
lease to run out."""

INBOX_CHANNEL: Final = "durak_inbox"
"""Where a worker that stored an update tells the leader (`Lease.listen`; the payload: the
update's id and the worker's name)."""

FENCED_CHANNEL: Final = "durak_fenced"
"""Where a worker that finds it lost the lead (it hung, or lost the database) says so (the
payload: its name): a call it had on its way when it hung may have reached Telegram after it
woke, over newer messages, so the leader shows its games again."""

SAFETY: Final = 0.5
"""Seconds by which the leader's own reckoning of its lease ends before the database's: its
clock starts before the database's does, so this only covers clocks that run at slightly
different rates."""


def worker_name() -> str:
    """A name for this process among the workers, unique over their lives: its host, its
    process id and a random part (a restarted container has the same host and pid)."""
    host = socket.gethostname().split(".")[0][:32] or "host"
    return f"durak-{host}-{os.getpid()}-{secrets.token_hex(3)}"


class Lease:
    """The lease as one worker sees it (see the module's docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.epoch: int | None = None

    def held(self) -> bool:
        """Whether this worker leads now (without asking the database)."""
        raise NotImplementedError

    async def acquire(self) -> bool:
        """Try to take the lease; True if this worker leads now, under a new `epoch`."""
        raise NotImplementedError

    async def renew(self) -> bool:
        """Keep the lease; False if it was lost (another worker took it)."""
        raise NotImplementedError

    async def release(self) -> None:
        """Hand the lease over at once (a leader that stops)."""
        raise NotImplementedError

    async def close(self) -> None:
        """Let go of what the lease holds open (its connection). Idempotent."""

    async def listen(self, channel: str, callback: Callable[[str], None]) -> None:
        """While leading: call `callback` with each notification's payload on `channel`
        (other workers' news). A lease of one process hears nothing: there are no others."""

    async def unlisten(self, channel: str) -> None:
        """No more of `listen`'s notifications."""

    def holder(self) -> str | None:
        """The worker that leads, as this one last saw it (None: unknown, or nobody)."""
        return self.name if self.held() else None


class SoleLease(Lease):
    """SQLite: the one process that owns the database file leads, always."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._closed = False

    def held(self) -> bool:
        return not self._closed

    async def acquire(self) -> bool:
        return not self._closed

    async def renew(self) -> bool:
        return not self._closed

    async def release(self) -> None:
        self._closed = True

    async def close(self) -> None:
        self._closed = True
