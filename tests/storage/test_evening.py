"""The evening a result tallies (`ResultRepository.evening`) and the game before a lobby
(`GameRepository.previous`), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from storage import Database, NotFound

from .conftest import T0, result, running_record

GAP = timedelta(hours=2)
LONGEST = timedelta(hours=12)


async def _played(
    db: Database, chat_id: int, players: list[str], durak: str | None, at: datetime
) -> int:
    """A stored game of `players` that ended at `at`; its id."""
    async with db.transaction() as tx:
        game = await tx.games.create(record=running_record(chat_id))
        assert game.id is not None
        game.status = "finished"
        await tx.games.save(record=game, expected_version=1)
        await tx.results.record(result=result(chat_id, players, durak, game_id=game.id, ended=at))
    return game.id


async def test_an_evening_is_the_same_players_without_a_long_break(db: Database) -> None:
    at = T0
    ids = []
    # Other players first, then a long break, then three games of 1, 2, cpu-easy-1.
    await _played(db, -100, ["1", "3"], "3", at)
    at += timedelta(hours=4)
    for durak in ("2", None, "1"):
        ids.append(await _played(db, -100, ["1", "2", "cpu-easy-1"], durak, at))
        at += timedelta(minutes=10)
    await _played(db, -200, ["1", "2", "cpu-easy-1"], "2", at)  # another chat: not counted
    async with db.transaction(readonly=True) as tx:
        evening = await tx.results.evening(game_id=ids[-1], gap=GAP, within=LONGEST)
        assert [g.game_id for g in evening] == ids[::-1]  # newest first, itself included
        assert [g.durak for g in evening] == ["1", None, "2"]
        first = await tx.results.evening(game_id=ids[0], gap=GAP, within=LONGEST)
        assert [g.game_id for g in first] == [ids[0]]  # the break before it ends the evening
        assert await tx.results.evening(game_id=ids[-1] + 99, gap=GAP, within=LONGEST) == []


async def test_another_player_between_ends_the_evening(db: Database) -> None:
    early = await _played(db, -100, ["1", "2"], "2", T0)
    await _played(db, -100, ["1", "2", "3"], "3", T0 + timedelta(minutes=10))
    late = await _played(db, -100, ["1", "2"], "1", T0 + timedelta(minutes=20))
    async with db.transaction(readonly=True) as tx:
        evening = await tx.results.evening(game_id=late, gap=GAP, within=LONGEST)
    assert [g.game_id for g in evening] == [late] and early < late


@pytest.mark.parametrize("count", [1, 3])
async def test_the_game_before(db: Database, count: int) -> None:
    async with db.transaction() as tx:
        games = []
        for _ in range(count):
            game = await tx.games.create(record=running_record(-100))
            game.status = "cancelled"
            await tx.games.save(record=game, expected_version=1)
            games.append(game)
        other = await tx.games.create(record=running_record(-200))
    ids = [g.id for g in games]
    assert other.id is not None and ids[-1] is not None
    async with db.transaction(readonly=True) as tx:
        with pytest.raises(NotFound):
            await tx.games.previous(chat_id=-100, game_id=ids[0] or 0)
        if count > 1:
            before = await tx.games.previous(chat_id=-100, game_id=ids[-1])
            assert before.id == ids[-2]
        before = await tx.games.previous(chat_id=-100, game_id=other.id)  # by id, in its chat
        assert before.id == ids[-1]
