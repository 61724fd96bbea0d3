"""`python -m bot` on PostgreSQL: the same start, play and resume as on SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import postgres
from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import lobby_text, start_bot, stop_bot, until
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.postgres


async def test_python_m_bot_on_postgresql_keeps_a_lobby_across_a_restart(
    tmp_path: Path, pg_server: postgres.PostgresServer
) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")
    bob = fake.user(2, "Bob")
    group = fake.group(-7101, "Club", admins={alice})
    async with (
        postgres.fresh_database(pg_server, migrated=False) as url,
        LoopbackBotAPI(fake) as server,
    ):
        bot = await start_bot(server, tmp_path, DATABASE_URL=url)
        try:
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
        finally:
            log = await stop_bot(bot, tmp_path)
        assert f"long polling, database {url}, engine:" in log, log
        assert not (tmp_path / "data").exists()  # no SQLite file on the side

        bot = await start_bot(server, tmp_path, DATABASE_URL=url)
        try:
            fake.queue(bob.start_private())
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.queue(bob.tap(lobby, "Join"))
            await until(server, bot, lambda: "Bob" in lobby_text(fake, group))
        finally:
            log = await stop_bot(bot, tmp_path)
        assert "Traceback" not in log, log
