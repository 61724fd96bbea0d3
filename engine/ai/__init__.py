"""Computer players: `make_player(level, seed).choose(game, player) -> Action`.

Levels (`LEVELS`):
- `easy`: rules of thumb on the player's own view (`engine.ai.easy`).
- `medium`: a small search (`engine.ai.hard.SearchPlayer` with `MEDIUM_BUDGET`).
- `hard`: a determinized Monte Carlo search with an exact endgame (`HARD_BUDGET`).

Every level reads the game only through `engine.ai.knowledge.observe` (the own view, the
public history and discard) or, for `easy`, `game.view(player)`.
"""

from __future__ import annotations

from typing import Final

from engine.ai.base import ComputerPlayer
from engine.ai.easy import EasyPlayer
from engine.ai.hard import HARD_BUDGET, SearchPlayer
from engine.ai.knowledge import Knowledge, observe
from engine.ai.search import Budget

MEDIUM_BUDGET: Final = Budget(seconds=0.05, iterations=24, solver_nodes=2_000)

LEVELS: Final = ("easy", "medium", "hard")


def make_player(
    level: str, seed: int | None = None, budget: Budget | None = None
) -> ComputerPlayer:
    """A computer player of `level` ("easy", "medium" or "hard"), seeded.

    `budget` overrides the search budget of `medium` and `hard` (tests pass
    `Budget(seconds=None, iterations=...)` for decisions that depend on the seed alone).
    """
    if level == "easy":
        return EasyPlayer(seed)
    if level == "medium":
        return SearchPlayer(seed, budget or MEDIUM_BUDGET, level="medium")
    if level == "hard":
        return SearchPlayer(seed, budget or HARD_BUDGET, level="hard")
    raise ValueError(f"unknown level {level!r}: choose one of {', '.join(LEVELS)}")


__all__ = [
    "HARD_BUDGET",
    "LEVELS",
    "MEDIUM_BUDGET",
    "Budget",
    "ComputerPlayer",
    "EasyPlayer",
    "Knowledge",
    "SearchPlayer",
    "make_player",
    "observe",
]
