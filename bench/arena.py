"""Arena: computer players against each other, with duplicate deals.

Two-player matches (classic, 36 cards): each deal is played twice with the seats
swapped, so both players hold both hands and the luck of the deal cancels. Prints the
first player's non-loss rate (wins and draws) with a 95% Wilson interval, and each
level's decision-time percentiles. The four-player table puts `hard` against three
`easy` players, each deal four times with `hard` in every seat, and reports how often
`hard` is the durak (chance: 25%).

    python bench/arena.py                          # every match, 1000 games each (long)
    python bench/arena.py --quick                  # a smoke run: 40 games, small budget
    python bench/arena.py --match hard:easy --games 200 --hard-budget 0.4 --workers 2
    python bench/arena.py --match table --games 100

Levels: random, easy, medium, hard. `--workers` runs deals in parallel processes (the
decision times are then measured on a shared machine).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

# Files in bench/ are named like the packages they measure: keep this folder off the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

from engine import Action, Game, RandomPlayer, Rules  # noqa: E402
from engine.ai import HARD_BUDGET, Budget, make_player  # noqa: E402

MATCHES = ("easy:random", "hard:random", "hard:easy", "table")


@dataclass
class Tally:
    """Results of one match, from the first-named player's side."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    times: dict[str, list[float]] = field(default_factory=dict)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, other: Tally) -> None:
        self.wins += other.wins
        self.draws += other.draws
        self.losses += other.losses
        for level, ts in other.times.items():
            self.times.setdefault(level, []).extend(ts)


@dataclass(frozen=True)
class Setup:
    """What one worker needs to play a deal."""

    levels: tuple[str, ...]  # the levels at the table; the first is the one measured
    hard_seconds: float | None
    hard_iterations: int
    first_deal: int = 0  # deals are numbered; a later run can go on where one stopped


def make(level: str, seed: int, setup: Setup) -> object:
    """A player of `level`; `hard` with the budget of `setup`."""
    if level == "random":
        return RandomPlayer(seed)
    budget = None
    if level == "hard":
        budget = Budget(seconds=setup.hard_seconds, iterations=setup.hard_iterations)
    return make_player(level, seed, budget)


def play(game: Game, seats: dict[str, tuple[str, object]], times: dict[str, list[float]]) -> None:
    """Play to the end. Among several players waiting, the first clockwise from the attacker
    moves (the chat's throw-ins in one fixed order)."""
    order = game.players
    while not game.is_over:
        to_act = game.to_act
        start = order.index(game.attacker)
        player = next(
            order[(start + i) % len(order)]
            for i in range(len(order))
            if order[(start + i) % len(order)] in to_act
        )
        level, chooser = seats[player]
        t0 = time.perf_counter()
        action: Action = chooser.choose(game, player)  # type: ignore[attr-defined]
        times.setdefault(level, []).append(time.perf_counter() - t0)
        game.apply(player, action)


def play_deal(setup: Setup, deal: int) -> Tally:
    """Every seat rotation of one deal; the first level's results."""
    n = len(setup.levels)
    tally = Tally()
    for shift in range(n):
        levels = setup.levels[-shift:] + setup.levels[:-shift] if shift else setup.levels
        names = [f"s{i}" for i in range(n)]
        seats = {
            name: (lvl, make(lvl, 1000 * deal + 10 * shift + i, setup))
            for i, (name, lvl) in enumerate(zip(names, levels, strict=True))
        }
        game = Game.new(names, rules=Rules.preset("classic"), seed=deal)
        play(game, seats, tally.times)
        me = names[shift]  # where the first level sits in this rotation
        outcome = game.outcome
        assert outcome is not None
        if outcome.durak == me:
            tally.losses += 1
        elif outcome.draw:
            tally.draws += 1
        else:
            tally.wins += 1
    return tally


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval for k successes in n trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def percentiles(ts: Sequence[float]) -> str:
    """p50/p95/p99 of decision times, in milliseconds."""
    if not ts:
        return "-"
    s = sorted(ts)

    def at(q: float) -> float:
        return s[min(len(s) - 1, int(q * len(s)))] * 1000

    return ", ".join(f"p{q} {at(q / 100):.3g} ms" for q in (50, 95, 99)) + f" (n={len(s)})"


def deals(setup: Setup, count: int, workers: int) -> Iterator[Tally]:
    """The results of `count` deals from `setup.first_deal` on, in order, in `workers`
    processes."""
    numbers = range(setup.first_deal, setup.first_deal + count)
    if workers <= 1:
        for d in numbers:
            yield play_deal(setup, d)
        return
    with ProcessPoolExecutor(workers) as pool:
        yield from pool.map(play_deal, [setup] * count, numbers)


def run(match: str, games: int, setup_base: Setup, workers: int) -> Tally:
    """Play one match of about `games` games and print its figures."""
    levels = ("hard", "easy", "easy", "easy") if match == "table" else tuple(match.split(":"))
    setup = Setup(
        levels, setup_base.hard_seconds, setup_base.hard_iterations, setup_base.first_deal
    )
    n = len(levels)
    count = max(1, games // n)
    total = Tally()
    start = time.perf_counter()
    for i, tally in enumerate(deals(setup, count, workers), 1):
        total.add(tally)
        if i % max(1, count // 10) == 0 or i == count:
            print(
                f"  {match}: {total.games}/{count * n} games, {time.perf_counter() - start:.0f} s"
            )
    report(match, total)
    return total


def report(match: str, t: Tally) -> None:
    """Print the figures of one match."""
    if match == "table":
        lo, hi = wilson(t.losses, t.games)
        print(
            f"table hard vs 3 easy: {t.games} games, hard is the durak in "
            f"{t.losses / t.games:.1%} [95% CI {lo:.1%}, {hi:.1%}] (chance 25%)"
        )
    else:
        first, second = match.split(":")
        ok = t.wins + t.draws
        lo, hi = wilson(ok, t.games)
        print(
            f"{first} vs {second}: {t.games} games, {first} non-loss {ok / t.games:.1%} "
            f"[95% CI {lo:.1%}, {hi:.1%}] (wins {t.wins}, draws {t.draws}, losses {t.losses})"
        )
    for level, ts in sorted(t.times.items()):
        print(f"  decision time {level}: {percentiles(ts)}")


def main() -> None:
    """Parse the arguments and run the matches."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--match", action="append", choices=(*MATCHES, "medium:easy"))
    parser.add_argument("--games", type=int, default=1000, help="games per match")
    parser.add_argument("--hard-budget", type=float, default=HARD_BUDGET.seconds)
    parser.add_argument("--hard-iterations", type=int, default=HARD_BUDGET.iterations)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--first-deal", type=int, default=0, help="number of the first deal")
    parser.add_argument("--quick", action="store_true", help="40 games, hard budget 0.1 s")
    args = parser.parse_args()
    if args.quick:
        args.games, args.hard_budget = 40, 0.1
    setup = Setup((), args.hard_budget, args.hard_iterations, args.first_deal)
    print(f"hard budget: {args.hard_budget} s, at most {args.hard_iterations} rounds per decision")
    for match in args.match or MATCHES:
        run(match, args.games, setup, args.workers)


if __name__ == "__main__":
    main()
