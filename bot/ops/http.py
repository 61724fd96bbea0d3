"""A tiny HTTP/1.1 server on asyncio's streams: the health and metrics routes, and the
webhook Telegram posts updates to (`bot.telegram.webhook`).

A route is an async function of no arguments returning a `Response` (GET and HEAD); a post
route takes the `Request` (its headers and body; POST only, with a Content-Length of at most
`body_limit` bytes). `Server` serves a mapping of paths to each, one request per connection
(probes, Prometheus and a reverse proxy in front of the webhook open one per request anyway).
Because routes know nothing of HTTP parsing, they could be mounted under a framework with an
adapter of a few lines (docs/libraries.md says why there is no web framework here).

Requests are read with limits (a head of 8 KiB, 5 s to send head and body), so a client
that sends nothing or too much holds no connection for long; a route that raises answers
500 and is logged. `drain` stops listening and lets the requests under way finish (a stop
signal: their answers still go out), `close` drops them.
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


BODY_LIMIT: Final = 1 << 20  # a Telegram update is a few KiB


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Request:
    """A request to a post route: its method, path, headers (names in lower case) and body."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes


Route = Callable[[], Awaitable[Response]]
PostRoute = Callable[[Request], Awaitable[Response]]


class Server:
    """Serves `routes` (GET, HEAD) and `posts` (POST) on `host`:`port` (port 0: any free
    one, then `port` says which)."""

    def __init__(
        self,
        routes: Mapping[str, Route],
        host: str,
        port: int,
        *,
        posts: Mapping[str, PostRoute] | None = None,
        body_limit: int = BODY_LIMIT,
    ) -> None:
        self.routes = dict(routes)
        self.posts = dict(posts or {})
        self.host = host
        self.port = port
        self.body_limit = body_limit
        self._server: asyncio.Server | None = None
        self._serving: set[asyncio.Task[object]] = set()  # connections being answered

    async def start(self) -> None:
        """Listen; raises OSError where the address cannot be had (in use, not ours)."""
        self._server = await asyncio.start_server(
            self._serve, self.host, self.port, limit=HEAD_LIMIT
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def drain(self) -> None:
        """Stop listening (a new connection is refused) and wait until the requests under
        way are answered. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        while self._serving:
            await asyncio.gather(*list(self._serving), return_exceptions=True)

    async def close(self) -> None:
        """Stop listening and drop open connections. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            close_clients = getattr(server, "close_clients", None)  # Python 3.13
            if close_clients is not None:
                close_clients()
            await server.wait_closed()
        for task in list(self._serving):
            task.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._serving.add(task)
        try:
            method, response = "GET", _plain(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
            try:
                async with asyncio.timeout(READ_TIMEOUT):
                    head = await reader.readuntil(b"\r\n\r\n")
                    request = self._read_head(head)
                    if isinstance(request, Request) and request.path in self.posts:
                        request = await self._read_body(reader, request)
            except asyncio.LimitOverrunError:
                pass
            else:
                method, response = await self._answer(request)
            writer.write(_encode(response, with_body=method != "HEAD"))
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass  # the client went away, or never said anything
        finally:
            if task is not None:
                self._serving.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    @staticmethod
    def _read_head(head: bytes) -> Request | Response:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return _plain(HTTPStatus.BAD_REQUEST)
        method, target, _ = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if colon:
                headers[name.strip().lower()] = value.strip()
        return Request(method, target.split("?", 1)[0], headers, b"")

    async def _read_body(
        self, reader: asyncio.StreamReader, request: Request
    ) -> Request | Response:
        if request.method != "POST":
            return request  # answered 405 without reading what it sent
        length = request.headers.get("content-length", "")
        if not length.isdigit():
            return _plain(HTTPStatus.LENGTH_REQUIRED)
        if int(length) > self.body_limit:
            return _plain(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        body = await reader.readexactly(int(length))
        return Request(request.method, request.path, request.headers, body)

    async def _answer(self, request: Request | Response) -> tuple[str, Response]:
        if isinstance(request, Response):
            return "GET", request
        method, path = request.method, request.path
        post = self.posts.get(path)
        if post is not None:
            if method != "POST":
                return method, _plain(HTTPStatus.METHOD_NOT_ALLOWED)
            try:
                return method, await post(request)
            except Exception:
                logger.exception("the route POST %s failed", path)
                return method, _plain(HTTPStatus.INTERNAL_SERVER_ERROR)
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


def plain(status: HTTPStatus) -> Response:
    """An answer of the status and its phrase."""
    return _plain(status)


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
