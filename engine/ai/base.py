"""What every computer player shares: the interface, move conversion, seeded randomness."""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from engine.actions import (
    Action,
    Attack,
    Defend,
    ExchangeTrump,
    Pass,
    Redeal,
    Resign,
    ShowTrump,
    Take,
    Transfer,
)
from engine.ai import sim
from engine.ai.sim import PASS_MOVE, TAKE_MOVE, Move
from engine.cards import CARD_BY_BIT

if TYPE_CHECKING:
    from engine.game import Game


class ComputerPlayer(Protocol):
    """Chooses an action for `player`, who must be in `game.to_act`, from what it may know."""

    level: str
    seed: int

    def choose(self, game: Game, player: str) -> Action: ...


def to_action(move: Move) -> Action:
    """The engine action for a `Sim` move."""
    kind, card, attack = move
    if kind == sim.TAKE:
        return Take()
    if kind == sim.ATTACK:
        return Attack(CARD_BY_BIT[card])
    if kind == sim.DEFEND:
        return Defend(CARD_BY_BIT[attack], CARD_BY_BIT[card])
    if kind == sim.TRANSFER:
        return Transfer(CARD_BY_BIT[card])
    if kind == sim.SHOW:
        return ShowTrump(CARD_BY_BIT[card])
    return Pass()


def to_move(action: Action) -> Move | None:
    """The `Sim` move for an engine action; `None` for what `Sim` leaves out."""
    if isinstance(action, Attack):
        return (sim.ATTACK, action.card.bit, 0)
    if isinstance(action, Defend):
        return (sim.DEFEND, action.card.bit, action.attack.bit)
    if isinstance(action, Transfer):
        return (sim.TRANSFER, action.card.bit, 0)
    if isinstance(action, ShowTrump):
        return (sim.SHOW, action.card.bit, 0)
    if isinstance(action, Take):
        return TAKE_MOVE
    if isinstance(action, Pass):
        return PASS_MOVE
    return None


def new_seed(seed: int | None) -> int:
    """`seed`, or a fresh random one."""
    return secrets.randbits(63) if seed is None else seed


def decision_rng(seed: int, player: str, move_number: int) -> random.Random:
    """The generator for one decision: a function of the seed and public facts only, so a
    decision does not depend on how many decisions came before."""
    return random.Random(f"durak-ai:{seed}:{player}:{move_number}")


def obvious(legal: Sequence[Action]) -> Action | None:
    """An action that needs no thought: the trump exchange (R19: a better trump for the
    lowest), the flush redeal (R6: the hand has no trump), or the only action but resigning."""
    for action in legal:
        if isinstance(action, ExchangeTrump | Redeal):
            return action
    playable = [a for a in legal if not isinstance(a, Resign)]
    if len(playable) == 1:
        return playable[0]
    if not playable:
        if not legal:
            raise ValueError("no legal action")
        return legal[0]
    return None
