"""What a player can do: small frozen values that print and parse.

`str(Defend(Card.parse("7♠"), Card.parse("9♠"))) == "defend 7♠ 9♠"` and
`parse_action("defend 7♠ 9♠")` gives the action back.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from engine.cards import Card


@dataclass(frozen=True, slots=True)
class Action:
    """Base class of every action."""

    def __reduce__(self) -> tuple[object, ...]:
        # Pickle and copy as text: the same in the compiled engine, whose frozen classes
        # take no state after they are made.
        return (parse_action, (str(self),))

    @staticmethod
    def parse(text: object) -> Action:
        return parse_action(text)


@dataclass(frozen=True, slots=True)
class Attack(Action):
    """Play `card` onto the table: the opening card of a bout or a throw-in (R8, R9)."""

    card: Card

    def __str__(self) -> str:
        return f"attack {self.card}"


@dataclass(frozen=True, slots=True)
class Defend(Action):
    """Cover the unbeaten attack card `attack` with `card` (R11)."""

    attack: Card
    card: Card

    def __str__(self) -> str:
        return f"defend {self.attack} {self.card}"


@dataclass(frozen=True, slots=True)
class Transfer(Action):
    """Pass the bout on by adding a card of the attacked rank (R14)."""

    card: Card

    def __str__(self) -> str:
        return f"transfer {self.card}"


@dataclass(frozen=True, slots=True)
class ShowTrump(Action):
    """Pass the bout on by showing, not playing, the trump of the attacked rank (R14)."""

    card: Card

    def __str__(self) -> str:
        return f"show {self.card}"


@dataclass(frozen=True, slots=True)
class Take(Action):
    """The defender gives up the bout and will pick up the table (R13)."""

    def __str__(self) -> str:
        return "take"


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """An attacker adds nothing more until a new card is played (R9, R12)."""

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Resign(Action):
    """Give up: the player is the durak and the game ends (R18)."""

    def __str__(self) -> str:
        return "resign"


@dataclass(frozen=True, slots=True)
class ExchangeTrump(Action):
    """Swap the lowest trump of the deck for the face-up trump (R19)."""

    def __str__(self) -> str:
        return "exchange"


@dataclass(frozen=True, slots=True)
class Redeal(Action):
    """Ask for a new deal with a flush of five or more cards and no trump (R6)."""

    def __str__(self) -> str:
        return "redeal"


TAKE = Take()
PASS = Pass()
RESIGN = Resign()
EXCHANGE_TRUMP = ExchangeTrump()
REDEAL = Redeal()

_SIMPLE: dict[str, Action] = {str(a): a for a in (TAKE, PASS, RESIGN, EXCHANGE_TRUMP, REDEAL)}
_ONE_CARD: dict[str, type[Attack] | type[Transfer] | type[ShowTrump]] = {
    "attack": Attack,
    "transfer": Transfer,
    "show": ShowTrump,
}


_PARSED: dict[str, Action] = {}
"""Actions by their text in `str(action)` form: a saved game's history is the same few
hundred strings over and over. Only that form is kept, so at most a few thousand entries."""
_PARSED_MAX = 8192


def parse_action(text: object) -> Action:
    """Inverse of `str(action)`. Raises `ValueError` naming the input when malformed."""
    if isinstance(text, str):
        cached = _PARSED.get(text)
        if cached is not None:
            return cached
    action = _parse_action(text)
    if len(_PARSED) < _PARSED_MAX and str(action) == text:
        _PARSED[text] = action
    return action


def check_actions(texts: Set[str]) -> bool:
    """Raise `ValueError` unless every text parses as an action; True when every one is in
    `str(action)` form already (cheap for texts seen before)."""
    if _PARSED.keys() >= texts:
        return True
    canonical = True
    for text in texts:
        if str(parse_action(text)) != text:
            canonical = False
    return canonical


def _parse_action(text: object) -> Action:
    words = text.split() if isinstance(text, str) else []
    if not words:
        raise ValueError(f"not an action: {text!r}")
    verb, args = words[0].lower(), words[1:]
    try:
        if verb in _SIMPLE and not args:
            return _SIMPLE[verb]
        if verb in _ONE_CARD and len(args) == 1:
            return _ONE_CARD[verb](Card.parse(args[0]))
        if verb == "defend" and len(args) == 2:
            return Defend(Card.parse(args[0]), Card.parse(args[1]))
    except ValueError:
        pass
    raise ValueError(f"not an action: {text!r}")
