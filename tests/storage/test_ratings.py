"""Ratings (openskill Plackett-Luce): updated with every recorded game, per chat and
overall; recomputed from scratch they come out exactly the same."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from storage import Database

from .conftest import T0, result


async def ratings(db: Database, chat_id: int | None) -> dict[str, float | None]:
    async with db.transaction(readonly=True) as tx:
        board = await tx.results.leaderboard(
            chat_id=chat_id, limit=100, min_games=1, include_computers=True
        )
    return {row.player_id: row.rating for row in board}


async def test_the_durak_ends_below_the_winners(db: Database) -> None:
    async with db.transaction() as tx:
        await tx.results.record(result=result(-1, ["1", "2", "3"], "3"))
    rated = await ratings(db, -1)
    assert rated["1"] is not None and rated["3"] is not None
    assert rated["1"] > rated["2"] > rated["3"]  # first out, second out, durak


async def test_a_draw_ranks_everyone_equal(db: Database) -> None:
    async with db.transaction() as tx:
        await tx.results.record(result=result(-1, ["1", "2"], None))
    rated = await ratings(db, -1)
    assert rated["1"] == pytest.approx(rated["2"])


async def test_leaderboard_is_ordered_by_rating(db: Database) -> None:
    async with db.transaction() as tx:
        for n in range(5):
            await tx.results.record(
                result=result(-1, ["1", "2"], "2", ended=T0 + timedelta(minutes=n))
            )
        board = await tx.results.leaderboard(chat_id=-1)
    assert [r.player_id for r in board] == ["1", "2"]
    assert board[0].rating is not None and board[1].rating is not None
    assert board[0].rating > board[1].rating


async def test_recompute_equals_incremental(db: Database) -> None:
    rng = random.Random(3)
    players = ["1", "2", "3", "4", "5", "cpu-easy-1"]
    async with db.transaction() as tx:
        for n in range(80):
            chat = rng.choice([-1, -2])
            seats = rng.sample(players, rng.randint(2, 4))
            durak = rng.choice([*seats, None])
            practice = n % 13 == 0
            await tx.results.record(
                result=result(chat, seats, durak, practice=practice, ended=T0 + timedelta(n))
            )
    incremental = {scope: await ratings(db, scope) for scope in (-1, -2, None)}
    async with db.transaction() as tx:
        replayed = await tx.results.recompute_ratings()
    assert replayed == 80 - len(range(0, 80, 13))
    assert {scope: await ratings(db, scope) for scope in (-1, -2, None)} == incremental
    async with db.transaction() as tx:
        await tx.results.recompute_ratings(chat_id=-2)
    assert await ratings(db, -2) == incremental[-2]


def test_recompute_command(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/cli.sqlite3"

    async def fill() -> None:
        async with Database.connect(url) as db, db.transaction() as tx:
            await tx.results.record(result=result(-1, ["1", "2"], "2"))

    asyncio.run(fill())
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "storage", "recompute-ratings", "--database-url", url],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        timeout=60,
    )
    assert done.stdout.strip() == "recomputed ratings from 1 finished games"
