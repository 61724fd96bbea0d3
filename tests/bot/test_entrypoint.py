"""`python -m bot`, the README's start command, as a real process: settings from the
environment, long polling against the fake Bot API on a loopback socket, a clean stop on
SIGTERM, and a restart that carries on with the stored lobby."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
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
    }
    env.update(
        BOT_TOKEN=TOKEN,
        BOT_API_BASE_URL=server.base_url,
        DATABASE_URL=f"sqlite:///{workdir / 'data' / 'durak.sqlite3'}",
        LOG_LEVEL="INFO",
        PYTHONPATH=str(ROOT),
    )
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=workdir,  # no .env of a developer's checkout is read
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def stop_bot(process: asyncio.subprocess.Process) -> str:
    """SIGTERM, as `docker stop` sends; the bot must shut down cleanly. Returns its log."""
    process.send_signal(signal.SIGTERM)
    async with asyncio.timeout(60):
        _out, err = await process.communicate()
    log = err.decode()
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
            await server.wait_for(lambda: "Alice" in lobby_text(fake, group))
        finally:
            log = await stop_bot(bot)
        assert TOKEN.split(":")[1] not in log  # the token never reaches a log line
        assert (tmp_path / "data" / "durak.sqlite3").exists()  # the default data directory

        # a new process finds the open lobby in the database and takes Bob's join
        bot = await start_bot(server, tmp_path)
        try:
            fake.queue(bob.start_private())  # so that the bot may write to him
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.queue(bob.tap(lobby, "Join"))
            await server.wait_for(lambda: "Bob" in lobby_text(fake, group))
        finally:
            log = await stop_bot(bot)
        assert "Traceback" not in log
