"""`python -m bot` on PostgreSQL: the same start, play and resume as on SQLite."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from engine import Card, Game
from storage import Database, NotFound
from tests import postgres
from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import (
    cards_shown,
    game_over,
    hand_message,
    lobby_text,
    start_bot,
    stop_bot,
    tap_hand,
    until,
)
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


async def stored_game(url: str, chat_id: int) -> Game:
    """The chat's running game as the bot committed it (read beside the running bot)."""
    async with Database.connect(url) as db, db.transaction(readonly=True) as tx:
        record = await tx.games.active_for_chat(chat_id=chat_id)
    assert record.game is not None
    return record.game


async def test_python_m_bot_on_postgresql_plays_a_whole_game_through_a_kill(
    tmp_path: Path, pg_server: postgres.PostgresServer
) -> None:
    """As on SQLite (`test_entrypoint`): a 2-player game through the real process, SIGKILLed
    after some moves; the restarted process has every acknowledged move and plays on to the
    end, where the result is stored (in the transaction of the last move)."""
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7102, "Club", admins={alice})
    players = [alice, bob]
    rng = random.Random(11)

    async def tap_round(bot: asyncio.subprocess.Process) -> None:
        for user in players:
            await tap_hand(server, bot, fake, user, rng)

    def hands_shown() -> dict[str, set[Card]]:
        return {
            str(user.id): cards_shown(message)
            for user in players
            if (message := hand_message(fake, user)) is not None
            and "Back" not in message.button_texts
        }

    async with (
        postgres.fresh_database(pg_server) as url,
        LoopbackBotAPI(fake) as server,
    ):
        bot = await start_bot(server, tmp_path, DATABASE_URL=url)
        try:
            for user in players:
                fake.queue(user.start_private())
            # Their /start is handled first: an opener the bot may not write to yet gets
            # no seat (the lobby offers the link), and Start would find one player.
            await until(server, bot, lambda: all(fake.messages(u.id) for u in players))
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.queue(bob.tap(lobby, "Join"))
            await until(server, bot, lambda: "Bob" in lobby_text(fake, group))
            fake.queue(alice.tap(lobby, "Start"))
            await until(server, bot, lambda: all(hand_message(fake, u) for u in players))
            for _ in range(12):
                await tap_round(bot)
            committed = await stored_game(url, group.id)
            while any(
                set(committed.hand(player)) != cards for player, cards in hands_shown().items()
            ):
                calls = len(fake.calls)
                await until(server, bot, lambda: len(fake.calls) > calls)  # noqa: B023
        finally:
            bot.kill()  # no clean shutdown: whatever was acknowledged must be stored
            await bot.wait()

        game = await stored_game(url, group.id)
        assert game.to_dict() == committed.to_dict()

        bot = await start_bot(server, tmp_path, DATABASE_URL=url)
        try:
            await until(
                server,
                bot,
                lambda: all(
                    (message := hand_message(fake, u)) is not None
                    and cards_shown(message) == set(game.hand(str(u.id)))
                    for u in players
                ),
            )
            for _ in range(1000):
                if not any(hand_message(fake, u) for u in players):  # no buttons: it is over
                    break
                await tap_round(bot)
            await until(server, bot, lambda: game_over(fake, group))
        finally:
            log = await stop_bot(bot, tmp_path)
        assert "Traceback" not in log, log

        async with Database.connect(url) as db, db.transaction(readonly=True) as tx:
            assert await tx.results.count(chat_id=group.id) == 1
            with pytest.raises(NotFound):
                await tx.games.active_for_chat(chat_id=group.id)
            record = await tx.results.player_record(player_id="1", chat_id=group.id)
            assert record.games == 1 and record.rating is not None
