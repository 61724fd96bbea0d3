"""Cards and decks (R1, R2).

A `Card` is an interned value: there is exactly one object per rank and suit, so
cards compare by identity (fast), hash to their index (deterministic set order),
and survive `copy`, `pickle` and JSON as themselves.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from enum import StrEnum
from typing import Any, Final, final


class Suit(StrEnum):
    """The four suits. Suits have no order among themselves for play (R1)."""

    CLUBS = "♣"
    DIAMONDS = "♦"
    HEARTS = "♥"
    SPADES = "♠"


SUITS: Final = (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES)
_SUIT_INDEX: Final = {suit: i for i, suit in enumerate(SUITS)}

RANK_NAMES: Final = {11: "J", 12: "Q", 13: "K", 14: "A"}
_RANK_BY_NAME: Final = {
    **{str(r): r for r in range(2, 11)},
    "T": 10,
    "J": 11,
    "Q": 12,
    "K": 13,
    "A": 14,
}
_SUIT_BY_NAME: Final = {
    "♣": Suit.CLUBS,
    "♧": Suit.CLUBS,
    "C": Suit.CLUBS,
    "♦": Suit.DIAMONDS,
    "♢": Suit.DIAMONDS,
    "D": Suit.DIAMONDS,
    "♥": Suit.HEARTS,
    "♡": Suit.HEARTS,
    "H": Suit.HEARTS,
    "♠": Suit.SPADES,
    "♤": Suit.SPADES,
    "S": Suit.SPADES,
}


def parse_suit(text: object) -> Suit:
    """`"♥"`, `"h"`, `"H"` -> `Suit.HEARTS`. Raises `ValueError` naming the input.

    (Parsers take any object, so that bad input is a `ValueError` in the pure and the
    compiled engine alike; elsewhere the compiled engine refuses a wrong type with
    `TypeError`.)"""
    if not isinstance(text, str):
        raise ValueError(f"not a suit: {text!r}")
    suit = _SUIT_BY_NAME.get(text.strip().upper().replace("\ufe0f", ""))
    if suit is None:
        raise ValueError(f"not a suit: {text!r}")
    return suit


@final
class Card:
    """A playing card. `Card(10, "♥")`, `Card.parse("10H")`, `str(card) == "10♥"`.

    Ordered by suit, then by rank (so a sorted hand is grouped by suit and ranked
    within each suit). Whether a card *beats* another is a rules question:
    see `beats`.
    """

    __slots__ = ("_text", "bit", "index", "rank", "suit")

    rank: int
    suit: Suit
    index: int
    bit: int
    """`1 << index`: the card as a one-card set (see `cards_of`)."""
    _text: str  # str(card), computed once

    def __new__(cls, rank: int, suit: Suit | str) -> Card:
        try:
            key = (rank, suit if isinstance(suit, Suit) else parse_suit(suit))
            card = _INTERNED.get(key)
        except (TypeError, ValueError, AttributeError):  # unhashable rank, not a suit
            raise ValueError(f"not a card: rank {rank!r}, suit {suit!r}") from None
        if card is not None:
            return card
        if ALL_CARDS or type(rank) is not int or not 2 <= rank <= 14:
            raise ValueError(f"not a card: rank {rank!r}, suit {suit!r}")
        # Only while this module builds ALL_CARDS: the one place a card is made. (Made here
        # and not in a helper so that the engine compiles with mypyc, see compile_engine.py.)
        card = object.__new__(cls)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "suit", key[1])
        index = _SUIT_INDEX[key[1]] * 13 + rank - 2
        object.__setattr__(card, "index", index)
        object.__setattr__(card, "bit", 1 << index)
        object.__setattr__(card, "_text", f"{RANK_NAMES.get(rank, str(rank))}{key[1].value}")
        _INTERNED[key] = card
        return card

    @classmethod
    def parse(cls, text: object) -> Card:
        """Parse `"10♥"`, `"10H"`, `"TH"`, `"qs"`, `"A♠"`. Raises `ValueError` naming the input."""
        if not isinstance(text, str):
            raise ValueError(f"not a card: {text!r}")
        card = _CARD_BY_TEXT.get(text)
        if card is not None:  # the common case: text written by `str(card)`
            return card
        s = text.strip().replace("\ufe0f", "")
        if len(s) < 2:
            raise ValueError(f"not a card: {text!r}")
        rank = _RANK_BY_NAME.get(s[:-1].upper())
        suit = _SUIT_BY_NAME.get(s[-1].upper())
        if rank is None or suit is None:
            raise ValueError(f"not a card: {text!r}")
        return _INTERNED[(rank, suit)]

    @staticmethod
    def from_index(index: int) -> Card:
        """The card with `card.index == index` (0..51)."""
        if not 0 <= index < 52:
            raise ValueError(f"not a card index: {index!r}")
        return ALL_CARDS[index]

    @property
    def rank_name(self) -> str:
        return RANK_NAMES.get(self.rank, str(self.rank))

    def beats(self, other: Card, trump: Suit) -> bool:
        """R2: same suit and higher, or a trump on a non-trump. No duty to follow suit."""
        if self.suit is other.suit:
            return self.rank > other.rank
        return self.suit is trump

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __hash__(self) -> int:
        return self.index

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __le__(self, other: Card) -> bool:
        return self.index <= other.index

    def __gt__(self, other: Card) -> bool:
        return self.index > other.index

    def __ge__(self, other: Card) -> bool:
        return self.index >= other.index

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Card, (self.rank, self.suit))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self


_INTERNED: Final[dict[tuple[int, Suit], Card]] = {}
ALL_CARDS: tuple[Card, ...] = ()  # empty while the cards are made: see Card.__new__
ALL_CARDS = tuple(Card(rank, suit) for suit in SUITS for rank in range(2, 15))
_CARD_BY_TEXT: Final[dict[str, Card]] = {str(c): c for c in ALL_CARDS}

DECK_LOWEST_RANK: Final = {24: 9, 32: 7, 36: 6, 52: 2}

# Sets of cards as int bitmasks over `card.index` (bit i is `ALL_CARDS[i]`): membership,
# union and "cards of these ranks" become single integer operations.
CARD_BY_BIT: Final[dict[int, Card]] = {c.bit: c for c in ALL_CARDS}
SUIT_BITS: Final[dict[Suit, int]] = {s: sum(c.bit for c in ALL_CARDS if c.suit is s) for s in SUITS}
RANK_BITS: Final[tuple[int, ...]] = tuple(
    sum(c.bit for c in ALL_CARDS if c.rank == r) for r in range(15)
)
"""`RANK_BITS[r]`: the four cards of rank `r`."""


def bits_of(cards: Iterable[Card]) -> int:
    """The bitmask of `cards`."""
    bits = 0
    for c in cards:
        bits |= c.bit
    return bits


def cards_of(bits: int) -> list[Card]:
    """The cards of a bitmask, in index order (by suit, then rank)."""
    out = []
    while bits:
        low = bits & -bits
        out.append(CARD_BY_BIT[low])
        bits ^= low
    return out


def deck(size: int = 36) -> list[Card]:
    """A fresh deck of `size` cards (R1), in index order."""
    try:
        return list(_DECKS[size])
    except (KeyError, TypeError):
        raise ValueError(f"no deck of {size} cards (24, 32, 36 or 52)") from None


_DECKS: Final = {
    size: tuple(c for c in ALL_CARDS if c.rank >= low) for size, low in DECK_LOWEST_RANK.items()
}


def shuffled_deck(size: int, rng: random.Random) -> list[Card]:
    cards = deck(size)
    rng.shuffle(cards)
    return cards


def parse_cards(text: str | Iterable[Card | str]) -> list[Card]:
    """`parse_cards("6♠ 7♠ A♥")` or a list of cards/strings -> list of `Card`."""
    items: Iterable[Card | str] = text.replace(",", " ").split() if isinstance(text, str) else text
    return [c if isinstance(c, Card) else Card.parse(c) for c in items]


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)
