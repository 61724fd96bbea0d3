"""Computer players that choose among `legal_actions`. Stronger ones come later."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from engine.actions import Action, ExchangeTrump, Redeal, Resign

if TYPE_CHECKING:
    from engine.game import Game

_RARELY = (Resign, ExchangeTrump, Redeal)


class RandomPlayer:
    """Picks uniformly among the legal actions, seeded; never resigns while it can play."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: Game, player: str) -> Action:
        actions = game.legal_actions(player)
        if not actions:
            raise ValueError(f"{player!r} has no legal action")
        # Resign comes last, after the rare extras: choose among what precedes them.
        k = len(actions)
        while k and isinstance(actions[k - 1], _RARELY):
            k -= 1
        if not k:
            k = len(actions)
        return actions[int(self.rng.random() * k)]
