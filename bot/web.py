"""The web server: one aiohttp app on `WEB_HOST`:`WEB_PORT` for Telegram's posts (the
webhook, `bot.telegram.webhook`) and `/healthz`, `/readyz`, `/metrics` (`bot.ops.health`),
ready for the next features' pages and live connections. docs/libraries.md says why
aiohttp.

It faces the internet (behind a reverse proxy), so every request is bounded:

- a body of at most `BODY_LIMIT` bytes (an update is a few KiB): 413;
- a request line and each header of at most `HEADER_LIMIT` bytes, at most `MAX_HEADERS`
  headers: 400;
- a connection has `IDLE_SECONDS` to send a whole request head (and between requests),
  else it is closed: a client that sends nothing or a byte at a time holds nothing longer
  (the webhook gives a body `bot.telegram.webhook.READ_SECONDS` more);
- at most `MAX_CONNECTIONS` connections at once: one more is answered 503 and closed.

`drain` stops listening and lets the requests under way finish (a stop signal: their
answers still go out); `close` ends what is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from bot.ops.health import Health
from bot.ops.metrics import watch_loop_lag

logger = logging.getLogger(__name__)

BODY_LIMIT: Final = 1 << 20
HEADER_LIMIT: Final = 8190
MAX_HEADERS: Final = 64
IDLE_SECONDS: Final = 15.0
MAX_CONNECTIONS: Final = 1000
DRAIN_SECONDS: Final = 25.0
"""How long a stop waits for the requests under way (Docker's stop grace is 10 s by
default, a Kubernetes pod's 30 s: set it to more than this)."""

_REFUSAL: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 20\r\nConnection: close\r\n\r\nToo many connections"
)


class _Malformed(logging.Filter):
    """aiohttp logs each malformed request (a scanner's, a client's mistake) at ERROR with
    its traceback; it is the client's fault and answered 400: one line at INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError) and record.levelno >= logging.ERROR:
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = f"{record.getMessage()}: refused ({error.message})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


_MALFORMED: Final = _Malformed()


class WebUnavailable(Exception):
    """The web server cannot listen where the settings say (one line for the operator)."""


class _Refuse(asyncio.Protocol):
    """A connection over `MAX_CONNECTIONS`: answered 503 and closed, nothing read."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(_REFUSAL)
        transport.close()


class _Counted(asyncio.Protocol):
    """aiohttp's protocol for one connection, counted by its site from the moment it is
    accepted until it is lost. (aiohttp lists a connection only once it is made, which is
    after every other connection accepted with it was let in: a flood would all be.)"""

    __slots__ = ("_inner", "_site")

    def __init__(self, inner: asyncio.Protocol, site: _BoundedSite) -> None:
        self._inner, self._site = inner, site
        site.open += 1

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._site.open -= 1
        self._inner.connection_lost(exc)


class _BoundedSite(web.BaseSite):
    """aiohttp's TCP site, taking at most `limit` connections at once."""

    __slots__ = ("_host", "_limit", "_port", "open")

    def __init__(self, runner: web.BaseRunner, host: str, port: int, limit: int) -> None:
        super().__init__(runner)
        self._host, self._port, self._limit = host, port, limit
        self.open = 0  # connections accepted and not lost yet

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None

        def connection() -> asyncio.Protocol:
            if self.open >= self._limit:
                return _Refuse()
            return _Counted(server(), self)

        self._server = await asyncio.get_running_loop().create_server(
            connection, self._host, self._port, reuse_address=True
        )
        if self._port == 0:
            self._port = self._server.sockets[0].getsockname()[1]

    @property
    def port(self) -> int:
        return self._port


class WebServer:
    """The app (health routes, the webhook's post route where given, and what `extend` adds)
    on `host`:`port` (port 0: any free one, then `port` says which)."""

    def __init__(
        self,
        health: Health,
        host: str,
        port: int,
        *,
        posts: dict[str, Any] | None = None,
        extend: Callable[[web.Application], None] | None = None,
        idle_seconds: float = IDLE_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.health = health
        self.host = host
        server_log = logging.getLogger("aiohttp.server")
        if _MALFORMED not in server_log.filters:
            server_log.addFilter(_MALFORMED)
        self._port = port
        self.app = web.Application(client_max_size=BODY_LIMIT)
        self.app.add_routes(health.routes())
        for path, handler in (posts or {}).items():
            self.app.router.add_post(path, handler)
        if extend is not None:  # more routes (the Mini App's: `bot.miniapp.routes`)
            extend(self.app)
        self._runner = web.AppRunner(
            self.app,
            access_log=None,
            keepalive_timeout=idle_seconds,
            max_line_size=HEADER_LIMIT,
            max_field_size=HEADER_LIMIT,
            max_headers=MAX_HEADERS,
            handler_cancellation=False,  # a post under way finishes when its client leaves
            shutdown_timeout=DRAIN_SECONDS,  # what `drain` waits for the requests under way
        )
        self._max_connections = max_connections
        self._site: _BoundedSite | None = None
        self._lag: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self._port

    async def start(self) -> None:
        """Listen; raises `WebUnavailable` where it cannot (the port in use, say)."""
        await self._runner.setup()
        site = _BoundedSite(self._runner, self.host, self._port, self._max_connections)
        try:
            await site.start()
        except OSError as error:
            await self._runner.cleanup()
            raise WebUnavailable(
                f"the web server cannot listen on {self.host}:{self._port} "
                f"({error.strerror or error}): check WEB_HOST and WEB_PORT"
            ) from None
        self._site = site
        self._port = site.port
        self._lag = asyncio.create_task(watch_loop_lag())

    async def drain(self) -> None:
        """Stop listening, close idle connections, and wait (for at most `DRAIN_SECONDS`)
        until the requests under way are answered. Idempotent."""
        self._site = None
        await self._runner.cleanup()

    async def close(self) -> None:
        """Stop (after `drain`, or after a start that failed). Idempotent."""
        lag, self._lag = self._lag, None
        if lag is not None:
            lag.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lag
        await self.drain()
