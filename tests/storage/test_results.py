"""Finished games, leaderboards and player records."""

from __future__ import annotations

import dataclasses
import random
from datetime import timedelta

import pytest

from storage import Conflict, Database, InvalidRecord, NotFound, Player

from .conftest import T0, result, running_record


async def test_result_round_trip(db: Database) -> None:
    async with db.transaction() as tx:
        game = await tx.games.create(record=running_record(-100))
        assert game.id is not None
        finished = result(-100, ["1", "2", "cpu-easy-1"], "2", game_id=game.id)
        finished.participants[0] = dataclasses.replace(finished.participants[0], result="resigned")
        result_id = await tx.results.record(result=finished)
    async with db.transaction() as tx:
        stored = await tx.results.get(result_id=result_id)
        assert stored == dataclasses.replace(finished, id=result_id)
        assert await tx.results.for_game(game_id=game.id) == stored
        assert stored.participants[2].user_id is None
        assert stored.participants[2].is_computer
        with pytest.raises(NotFound):
            await tx.results.get(result_id=result_id + 1)
        with pytest.raises(NotFound):
            await tx.results.for_game(game_id=game.id + 1)


async def test_draw_round_trip(db: Database) -> None:
    async with db.transaction() as tx:
        draw = result(-100, ["1", "2"], None)
        result_id = await tx.results.record(result=draw)
        assert await tx.results.get(result_id=result_id) == dataclasses.replace(draw, id=result_id)
        record = await tx.results.player_record(player_id="1", chat_id=-100)
        assert (record.games, record.durak_count, record.draws, record.won) == (1, 0, 1, 0)


async def test_a_game_is_recorded_once(db: Database) -> None:
    async with db.transaction() as tx:
        game = await tx.games.create(record=running_record(-100))
        await tx.results.record(result=result(-100, ["1", "2"], "1", game_id=game.id))
    with pytest.raises(Conflict, match="already recorded"):
        async with db.transaction() as tx:
            await tx.results.record(result=result(-100, ["1", "2"], "2", game_id=game.id))
    with pytest.raises(InvalidRecord):  # no such game
        async with db.transaction() as tx:
            await tx.results.record(result=result(-100, ["1", "2"], "2", game_id=999))
    async with db.transaction() as tx:
        assert await tx.results.count() == 1
        assert (await tx.results.player_record(player_id="1")).durak_count == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"durak": "9"}, "not one of the participants"),
        ({"durak": None}, "not one of the participants"),
        ({"draw": True}, "a draw has no durak"),
        ({"participants": []}, "needs its participants"),
        ({"chat_id": 0}, "reserved"),
        ({"bouts": -1}, "negative"),
        ({"id": 5}, "already recorded"),
        ({"ended_at": T0.replace(tzinfo=None)}, "timezone"),
    ],
)
async def test_inconsistent_results_are_refused(
    db: Database, change: dict[str, object], message: str
) -> None:
    bad = dataclasses.replace(result(-100, ["1", "2"], "1"), **change)  # type: ignore[arg-type]
    async with db.transaction() as tx:
        with pytest.raises(ValueError, match=message):
            await tx.results.record(result=bad)


async def test_duplicate_seats_are_refused(db: Database) -> None:
    bad = result(-100, ["1", "2"], "1")
    bad.participants[1] = dataclasses.replace(bad.participants[1], seat=0)
    async with db.transaction() as tx:
        with pytest.raises(ValueError, match="distinct"):
            await tx.results.record(result=bad)


async def test_leaderboard_per_chat_and_overall(db: Database) -> None:
    games = [
        (-1, ["1", "2", "3"], "3"),
        (-1, ["1", "2", "3"], "3"),
        (-1, ["1", "2", "3"], "2"),
        (-1, ["1", "2"], "1"),
        (-2, ["1", "4"], "4"),
        (-2, ["1", "4"], "4"),
        (-2, ["1", "cpu-hard-1"], "cpu-hard-1"),
        (-2, ["4", "5"], None),
    ]
    async with db.transaction() as tx:
        # Unrated (an import): the order below rating is checked here; ratings in test_ratings.
        for n, (chat, players, durak) in enumerate(games):
            await tx.results.record_many(
                results=[result(chat, players, durak, ended=T0 + timedelta(minutes=n))],
                rate=False,
            )
        # Practice games count nowhere.
        await tx.results.record(result=result(-1, ["2", "1"], "1", practice=True))
        await tx.players.upsert(player=Player(2, "Renamed two"))
    async with db.transaction(readonly=True) as tx:
        chat1 = await tx.results.leaderboard(chat_id=-1)
        assert [(r.player_id, r.games, r.durak_count) for r in chat1] == [
            ("1", 4, 1),  # same durak rate and games as "2": player id decides
            ("2", 4, 1),
            ("3", 3, 2),
        ]
        assert chat1[0].durak_rate == pytest.approx(0.25)
        assert chat1[1].name == "Renamed two"  # the current name wins
        assert chat1[2].name == "name 3"
        assert all(r.rating is None for r in chat1)

        overall = await tx.results.leaderboard()
        assert [(r.player_id, r.games, r.durak_count) for r in overall] == [
            ("5", 1, 0),
            ("1", 7, 1),
            ("2", 4, 1),
            ("3", 3, 2),
            ("4", 3, 2),
        ]
        with_cpu = await tx.results.leaderboard(include_computers=True)
        assert [r.player_id for r in with_cpu][-1] == "cpu-hard-1"
        assert [r.player_id for r in await tx.results.leaderboard(min_games=4)] == ["1", "2"]
        assert [r.player_id for r in await tx.results.leaderboard(limit=2)] == ["5", "1"]
        assert await tx.results.leaderboard(chat_id=-3) == []
        assert await tx.results.count() == 9
        assert await tx.results.count(chat_id=-2) == 4


async def test_unranked_players_and_counts(db: Database) -> None:
    """Who is not on the leaderboard yet (fewer games than it takes), closest first, and how
    many players there are on either side of that line: /stats lists and counts them."""
    games = [
        (["1", "2"], "2"),
        (["1", "2"], "2"),
        (["1", "2", "3"], "1"),  # "1" and "2" have 3 games now, "3" one
        (["4", "cpu-easy-1"], "4"),
        (["4", "5"], "5"),  # "4" two games, "5" one, after "3"'s
    ]
    async with db.transaction() as tx:
        for n, (players, durak) in enumerate(games):
            await tx.results.record(result=result(-1, players, durak, ended=T0 + timedelta(n)))
        await tx.results.record(result=result(-2, ["6", "7"], "7"))
    async with db.transaction(readonly=True) as tx:
        waiting = await tx.results.unranked(chat_id=-1, min_games=3)
        assert [(r.player_id, r.games) for r in waiting] == [("4", 2), ("5", 1), ("3", 1)]
        assert waiting[0].durak_count == 1 and waiting[0].streak == 1  # durak, then not
        with_cpu = await tx.results.unranked(chat_id=-1, min_games=3, include_computers=True)
        assert [r.player_id for r in with_cpu] == ["4", "5", "cpu-easy-1", "3"]
        first = await tx.results.unranked(chat_id=-1, min_games=3, limit=1)
        assert [r.player_id for r in first] == ["4"]
        assert await tx.results.player_count(chat_id=-1, min_games=3) == 2
        assert await tx.results.player_count(chat_id=-1, ranked=False, min_games=3) == 3
        hidden = await tx.results.player_count(
            chat_id=-1, ranked=False, min_games=3, include_computers=True
        )
        assert hidden == 4
        assert await tx.results.player_count(min_games=1) == 7  # over all chats, people
        assert await tx.results.player_count(chat_id=-3) == 0


async def test_player_record(db: Database) -> None:
    async with db.transaction() as tx:
        for n, durak in enumerate(["2", "1", "1", "2", "2", "2"]):
            finished = result(-1, ["1", "2"], durak, ended=T0 + timedelta(hours=n))
            if durak == "1" and n == 2:
                finished.participants[0] = dataclasses.replace(
                    finished.participants[0], result="timed_out"
                )
            await tx.results.record(result=finished)
        await tx.results.record(result=result(-9, ["1", "3"], None, ended=T0))
    async with db.transaction() as tx:
        one = await tx.results.player_record(player_id="1", chat_id=-1)
        assert (one.games, one.durak_count, one.won, one.timed_out, one.draws) == (6, 2, 4, 1, 0)
        assert one.durak_rate == pytest.approx(2 / 6)
        assert one.streak == 3
        assert one.last_played_at == T0 + timedelta(hours=5)
        assert one.chat_id == -1
        two = await tx.results.player_record(player_id="2", chat_id=-1)
        assert two.streak == -3
        overall = await tx.results.player_record(player_id="1")
        assert (overall.games, overall.draws, overall.chat_id) == (7, 1, None)
        assert overall.streak == 4  # a draw is not a loss: it extends the streak
        assert overall.last_played_at == T0 + timedelta(hours=5)
        with pytest.raises(NotFound, match="chat -9"):
            await tx.results.player_record(player_id="2", chat_id=-9)
        with pytest.raises(NotFound, match="any chat"):
            await tx.results.player_record(player_id="77")


def _random_results(seed: int, count: int) -> list:  # type: ignore[type-arg]
    rng = random.Random(seed)
    out = []
    for n in range(count):
        players = rng.sample(["1", "2", "3", "4", "cpu-easy-1"], rng.randint(2, 4))
        durak = None if rng.random() < 0.1 else rng.choice(players)
        out.append(
            result(
                rng.choice([-1, -2, -3]),
                players,
                durak,
                practice=rng.random() < 0.1,
                ended=T0 + timedelta(minutes=n),
                names={p: f"{p} at {n}" for p in players},
            )
        )
    return out


async def _stats(db: Database) -> list[object]:
    async with db.transaction() as tx:
        rows = []
        for chat in (None, -1, -2, -3):
            rows.append(await tx.results.leaderboard(chat_id=chat, include_computers=True))
            for player in ["1", "2", "3", "4", "cpu-easy-1"]:
                try:
                    rows.append(await tx.results.player_record(player_id=player, chat_id=chat))
                except NotFound:
                    rows.append(None)
        return rows


async def test_record_many_equals_one_by_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    results = _random_results(5, 120)
    async with Database.connect(f"sqlite:///{tmp_path}/a.db") as one_by_one:
        for finished in results:
            async with one_by_one.transaction() as tx:
                await tx.results.record(result=finished)
        expected = await _stats(one_by_one)
    async with Database.connect(f"sqlite:///{tmp_path}/b.db") as batched:
        async with batched.transaction() as tx:
            ids = await tx.results.record_many(results=results[:50])
            assert ids == list(range(1, 51))
            await tx.results.record_many(results=results[50:])
            assert await tx.results.record_many(results=[]) == []
        assert await _stats(batched) == expected


async def test_migrate_chat_moves_results_and_merges_stats(db: Database) -> None:
    async with db.transaction() as tx:
        await tx.results.record(result=result(-1, ["1", "2"], "2"))
        await tx.results.record(result=result(-1, ["1", "2"], "2"))
        await tx.results.record(result=result(-1001, ["1", "3"], "1"))  # already in the new id
        await tx.games.create(record=running_record(-1))
        await tx.migrate_chat(old_chat_id=-1, new_chat_id=-1001)
    async with db.transaction() as tx:
        assert await tx.results.count(chat_id=-1) == 0
        assert await tx.results.count(chat_id=-1001) == 3
        assert await tx.results.leaderboard(chat_id=-1) == []
        one = await tx.results.player_record(player_id="1", chat_id=-1001)
        assert (one.games, one.durak_count, one.streak) == (3, 1, -1)
        two = await tx.results.player_record(player_id="2", chat_id=-1001)
        assert (two.games, two.durak_count, two.streak) == (2, 2, -2)
        assert (await tx.results.player_record(player_id="1")).games == 3
        assert (await tx.games.active_for_chat(chat_id=-1001)).chat_id == -1001
