"""`/healthz`, `/readyz` and `/metrics`, served by the web server (`bot.web`, docs/operating.md).

- `/healthz` (liveness): 200 whenever the process answers at all. The answer comes from
  the event loop itself, so a loop that is stuck, or a process that is gone, gets no
  answer, which is what a probe counts as a failure. It stays 200 while the bot stops:
  a stopping process must not be killed for being slow.
- `/readyz` (readiness): 200 when this worker can accept updates, 503 (with what is wrong)
  when not: still starting; stopping (from the stop signal on); the database does not
  answer within `DATABASE_WAIT` seconds, or is not open. A standby is ready: it stores
  what Telegram posts for the leader. The body is JSON and also says which worker leads:
  ``{"ready": true, "checks": {"state": "up", "database": "ok"}, "worker": "durak-...",
  "role": "leader", "leader": "durak-...", "telegram": "ok"}`` (``telegram``: long polling's
  state, in the worker that polls).
- `/metrics`: every metric of `bot.ops.metrics` (and the client's process metrics), in
  Prometheus' text format.

Status codes are the ones Docker's HEALTHCHECK (through a client that fails on >= 400) and
Kubernetes' HTTP probes read: 200 passes, 503 fails.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import orjson
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

if TYPE_CHECKING:
    from bot.telegram.polling import PollingWatch
    from storage import Database, Lease

DATABASE_WAIT: Final = 2.0
"""Seconds the database has to answer a readiness check (a query behind the running
transaction)."""

TELEGRAM_STALE: Final = 60.0
"""Seconds without an answer to long polling after which the polling leader says so. A
quiet long poll is answered every 10 s (python-telegram-bot's poll timeout)."""


class Health:
    """What `/healthz` and `/readyz` answer, from the state they are handed: the database
    (None while there is none: before the start, after the stop), the lease (who leads) and
    long polling's watch (None in webhook mode). `up` when start-up is done, `stopping` from
    the stop signal on."""

    def __init__(
        self,
        *,
        database: Callable[[], Database | None],
        lease: Callable[[], Lease | None] = lambda: None,
        watch: PollingWatch | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._database = database
        self._lease = lease
        self._watch = watch
        self._clock = clock
        self._up_at: float | None = None
        self._stopping = False

    def up(self) -> None:
        """Start-up is done: updates are taken."""
        self._up_at = self._clock()

    def stopping(self) -> None:
        """The bot stops: not ready from now on."""
        self._stopping = True

    def routes(self) -> list[web.RouteDef]:
        """The routes, for the web server's app."""
        return [
            web.get("/healthz", self.healthz),
            web.get("/readyz", self.readyz),
            web.get("/metrics", self.metrics),
        ]

    async def healthz(self, _: web.Request | None = None) -> web.Response:
        return web.Response(text="ok\n")

    async def readyz(self, _: web.Request | None = None) -> web.Response:
        checks = {"state": self._state(), "database": await self._database_check()}
        ready = all(value in ("ok", "up") for value in checks.values())
        body: dict[str, object] = {"ready": ready, "checks": checks, **self.role()}
        telegram = self._telegram_check()
        if telegram is not None:
            body["telegram"] = telegram
        return web.Response(
            status=200 if ready else 503,
            body=orjson.dumps(body) + b"\n",
            content_type="application/json",
        )

    async def metrics(self, _: web.Request | None = None) -> web.Response:
        response = web.Response(body=generate_latest(REGISTRY))
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    def role(self) -> dict[str, str | None]:
        """This worker's name, whether it leads, and which worker leads as it last saw."""
        lease = self._lease()
        if lease is None:
            return {"worker": None, "role": "starting", "leader": None}
        leading = lease.held()
        return {
            "worker": lease.name,
            "role": "leader" if leading else "standby",
            "leader": lease.holder(),
        }

    def _state(self) -> str:
        if self._stopping:
            return "stopping"
        return "starting" if self._up_at is None else "up"

    async def _database_check(self) -> str:
        db = self._database()
        if db is None:  # before the start opened it, after the stop closed it
            return "not open"
        try:
            async with asyncio.timeout(DATABASE_WAIT):
                await db.schema_version()
        except TimeoutError:
            return f"no answer within {DATABASE_WAIT:.0f} s"
        except Exception as error:
            return f"failed: {type(error).__name__}: {error}"
        return "ok"

    def _telegram_check(self) -> str | None:
        """Long polling's state, in the worker that polls (None elsewhere)."""
        watch = self._watch
        lease = self._lease()
        if watch is None or self._up_at is None or lease is None or not lease.held():
            return None
        now = self._clock()
        if watch.down_since is not None:
            return f"lost the Bot API {now - watch.down_since:.0f} s ago"
        last = max(watch.answered_at or self._up_at, self._up_at)
        if now - last > TELEGRAM_STALE:
            return f"no answer to long polling for {now - last:.0f} s"
        return "ok"
