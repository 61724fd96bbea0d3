"""What happened, as returned by `Game.apply`: values for rendering.

Every event holds only public information: cards that lie or lay on the table,
counts, and names. A card in a hand never appears in an event.

Events are plain slotted records, treated as read-only: they are built on every
move, and a frozen dataclass costs three times as much to build.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.cards import Card


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended (R17, R18)."""

    durak: str | None
    """The loser; `None` for a draw."""
    draw: bool
    resigned: str | None
    """The player who resigned (then also the durak), if the game ended that way."""
    out_order: tuple[tuple[str, ...], ...]
    """Groups of players who went out together, first out first."""
    bouts: int

    def places(self, players: Sequence[str]) -> dict[str, int]:
        """Each of `players`' place, 1 for the first out: players who went out together
        share one, as do those still holding cards when a resignation ended the game (R18);
        the durak comes last."""
        places: dict[str, int] = {}
        place = 1
        for group in self.out_order:
            for p in group:
                places[p] = place
            place += len(group)
        rest = [p for p in players if p not in places and p != self.durak]
        for p in rest:
            places[p] = place
        place += len(rest)
        if self.durak is not None:
            places[self.durak] = place
        return places

    def __reduce__(self) -> tuple[object, ...]:
        # As the fields, in order: the compiled engine's frozen classes take no state later.
        return (Outcome, (self.durak, self.draw, self.resigned, self.out_order, self.bouts))


@dataclass(slots=True)
class Event:
    """Base class of every event."""


@dataclass(slots=True)
class BoutStarted(Event):
    attacker: str
    defender: str


@dataclass(slots=True)
class Attacked(Event):
    player: str
    card: Card
    lead: bool = False
    """The bout's first card (R8); every further one is thrown in."""


@dataclass(slots=True)
class Defended(Event):
    player: str
    attack: Card
    card: Card


@dataclass(slots=True)
class Transferred(Event):
    player: str
    card: Card
    to: str
    shown: bool


@dataclass(slots=True)
class TakeDeclared(Event):
    player: str


@dataclass(slots=True)
class Passed(Event):
    player: str


@dataclass(slots=True)
class BeatenOff(Event):
    cards: tuple[Card, ...]


@dataclass(slots=True)
class PickedUp(Event):
    player: str
    cards: tuple[Card, ...]


@dataclass(slots=True)
class Drew(Event):
    player: str
    count: int


@dataclass(slots=True)
class PlayerOut(Event):
    player: str


@dataclass(slots=True)
class TrumpExchanged(Event):
    player: str
    card: Card
    """The low trump the player laid under the stock."""
    trump: Card
    """The face-up trump the player took."""


@dataclass(slots=True)
class Resigned(Event):
    player: str


@dataclass(slots=True)
class Redealt(Event):
    player: str


@dataclass(slots=True)
class GameOver(Event):
    outcome: Outcome
