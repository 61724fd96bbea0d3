"""Players and chat settings."""

from __future__ import annotations

import pytest

from engine import Rules
from storage import ChatSettings, Database, NotFound, Player


async def test_player_round_trip_and_upsert(db: Database) -> None:
    async with db.transaction() as tx:
        with pytest.raises(NotFound, match="player 42"):
            await tx.players.get(user_id=42)
        await tx.players.upsert(player=Player(42, "Вася", "ru", False))
        assert await tx.players.get(user_id=42) == Player(42, "Вася", "ru", False)
        await tx.players.upsert(player=Player(42, "Vasya P.", None, True))
    async with db.transaction() as tx:
        assert await tx.players.get(user_id=42) == Player(42, "Vasya P.", None, True)


async def test_huge_telegram_ids(db: Database) -> None:
    big = 2**52 + 1
    async with db.transaction() as tx:
        await tx.players.upsert(player=Player(big, "x"))
        assert (await tx.players.get(user_id=big)).user_id == big


async def test_set_can_message(db: Database) -> None:
    async with db.transaction() as tx:
        await tx.players.upsert(player=Player(7, "Петя", "ru", False))
        await tx.players.set_can_message(user_id=7, value=True)
        assert (await tx.players.get(user_id=7)).can_message is True
        await tx.players.set_can_message(user_id=7, value=False)
        assert (await tx.players.get(user_id=7)).can_message is False
        with pytest.raises(NotFound):
            await tx.players.set_can_message(user_id=8, value=True)


async def test_chat_settings_defaults_and_round_trip(db: Database) -> None:
    async with db.transaction() as tx:
        defaults = await tx.chats.get(chat_id=-100)
        assert defaults == ChatSettings(chat_id=-100)
        assert defaults.language is None
        assert defaults.preset == "classic"
        assert defaults.rules == Rules()
        assert defaults.turn_timeout is None
        custom = ChatSettings(
            chat_id=-100,
            language="uk",
            preset="perevodnoy",
            rules=Rules.preset("perevodnoy"),
            turn_timeout=45,
        )
        await tx.chats.save(settings=custom)
    async with db.transaction() as tx:
        assert await tx.chats.get(chat_id=-100) == custom
        custom.turn_timeout = None
        custom.language = None
        await tx.chats.save(settings=custom)
        assert await tx.chats.get(chat_id=-100) == custom
        assert await tx.chats.get(chat_id=-200) == ChatSettings(chat_id=-200)
        with pytest.raises(ValueError, match="0 \\(off\\) or seconds"):
            await tx.chats.save(settings=ChatSettings(chat_id=-1, turn_timeout=-5))
        off = ChatSettings(chat_id=-3, turn_timeout=0)  # 0 = no time limit
        await tx.chats.save(settings=off)
        assert await tx.chats.get(chat_id=-3) == off


async def test_chat_settings_migrate(db: Database) -> None:
    async with db.transaction() as tx:
        await tx.chats.save(settings=ChatSettings(chat_id=-1, language="en", turn_timeout=30))
        await tx.chats.migrate_chat(old_chat_id=-1, new_chat_id=-1001)
        assert await tx.chats.get(chat_id=-1) == ChatSettings(chat_id=-1)
        moved = await tx.chats.get(chat_id=-1001)
        assert (moved.language, moved.turn_timeout) == ("en", 30)
        # The new chat keeps its own settings if it already has some.
        await tx.chats.save(settings=ChatSettings(chat_id=-2, language="ru"))
        await tx.chats.migrate_chat(old_chat_id=-2, new_chat_id=-1001)
        assert (await tx.chats.get(chat_id=-1001)).language == "en"
        assert await tx.chats.get(chat_id=-2) == ChatSettings(chat_id=-2)
