"""Small helpers for the rules tests (the rule ids are defined in docs/rules.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from engine import (
    Attack,
    Card,
    Defend,
    ErrorCode,
    Game,
    IllegalMove,
    Rules,
    ShowTrump,
    Suit,
    Transfer,
    parse_cards,
)

SUITS = (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES)
LOWEST_RANK = {24: 9, 32: 7, 36: 6, 52: 2}


def c(text: str) -> Card:
    """One card from its printed form, e.g. c("10♥")."""
    return Card.parse(text)


def cs(text: str) -> list[Card]:
    """Several cards, e.g. cs("6♠ 7♠ A♥")."""
    return parse_cards(text)


def att(card: str) -> Attack:
    return Attack(c(card))


def dfd(attack: str, card: str) -> Defend:
    return Defend(c(attack), c(card))


def tr(card: str) -> Transfer:
    return Transfer(c(card))


def show(card: str) -> ShowTrump:
    return ShowTrump(c(card))


def deck(deck_size: int = 36) -> list[Card]:
    """Every card of a deck of the given size (R1)."""
    low = LOWEST_RANK[deck_size]
    return [Card(rank, suit) for suit in SUITS for rank in range(low, 15)]


def rest_of_deck(used: Iterable[Card], deck_size: int = 36) -> list[Card]:
    """The cards of the deck not in `used`, in a fixed order."""
    taken = set(used)
    return [card for card in deck(deck_size) if card not in taken]


def position(
    hands: Mapping[str, str],
    trump: str,
    stock: str | Sequence[Card] = (),
    attacker: str = "A",
    rules: Rules | None = None,
    first_bout: bool = False,
    discard: str | Sequence[Card] = (),
) -> Game:
    """Game.from_position with cards as strings.

    Unlike from_position, first_bout defaults to False here, so the limit of R10 is 6
    unless a test asks for the first bout.
    """
    if isinstance(stock, str):
        stock = cs(stock)
    if isinstance(discard, str):
        discard = cs(discard)
    return Game.from_position(
        hands=dict(hands),
        trump=trump,
        stock=list(stock),
        attacker=attacker,
        rules=rules if rules is not None else Rules(),
        first_bout=first_bout,
        discard=list(discard),
    )


def hand(game: Game, player: str) -> set[Card]:
    return set(game.hand(player))


def table(game: Game) -> list[tuple[Card, Card | None]]:
    return [(a, d) for a, d in game.table]


def attacks(actions: Iterable[Any]) -> set[Card]:
    """The cards of the Attack actions among `actions`."""
    return {a.card for a in actions if isinstance(a, Attack)}


def play(game: Game, *moves: tuple[str, Any]) -> Game:
    """Apply (player, action) pairs in order; returns the game for chaining."""
    for player, action in moves:
        game.apply(player, action)
    return game


def assert_illegal(game: Game, player: str, action: Any, *codes: ErrorCode) -> IllegalMove:
    """The move raises IllegalMove (with one of `codes`, if given) and changes nothing."""
    before = game.to_dict()
    legal_before = game.legal_actions(player) if player in game.players else []
    with pytest.raises(IllegalMove) as info:
        game.apply(player, action)
    if codes:
        assert info.value.code in codes, f"{action}: got {info.value.code}, expected {codes}"
    assert isinstance(info.value, ValueError)
    assert game.to_dict() == before
    if player in game.players:
        assert action not in legal_before
    return info.value


def raises_value_error() -> Any:
    """pytest.raises(ValueError) where the spec fixes no message text."""
    return pytest.raises(ValueError)  # noqa: PT011


def cards_in_play(game: Game) -> int:
    """Cards in hands, on the table, in the stock and in the discard pile."""
    on_table = sum(1 + (d is not None) for _, d in game.table)
    in_hands = sum(len(game.hand(p)) for p in game.players)
    return in_hands + on_table + game.stock_size + game.discard_size
