"""A tap whose answer a killed bot was still trying again after long polling had confirmed
its update is answered by the next start: a poll that confirms an update not yet handled
(its answer met Telegram's faults for longer than `CONFIRM_WITHIN`) keeps the answers being
tried again first (bot_state), and the next start tries them on while Telegram takes them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from bot.telegram.polling import Unconfirmed
from tests.bot.conftest import TOKEN
from tests.bot.test_chaosfix_polling import killed_and_answered_after
from tests.bot.test_entrypoint import lobby_text, start_bot, stop_bot, until
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram


async def test_a_tap_answered_in_vain_past_its_confirmation_is_answered_after_a_kill(
    tmp_path: Path,
) -> None:
    """Bob's Join is handled; its answer meets 502s for more than a second, so the next poll
    confirms the tap to Telegram; the bot dies while it tries the answer again. The next
    process answers it (Telegram would not send the tap again)."""
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7401, "Club", admins={alice})

    def answers() -> list[httpx.Request]:
        return [c for c in fake.calls if c.method == "answerCallbackQuery"]

    def fourth_try(request: httpx.Request) -> bool:
        return request.url.path.endswith("/answerCallbackQuery") and len(answers()) >= 3

    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path)
        try:
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.fail_next("answerCallbackQuery", 502, times=3)  # 0, 0.5 and 1.5 s after it
            server.hold(fourth_try)  # (3.5 s after it)
            tap = bob.tap(lobby, "Join")
            fake.queue(tap)
            await until(server, bot, lambda: bool(server.held))
            confirmed = [
                c
                for c in fake.calls
                if c.method == "getUpdates" and int(c.params.get("offset") or 0) > tap["update_id"]
            ]
            assert confirmed  # Telegram forgot the tap: it is not sent again
            bot = await killed_and_answered_after(server, fake, bot, tap, tmp_path)
        finally:
            await stop_bot(bot, tmp_path)


async def test_a_poll_after_one_that_confirmed_an_update_not_yet_handled_does_not_wait() -> None:
    """The poll that confirms a tap whose answer is still tried again keeps the answers
    first, and waits its second once: the polls after it (other chats' taps) do not wait for
    that tap again."""
    unconfirmed = Unconfirmed(within=0.05)
    kept: list[int] = []

    async def overdue() -> None:
        kept.append(len(kept))

    unconfirmed.overdue = overdue
    unconfirmed.fetched([5])  # its answer is still tried again
    await unconfirmed.confirm(6)
    assert kept == [0]
    unconfirmed.fetched([6])
    unconfirmed.handled(6)
    async with asyncio.timeout(0.02):  # (not the 0.05 s it would wait for update 5 again)
        await unconfirmed.confirm(7)
    assert kept == [0]
