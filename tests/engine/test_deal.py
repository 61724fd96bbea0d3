"""R3–R6: players, trump, the first attacker, flush redeal."""

from __future__ import annotations

import pytest

from engine import Card, ErrorCode, Game, Redeal, Rules
from tests.engine.conftest import (
    SUITS,
    assert_illegal,
    att,
    c,
    cs,
    position,
    raises_value_error,
    rest_of_deck,
)

NAMES = ["A", "B", "C", "D", "E", "F", "G", "H", "I"]


def _lowest_trump_holder(game: Game) -> str | None:
    best: tuple[int, str] | None = None
    for p in game.players:
        for card in game.hand(p):
            if card.suit == game.trump_suit and (best is None or card.rank < best[0]):
                best = (card.rank, p)
    return None if best is None else best[1]


def _nobody_holds_trump(game: Game) -> bool:
    return all(card.suit != game.trump_suit for p in game.players for card in game.hand(p))


# --- R3 players ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deck_size", "most"),
    [(24, 4), (32, 5), (36, 6), (52, 8)],
)
def test_r3_max_players_is_deck_size_over_hand_size(deck_size: int, most: int) -> None:
    """R3: 2 to deck_size // hand_size players."""
    rules = Rules(deck_size=deck_size)
    assert rules.max_players == most
    for n in range(2, most + 1):
        rules.check_players(n)
        game = Game.new(NAMES[:n], rules=rules, seed=n)
        assert game.players == tuple(NAMES[:n])
        assert all(len(game.hand(p)) == 6 for p in game.players)
        assert game.stock_size == deck_size - 6 * n


@pytest.mark.parametrize(
    ("deck_size", "n"),
    [(36, 7), (36, 1), (36, 0), (24, 5), (32, 6), (52, 9), (52, 1)],
)
def test_r3_too_many_or_too_few_players_is_value_error(deck_size: int, n: int) -> None:
    """R3: seven players on 36 cards (and other counts out of range) raise ValueError."""
    rules = Rules(deck_size=deck_size)
    with raises_value_error():
        rules.check_players(n)
    with raises_value_error():
        Game.new(NAMES[:n], rules=rules, seed=1)


def test_r3_seven_players_on_36_cards_is_value_error() -> None:
    """R3: 36 // 6 = 6, so a seventh player is refused."""
    with raises_value_error():
        Game.new(["A", "B", "C", "D", "E", "F", "G"], seed=3)


def test_r3_max_players_follows_hand_size() -> None:
    """R3: the bound is deck_size // hand_size."""
    assert Rules(hand_size=5).max_players == 7
    assert Rules(deck_size=24, hand_size=4).max_players == 6


# --- R4 trump -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_r4_trump_card_lies_under_the_stock(seed: int) -> None:
    """R4: the card after the deal is face up, gives the trump suit, stays in the stock."""
    game = Game.new(["A", "B", "C"], seed=seed)
    trump = game.trump_card
    assert isinstance(trump, Card)
    assert game.trump_suit == trump.suit
    assert all(trump not in game.hand(p) for p in game.players)
    assert game.stock_size == 36 - 18
    assert game.discard_size == 0
    assert game.table == []


@pytest.mark.parametrize("seed", range(10))
def test_r4_six_players_last_dealt_card_is_trump_and_stays_in_hand(seed: int) -> None:
    """R4: six players on 36 cards: no stock, the last card dealt shows trump in a hand."""
    game = Game.new(NAMES[:6], seed=seed)
    assert game.stock_size == 0
    trump = game.trump_card
    assert isinstance(trump, Card)
    assert game.trump_suit == trump.suit
    holders = [p for p in game.players if trump in game.hand(p)]
    assert len(holders) == 1
    assert all(len(game.hand(p)) == 6 for p in game.players)
    dealt = [card for p in game.players for card in game.hand(p)]
    assert len(set(dealt)) == 36


def test_r4_six_players_trump_exchange_impossible() -> None:
    """R4/R19: with no stock the face-up trump is already in a hand: no exchange."""
    rules = Rules(trump_exchange=True)
    game = Game.new(NAMES[:6], rules=rules, seed=4)
    from engine import ExchangeTrump

    for p in game.players:
        assert ExchangeTrump() not in game.legal_actions(p)


def test_r4_same_seed_same_deal() -> None:
    """R4: dealing is deterministic given the seed."""
    a = Game.new(["A", "B", "C"], seed=42)
    b = Game.new(["A", "B", "C"], seed=42)
    assert a == b
    assert a.to_dict() == b.to_dict()
    assert a.seed == 42
    deals = {tuple(Game.new(["A", "B"], seed=s).hand("A")) for s in range(10)}
    assert len(deals) > 1


# --- R5 first attacker --------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_r5_first_attacker_holds_lowest_trump(n: int) -> None:
    """R5: the holder of the lowest trump attacks first; the next player defends."""
    for seed in range(25):
        game = Game.new(NAMES[:n], seed=seed)
        holder = _lowest_trump_holder(game)
        assert holder is not None  # no_trump_start=redeal: someone holds a trump
        assert game.attacker == holder
        seat = game.players.index(holder)
        assert game.defender == game.players[(seat + 1) % n]
        assert game.to_act == frozenset({holder})
        assert game.first_bout


def test_r5_no_trump_start_redeal_never_starts_without_trump() -> None:
    """R5: with no_trump_start=redeal the game never starts with nobody holding a trump."""
    for seed in range(400):
        game = Game.new(["A", "B"], seed=seed)
        assert not _nobody_holds_trump(game)
        assert game.attacker == _lowest_trump_holder(game)


def test_r5_no_trump_start_random_picks_some_attacker() -> None:
    """R5: with no_trump_start=random a deal without trumps is kept, a random player starts."""
    rules = Rules(no_trump_start="random")
    found = []
    for seed in range(1500):
        game = Game.new(["A", "B"], rules=rules, seed=seed)
        if _nobody_holds_trump(game):
            found.append(game)
            assert game.attacker in game.players
            assert game.to_act == frozenset({game.attacker})
            assert game.stock_size == 24
            again = Game.new(["A", "B"], rules=rules, seed=seed)
            assert again.attacker == game.attacker
        else:
            assert game.attacker == _lowest_trump_holder(game)
    # about 2% of two-player deals have no trump in hand
    assert len(found) >= 5


def test_r5_series_start_lowest_trump_ignores_previous_durak() -> None:
    """R5: series_start=lowest_trump (default): the previous durak changes nothing."""
    for seed in range(10):
        game = Game.new(["A", "B", "C", "D"], seed=seed, previous_durak="C")
        assert game.attacker == _lowest_trump_holder(game)


def test_r5_series_start_attack_durak() -> None:
    """R5: series_start=attack_durak: the previous durak is attacked first (002)."""
    rules = Rules(series_start="attack_durak")
    for seed in range(10):
        game = Game.new(["A", "B", "C", "D"], rules=rules, seed=seed, previous_durak="C")
        assert game.defender == "C"
        assert game.attacker == "B"
        assert game.to_act == frozenset({"B"})
        game = Game.new(["A", "B", "C", "D"], rules=rules, seed=seed, previous_durak="A")
        assert game.defender == "A"
        assert game.attacker == "D"


def test_r5_series_start_after_durak() -> None:
    """R5: series_start=after_durak: the player after the previous durak attacks (002)."""
    rules = Rules(series_start="after_durak")
    for seed in range(10):
        game = Game.new(["A", "B", "C", "D"], rules=rules, seed=seed, previous_durak="C")
        assert game.attacker == "D"
        assert game.defender == "A"
        game = Game.new(["A", "B", "C", "D"], rules=rules, seed=seed, previous_durak="B")
        assert game.attacker == "C"
        assert game.defender == "D"


@pytest.mark.parametrize("series_start", ["attack_durak", "after_durak"])
def test_r5_series_start_without_previous_durak_uses_lowest_trump(series_start: str) -> None:
    """R5: the first game of a series has no previous durak: the lowest trump starts."""
    rules = Rules(series_start=series_start)
    for seed in range(10):
        game = Game.new(["A", "B", "C"], rules=rules, seed=seed)
        assert game.attacker == _lowest_trump_holder(game)


# --- R6 flush redeal ----------------------------------------------------------------------


def _flush_position(rules: Rules, b_hand: str = "6♠ 7♠ 9♠ J♠ K♠ 8♣") -> Game:
    """Full 36-card deal; B holds five spades and no trump (hearts)."""
    hands = {"A": "6♥ 7♦ 8♦ 10♣ Q♣ A♦", "B": b_hand}
    used = cs(hands["A"]) + cs(hands["B"]) + [c("10♥")]
    stock = rest_of_deck(used)
    return position(hands, trump="10♥", stock=stock, rules=rules, first_bout=True)


def _has_flush(game: Game, player: str) -> bool:
    cards = game.hand(player)
    if any(card.suit == game.trump_suit for card in cards):
        return False
    return max(sum(card.suit == suit for card in cards) for suit in SUITS) >= 5


def test_r6_flush_holder_may_ask_for_redeal() -> None:
    """R6: five cards of one suit and no trump: Redeal before the first attack, a new deal."""
    rules = Rules(redeal_on_flush=True)
    found = 0
    for seed in range(3000):
        game = Game.new(["A", "B", "C", "D"], rules=rules, seed=seed)
        flush = [p for p in game.players if _has_flush(game, p)]
        for p in game.players:
            assert (Redeal() in game.legal_actions(p)) == (p in flush)
        if not flush:
            continue
        found += 1
        before = {p: game.hand(p) for p in game.players}
        game.apply(flush[0], Redeal())
        assert all(len(game.hand(p)) == 6 for p in game.players)
        assert {p: game.hand(p) for p in game.players} != before
        assert game.stock_size == 36 - 24
        assert game.table == []
        assert game.discard_size == 0
        assert game.first_bout
        dealt = [card for p in game.players for card in game.hand(p)]
        assert len(set(dealt)) == 24
        assert game.trump_card not in dealt
        assert game.attacker == _lowest_trump_holder(game)
        assert game.to_act == frozenset({game.attacker})
        if found == 3:
            break
    assert found == 3


def test_r6_redeal_listed_in_position_is_accepted() -> None:
    """R6: a Redeal that legal_actions offers (hand-built position) is accepted by apply."""
    game = _flush_position(Rules(redeal_on_flush=True))
    assert Redeal() not in game.legal_actions("A")  # A holds a trump and no flush
    if Redeal() in game.legal_actions("B"):
        game.apply("B", Redeal())
        assert all(len(game.hand(p)) == 6 for p in game.players)
        assert game.stock_size == 36 - 12
    else:
        assert_illegal(game, "B", Redeal(), ErrorCode.REDEAL_NOT_ALLOWED)


def test_r6_redeal_off_by_default() -> None:
    """R6: redeal_on_flush defaults to off."""
    assert Rules().redeal_on_flush is False
    game = _flush_position(Rules())
    assert Redeal() not in game.legal_actions("B")
    assert_illegal(game, "B", Redeal(), ErrorCode.REDEAL_NOT_ALLOWED)


def test_r6_no_redeal_after_first_attack() -> None:
    """R6: only before the first attack."""
    game = _flush_position(Rules(redeal_on_flush=True))
    game.apply("A", att("7♦"))
    assert Redeal() not in game.legal_actions("B")
    assert_illegal(game, "B", Redeal(), ErrorCode.REDEAL_NOT_ALLOWED)


def test_r6_no_redeal_with_a_trump_in_hand() -> None:
    """R6: a flush with a trump in hand does not allow a redeal."""
    game = _flush_position(Rules(redeal_on_flush=True), b_hand="6♠ 7♠ 9♠ J♠ K♠ 7♥")
    assert Redeal() not in game.legal_actions("B")
    assert_illegal(game, "B", Redeal(), ErrorCode.REDEAL_NOT_ALLOWED)


def test_r6_four_of_a_suit_is_no_flush() -> None:
    """R6: four cards of one suit are not enough."""
    game = _flush_position(Rules(redeal_on_flush=True), b_hand="6♠ 7♠ 9♠ J♠ K♣ 8♣")
    assert Redeal() not in game.legal_actions("B")
    assert_illegal(game, "B", Redeal(), ErrorCode.REDEAL_NOT_ALLOWED)


def test_r6_six_of_a_suit_is_a_flush() -> None:
    """R6: 'five or more' includes six."""
    game = _flush_position(Rules(redeal_on_flush=True), b_hand="6♠ 7♠ 9♠ J♠ K♠ A♠")
    assert Redeal() in game.legal_actions("B")
