"""The bot's metadata of a game (`GameMeta`): stored games of the old, unversioned form
still load with every field; the new form says its version and keeps what a newer release
wrote; damaged values read as defaults instead of stopping the game."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from storage import META_VERSION, Database, GameMeta, LogEntry

from .conftest import running_record

# What the bot stored before the metadata was typed (version 1: no "v", every key optional).
OLD_FORM = {
    "title": "Картёжники",
    "opener": "Alice",
    "turn_timeout": 60,
    "langs": {"1": "ru", "2": "de"},
    "log": [
        {"e": "attack", "p": "1"},
        {"e": "transfer", "p": "2", "to": "3"},
        {"e": "beaten", "n": 4},
        {"e": "timeout", "p": "3"},
        {"e": "removed", "p": "3"},
    ],
    "left": {"3": "timed_out"},
    "blocked": ["2"],
    "invited": [5, 6],
    "previous_durak": "2",
    "warned": True,
    "grace_move": 17,
}


async def _store_raw_meta(db_path: Path, db: Database, meta: object) -> int:
    """A running game whose meta column holds `meta` exactly (as an older release wrote it)."""
    async with db.transaction() as tx:
        created = await tx.games.create(record=running_record(-100, 1, 2, 3))
    assert created.id is not None
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE games SET meta = ? WHERE id = ?", (json.dumps(meta), created.id))
    return created.id


@pytest.mark.sqlite_only(reason="writes raw values into the SQLite file")
async def test_a_game_stored_in_the_old_form_loads_with_every_field(
    db: Database, db_path: Path
) -> None:
    game_id = await _store_raw_meta(db_path, db, OLD_FORM)
    async with db.transaction(readonly=True) as tx:
        meta = (await tx.games.get(game_id=game_id)).meta
    assert meta == GameMeta(
        title="Картёжники",
        opener="Alice",
        turn_timeout=60,
        langs={"1": "ru", "2": "de"},
        log=[
            LogEntry("attack", "1"),
            LogEntry("transfer", "2", target="3"),
            LogEntry("beaten", count=4),
            LogEntry("timeout", "3"),
            LogEntry("removed", "3"),
        ],
        left={"3": "timed_out"},
        blocked=["2"],
        invited=[5, 6],
        previous_durak="2",
        warned=True,
        grace_move=17,
        graces=1,
    )


@pytest.mark.sqlite_only(reason="writes raw values into the SQLite file")
async def test_an_old_game_saved_again_is_in_the_new_form_and_reads_the_same(
    db: Database, db_path: Path
) -> None:
    game_id = await _store_raw_meta(db_path, db, OLD_FORM)
    async with db.transaction() as tx:
        record = await tx.games.get(game_id=game_id)
        await tx.games.save(record=record, expected_version=record.version)
    with sqlite3.connect(db_path) as conn:
        (stored,) = conn.execute("SELECT meta FROM games WHERE id = ?", (game_id,)).fetchone()
    assert json.loads(stored)["v"] == META_VERSION == 2
    async with db.transaction(readonly=True) as tx:
        assert (await tx.games.get(game_id=game_id)).meta == record.meta


@pytest.mark.sqlite_only(reason="writes raw values into the SQLite file")
async def test_keys_of_a_newer_release_are_kept(db: Database, db_path: Path) -> None:
    game_id = await _store_raw_meta(db_path, db, {"v": 3, "title": "Club", "x_new": [1, 2]})
    async with db.transaction() as tx:
        record = await tx.games.get(game_id=game_id)
        assert (record.meta.title, record.meta.extra) == ("Club", {"x_new": [1, 2]})
        await tx.games.save(record=record, expected_version=record.version)
    with sqlite3.connect(db_path) as conn:
        (stored,) = conn.execute("SELECT meta FROM games WHERE id = ?", (game_id,)).fetchone()
    assert json.loads(stored)["x_new"] == [1, 2]


@pytest.mark.sqlite_only(reason="writes raw values into the SQLite file")
async def test_damaged_values_read_as_defaults(db: Database, db_path: Path) -> None:
    damaged = {
        "title": 5,
        "turn_timeout": "abc",
        "langs": ["ru"],
        "log": [{"e": "nonsense"}, "x", {"e": "take", "p": 3, "n": "many"}],
        "left": {"2": "vanished", "3": "kicked"},
        "blocked": [1, "2"],
        "invited": ["5", True, 6],
        "asked": {"1": "Alice", "2": None},
        "practice": "yes",
        "warned": 1,
    }
    game_id = await _store_raw_meta(db_path, db, damaged)
    async with db.transaction(readonly=True) as tx:
        meta = (await tx.games.get(game_id=game_id)).meta
    assert meta == GameMeta(
        log=[LogEntry("take")],  # a player id that is no text, a count that is no number
        left={"3": "kicked"},
        blocked=["2"],
        invited=[6],
        asked={"1": "Alice"},
    )


def test_the_new_form_writes_only_what_differs_from_the_default() -> None:
    assert GameMeta().to_json() == {"v": 2}
    meta = GameMeta(
        title="Club", practice=True, log=[LogEntry("picked", "1", count=3)], asked={"2": "Bob"}
    )
    assert meta.to_json() == {
        "v": 2,
        "title": "Club",
        "practice": True,
        "log": [{"e": "picked", "p": "1", "n": 3}],
        "asked": {"2": "Bob"},
    }
    assert GameMeta.from_json(meta.to_json()) == meta
    assert GameMeta.from_json(meta.to_json()) == meta


def test_where_a_results_copy_would_lie_is_kept() -> None:
    meta = GameMeta(title="Club", result_floor=41)
    assert meta.to_json() == {"v": 2, "title": "Club", "result_floor": 41}
    assert GameMeta.from_json(meta.to_json()) == meta
    assert GameMeta.from_json({"v": 2, "result_floor": [41]}).result_floor is None
