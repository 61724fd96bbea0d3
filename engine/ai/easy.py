"""`easy`: rules of thumb on the player's own view (see `engine.ai.heuristic`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.actions import Action, Attack, ShowTrump, Transfer
from engine.ai import heuristic
from engine.ai.base import new_seed, obvious, to_action
from engine.ai.sim import RANK_OF_BIT, Context, Move, context
from engine.cards import bits_of
from engine.view import GameView

if TYPE_CHECKING:
    from engine.game import Game


class EasyPlayer:
    """Cheapest attack, cheapest defence, keeps trumps, takes when covering costs too much.

    Reads only `game.view(player)`; deterministic (it draws no random numbers at all).
    """

    level = "easy"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = new_seed(seed)

    def choose(self, game: Game, player: str) -> Action:
        """The heuristic action for `player` (who is in `game.to_act`)."""
        view = game.view(player)
        done = obvious(view.legal)
        if done is not None:
            return done
        action = to_action(self.decide(view, context(game.rules, view.trump_suit)))
        if action in view.legal:
            return action
        return _fallback(view)

    @staticmethod
    def decide(view: GameView, ctx: Context) -> Move:
        """The heuristic move for the viewer."""
        hand = bits_of(view.hand or ())
        attacks = [a.bit for a, _ in view.table]
        defences = [d.bit if d else 0 for _, d in view.table]
        if view.viewer == view.defender and view.open_attacks and not view.defender_took:
            transfers = bits_of(a.card for a in view.legal if isinstance(a, Transfer))
            shows = bits_of(a.card for a in view.legal if isinstance(a, ShowTrump))
            return heuristic.defend(hand, attacks, defences, view.stock_size, transfers, shows, ctx)
        opening = not view.table
        ranks = _rank_bits(view)
        return heuristic.attack(hand, opening, ranks, view.stock_size, view.defender_took, ctx)


def _rank_bits(view: GameView) -> int:
    """Every card of a rank on the table (R8)."""
    ranks = 0
    for a, d in view.table:
        ranks |= RANK_OF_BIT[a.bit]
        if d is not None:
            ranks |= RANK_OF_BIT[d.bit]
    return ranks


def _fallback(view: GameView) -> Action:
    """When the heuristic's move is not legal (an attacker asked while the defender is still
    to move): the cheapest legal attack card, else the first legal action."""
    attacks = [a for a in view.legal if isinstance(a, Attack)]
    if attacks:
        return min(attacks, key=lambda a: (a.card.suit is view.trump_suit, a.card.rank))
    return view.legal[0]
