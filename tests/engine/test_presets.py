"""Presets and Rules options (see the Presets table of docs/rules.md)."""

from __future__ import annotations

import pytest

from engine import Game, Rules, Transfer
from tests.engine.conftest import att, attacks, c, dfd, position, raises_value_error, tr


def test_presets_classic_is_the_default() -> None:
    """Presets: classic = 36 cards, all, first bout 5, no transfer, no exchange, redeal."""
    classic = Rules.preset("classic")
    assert classic == Rules()
    assert classic.deck_size == 36
    assert classic.hand_size == 6
    assert classic.throw_in == "all"
    assert classic.first_bout_limit == 5
    assert classic.transfer is False
    assert classic.transfer_by_showing_trump is False
    assert classic.trump_exchange is False
    assert classic.no_trump_start == "redeal"
    assert classic.series_start == "lowest_trump"
    assert classic.redeal_on_flush is False


def test_presets_perevodnoy_is_classic_with_transfer() -> None:
    """Presets: perevodnoy = classic with transfer on (R14)."""
    rules = Rules.preset("perevodnoy")
    assert rules.transfer is True
    assert rules == Rules(transfer=True)


def test_presets_online() -> None:
    """Presets: online (003) = 36 cards, neighbours_at_5, first bout 6, no_trump_start random."""
    rules = Rules.preset("online")
    assert rules.deck_size == 36
    assert rules.throw_in == "neighbours_at_5"
    assert rules.first_bout_limit == 6
    assert rules.no_trump_start == "random"


def test_presets_short_is_classic_with_32_cards() -> None:
    """Presets: short (004) = 32 cards, otherwise classic."""
    rules = Rules.preset("short")
    assert rules == Rules(deck_size=32)
    assert rules.max_players == 5


def test_presets_unknown_name_is_value_error() -> None:
    """Presets: an unknown preset name is refused."""
    with raises_value_error():
        Rules.preset("strip-durak")


@pytest.mark.parametrize(
    "bad",
    [
        {"deck_size": 40},
        {"throw_in": "everyone"},
        {"first_bout_limit": 4},
        {"first_bout_limit": 7},
        {"no_trump_start": "ask"},
        {"series_start": "loser"},
        {"transfer_by_showing_trump": True},
    ],
)
def test_presets_invalid_options_are_value_errors(bad: dict[str, object]) -> None:
    """Rules: invalid options raise ValueError (pydantic's ValidationError is one)."""
    with raises_value_error():
        Rules(**bad)  # type: ignore[arg-type]


def test_presets_rules_are_frozen_and_hashable() -> None:
    """Rules: a frozen model; equal options are equal rules."""
    rules = Rules()
    with pytest.raises((TypeError, ValueError, AttributeError)):
        rules.deck_size = 24  # type: ignore[misc]
    assert rules.deck_size == 36
    assert Rules(transfer=True) == Rules.preset("perevodnoy")
    assert hash(Rules()) == hash(Rules.preset("classic"))


@pytest.mark.parametrize(
    ("name", "n"), [("classic", 6), ("perevodnoy", 6), ("online", 6), ("short", 5)]
)
def test_presets_new_game_with_most_players(name: str, n: int) -> None:
    """Presets/R3/R4: every preset deals a full table of its maximum size."""
    rules = Rules.preset(name)
    players = [f"p{i}" for i in range(n)]
    game = Game.new(players, rules=rules, seed=11)
    assert all(len(game.hand(p)) == 6 for p in players)
    assert game.stock_size == rules.deck_size - 6 * n
    with raises_value_error():
        Game.new([*players, "extra"], rules=rules, seed=11)


def test_presets_online_first_bout_allows_six() -> None:
    """Presets/R10: online plays six cards already in the first bout."""
    game = position(
        {"A": "6♠ 6♣ 6♦ 6♥ 8♦ 8♥", "B": "8♠ 8♣ 9♦ A♥ 10♦ J♠"},
        trump="K♥",
        stock="10♠ 10♣",
        attacker="A",
        rules=Rules.preset("online"),
        first_bout=True,
    )
    for card in ("6♠", "6♣", "6♦", "6♥"):
        game.apply("A", att(card))
    game.apply("B", dfd("6♠", "8♠"))
    game.apply("A", att("8♦"))
    game.apply("A", att("8♥"))
    assert game.limit == 6
    assert len(game.table) == 6


def test_presets_online_five_players_neighbours_only() -> None:
    """Presets/R9: online with five players: only the defender's neighbours throw in."""
    game = position(
        {"A": "6♠ K♣", "B": "7♠ 8♠ 9♠", "C": "6♥ Q♣", "D": "6♦ A♣", "E": "6♣ 7♥"},
        trump="♠",
        attacker="A",
        rules=Rules.preset("online"),
    )
    game.apply("A", att("6♠"))
    assert attacks(game.legal_actions("C")) == {c("6♥")}
    assert attacks(game.legal_actions("D")) == set()
    assert attacks(game.legal_actions("E")) == set()


def test_presets_perevodnoy_offers_transfer_classic_does_not() -> None:
    """Presets/R14: perevodnoy offers the transfer, classic not."""
    hands = {"A": "7♠ K♣", "B": "7♥ 9♠", "C": "8♠ 9♥"}
    for name, offered in (("perevodnoy", True), ("classic", False)):
        game = position(hands, trump="A♦", stock="6♦", attacker="A", rules=Rules.preset(name))
        game.apply("A", att("7♠"))
        assert (tr("7♥") in game.legal_actions("B")) is offered
        assert any(isinstance(a, Transfer) for a in game.legal_actions("B")) is offered


def test_presets_short_deck_has_no_sixes() -> None:
    """Presets/R1: short uses 32 cards, 7–A."""
    for seed in range(5):
        game = Game.new(["A", "B", "C", "D", "E"], rules=Rules.preset("short"), seed=seed)
        assert game.stock_size == 2
        ranks = {card.rank for p in game.players for card in game.hand(p)}
        assert min(ranks) >= 7
