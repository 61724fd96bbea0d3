"""Onlookers for `bench/human.py --onlookers N`: N people per game watching it in the Mini
App (issue #32), each holding the event stream of `/app/api/events` on the bot's web server
(on loopback, `bot.miniapp.routes`), as the page does.

Measured: the states they received, and the lag from a state being built (`now`, set when the
game's save hands it to the streams) to its arrival in the onlooker's client: the issue asks
for every change within 200 ms of the move being stored."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from bot.leader import DATABASE_KEY
from bot.miniapp.auth import game_ref, sign_init_data
from bot.miniapp.routes import MiniApp
from bot.ops.health import Health
from bot.web import WebServer
from tests.bot.conftest import TOKEN


@dataclass
class Onlookers:
    web: WebServer
    client: httpx.AsyncClient
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)
    states: int = 0
    failed: int = 0

    @classmethod
    async def start(cls, h: Any, chat_ids: list[int], per_game: int) -> Onlookers:
        web = WebServer(
            Health(database=lambda: h.app.bot_data.get(DATABASE_KEY)),
            "127.0.0.1",
            0,
            extend=MiniApp(h.app).install,
        )
        await web.start()
        limits = httpx.Limits(max_connections=len(chat_ids) * per_game + 10)
        client = httpx.AsyncClient(trust_env=False, limits=limits)
        self = cls(web, client)
        base = f"http://127.0.0.1:{web.port}/app/"
        for n, chat_id in enumerate(chat_ids):
            record = h.rooms.store.live(chat_id)
            if record is None or record.id is None:
                continue
            for i in range(per_game):
                user_id = 9_000_000 + n * 10 + i
                user = json.dumps({"id": user_id, "first_name": "Onlooker"})
                init = sign_init_data(TOKEN, {"auth_date": str(int(time.time())), "user": user})
                start = game_ref(TOKEN, record.id)
                session = await client.post(
                    base + "api/session", json={"init_data": init, "start": start}
                )
                token = session.json()["token"]
                self.tasks.append(asyncio.create_task(self._watch(base, token, start)))
        return self

    async def _watch(self, base: str, token: str, game: str) -> None:
        params = {"token": token, "game": game}
        try:
            async with self.client.stream(
                "GET", base + "api/events", params=params, timeout=httpx.Timeout(10, read=None)
            ) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        state = json.loads(line[6:])
                        self.lags.append(time.time() - state["now"])
                        self.states += 1
        except (httpx.HTTPError, asyncio.CancelledError):
            return
        except Exception:
            self.failed += 1

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.client.aclose()
        await self.web.close()

    def line(self) -> str:
        lags = sorted(self.lags)

        def at(q: float) -> str:
            return f"{lags[min(len(lags) - 1, int(q * len(lags)))] * 1000:.0f} ms" if lags else "-"

        return (
            f"  onlookers: {len(self.tasks)} streams, {self.states} states received; "
            f"save -> onlooker p50 {at(0.5)}, p95 {at(0.95)}, max {at(1.0)}"
            + (f"; {self.failed} streams failed" if self.failed else "")
        )
