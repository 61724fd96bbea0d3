"""`python -m bot` with WEBAPP_URL and long polling (#32): the web server runs for the Mini
App, its session and stream answer from the real process, and a stop with a stream open is
as quick as without (the stream is ended, not waited for)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx

from bot.miniapp.auth import sign_init_data
from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import lobby_text, start_bot, stop_bot, until
from tests.bot.test_ops import until_ready
from tests.bot.test_startup import closed_port
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram


async def test_the_mini_app_is_served_by_a_polling_bot_and_a_stop_ends_its_streams(
    tmp_path: Path,
) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7201, "Club", admins={alice})
    port = closed_port()
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(
            server, tmp_path, WEB_PORT=str(port), WEBAPP_URL="https://bot.example/app/"
        )
        try:
            await until_ready(port, bot)
            fake.queue(alice.start_private(), bob.start_private())
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.queue(bob.tap(lobby, "Join"))
            await until(server, bot, lambda: "Bob" in lobby_text(fake, group))
            fake.queue(alice.tap(fake.message(group.id, lobby.message_id), "Start"))
            await until(server, bot, lambda: bool(fake.messages(alice.id)[-1:]))
            await until(
                server,
                bot,
                lambda: any("Open the table" in m.button_texts for m in fake.messages(alice.id)),
            )
            user = json.dumps({"id": alice.id, "first_name": "Alice", "language_code": "en"})
            init = sign_init_data(TOKEN, {"auth_date": str(int(time.time())), "user": user})
            base = f"http://127.0.0.1:{port}/app/"
            async with httpx.AsyncClient(trust_env=False, timeout=10) as client:
                assert (await client.get(base)).status_code == 200
                session = await client.post(base + "api/session", json={"init_data": init})
                assert session.status_code == 200, session.text
                body = session.json()
                assert body["game"] is not None
                params = {"token": body["token"], "game": body["game"]}
                async with client.stream(
                    "GET", base + "api/events", params=params, timeout=httpx.Timeout(10, read=30)
                ) as stream:
                    lines = stream.aiter_lines()
                    async with asyncio.timeout(10):
                        async for line in lines:
                            if line.startswith("data: "):
                                state = json.loads(line[6:])
                                break
                    assert state["you"] == str(alice.id) and len(state["hand"]) == 6
                    started = time.monotonic()
                    log = await stop_bot(bot, tmp_path)
                    assert time.monotonic() - started < 15  # not the drain's 25 s
                    async with asyncio.timeout(10):  # the stream ended with the stop
                        async for _ in lines:
                            pass
        finally:
            if bot.returncode is None:
                log = await stop_bot(bot, tmp_path)
    assert "/app/ for the Mini App" in log and "Traceback" not in log, log
