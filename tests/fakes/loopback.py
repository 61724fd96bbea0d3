"""The fake Bot API on a loopback socket, for a bot running in another process.

`FakeTelegram` answers `httpx.Request`s in-process; this serves it over plain HTTP/1.1
(keep-alive, Content-Length bodies: what httpx sends) on 127.0.0.1, so that `python -m bot`
can be pointed at it with `BOT_API_BASE_URL`. Every request is handed to the fake as if it
were addressed to api.telegram.org. Several bot processes may each be given a base URL of
their own (`url_for`): the fake then knows which one made each call (`Call.via`). Tests
wait for what they expect with `wait_for`, which wakes on every answered request: no
sleeping. `cut` and `restore` lose and give back the
network: while cut, every connection is dropped unanswered. `hold` keeps back the requests
that meet a condition (the bot waits for their answers) until `release`, so that a test can
look at the bot while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from types import TracebackType

import httpx

from bot.sandbox.telegram.transport import VIA_HEADER
from tests.fakes.telegram import FakeTelegram

WAIT = 60.0
_LABEL = re.compile(r"[A-Za-z0-9._-]+")
_VIA = re.compile(r"/via/([A-Za-z0-9._-]+)(?=/)")


class LoopbackBotAPI:
    def __init__(self, fake: FakeTelegram) -> None:
        self.fake = fake
        self.port = 0
        self._server: asyncio.Server | None = None
        self._answered = asyncio.Condition()
        self._connections: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.is_cut = False
        self.dropped = 0  # connections dropped unanswered while the network was cut
        self._hold: Callable[[httpx.Request], bool] | None = None
        self._released = asyncio.Event()
        self._dropping = False  # `release(drop=True)`: the held requests are dropped
        self.held: list[httpx.Request] = []  # requests kept back by `hold` so far

    @property
    def base_url(self) -> str:
        """The value for `BOT_API_BASE_URL`."""
        return f"http://127.0.0.1:{self.port}/bot"

    def url_for(self, label: str) -> str:
        """A value for `BOT_API_BASE_URL` that tells the fake its calls come from `label`
        (letters, digits, ``.``, ``-`` and ``_``)."""
        if not _LABEL.fullmatch(label):
            raise ValueError(f"not a label for a bot process: {label!r}")
        return f"http://127.0.0.1:{self.port}/via/{label}/bot"

    async def __aenter__(self) -> LoopbackBotAPI:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._connections):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def cut(self) -> None:
        """Lose the network: open connections are dropped (a request waiting on one, a long
        poll, gets no answer) and so is every new one, until `restore`."""
        self.is_cut = True
        for writer in list(self._connections):
            writer.close()

    def restore(self) -> None:
        self.is_cut = False

    def hold(self, condition: Callable[[httpx.Request], bool]) -> None:
        """Keep back every request that meets `condition` (in `held`, and `wait_for` wakes)
        until `release`; then each is answered as usual."""
        self._hold = condition
        self._released.clear()

    def release(self, *, drop: bool = False) -> None:
        """Let the held requests through; `drop`: they never reach the fake, as a request a
        process died before sending (their connections are closed unanswered)."""
        self._dropping = drop
        self._hold = None
        self._released.set()

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        """Return once `condition()` holds, checked after every answered request (at most
        `WAIT` seconds: a bot that never gets there fails the test instead of hanging it)."""
        async with asyncio.timeout(WAIT), self._answered:
            await self._answered.wait_for(condition)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # a long poll may still wait in the fake when the test ends
        try:
            if self.is_cut:
                self.dropped += 1
                async with self._answered:
                    self._answered.notify_all()
                return
            while request := await self._read_request(reader):
                if self._hold is not None and self._hold(request):
                    self.held.append(request)
                    async with self._answered:
                        self._answered.notify_all()
                    await self._released.wait()
                    if self._dropping:
                        break
                try:
                    response = await self.fake._handle(request)
                except httpx.TimeoutException:
                    break  # an injected timeout: the connection just goes quiet
                except Exception as exc:  # a bug in the fake: an answer, not a silent hang
                    response = httpx.Response(500, json={"ok": False, "description": repr(exc)})
                if writer.is_closing():  # dropped by `cut` meanwhile: lost on the way back
                    break
                body = response.content
                head = (
                    f"HTTP/1.1 {response.status_code} {response.reason_phrase}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                )
                writer.write(head.encode("latin-1") + body)
                await writer.drain()
                async with self._answered:
                    self._answered.notify_all()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:  # the server closing with a long poll still waiting:
            pass  # the connection's end (asyncio would print the cancellation as an error)
        finally:
            self._tasks.discard(task)
            self._connections.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    @staticmethod
    async def _read_request(reader: asyncio.StreamReader) -> httpx.Request | None:
        line = await reader.readline()
        if not line.strip():
            return None
        method, target, _version = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length") or 0))
        headers.pop("host", None)
        via = _VIA.match(target)
        if via is not None:  # a process's own base URL (`url_for`)
            headers[VIA_HEADER] = via[1]
            target = target[via.end() :]
        return httpx.Request(
            method, f"https://api.telegram.org{target}", headers=headers, content=body
        )
