"""`python -m bot`, the README's start command, as a real process: settings from the
environment, long polling against the fake Bot API on a loopback socket, a clean stop on
SIGTERM, and a restart that carries on with the stored lobby."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from tests.bot.conftest import TOKEN
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeGroup, FakeTelegram

ROOT = Path(__file__).resolve().parents[2]


async def start_bot(server: LoopbackBotAPI, workdir: Path) -> asyncio.subprocess.Process:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("BOT_", "DATABASE_", "TURN_", "LOBBY_", "LOG_", "DEFAULT_"))
        and "proxy" not in key.lower()  # 127.0.0.1 is reached directly, never through a proxy
    }
    env.update(
        BOT_TOKEN=TOKEN,
        BOT_API_BASE_URL=server.base_url,
        DATABASE_URL=f"sqlite:///{workdir / 'data' / 'durak.sqlite3'}",
        LOG_LEVEL="INFO",
        NO_PROXY="127.0.0.1,localhost",
        PYTHONPATH=str(ROOT),
    )
    log = (workdir / "bot.log").open("ab")  # a file, so the log survives a hung process
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            cwd=workdir,  # no .env of a developer's checkout is read
            env=env,
            stdout=log,
            stderr=log,
        )
    finally:
        log.close()


async def until(
    server: LoopbackBotAPI, process: asyncio.subprocess.Process, condition: Callable[[], bool]
) -> None:
    """Wait for `condition` (checked after every Bot API call), failing at once if the bot
    exits instead."""
    waiting = asyncio.ensure_future(server.wait_for(condition))
    exited = asyncio.ensure_future(process.wait())
    await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
    if not waiting.done():
        waiting.cancel()
        raise AssertionError(f"the bot exited with {process.returncode} before it got there")
    exited.cancel()
    waiting.result()


async def stop_bot(process: asyncio.subprocess.Process, workdir: Path) -> str:
    """SIGTERM, as `docker stop` sends; the bot must shut down cleanly. Returns its log."""
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    try:
        async with asyncio.timeout(60):
            await process.wait()
    finally:
        if process.returncode is None:  # hung: never leave it running after the test
            process.kill()
            await process.wait()
    log = (workdir / "bot.log").read_text()
    assert process.returncode == 0, log
    return log


def lobby_text(fake: FakeTelegram, group: FakeGroup) -> str:
    messages = [m for m in fake.messages(group.id) if "Join" in m.button_texts]
    return messages[-1].text if messages else ""


async def test_python_m_bot_plays_through_a_loopback_bot_api_and_resumes(tmp_path: Path) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")
    bob = fake.user(2, "Bob")
    group = fake.group(-7001, "Club", admins={alice})
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path)
        try:
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
        finally:
            log = await stop_bot(bot, tmp_path)
        assert TOKEN.split(":")[1] not in log  # the token never reaches a log line
        assert (tmp_path / "data" / "durak.sqlite3").exists()  # the default data directory

        # a new process finds the open lobby in the database and takes Bob's join
        bot = await start_bot(server, tmp_path)
        try:
            fake.queue(bob.start_private())  # so that the bot may write to him
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.queue(bob.tap(lobby, "Join"))
            await until(server, bot, lambda: "Bob" in lobby_text(fake, group))
        finally:
            log = await stop_bot(bot, tmp_path)
        assert "Traceback" not in log
