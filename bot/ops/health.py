"""The health server: `/healthz`, `/readyz` and `/metrics` (`HEALTH_PORT`, docs/operating.md).

- `/healthz` (liveness): 200 whenever the process answers at all. The answer comes from
  the event loop itself, so a loop that is stuck, or a process that is gone, gets no
  answer, which is what a probe counts as a failure. It stays 200 while the bot stops:
  a stopping process must not be killed for being slow.
- `/readyz` (readiness): 200 when the bot can play, 503 (with what is wrong) when not:
  still starting; stopping (from the stop signal on); the database does not answer within
  `DATABASE_WAIT` seconds, or is not open; long polling has lost the Bot API
  (`bot.telegram.polling.PollingWatch`), or has had no answer for `TELEGRAM_STALE` seconds.
  The body is JSON: ``{"ready": false, "checks": {"database": "ok", "telegram": "...",
  "state": "stopping"}}``.
- `/metrics`: every metric of `bot.ops.metrics` (and the client's process metrics), in
  Prometheus' text format.

Status codes are the ones Docker's HEALTHCHECK (through a client that fails on >= 400) and
Kubernetes' HTTP probes read: 200 passes, 503 fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

import orjson
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from bot.ops.http import Response, Route, Server
from bot.ops.metrics import watch_loop_lag

if TYPE_CHECKING:
    from bot.telegram.polling import PollingWatch
    from storage import Database

DATABASE_WAIT: Final = 2.0
"""Seconds the database has to answer a readiness check (a query behind the running
transaction)."""

TELEGRAM_STALE: Final = 60.0
"""Seconds without an answer to long polling after which the bot is not ready. A quiet long
poll is answered every 10 s (python-telegram-bot's poll timeout)."""

_JSON: Final = "application/json"


class Health:
    """What `/healthz` and `/readyz` answer, from the state they are handed: the database
    (None while there is none: before the start, after the stop) and long polling's watch.
    `up` when start-up is done, `stopping` from the stop signal on."""

    def __init__(
        self,
        *,
        database: Callable[[], Database | None],
        watch: PollingWatch | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._database = database
        self._watch = watch
        self._clock = clock
        self._up_at: float | None = None
        self._stopping = False

    def up(self) -> None:
        """Start-up is done: long polling runs."""
        self._up_at = self._clock()

    def stopping(self) -> None:
        """The bot stops: not ready from now on."""
        self._stopping = True

    @property
    def routes(self) -> Mapping[str, Route]:
        """The routes, by path (for `bot.ops.http.Server`, or a webhook server's app)."""
        return {"/healthz": self.healthz, "/readyz": self.readyz, "/metrics": self.metrics}

    async def healthz(self) -> Response:
        return Response(200, b"ok\n")

    async def readyz(self) -> Response:
        checks = {
            "state": self._state(),
            "database": await self._database_check(),
            "telegram": self._telegram_check(),
        }
        ready = all(value in ("ok", "up") for value in checks.values())
        body = orjson.dumps({"ready": ready, "checks": checks}) + b"\n"
        return Response(200 if ready else 503, body, _JSON)

    async def metrics(self) -> Response:
        return Response(200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)

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

    def _telegram_check(self) -> str:
        watch = self._watch
        if watch is None or self._up_at is None:
            return "ok" if self._up_at is not None else "not polling yet"
        now = self._clock()
        if watch.down_since is not None:
            return f"lost the Bot API {now - watch.down_since:.0f} s ago"
        last = max(watch.answered_at or self._up_at, self._up_at)
        if now - last > TELEGRAM_STALE:
            return f"no answer to long polling for {now - last:.0f} s"
        return "ok"


class HealthUnavailable(Exception):
    """The health server cannot listen where the settings say (one line for the operator)."""


class HealthServer:
    """`Health`'s routes on `host`:`port`, with the event loop's lag measured meanwhile
    (`bot.ops.metrics.watch_loop_lag`)."""

    def __init__(self, health: Health, host: str, port: int) -> None:
        self.health = health
        self.server = Server(health.routes, host, port)
        self._lag: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self.server.port

    async def start(self) -> None:
        """Listen; raises `HealthUnavailable` where it cannot (the port in use, say)."""
        try:
            await self.server.start()
        except OSError as error:
            raise HealthUnavailable(
                f"the health server cannot listen on {self.server.host}:{self.server.port} "
                f"({error.strerror or error}): check HEALTH_HOST and HEALTH_PORT"
            ) from None
        self._lag = asyncio.create_task(watch_loop_lag())

    async def close(self) -> None:
        """Stop listening and measuring. Idempotent."""
        lag, self._lag = self._lag, None
        if lag is not None:
            lag.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lag
        await self.server.close()
