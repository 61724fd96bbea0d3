"""Storage benchmark: saved game actions per second, and leaderboard queries over 1M results.

1. Actions: N concurrent games (N = 1, 100, 1000), each its own asyncio task looping
   "load the game, apply one random legal action, save it" in one transaction, on one SQLite
   file. A finished game records its result and the chat starts a new game in the same
   transaction. Prints saved actions per second for both executors (aiosqlite, the default:
   SQLite calls on aiosqlite's thread; inline: on the event loop thread), and how much of each
   action went to the engine's own (de)serialization, `Game.from_dict` and `Game.to_dict`.
2. Leaderboard: 1,000,000 finished games (1,000 chats, 20,000 players, 2-4 players each, 5%
   practice) recorded with `record_many` in one transaction into a temporary file, then the
   time of the leaderboard and player-record queries, each in its own read transaction.

Run: `python bench/storage.py [--seconds S] [--finished N] [--database URL]`. With
``--database postgresql://...`` both measures run there instead (use a database of its own:
the benchmark leaves its games and results in it), each transaction on a connection of the
pool (``?pool_max=`` sets its size).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# This file is named like the package it measures: keep its folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from engine import Game, RandomPlayer, Rules  # noqa: E402
from storage import (  # noqa: E402
    Database,
    FinishedGame,
    GameRecord,
    Lobby,
    NotFound,
    Participant,
    ParticipantResult,
    Seat,
    Transaction,
    parse_database_url,
    utcnow,
)

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


async def actions_per_second(
    url: str, games: int, seconds: float, first_chat: int = 1
) -> tuple[float, int]:
    async with Database.connect(url) as db:
        rng = random.Random(games)
        async with db.transaction() as tx:
            ids = []
            for chat in range(games):
                created = await tx.games.create(record=new_record(-(chat + first_chat), rng))
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
        return done / (time.perf_counter() - started), done


class EngineClock:
    """Time spent in `Game.from_dict` and `Game.to_dict`, the engine's share of load and save.

    Installed by wrapping storage's two calls of them, for this benchmark process only (a
    compiled `Game` takes no new methods).
    """

    seconds = 0.0

    @classmethod
    def install(cls) -> None:
        import storage.codec
        import storage.repositories

        def timed_to_json(game: Game) -> str:
            started = time.perf_counter()
            data = game.to_dict()
            cls.seconds += time.perf_counter() - started
            return storage.codec.dumps(data)

        class TimedGame:  # what storage.codec calls Game
            @staticmethod
            def from_dict(data: Any) -> Game:
                started = time.perf_counter()
                try:
                    return Game.from_dict(data)
                finally:
                    cls.seconds += time.perf_counter() - started

        storage.repositories.game_to_json = timed_to_json  # type: ignore[assignment]
        storage.codec.Game = TimedGame  # type: ignore[misc, assignment]


CHATS = 1000
PLAYERS = 20000


def synthetic_results(total: int, seed: int) -> Iterator[FinishedGame]:
    rng = random.Random(seed)
    ids = {user: str(user) for user in range(1, PLAYERS + 1)}

    @functools.cache
    def participant(seat: int, user: int, result: ParticipantResult, place: int) -> Participant:
        return Participant(seat, ids[user], user, f"player {user}", False, result, place)

    random_ = rng.random
    step = timedelta(seconds=30)
    ended = T0
    for _ in range(total):
        chat = int(random_() * CHATS)
        # Each chat has its own circle of 60 regulars out of the 20,000 players; 2 to 4 of them
        # play (distinct: 7 and 60 are coprime).
        count = (2, 2, 3, 3, 3, 4)[int(random_() * 6)]
        first = int(random_() * 60)
        users = [(chat * 20 + (first + 7 * k) % 60) % PLAYERS + 1 for k in range(count)]
        durak = -1 if random_() < 0.03 else int(random_() * count)
        ended += step
        yield FinishedGame(
            chat_id=-(chat + 1),
            game_id=None,
            rules=RULES,
            started_at=ended - timedelta(minutes=7),
            ended_at=ended,
            bouts=6 + int(random_() * 15),
            draw=durak < 0,
            durak=None if durak < 0 else ids[users[durak]],
            practice=random_() < 0.05,
            participants=[
                participant(
                    seat,
                    user,
                    "draw" if durak < 0 else "durak" if seat == durak else "won",
                    count if seat == durak else seat + 1,
                )
                for seat, user in enumerate(users)
            ],
        )


async def timed(
    db: Database, query: Callable[[Transaction], Awaitable[object]], runs: int
) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        async with db.transaction(readonly=True) as tx:
            await query(tx)
        times.append((time.perf_counter() - started) * 1000)
    return times


async def leaderboard_times(
    url: str, total: int, runs: int
) -> tuple[float, dict[str, list[float]]]:
    # One Database for the import and the queries: opening a database with unrated games
    # replays them all through the rating model first (the stats issue), minutes for a million.
    async with Database.connect(url) as db:
        started = time.perf_counter()
        async with db.transaction() as tx:
            # Unrated, for the same reason; the leaderboard reads the same index either way.
            await tx.results.record_many(results=synthetic_results(total, seed=1), rate=False)
        elapsed = time.perf_counter() - started
        chats = random.Random(2)
        players = random.Random(3)

        async def record(tx: Transaction) -> object:
            try:
                return await tx.results.player_record(player_id=str(players.randint(1, PLAYERS)))
            except NotFound:  # only with far fewer than a million games
                return None

        return elapsed, {
            "overall top 10": await timed(db, lambda tx: tx.results.leaderboard(), runs),
            "overall top 10, min 50 games": await timed(
                db, lambda tx: tx.results.leaderboard(min_games=50), runs
            ),
            "chat top 10": await timed(
                db,
                lambda tx: tx.results.leaderboard(chat_id=-chats.randint(1, CHATS)),
                runs,
            ),
            "player record (overall)": await timed(db, record, runs),
            "chats of a player": await timed(
                db, lambda tx: tx.results.chats_of(player_id=str(players.randint(1, PLAYERS))), runs
            ),
            "count()": await timed(db, lambda tx: tx.results.count(), 20),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per action measurement")
    parser.add_argument("--finished", type=int, default=1_000_000, help="finished games to build")
    parser.add_argument("--runs", type=int, default=200, help="runs per leaderboard query")
    parser.add_argument(
        "--database", help="a postgresql:// URL to measure instead of SQLite files (its own)"
    )
    args = parser.parse_args()
    if args.database:
        postgres(args)
        return

    with tempfile.TemporaryDirectory(prefix="durak-bench-") as tmp:
        print(f"SQLite file in {tmp} (WAL, synchronous=NORMAL)")
        print("Saved actions per second (load, apply, save in one transaction):")
        EngineClock.install()
        for executor in ("aiosqlite", "inline"):
            for games in (1, 100, 1000):
                url = f"sqlite:///{tmp}/actions-{executor}-{games}.sqlite3?executor={executor}"
                actions(executor, url, games, args.seconds)
        path = Path(tmp, "finished.sqlite3")
        queries(f"sqlite:///{path}", args)
        print(f"(file {path.stat().st_size / 2**20:,.0f} MiB)")


def actions(label: str, url: str, games: int, seconds: float, first_chat: int = 1) -> None:
    EngineClock.seconds = 0.0
    rate, done = asyncio.run(actions_per_second(url, games, seconds, first_chat))
    engine_us = EngineClock.seconds / done * 1e6
    print(
        f"  {label:9} executor, {games:5,} concurrent games: {rate:6,.0f} /s  "
        f"({1e6 / rate:4.0f} us each, of which Game.from_dict + to_dict {engine_us:4.0f} us)"
    )


def queries(url: str, args: argparse.Namespace) -> None:
    elapsed, times_of = asyncio.run(leaderboard_times(url, args.finished, args.runs))
    print(
        f"Recorded {args.finished:,} finished games in one transaction: {elapsed:.1f} s "
        f"({args.finished / elapsed:,.0f}/s)"
    )
    print(f"Query times over {args.finished:,} finished games (ms, one read transaction each):")
    for name, times in times_of.items():
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(
            f"  {name:30} median {statistics.median(times):6.2f}  p95 {p95:6.2f}  "
            f"max {times[-1]:6.2f}"
        )


def postgres(args: argparse.Namespace) -> None:
    url = parse_database_url(args.database)
    print(f"PostgreSQL at {url} (a pool of up to {url.pool_max} connections)")
    print("Saved actions per second (load, apply, save in one transaction):")
    EngineClock.install()
    first_chat = 1 + random.Random().randrange(10**9) * 10_000  # chats of this run only
    for games in (1, 100, 1000):
        actions("asyncpg", args.database, games, args.seconds, first_chat)
        first_chat += games
    queries(args.database, args)


if __name__ == "__main__":
    main()
