"""Webhook mode as an operator runs it (#20): `python -m bot` with `WEBHOOK_URL` registers
the webhook with its secret, never polls, takes Telegram's posts on its own port (403 without
the secret), and a SIGTERM lets the post under way finish with its 200 before the bot exits."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import httpx
import orjson

from bot.telegram.webhook import SECRET_HEADER
from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import lobby_text, start_bot, stop_bot, until
from tests.bot.test_ops import until_ready
from tests.bot.test_startup import closed_port
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram

SECRET = "a-webhook-secret_0123456789"
PUBLIC_URL = "https://durak.example/telegram/hook"


async def post(port: int, update: Any, *, secret: str = SECRET) -> httpx.Response:
    """What Telegram sends: the update as JSON, with the secret token."""
    async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
        return await client.post(
            f"http://127.0.0.1:{port}/telegram/hook",
            content=orjson.dumps(update),
            headers={"Content-Type": "application/json", SECRET_HEADER: secret},
        )


async def test_a_webhook_worker_registers_answers_posts_and_drains_on_sigterm(
    tmp_path: Path,
) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7101, "Club", admins={alice})
    hook_port, health_port = closed_port(), closed_port()
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(
            server,
            tmp_path,
            WEBHOOK_URL=PUBLIC_URL,
            WEBHOOK_SECRET=SECRET,
            WEBHOOK_PORT=str(hook_port),
            HEALTH_PORT=str(health_port),
        )
        try:
            await until_ready(health_port, bot)
            [registered] = fake.calls_for("setWebhook")
            assert registered.params["url"] == PUBLIC_URL
            assert registered.params["secret_token"] == SECRET
            assert set(registered.params["allowed_updates"]) >= {"message", "callback_query"}
            refused = await post(hook_port, alice.send(group, "/newgame"), secret="x")
            assert refused.status_code == 403
            for update in (alice.start_private(), bob.start_private()):
                assert (await post(hook_port, update)).status_code == 200
            assert (await post(hook_port, alice.send(group, "/newgame"))).status_code == 200
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))

            # Bob's Join is under way (its answer to the tap held back) when the stop comes
            server.hold(lambda request: request.url.path.endswith("/answerCallbackQuery"))
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            joining = asyncio.ensure_future(post(hook_port, bob.tap(lobby, "Join")))
            await until(server, bot, lambda: bool(server.held))
            bot.send_signal(signal.SIGTERM)
            await until_ready(health_port, bot, status=503)  # stopping: no new work
            server.release()
            assert (await joining).status_code == 200
        finally:
            log = await stop_bot(bot, tmp_path)
    assert "Bob" in lobby_text(fake, group)  # the join was committed and shown
    assert fake.count("getUpdates") == 0  # a webhook worker never polls
    assert f"is up: webhook /telegram/hook on 127.0.0.1:{hook_port}" in log, log
    assert SECRET not in log and TOKEN.split(":")[1] not in log
