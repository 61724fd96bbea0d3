"""Computer players that choose among `legal_actions`: `RandomPlayer` here, the levels of
`engine.ai` (`make_player("easy" | "medium" | "hard", seed)`) re-exported."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from engine.actions import Action, ExchangeTrump, Redeal, Resign
from engine.ai import LEVELS, ComputerPlayer, make_player

__all__ = ["LEVELS", "ComputerPlayer", "RandomPlayer", "make_player"]

if TYPE_CHECKING:
    from engine.game import Game

_RARELY: frozenset[type[Action]] = frozenset((Resign, ExchangeTrump, Redeal))


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
        while k and type(actions[k - 1]) in _RARELY:
            k -= 1
        if not k:
            k = len(actions)
        return actions[int(self.rng.random() * k)]
