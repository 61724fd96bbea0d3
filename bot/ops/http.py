"""A tiny HTTP/1.1 server on asyncio's streams, for the health and metrics routes.

A route is an async function of no arguments returning a `Response`; `Server` serves a
mapping of paths to routes, GET and HEAD only, one request per connection (probes and
Prometheus open a connection per request anyway). Because routes know nothing of HTTP
parsing, the webhook server of a later issue can mount the same functions under its own
framework with an adapter of a few lines (docs/libraries.md says why there is no web
framework here).

Requests are read with limits (a head of 8 KiB, 5 s to send it), so a client that sends
nothing or too much holds no connection for long; a route that raises answers 500 and is
logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Final

logger = logging.getLogger(__name__)

HEAD_LIMIT: Final = 8192
READ_TIMEOUT: Final = 5.0


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


Route = Callable[[], Awaitable[Response]]


class Server:
    """Serves `routes` on `host`:`port` (port 0: any free one, then `port` says which)."""

    def __init__(self, routes: Mapping[str, Route], host: str, port: int) -> None:
        self.routes = dict(routes)
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        """Listen; raises OSError where the address cannot be had (in use, not ours)."""
        self._server = await asyncio.start_server(
            self._serve, self.host, self.port, limit=HEAD_LIMIT
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and drop open connections. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            close_clients = getattr(server, "close_clients", None)  # Python 3.13
            if close_clients is not None:
                close_clients()
            await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                async with asyncio.timeout(READ_TIMEOUT):
                    head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.LimitOverrunError:
                response, method = _plain(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE), "GET"
            else:
                method, response = await self._answer(head)
            writer.write(_encode(response, with_body=method != "HEAD"))
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away, or never said anything
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _answer(self, head: bytes) -> tuple[str, Response]:
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return "GET", _plain(HTTPStatus.BAD_REQUEST)
        method, target, _ = parts
        path = target.split("?", 1)[0]
        route = self.routes.get(path)
        if route is None:
            return method, _plain(HTTPStatus.NOT_FOUND)
        if method not in ("GET", "HEAD"):
            return method, _plain(HTTPStatus.METHOD_NOT_ALLOWED)
        try:
            return method, await route()
        except Exception:
            logger.exception("the health server's route %s failed", path)
            return method, _plain(HTTPStatus.INTERNAL_SERVER_ERROR)


def _plain(status: HTTPStatus) -> Response:
    return Response(status, f"{status.phrase}\n".encode())


def _encode(response: Response, *, with_body: bool) -> bytes:
    phrase = HTTPStatus(response.status).phrase
    head = (
        f"HTTP/1.1 {response.status} {phrase}\r\n"
        f"Content-Type: {response.content_type}\r\n"
        f"Content-Length: {len(response.body)}\r\n"
        "Cache-Control: no-store\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("latin-1") + (response.body if with_body else b"")
