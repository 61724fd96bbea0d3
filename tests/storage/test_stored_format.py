"""Engine state saved by another engine format version: loads, or fails naming game and version."""

from __future__ import annotations

import json
import logging
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine import Game, RandomPlayer
from storage import Database, StoredGameError

from .conftest import lobby_record, running_record

# Each test writes raw values into the SQLite file with sqlite3 (its json_set, say).
pytestmark = pytest.mark.sqlite_only(reason="the stored format of the SQLite file")

FIXTURES = Path(__file__).parent / "fixtures"


async def _stored_game(db_url: str) -> int:
    async with Database.connect(db_url) as db, db.transaction() as tx:
        record = await tx.games.create(record=running_record(-100))
    assert record.id is not None
    return record.id


def _edit(db_path: Path, sql: str, *params: object) -> None:
    """Change a stored row behind the storage layer's back, as an old release would have."""
    with sqlite3.connect(db_path) as conn:
        conn.execute(sql, params)
    conn.close()


async def test_format_1_fixture_still_loads(db_path: Path, db_url: str) -> None:
    """A game saved in engine format 1 (a golden file) loads and plays on, whatever the engine."""
    game_id = await _stored_game(db_url)
    text = (FIXTURES / "game_format1.json").read_text(encoding="utf-8")
    assert json.loads(text)["format"] == 1
    _edit(db_path, "UPDATE games SET state = ? WHERE id = ?", text, game_id)
    async with Database.connect(db_url) as db, db.transaction() as tx:
        record = await tx.games.get(game_id=game_id)
        game = record.game
        assert game is not None
        assert game.players == ("111", "222", "333")
        assert game.move_number == 20
        assert not game.is_over
        player = sorted(game.to_act)[0]
        game.apply(player, RandomPlayer(1).choose(game, player))
        record.version = await tx.games.save(record=record, expected_version=record.version)
    async with Database.connect(db_url) as db, db.transaction() as tx:
        again = await tx.games.get(game_id=game_id)
    assert again.game == game
    assert isinstance(again.game, Game)


@pytest.mark.parametrize(
    ("change", "version", "shown"),
    [
        ("json_set(state, '$.format', 999)", 999, "engine format version 999"),
        ("json_set(state, '$.format', 0)", 0, "engine format version 0"),
        ("json_remove(state, '$.format')", None, "no engine format version"),
    ],
)
async def test_unknown_format_names_game_and_version(
    db_path: Path, db_url: str, change: str, version: int | None, shown: str
) -> None:
    game_id = await _stored_game(db_url)
    _edit(db_path, f"UPDATE games SET state = {change} WHERE id = ?", game_id)
    async with Database.connect(db_url) as db, db.transaction() as tx:
        with pytest.raises(StoredGameError) as caught:
            await tx.games.get(game_id=game_id)
        with pytest.raises(StoredGameError):
            await tx.games.active_for_chat(chat_id=-100)
    error = caught.value
    assert error.game_id == game_id
    assert error.format == version
    assert f"stored game {game_id}" in str(error)
    assert shown in str(error)
    assert isinstance(error.__cause__, ValueError)


async def test_all_active_skips_a_game_it_cannot_load(
    db_path: Path, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """One unloadable game must not keep every other game from resuming after a restart."""
    async with Database.connect(db_url) as db, db.transaction() as tx:
        first = await tx.games.create(record=running_record(-100))
        bad = await tx.games.create(record=running_record(-200, 4, 5))
        lobby = await tx.games.create(record=lobby_record(-300))
        broken_rules = await tx.games.create(record=running_record(-400, 6, 7))
    _edit(db_path, "UPDATE games SET state = json_set(state, '$.format', 999) WHERE id = ?", bad.id)
    _edit(
        db_path,
        "UPDATE games SET rules = json_set(rules, '$.deck_size', 37) WHERE id = ?",
        broken_rules.id,
    )
    with caplog.at_level(logging.WARNING, logger="storage.repositories"):
        async with Database.connect(db_url) as db, db.transaction(readonly=True) as tx:
            active = await tx.games.all_active()
            with pytest.raises(StoredGameError):  # asked for by id, it still raises
                await tx.games.get(game_id=bad.id or 0)
    assert [r.id for r in active] == [first.id, lobby.id]
    assert active[0].game == first.game
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert f"active game {bad.id} of chat -200" in warnings[0].getMessage()
    assert "engine format version 999" in warnings[0].getMessage()
    assert f"active game {broken_rules.id} of chat -400" in warnings[1].getMessage()
    assert "rules" in warnings[1].getMessage()
    # The same for the games whose deadline is due.
    async with Database.connect(db_url) as db, db.transaction(readonly=True) as tx:
        due = await tx.games.due(now=datetime(2100, 1, 1, tzinfo=UTC))
    assert [r.id for r in due] == [first.id]


async def test_corrupt_state_and_rules(db_path: Path, db_url: str) -> None:
    game_id = await _stored_game(db_url)
    _edit(db_path, "UPDATE games SET state = '{not json' WHERE id = ?", game_id)
    async with Database.connect(db_url) as db, db.transaction() as tx:
        with pytest.raises(StoredGameError, match="not valid JSON"):
            await tx.games.get(game_id=game_id)
    _edit(
        db_path,
        "UPDATE games SET state = NULL, rules = json_set(rules, '$.deck_size', 37) WHERE id = ?",
        game_id,
    )
    async with Database.connect(db_url) as db, db.transaction() as tx:
        with pytest.raises(StoredGameError, match=f"stored game {game_id}.*rules"):
            await tx.games.get(game_id=game_id)
