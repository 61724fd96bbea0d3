"""`python -m bot` on a database whose file system fills up while it runs (#22): each tap and
command is answered "could not be saved", the log and the operator chat hear of it once,
and the bot carries on when space is back. The file system is a small tmpfs (skipped where
none can be mounted); tests/bot/test_database_outage.py covers the same in process."""

from __future__ import annotations

from pathlib import Path

from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import lobby_text, start_bot, stop_bot, until
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram
from tests.storage.conftest import fill, small_file_system

OPERATOR = 4242
UNAVAILABLE = (
    "That could not be saved: the bot's server cannot store games at the moment, so nothing "
    "happened. Please try again later."
)


async def test_a_full_disk_is_answered_told_once_and_outlived(tmp_path: Path) -> None:
    fake = FakeTelegram(token=TOKEN)
    operator = fake.user(OPERATOR, "Operator")
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    club = fake.group(-7201, "Club", admins={alice})
    pub = fake.group(-7202, "Pub", admins={alice})

    def told(words: str) -> bool:
        return any(words in m.text for m in fake.messages(OPERATOR))

    with small_file_system(tmp_path / "data") as folder:
        async with LoopbackBotAPI(fake) as server:
            bot = await start_bot(server, tmp_path, OPERATOR_CHAT_ID=str(OPERATOR))
            try:
                fake.queue(operator.start_private(), alice.start_private(), bob.start_private())
                fake.queue(alice.send(club, "/newgame"))
                await until(server, bot, lambda: "Alice" in lobby_text(fake, club))
                filler = fill(folder)

                lobby = next(m for m in fake.messages(club.id) if "Join" in m.button_texts)
                join = bob.tap(lobby, "Join")
                fake.queue(join)
                await until(server, bot, lambda: fake.answer_for(join) is not None)
                answer = fake.answer_for(join)
                assert answer is not None and answer.text == UNAVAILABLE
                fake.queue(alice.send(pub, "/newgame"))
                await until(server, bot, lambda: bool(fake.messages(pub.id)))
                assert [m.text for m in fake.messages(pub.id)] == [UNAVAILABLE]
                await until(server, bot, lambda: told("cannot store anything"))

                filler.unlink()  # space is back
                fake.queue(bob.tap(lobby, "Join"))
                await until(server, bot, lambda: "Bob" in lobby_text(fake, club))
                await until(server, bot, lambda: told("stores again"))
            finally:
                log = await stop_bot(bot, tmp_path)
    warnings = [line for line in log.splitlines() if " WARNING " in line]
    assert len(warnings) == 1, log
    assert "the database cannot store anything: database file " in warnings[0], log
    assert "its file system is full" in warnings[0], log
    assert "the database stores again, after " in log, log
    assert "Traceback" not in log and "error while handling an update" not in log, log
    assert sum("cannot store anything" in m.text for m in fake.messages(OPERATOR)) == 1
