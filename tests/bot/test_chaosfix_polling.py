"""A bot killed while it handles an update loses none: long polling confirms an update to
Telegram only once it is handled (or after a second), so the next process gets the updates
a killed one had fetched and not handled, and answers them."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import start_bot, stop_bot, until
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram


def _send_message(request: httpx.Request) -> bool:
    return request.url.path.endswith("/sendMessage")


async def test_a_command_fetched_by_a_bot_killed_before_it_replied_is_answered_after(
    tmp_path: Path,
) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")

    def replied() -> bool:
        return any(c.method == "sendMessage" and c.chat_id == alice.id and c.ok for c in fake.calls)

    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path)
        try:
            await until(server, bot, lambda: any(c.method == "getUpdates" for c in fake.calls))
            # Alice's /start is fetched and handled up to its reply, and the process dies
            # before the reply goes out (it never reaches Telegram).
            server.hold(_send_message)
            fake.queue(alice.start_private())
            await until(server, bot, lambda: bool(server.held))
            bot.kill()
            await bot.wait()
            server.release(drop=True)
            assert not replied()
            bot = await start_bot(server, tmp_path)
            await until(server, bot, replied)
        finally:
            await stop_bot(bot, tmp_path)
