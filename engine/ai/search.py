"""Determinized Monte Carlo search over deals that agree with what the player knows.

Each round draws one deal from `Knowledge.sample` and plays every remaining candidate
move on it, then plays the game out with the heuristic policy (`sim_move`, with a
little noise) and scores 1 when the player is not the durak. All candidates share the
round's deal and random stream (common random numbers), so their differences are
measured on the same cards; every `prune_every` rounds the candidates clearly behind the
best are dropped. With every card's place known and two players left, an exact endgame
search (`engine.ai.solver`) decides instead when it fits in its node budget.

The search stops after `iterations` rounds or `seconds`, whichever comes first; with
`seconds=None` it is a pure function of the knowledge and the random generator.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from engine.ai.heuristic import sim_move
from engine.ai.knowledge import Knowledge
from engine.ai.sim import Move, Sim
from engine.ai.solver import OutOfNodes, ordered, winning_move


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a search may spend."""

    seconds: float | None = 0.4
    """Wall-clock limit per decision; `None`: rounds only (deterministic)."""
    iterations: int = 400
    """Rounds (deals) at most."""
    solver_nodes: int = 20_000
    """Positions the exact endgame search may visit."""
    noise: float = 0.1
    """Chance that a rollout move is random instead of the heuristic's."""
    prune_every: int = 8
    """Rounds between prunings of candidates that trail."""


def rollout(sim: Sim, me: int, rng: random.Random, noise: float) -> float:
    """Play `sim` to the end; 1.0 when `me` is not the durak."""
    while not sim.over:
        seat = sim.actor()
        if noise and rng.random() < noise:
            moves = sim.moves()
            move = moves[int(rng.random() * len(moves))]
        else:
            move = sim_move(sim, seat)
        sim.apply(seat, move)
    return 0.0 if sim.durak == me else 1.0


def candidates(know: Knowledge, sim: Sim, legal: set[Move]) -> list[Move]:
    """The player's moves worth comparing, the heuristic's first (covers of the first
    unbeaten card only: the covering order changes nothing else)."""
    moves = [m for m in sim.moves(know.me) if m in legal]
    return ordered(sim, know.me, moves) if moves else []


def search(know: Knowledge, legal: set[Move], rng: random.Random, budget: Budget) -> Move | None:
    """The best move found for `know.me`; `None` when no candidate exists."""
    start = time.perf_counter()
    ctx = know.context()
    root = know.sample(rng, ctx)
    moves = candidates(know, root, legal)
    if len(moves) <= 1:
        return moves[0] if moves else None
    if know.perfect() and len(know.active) == 2:
        deadline = None if budget.seconds is None else start + budget.seconds / 2
        try:
            win = winning_move(root, know.me, moves, budget.solver_nodes, deadline)
        except OutOfNodes:
            win = None
        if win is not None:
            return win
    return sample_search(know, moves, rng, budget, start)


def sample_search(
    know: Knowledge, moves: list[Move], rng: random.Random, budget: Budget, start: float
) -> Move:
    """Compare `moves` over sampled deals with rollouts (see the module docstring); the time
    limit counts from `start`."""
    deadline = None if budget.seconds is None else start + budget.seconds
    ctx = know.context()
    alive = list(range(len(moves)))
    score = [0.0] * len(moves)
    rounds = 0
    while rounds < budget.iterations and len(alive) > 1:
        if deadline is not None and time.perf_counter() > deadline:
            break
        deal = know.sample(rng, ctx)
        seed = rng.getrandbits(32)
        for i in alive:
            sim = deal.copy()
            sim.apply(know.me, moves[i])
            score[i] += rollout(sim, know.me, random.Random(seed), budget.noise)
        rounds += 1
        if rounds % budget.prune_every == 0:
            alive = prune(alive, score, rounds)
    return moves[max(alive, key=lambda i: (score[i], -i))]


def prune(alive: list[int], score: list[float], rounds: int) -> list[int]:
    """Drop candidates more than about two standard errors behind the best."""
    best = max(score[i] for i in alive)
    margin = 2.0 * math.sqrt(rounds) * 0.5 + 1.0
    return [i for i in alive if score[i] >= best - margin]
