"""The throw-in window as stored: a group's (`ChatSettings.throw_in_window`, 5 s unless
set, 0 for none) and a game's own (`GameMeta.throw_in_window`)."""

from __future__ import annotations

import pytest

from storage import THROW_IN_WINDOW, ChatSettings, Database, GameMeta


async def test_a_groups_throw_in_window_round_trip(db: Database) -> None:
    async with db.transaction() as tx:
        assert (await tx.chats.get(chat_id=-31)).throw_in_window == THROW_IN_WINDOW == 5
        await tx.chats.save(settings=ChatSettings(chat_id=-31, throw_in_window=10))
        await tx.chats.save(settings=ChatSettings(chat_id=-32, throw_in_window=0))
        with pytest.raises(ValueError, match="0 \\(off\\) or seconds"):
            await tx.chats.save(settings=ChatSettings(chat_id=-33, throw_in_window=-1))
    async with db.transaction(readonly=True) as tx:
        assert (await tx.chats.get(chat_id=-31)).throw_in_window == 10
        assert (await tx.chats.get(chat_id=-32)).throw_in_window == 0  # off, not the default


def test_a_games_throw_in_window_is_kept_in_its_meta() -> None:
    assert "throw_in_window" not in GameMeta().to_json()  # none stored: the default
    for value in (0, 3):
        meta = GameMeta(throw_in_window=value)
        assert GameMeta.from_json(meta.to_json()).throw_in_window == value
    assert GameMeta.from_json({"v": 2, "throw_in_window": "x"}).throw_in_window is None
