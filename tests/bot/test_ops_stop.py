"""SIGTERM ends `python -m bot` within a service manager's grace (Docker's is 10 s), however
much waits for a chat's budget: what fits is sent, the rest is left (the games are in the
database, and the next start shows every table and hand again)."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import start_bot, stop_bot, until
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram

GRACE = 8.0  # seconds: the bound the docs promise, inside Docker's 10 s


async def test_sigterm_with_replies_queued_for_a_busy_group_ends_within_the_grace(
    tmp_path: Path,
) -> None:
    """30 /rules in a group that takes 20 messages a minute: 20 replies go at once, the
    other 10 wait up to a minute for the group's window. SIGTERM must not wait for them.
    (Wall-clock time of a real process: the bound is generous against the 50-60 s it took.)"""
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")
    group = fake.group(-7011, "Club", admins={alice})
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path, GROUP_SENDS="20", GROUP_RESERVE="0")
        try:
            for _ in range(30):
                fake.queue(alice.send(group, "/rules"))
            await until(server, bot, lambda: len(fake.messages(group.id)) >= 20)
            assert len(fake.messages(group.id)) < 30  # the others wait for the window
            started = time.monotonic()
            bot.send_signal(signal.SIGTERM)
            async with asyncio.timeout(60):
                await bot.wait()
            took = time.monotonic() - started
        finally:
            log = await stop_bot(bot, tmp_path)
    assert took < GRACE, f"the stop took {took:.1f} s"
    assert "Traceback" not in log and " ERROR " not in log, log
