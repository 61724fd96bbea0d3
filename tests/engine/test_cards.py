"""R1 (deck) and R2 (beating), and how cards are parsed and printed."""

from __future__ import annotations

import copy
import itertools
import pickle
import random
import re

import pytest

from engine import Card, Defend, ErrorCode, Game, Rules, Suit, parse_cards
from engine.cards import parse_suit
from tests.engine.conftest import (
    SUITS,
    assert_illegal,
    att,
    c,
    cs,
    deck,
    dfd,
    position,
    raises_value_error,
)

# --- Card parsing and printing -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("10♥", 10, Suit.HEARTS),
        ("10H", 10, Suit.HEARTS),
        ("TH", 10, Suit.HEARTS),
        ("th", 10, Suit.HEARTS),
        ("qs", 12, Suit.SPADES),
        ("Q♠", 12, Suit.SPADES),
        ("A♠", 14, Suit.SPADES),
        ("AS", 14, Suit.SPADES),
        ("6♦", 6, Suit.DIAMONDS),
        ("6D", 6, Suit.DIAMONDS),
        ("2C", 2, Suit.CLUBS),
        ("J♣", 11, Suit.CLUBS),
        ("kd", 13, Suit.DIAMONDS),
    ],
)
def test_r1_card_parse_forms(text: str, rank: int, suit: Suit) -> None:
    """R1: every accepted spelling gives the card of that rank and suit."""
    card = Card.parse(text)
    assert card.rank == rank
    assert card.suit == suit
    assert card == Card(rank, suit)


@pytest.mark.parametrize(
    ("card", "text"),
    [
        (Card(10, Suit.HEARTS), "10♥"),
        (Card(12, Suit.SPADES), "Q♠"),
        (Card(14, Suit.SPADES), "A♠"),
        (Card(11, Suit.CLUBS), "J♣"),
        (Card(13, Suit.DIAMONDS), "K♦"),
        (Card(6, Suit.DIAMONDS), "6♦"),
        (Card(2, Suit.CLUBS), "2♣"),
    ],
)
def test_r1_card_prints_rank_and_suit_symbol(card: Card, text: str) -> None:
    """R1: str(card) is the rank followed by the suit symbol."""
    assert str(card) == text


def test_r1_every_card_round_trips_through_str() -> None:
    """R1: parse(str(card)) gives the same card for all 52 cards."""
    for card in deck(52):
        assert Card.parse(str(card)) == card
        assert Card.parse(str(card)) is card


def test_r1_cards_are_interned_and_hashable() -> None:
    """R1: equal cards are the same object and work in sets and dicts."""
    assert Card(14, "♠") is Card(14, Suit.SPADES)
    assert Card.parse("A♠") is Card(14, Suit.SPADES)
    assert len({Card(10, "♥"), Card.parse("10H"), Card.parse("TH")}) == 1
    assert {Card(6, "♦"): 1}[c("6D")] == 1


def test_r1_cards_are_frozen() -> None:
    """R1: a card cannot be changed."""
    card = c("A♠")
    with pytest.raises((AttributeError, TypeError, ValueError)):
        card.rank = 13  # type: ignore[misc]
    assert card.rank == 14


def test_r1_card_index_is_unique_in_0_to_51() -> None:
    """R1: card.index numbers the 52 cards 0..51."""
    indices = sorted(card.index for card in deck(52))
    assert indices == list(range(52))


def test_r1_suit_symbols() -> None:
    """R1: the four suits and their symbols."""
    assert Suit.CLUBS == "♣"
    assert Suit.DIAMONDS == "♦"
    assert Suit.HEARTS == "♥"
    assert Suit.SPADES == "♠"
    assert Card(7, "♣").suit is Suit.CLUBS


@pytest.mark.parametrize(
    "text", ["", "1♠", "11♠", "15H", "A", "♠", "10X", "ZS", "AA", "A♠♠", "6 ♠x"]
)
def test_r1_malformed_card_raises_value_error_naming_input(text: str) -> None:
    """R1: a malformed card is a ValueError whose message names the input."""
    if not text:
        with raises_value_error():
            Card.parse(text)
        return
    with pytest.raises(ValueError, match=re.escape(text)):
        Card.parse(text)


@pytest.mark.parametrize(("rank", "suit"), [(1, "♠"), (15, "♠"), (0, "♥"), (10, "X")])
def test_r1_card_constructor_rejects_bad_rank_or_suit(rank: int, suit: str) -> None:
    """R1: ranks are 2..14 and the suit one of the four."""
    with raises_value_error():
        Card(rank, suit)


@pytest.mark.parametrize("thing", [None, 5, b"AS", ["A♠"], 10.0])
def test_r1_parsing_what_is_not_text_is_a_value_error(thing: object) -> None:
    """R1: the parsers take anything and refuse what is not text with ValueError, in the
    pure and the compiled engine alike."""
    with raises_value_error():
        Card.parse(thing)
    with raises_value_error():
        parse_suit(thing)


def test_r1_cards_survive_pickle_and_copy() -> None:
    """R1: a card pickles and copies to itself (cards are interned)."""
    for card in deck(52):
        assert pickle.loads(pickle.dumps(card)) is card
        assert copy.copy(card) is card
        assert copy.deepcopy(card) is card


def test_r1_parse_cards_reads_a_space_separated_list() -> None:
    """R1: parse_cards reads the notation used for hands."""
    assert parse_cards("6♠ 7♠ A♥") == [Card(6, "♠"), Card(7, "♠"), Card(14, "♥")]
    assert parse_cards("10H qs") == [Card(10, "♥"), Card(12, "♠")]
    assert parse_cards("") == []


def test_r1_parse_cards_malformed_raises_value_error() -> None:
    """R1: one bad card in the list is a ValueError naming it."""
    with pytest.raises(ValueError, match="1X"):
        parse_cards("6♠ 1X A♥")


def test_r1_ranks_order_within_a_suit() -> None:
    """R1: ranks rise 2 … 10, J, Q, K, A; cards of one suit sort by rank."""
    for suit in SUITS:
        cards = [Card(rank, suit) for rank in range(2, 15)]
        shuffled = cards[:]
        random.Random(suit.value).shuffle(shuffled)
        assert sorted(shuffled) == cards
        for low, high in itertools.pairwise(cards):
            assert low < high
            assert not high < low


def test_r1_card_order_is_total() -> None:
    """R1: the (suit, rank) order is a total order on all 52 cards."""
    cards = deck(52)
    for a, b in itertools.combinations(cards, 2):
        assert (a < b) != (b < a)
    ordered = sorted(cards)
    shuffled = ordered[:]
    random.Random(1).shuffle(shuffled)
    assert sorted(shuffled) == ordered
    # cards of one suit stay together
    suits_seen = [card.suit for card in ordered]
    runs = [s for s, _ in itertools.groupby(suits_seen)]
    assert len(runs) == 4


@pytest.mark.parametrize(
    ("deck_size", "low"),
    [(24, 9), (32, 7), (36, 6), (52, 2)],
)
def test_r1_deck_sizes_and_lowest_rank(deck_size: int, low: int) -> None:
    """R1: a full deal shows only ranks low..A and every card once."""
    rules = Rules(deck_size=deck_size)
    n = rules.max_players
    game = Game.new([f"p{i}" for i in range(n)], rules=rules, seed=7)
    dealt = [card for p in game.players for card in game.hand(p)]
    assert len(dealt) == len(set(dealt)) == n * 6
    assert {card.rank for card in dealt} <= set(range(low, 15))
    assert len(dealt) + game.stock_size == deck_size
    if len(dealt) == deck_size:
        assert set(dealt) == set(deck(deck_size))


def test_r1_default_deck_is_36() -> None:
    """R1: the default deck has 36 cards (6–A)."""
    assert Rules().deck_size == 36
    game = Game.new(["A", "B"], seed=1)
    assert game.stock_size == 36 - 12


@pytest.mark.parametrize("deck_size", [20, 40, 54, 0])
def test_r1_other_deck_sizes_are_rejected(deck_size: int) -> None:
    """R1: only 24, 32, 36 and 52 cards."""
    with raises_value_error():
        Rules(deck_size=deck_size)


# --- R2 beating, seen through the defender's legal moves ------------------------------------


def _defences(game: Game, attack: str) -> set[str]:
    return {
        str(a.card)
        for a in game.legal_actions(game.defender)
        if isinstance(a, Defend) and a.attack == c(attack)
    }


def test_r2_higher_card_of_same_suit_beats() -> None:
    """R2: the defender may beat with a higher card of the led suit, not a lower one."""
    game = position({"A": "8♠ K♣", "B": "6♠ 9♠ A♠ 7♣ 10♦"}, trump="K♥", stock="Q♦ Q♣")
    game.apply("A", att("8♠"))
    assert _defences(game, "8♠") == {"9♠", "A♠"}


def test_r2_trump_beats_any_non_trump_even_holding_led_suit() -> None:
    """R2: any trump beats a non-trump; there is no duty to follow suit (003)."""
    game = position({"A": "A♠ K♣", "B": "6♥ 7♠ K♠ 9♣ 10♦"}, trump="K♥", stock="Q♦ Q♣")
    game.apply("A", att("A♠"))
    # A♠ is the highest spade, only the trump beats it
    assert _defences(game, "A♠") == {"6♥"}
    game.apply("B", dfd("A♠", "6♥"))
    # nothing more to add: beaten off
    assert game.table == []
    assert game.discard_size == 2
    assert c("6♥") not in game.hand("B")


def test_r2_trump_while_holding_led_suit() -> None:
    """R2: the defender may trump a card although he could follow suit."""
    game = position({"A": "7♠ K♣", "B": "6♥ K♠ 9♣ 10♦"}, trump="K♥", stock="Q♦ Q♣")
    game.apply("A", att("7♠"))
    assert _defences(game, "7♠") == {"K♠", "6♥"}
    game.apply("B", dfd("7♠", "6♥"))
    # nothing more to add: beaten off
    assert game.table == []
    assert game.discard_size == 2
    assert c("6♥") not in game.hand("B")


def test_r2_trump_beaten_only_by_higher_trump() -> None:
    """R2: a trump is beaten only by a higher trump, never by a plain ace."""
    game = position({"A": "8♥ K♣", "B": "7♥ 9♥ A♠ A♣ A♦"}, trump="K♥", stock="Q♦ Q♣")
    game.apply("A", att("8♥"))
    assert _defences(game, "8♥") == {"9♥"}
    assert_illegal(game, "B", dfd("8♥", "7♥"), ErrorCode.DOES_NOT_BEAT)
    assert_illegal(game, "B", dfd("8♥", "A♠"), ErrorCode.DOES_NOT_BEAT)


def test_r2_other_suit_does_not_beat() -> None:
    """R2: a higher card of another non-trump suit does not beat."""
    game = position({"A": "6♠ K♣", "B": "A♣ A♦ 7♣"}, trump="K♥", stock="Q♦ Q♣")
    game.apply("A", att("6♠"))
    assert _defences(game, "6♠") == set()
    assert_illegal(game, "B", dfd("6♠", "A♣"), ErrorCode.DOES_NOT_BEAT)
    assert_illegal(game, "B", dfd("6♠", "A♦"), ErrorCode.DOES_NOT_BEAT)


def test_r2_hand_sorted_trumps_last() -> None:
    """R2: a hand is shown sorted: non-trumps by suit and rank, the trumps last."""
    game = position({"A": "A♥ 6♦ 7♠ K♦ 6♥ 10♠ 8♦", "B": "9♣ 6♣"}, trump="♦", attacker="A")
    cards = game.hand("A")
    assert isinstance(cards, tuple)
    assert list(cards[-3:]) == cs("6♦ 8♦ K♦")
    assert list(cards[:-3]) == sorted(cs("A♥ 7♠ 6♥ 10♠"))
