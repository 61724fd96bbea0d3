"""`hard` (and `medium`): search over deals that agree with what the player knows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.actions import Action
from engine.ai.base import decision_rng, new_seed, obvious, to_action, to_move
from engine.ai.easy import EasyPlayer
from engine.ai.knowledge import observe
from engine.ai.search import Budget, search

if TYPE_CHECKING:
    from engine.game import Game

HARD_BUDGET = Budget(seconds=0.4, iterations=400, solver_nodes=20_000)


class SearchPlayer:
    """Observes (`engine.ai.knowledge.observe`), then searches (`engine.ai.search.search`).

    With `budget.seconds=None` a decision is a function of the seed and of what the player
    may know; with a time limit it may also depend on the machine's speed.
    """

    def __init__(self, seed: int | None = None, budget: Budget = HARD_BUDGET, level: str = "hard"):
        self.seed = new_seed(seed)
        self.budget = budget
        self.level = level

    def choose(self, game: Game, player: str) -> Action:
        """The searched action for `player` (who is in `game.to_act`)."""
        know = observe(game, player)
        done = obvious(know.legal)
        if done is not None:
            return done
        legal = {m for m in map(to_move, know.legal) if m is not None}
        rng = decision_rng(self.seed, player, game.move_number)
        move = search(know, legal, rng, self.budget)
        action = to_action(move) if move is not None else None
        if action is None or action not in know.legal:
            return EasyPlayer(self.seed).choose(game, player)
        return action
