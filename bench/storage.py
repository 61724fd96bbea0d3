"""Storage benchmark: saved game actions per second, and leaderboard queries over 1M results.

1. Actions: N concurrent games (N = 1, 100, 1000), each its own asyncio task looping
   "load the game, apply one random legal action, save it" in one transaction, on one SQLite
   file. A finished game records its result and the chat starts a new game in the same
   transaction. Prints saved actions per second for both executors (inline: SQLite calls on
   the event loop thread, the default; thread: on one worker thread), and, for scale, the
   engine alone (restore from JSON, apply, dump to JSON) without the database.
2. Leaderboard: 1,000,000 finished games (1,000 chats, 20,000 players, 2-4 players each, 5%
   practice) recorded with `record_many` in one transaction into a temporary file, then the
   time of the leaderboard and player-record queries, each in its own read transaction.

Run: `python bench/storage.py [--seconds S] [--finished N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

# This file is named like the package it measures: keep its folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from engine import Game, RandomPlayer, Rules  # noqa: E402
from storage import (  # noqa: E402
    Database,
    FinishedGame,
    GameRecord,
    Lobby,
    Participant,
    Seat,
    utcnow,
)
from storage.codec import game_to_json  # noqa: E402

T0 = datetime(2024, 1, 1, tzinfo=UTC)
RULES = Rules()


def new_record(chat_id: int, rng: random.Random) -> GameRecord:
    count = rng.randint(2, 4)
    seats = [Seat(player_id=str(u), user_id=u, name=f"player {u}") for u in range(1, count + 1)]
    return GameRecord(
        chat_id=chat_id,
        status="running",
        language="en",
        rules=RULES,
        lobby=Lobby(opener_id=1, seats=seats),
        game=Game.new([s.player_id for s in seats], rules=RULES, seed=rng.randrange(2**32)),
        started_at=utcnow(),
        deadline=utcnow() + timedelta(seconds=60),
    )


def result_of(record: GameRecord, game: Game) -> FinishedGame:
    outcome = game.outcome
    assert outcome is not None and record.started_at is not None
    return FinishedGame(
        chat_id=record.chat_id,
        game_id=record.id,
        rules=record.rules,
        started_at=record.started_at,
        ended_at=utcnow(),
        bouts=outcome.bouts,
        draw=outcome.draw,
        durak=outcome.durak,
        participants=[
            Participant(
                seat=seat,
                player_id=player,
                user_id=int(player),
                name=f"player {player}",
                is_computer=False,
                result="durak" if player == outcome.durak else "draw" if outcome.draw else "won",
                place=seat + 1,
            )
            for seat, player in enumerate(game.players)
        ],
    )


async def actions_per_second(url: str, games: int, seconds: float) -> float:
    async with Database.connect(url) as db:
        rng = random.Random(games)
        async with db.transaction() as tx:
            ids = []
            for chat in range(games):
                created = await tx.games.create(record=new_record(-(chat + 1), rng))
                assert created.id is not None
                ids.append(created.id)
        done = 0
        stop = time.perf_counter() + seconds

        async def play(game_id: int, seed: int) -> None:
            nonlocal done
            chooser = RandomPlayer(seed)
            local = random.Random(seed)
            while time.perf_counter() < stop:
                async with db.transaction() as tx:
                    record = await tx.games.get(game_id=game_id)
                    game = record.game
                    assert game is not None
                    player = local.choice(sorted(game.to_act))
                    game.apply(player, chooser.choose(game, player))
                    record.deadline = utcnow() + timedelta(seconds=60)
                    if game.is_over:
                        record.status = "finished"
                        await tx.results.record(result=result_of(record, game))
                    await tx.games.save(record=record, expected_version=record.version)
                    if game.is_over:
                        fresh = await tx.games.create(record=new_record(record.chat_id, local))
                        assert fresh.id is not None
                        game_id = fresh.id
                done += 1

        started = time.perf_counter()
        await asyncio.gather(*(play(game_id, n) for n, game_id in enumerate(ids)))
        return done / (time.perf_counter() - started)


def engine_alone_per_second(seconds: float) -> float:
    """The engine's share of the same workload: from JSON, apply, to JSON; no database."""
    rng = random.Random(0)
    chooser = RandomPlayer(0)
    texts = [game_to_json(new_record(-1, rng).game) for _ in range(100)]
    done = 0
    stop = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < stop:
        slot = done % len(texts)
        game = Game.from_dict(json.loads(texts[slot]))
        player = rng.choice(sorted(game.to_act))
        game.apply(player, chooser.choose(game, player))
        if game.is_over:
            game = new_record(-1, rng).game
        texts[slot] = game_to_json(game)
        done += 1
    return done / (time.perf_counter() - started)


CHATS = 1000
PLAYERS = 20000


def synthetic_results(total: int, seed: int) -> Iterator[FinishedGame]:
    rng = random.Random(seed)
    names = {user: f"player {user}" for user in range(1, PLAYERS + 1)}
    ids = {user: str(user) for user in range(1, PLAYERS + 1)}
    for n in range(total):
        chat = rng.randrange(CHATS)
        # Each chat has its own circle of 60 regulars out of the 20,000 players.
        count = rng.choice((2, 2, 3, 3, 3, 4))
        users = [(u % PLAYERS) + 1 for u in rng.sample(range(chat * 20, chat * 20 + 60), count)]
        durak = -1 if rng.random() < 0.03 else rng.randrange(count)
        ended = T0 + timedelta(seconds=30 * n)
        yield FinishedGame(
            chat_id=-(chat + 1),
            game_id=None,
            rules=RULES,
            started_at=ended - timedelta(minutes=7),
            ended_at=ended,
            bouts=rng.randint(6, 20),
            draw=durak < 0,
            durak=None if durak < 0 else ids[users[durak]],
            practice=rng.random() < 0.05,
            participants=[
                Participant(
                    seat=seat,
                    player_id=ids[user],
                    user_id=user,
                    name=names[user],
                    is_computer=False,
                    result="draw" if durak < 0 else "durak" if seat == durak else "won",
                    place=count if seat == durak else seat + 1,
                )
                for seat, user in enumerate(users)
            ],
        )


async def build_finished_games(url: str, total: int) -> float:
    started = time.perf_counter()
    async with Database.connect(url) as db, db.transaction() as tx:
        await tx.results.record_many(results=synthetic_results(total, seed=1))
    return time.perf_counter() - started


async def timed(db: Database, query: Callable[..., Awaitable[object]], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        async with db.transaction(readonly=True) as tx:
            await query(tx)
        times.append((time.perf_counter() - started) * 1000)
    return times


async def leaderboard_times(url: str, runs: int) -> dict[str, list[float]]:
    async with Database.connect(url) as db:
        async with db.transaction(readonly=True) as tx:
            count = await tx.results.count()
            top = await tx.results.leaderboard(min_games=20)
        print(f"  finished games stored: {count:,}; overall leader: {top[0]}")
        chats = random.Random(2)
        players = random.Random(3)
        return {
            "overall top 10": await timed(db, lambda tx: tx.results.leaderboard(), runs),
            "overall top 10, min 50 games": await timed(
                db, lambda tx: tx.results.leaderboard(min_games=50), runs
            ),
            "chat top 10": await timed(
                db,
                lambda tx: tx.results.leaderboard(chat_id=-chats.randint(1, CHATS)),
                runs,
            ),
            "player record (overall)": await timed(
                db,
                lambda tx: tx.results.player_record(player_id=str(players.randint(1, PLAYERS))),
                runs,
            ),
            "count()": await timed(db, lambda tx: tx.results.count(), 20),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per action measurement")
    parser.add_argument("--finished", type=int, default=1_000_000, help="finished games to build")
    parser.add_argument("--runs", type=int, default=200, help="runs per leaderboard query")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="durak-bench-") as tmp:
        print(f"SQLite file in {tmp} (WAL, synchronous=NORMAL)")
        print("Saved actions per second (load, apply, save in one transaction):")
        engine_rate = engine_alone_per_second(args.seconds)
        for executor in ("inline", "thread"):
            for games in (1, 100, 1000):
                url = f"sqlite:///{tmp}/actions-{executor}-{games}.sqlite3?executor={executor}"
                rate = asyncio.run(actions_per_second(url, games, args.seconds))
                print(f"  {executor:6} executor, {games:5,} concurrent games: {rate:8,.0f} /s")
        print(f"  engine alone (from JSON, apply, to JSON, no database): {engine_rate:8,.0f} /s")

        url = f"sqlite:///{tmp}/finished.sqlite3"
        elapsed = asyncio.run(build_finished_games(url, args.finished))
        size = Path(tmp, "finished.sqlite3").stat().st_size / 2**20
        print(
            f"Recorded {args.finished:,} finished games in {elapsed:.1f} s "
            f"({args.finished / elapsed:,.0f}/s, {size:,.0f} MiB)"
        )
        print(f"Query times over {args.finished:,} finished games (ms, one read transaction each):")
        for name, times in asyncio.run(leaderboard_times(url, args.runs)).items():
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            print(
                f"  {name:30} median {statistics.median(times):6.2f}  p95 {p95:6.2f}  "
                f"max {times[-1]:6.2f}"
            )


if __name__ == "__main__":
    main()
