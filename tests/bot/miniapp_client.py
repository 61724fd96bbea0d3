"""The Mini App's server side as a page uses it, for tests: a whole bot (the harness) with
its web server on loopback serving `/app/` (`bot.miniapp.routes`), httpx as the page's
fetch and EventSource, and initData signed as Telegram would (`sign_init_data`).

`Viewer` holds one event stream in a task of its own and keeps every state it received
(parsed, and the raw data line for scans); tests wait for a state with `until` (an event,
under a safety-net timeout: no sleeping)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bot.leader import DATABASE_KEY
from bot.miniapp.auth import game_ref, sign_init_data
from bot.miniapp.routes import MiniApp
from bot.ops.health import Health
from bot.web import WebServer
from tests.bot.conftest import TOKEN, BotHarness, ManualClock, make_settings
from tests.fakes.telegram import FakeTelegram

WAIT = 10.0
"""The most a test waits for a state (a safety net: it comes within milliseconds)."""
APP_URL = "https://bot.example/app/"
APP_NAME = "table"


def ref_of(game_id: int | None) -> str:
    """The page's reference of a game (as the bot makes it with the test token)."""
    assert game_id is not None
    return game_ref(TOKEN, game_id)


def init_data(
    now: float,
    user_id: int,
    name: str,
    lang: str = "en",
    *,
    age: float = 0.0,
    token: str = TOKEN,
    **more: str,
) -> str:
    user = json.dumps({"id": user_id, "first_name": name, "language_code": lang})
    fields = {"auth_date": str(int(now - age)), "user": user, **more}
    return sign_init_data(token, fields)


@dataclass
class Mini:
    h: BotHarness
    web: WebServer
    client: httpx.AsyncClient
    viewers: list[Viewer] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.web.port}/app/"

    async def session(
        self, user_id: int, name: str, lang: str = "en", start: str = "", **options: Any
    ) -> httpx.Response:
        now = self.h.clock().timestamp()
        body = {"init_data": init_data(now, user_id, name, lang, **options), "start": start}
        return await self.client.post(self.base + "api/session", json=body)

    async def token(self, user_id: int, name: str, lang: str = "en") -> str:
        response = await self.session(user_id, name, lang)
        assert response.status_code == 200, response.text
        token: str = response.json()["token"]
        return token

    async def move(self, token: str, game: str, move: int, action: str) -> httpx.Response:
        return await self.client.post(
            self.base + "api/move",
            json={"game": game, "move": move, "action": action},
            headers={"Authorization": f"Bearer {token}"},
        )

    async def viewer(self, user_id: int, name: str, game: str, lang: str = "en") -> Viewer:
        """A viewer (one page) with a session and an open stream, its first state received."""
        page = f"page-{len(self.viewers) + 1}"
        viewer = Viewer(self, await self.token(user_id, name, lang), game, page)
        self.viewers.append(viewer)
        await viewer.connect()
        return viewer

    async def settle(self) -> None:
        await self.h.settle()


@dataclass
class Viewer:
    mini: Mini
    token: str
    game: str
    page: str
    states: list[dict[str, Any]] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    comments: int = 0
    _task: asyncio.Task[None] | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    status: int | None = None

    @property
    def last(self) -> dict[str, Any]:
        return self.states[-1]

    async def connect(self) -> None:
        """Open the stream; returns once its first state is in."""
        seen = len(self.states)
        self._task = asyncio.create_task(self._read())
        await self.until(lambda _: len(self.states) > seen)

    async def _read(self) -> None:
        params = {"token": self.token, "game": self.game, "page": self.page}
        timeout = httpx.Timeout(WAIT, read=None)
        url = self.mini.base + "api/events"
        async with self.mini.client.stream("GET", url, params=params, timeout=timeout) as r:
            self.status = r.status_code
            assert r.headers["content-type"].startswith("text/event-stream")
            data = None
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    data = line[6:]
                elif line.startswith(":"):
                    async with self._changed:
                        self.comments += 1
                        self._changed.notify_all()
                elif line == "" and data is not None:
                    async with self._changed:
                        self.raw.append(data)
                        self.states.append(json.loads(data))
                        self._changed.notify_all()
                    data = None

    async def pinged(self) -> None:
        """Until a comment line (`: ping`) came."""
        async with asyncio.timeout(WAIT), self._changed:
            await self._changed.wait_for(lambda: self.comments > 0)

    async def until(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first state (the latest included) for which `check` holds."""
        async with asyncio.timeout(WAIT), self._changed:
            while not (self.states and check(self.states[-1])):
                if self._task is not None and self._task.done():
                    self._task.result()  # (its error, if any)
                    raise AssertionError("the stream ended")
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):  # (to look at the task again)
                        await self._changed.wait()
            return self.states[-1]

    async def drop(self) -> None:
        """The connection breaks (the client side closes it)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@contextlib.asynccontextmanager
async def serving(tmp_path: Path, **overrides: Any) -> AsyncIterator[Mini]:
    """A whole bot with WEBAPP_URL and WEBAPP_NAME set, its web server serving the Mini App
    (each test module's `mini` fixture)."""
    fake = FakeTelegram(token=TOKEN)
    db_path = tmp_path / "durak.sqlite3"
    values = {"webapp_url": APP_URL, "webapp_name": APP_NAME, **overrides}
    settings = make_settings(db_path, **values)
    h = BotHarness(fake=fake, db_path=db_path, clock=ManualClock(), settings=settings)
    fake.enforce(clock=h.timing.now)
    await h.start()
    web = WebServer(
        Health(database=lambda: h.app.bot_data.get(DATABASE_KEY)),
        "127.0.0.1",
        0,
        extend=MiniApp(h.app).install,
    )
    await web.start()
    async with httpx.AsyncClient(trust_env=False) as client:
        m = Mini(h, web, client)
        try:
            yield m
        finally:
            for viewer in m.viewers:
                await viewer.drop()
            await web.close()
            await h.stop()
