"""Exact endgame search: once every card's place is known (two players, empty stock).

An AND/OR search over `Sim` moves with a transposition table: the viewer's nodes are
won if some move wins, the opponent's if every move does. "Won" means not being the
durak (a draw counts). The heuristic move is tried first, which finds wins quickly.
"""

from __future__ import annotations

import time

from engine.ai.heuristic import sim_move
from engine.ai.sim import Move, Sim

Key = tuple[object, ...]


class OutOfNodes(Exception):
    """The search visited more positions, or took longer, than it was allowed."""


def _key(s: Sim) -> Key:
    """Everything that decides how `s` goes on (the stock is empty)."""
    return (
        tuple(s.hands),
        s.attacker,
        s.defender,
        tuple(s.attacks),
        tuple(s.defences),
        s.took,
        s.passed,
        s.limit,
        s.shown,
        s.first_bout,
        tuple(s.active),
    )


class Solver:
    """Solves positions for one seat, visiting at most `max_nodes` positions in all and
    stopping at `deadline` (a `time.perf_counter` value), if given."""

    def __init__(self, me: int, max_nodes: int, deadline: float | None = None) -> None:
        self.me = me
        self.max_nodes = max_nodes
        self.deadline = deadline
        self.nodes = 0
        self.memo: dict[Key, bool] = {}

    def after(self, s: Sim, seat: int, move: Move) -> bool:
        """Whether `me` avoids losing once `seat` plays `move` in `s`."""
        child = s.copy()
        child.apply(seat, move)
        if child.over:
            return child.durak != self.me
        return self.wins(child)

    def wins(self, s: Sim) -> bool:
        """Whether `me` avoids losing from `s` against any defence."""
        key = _key(s)
        known = self.memo.get(key)
        if known is not None:
            return known
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise OutOfNodes
        deadline = self.deadline
        if deadline is not None and not self.nodes % 256 and time.perf_counter() > deadline:
            raise OutOfNodes
        seat = s.actor()
        mine = seat == self.me
        # A position met again below itself (transfers by showing a trump can go round in a
        # circle) counts as not avoiding the loss: pessimistic, and the search ends.
        self.memo[key] = False
        result = not mine
        for move in ordered(s, seat, s.moves()):
            if self.after(s, seat, move) == mine:
                result = mine
                break
        self.memo[key] = result
        return result


def ordered(s: Sim, seat: int, moves: list[Move]) -> list[Move]:
    """`moves` with the heuristic's choice first."""
    best = sim_move(s, seat)
    if best in moves:
        return [best, *(m for m in moves if m != best)]
    return moves


def winning_move(
    s: Sim, me: int, candidates: list[Move], max_nodes: int, deadline: float | None = None
) -> Move | None:
    """The first of `candidates` (`me` to move) with which `me` avoids losing whatever the
    opponent does; `None` when none does. Raises `OutOfNodes` when the search needs more
    than `max_nodes` positions or runs past `deadline`."""
    solver = Solver(me, max_nodes, deadline)
    return next((m for m in candidates if solver.after(s, me, m)), None)
