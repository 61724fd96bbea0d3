"""A bot killed while it handles an update loses none: long polling confirms an update to
Telegram only once it is handled (or after a second), so the next process gets the updates
a killed one had fetched and not handled, and answers them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import lobby_text, start_bot, stop_bot, until
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram


async def killed_and_answered_after(
    server: LoopbackBotAPI,
    fake: FakeTelegram,
    bot: asyncio.subprocess.Process,
    tap: dict[str, Any],
    workdir: Path,
) -> asyncio.subprocess.Process:
    """The bot is killed while the answer to `tap` is held on its way (and lost): no answer
    yet; the next process answers it. That process."""
    bot.kill()
    await bot.wait()
    server.release(drop=True)
    query = tap["callback_query"]["id"]
    assert fake.answer_for(query) is None
    bot = await start_bot(server, workdir)
    await until(server, bot, lambda: fake.answer_for(query) is not None)
    return bot


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


async def test_a_tap_whose_answer_a_killed_bot_was_still_trying_again_is_answered_after(
    tmp_path: Path,
) -> None:
    """Bob's Join is handled, its answer meets a 502, and the bot dies while it tries the
    answer again: the next process gets the tap and answers it."""
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7301, "Club", admins={alice})

    def retried(request: httpx.Request) -> bool:
        return request.url.path.endswith("/answerCallbackQuery") and any(
            c.method == "answerCallbackQuery" and not c.ok for c in fake.calls
        )

    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path)
        try:
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.fail_next("answerCallbackQuery", 502)
            server.hold(retried)
            tap = bob.tap(lobby, "Join")
            fake.queue(tap)
            await until(server, bot, lambda: bool(server.held))
            bot = await killed_and_answered_after(server, fake, bot, tap, tmp_path)
        finally:
            await stop_bot(bot, tmp_path)
