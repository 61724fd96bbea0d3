"""Engine benchmark: random complete games through `legal_actions` + `apply`.

Prints which engine build it measured, games per second for 2 and 4 players (36 cards,
classic) and the mean cost of one `legal_actions` call. Run:
`python bench/engine.py [--seconds S]` for the pure-Python engine, and with
`PYTHONSAFEPATH=1 PYTHONPATH=build/engine` for the compiled one (`make bench` runs both).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

# This file is named like the package it measures: keep its folder off the import path; the
# repository root goes last (for `tools`: a compiled engine on PYTHONPATH comes first).
_ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _ROOT / "bench"]
sys.path.append(str(_ROOT))

import engine  # noqa: E402
from engine import COMPILED, Game, RandomPlayer, Rules  # noqa: E402
from tools.compile_engine import is_current  # noqa: E402


def play_random_game(players: list[str], rules: Rules, seed: int) -> int:
    """Play one game to the end with seeded random legal actions; return the actions applied."""
    game = Game.new(players, rules=rules, seed=seed)
    chooser = RandomPlayer(seed)
    rng = random.Random(seed)
    steps = 0
    while not game.is_over:
        to_act = game.to_act
        player = next(iter(to_act)) if len(to_act) == 1 else rng.choice(sorted(to_act))
        game.apply(player, chooser.choose(game, player))
        steps += 1
    return steps


def games_per_second(n_players: int, seconds: float) -> tuple[float, float]:
    players = [f"p{i}" for i in range(n_players)]
    rules = Rules.preset("classic")
    games = steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        steps += play_random_game(players, rules, seed=games)
        games += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, steps / games


def legal_actions_cost(samples: int = 20_000) -> float:
    """Mean microseconds for one `legal_actions` call over positions of random games.

    (`legal_actions` keeps no cache: every call computes.)"""
    positions: list[tuple[Game, str]] = []
    seed = 0
    while len(positions) < 2_000:
        game = Game.new(["a", "b", "c", "d"], seed=seed)
        chooser = RandomPlayer(seed)
        while not game.is_over and len(positions) < 2_000:
            player = sorted(game.to_act)[0]
            positions.append((Game.from_dict(game.to_dict()), player))
            game.apply(player, chooser.choose(game, player))
        seed += 1
    start = time.perf_counter()
    calls = 0
    while calls < samples:
        for game, player in positions:
            game.legal_actions(player)
        calls += len(positions)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    args = parser.parse_args()
    if COMPILED:
        build = Path(engine.__file__).resolve().parent.parent
        if not is_current(build):
            raise SystemExit(f"{build} was built from other sources than engine/: `make engine`")
    print(f"engine: {'compiled (mypyc)' if COMPILED else 'pure Python'}")
    for n in (2, 4):
        rate, steps = games_per_second(n, args.seconds)
        print(f"{n} players, classic 36 cards: {rate:8.0f} games/s  ({steps:.0f} actions/game)")
    print(f"legal_actions: {legal_actions_cost():.2f} µs per call (4 players, uncached)")


if __name__ == "__main__":
    main()
