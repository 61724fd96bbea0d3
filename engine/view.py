"""What one player may see of a game, and what everybody may see.

Rendering reads only a `GameView`: a player's view holds that player's hand and
nobody else's; the public view (`viewer is None`) holds no hand at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from engine.actions import Action
from engine.cards import Card, Suit
from engine.events import Outcome


@dataclass(frozen=True, slots=True)
class GameView:
    viewer: str | None
    hand: tuple[Card, ...] | None
    """The viewer's own cards (by suit and rank, trumps last); `None` in the public view."""
    hand_counts: Mapping[str, int]
    table: tuple[tuple[Card, Card | None], ...]
    trump_card: Card | None
    trump_suit: Suit
    stock_size: int
    discard_size: int
    attacker: str
    defender: str
    bout_opener: str
    defender_took: bool
    passed: frozenset[str]
    limit: int
    to_act: frozenset[str]
    players: tuple[str, ...]
    active_players: tuple[str, ...]
    out_order: tuple[tuple[str, ...], ...]
    is_over: bool
    outcome: Outcome | None
    move_number: int
    first_bout: bool
    legal: tuple[Action, ...]
    """The viewer's legal actions; empty in the public view."""
    throw_ins: tuple[str, ...] = ()
    """Who R9 lets add cards to this bout (the attacker included): public knowledge."""

    @property
    def open_attacks(self) -> tuple[Card, ...]:
        return tuple(a for a, d in self.table if d is None)

    @property
    def closing(self) -> bool:
        """As `Game.closing`: the bout waits only for throw-ins (R9, R12, R13)."""
        return (
            not self.is_over
            and bool(self.table)
            and (self.defender_took or not self.open_attacks)
            and bool(self.to_act)
        )

    def __reduce__(self) -> tuple[object, ...]:
        # As the fields, in order: the compiled engine's frozen classes take no state later.
        return (GameView, tuple(getattr(self, f.name) for f in fields(self)))
