"""R15–R19: drawing, going out, the durak, resigning, trump exchange."""

from __future__ import annotations

from engine import Drew, ErrorCode, Event, ExchangeTrump, Game, Pass, Resign, Rules, Take
from tests.engine.conftest import (
    assert_illegal,
    att,
    c,
    cs,
    dfd,
    hand,
    play,
    position,
    tr,
)

# --- R15 draw -----------------------------------------------------------------------------


def _draws(events: list[Event]) -> list[tuple[str, int]]:
    """The Drew events, in order, as (player, count)."""
    return [(e.player, e.count) for e in events if isinstance(e, Drew) and e.count]


def test_r15_opener_first_then_attackers_clockwise_defender_last() -> None:
    """R15: the opener draws first, then the other attackers clockwise, the defender last."""
    game = position(
        {
            "A": "6♥ 8♥ 9♥ 10♥ J♥ A♥",
            "B": "6♦ 8♦ 9♦ 10♦ J♦ Q♦",
            "C": "6♠ Q♠ Q♥ K♠ K♥ J♠",
            "D": "7♠ 7♥ 7♦ 8♠ 9♠ 10♠",
        },
        trump="A♣",
        stock="6♣ 7♣ 8♣ 9♣ 10♣ J♣",
        attacker="C",
    )
    assert game.defender == "D"
    assert game.stock_size == 7
    play(game, ("C", att("6♠")), ("A", att("6♥")), ("B", att("6♦")))
    play(game, ("D", dfd("6♠", "7♠")), ("D", dfd("6♥", "7♥")))
    events = game.apply("D", dfd("6♦", "7♦"))
    assert game.table == []
    assert _draws(events) == [("C", 1), ("A", 1), ("B", 1), ("D", 3)]
    # C opened: C, then A and B clockwise from C, then the defender D
    assert c("6♣") in game.hand("C")
    assert c("7♣") in game.hand("A")
    assert c("8♣") in game.hand("B")
    assert set(cs("9♣ 10♣ J♣")) <= hand(game, "D")
    assert all(len(game.hand(p)) == 6 for p in game.players)
    assert game.stock_size == 1
    assert game.trump_card == c("A♣")


def test_r15_each_draws_fully_before_the_next() -> None:
    """R15: the first in order fills his hand even if nothing is left for the others."""
    game = position(
        {
            "A": "6♠ 6♣ Q♠ K♠ K♥ J♣",
            "B": "7♠ 7♣ 8♠ 9♠ 10♠ J♠",
            "C": "Q♣ K♣ J♥ 9♥ 10♥ Q♥",
        },
        trump="A♦",
        stock="10♣",
        attacker="A",
    )
    play(
        game,
        ("A", att("6♠")),
        ("A", att("6♣")),
        ("B", dfd("6♠", "7♠")),
        ("B", dfd("6♣", "7♣")),
    )
    assert game.table == []
    assert hand(game, "A") == set(cs("Q♠ K♠ K♥ J♣ 10♣ A♦"))
    assert len(game.hand("B")) == 4
    assert game.stock_size == 0


def test_r15_face_up_trump_is_drawn_last() -> None:
    """R15/R4: the face-up trump lies under the stock: the last card drawn."""
    game = position(
        {"A": "6♠ Q♠ K♠ K♥ J♣ 9♣", "B": "7♠ 8♠ 9♠ 10♠ J♠ A♠"},
        trump="A♦",
        stock="10♣",
        attacker="A",
    )
    assert game.stock_size == 2
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert c("10♣") in game.hand("A")
    assert c("A♦") in game.hand("B")
    assert game.stock_size == 0
    # the face-up trump stays public after it is drawn
    assert game.trump_card == c("A♦")
    assert game.trump_suit == "♦"


def test_r15_taker_draws_last_and_only_up_to_hand_size() -> None:
    """R15/R13: after a take the attacker draws; the taker holds more than six, draws none."""
    game = position(
        {"A": "6♠ 7♥ 8♥ 9♥ 10♥ J♥", "B": "6♥ 7♣ 8♣ 9♣ 10♣ J♣"},
        trump="A♦",
        stock="6♣ 7♦ 8♦",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", Take()))
    assert game.table == []
    assert hand(game, "A") == set(cs("7♥ 8♥ 9♥ 10♥ J♥ 6♣"))
    assert len(game.hand("B")) == 7
    assert game.stock_size == 3


def test_r15_draw_order_after_transfer() -> None:
    """R15: after transfers: from the opener's seat clockwise, the final defender last."""
    game = position(
        {
            "A": "K♦ A♦ 10♠ A♠ 8♣",
            "B": "7♠ Q♠ Q♥ K♠ K♥ J♠",
            "C": "7♥ 8♥ 10♥ J♥ A♥ 8♠",
            "D": "9♠ 6♣ 8♦ 10♦ J♦ Q♦",
        },
        trump="A♣",
        stock="6♦ 7♦ 9♦ 6♥ 9♥ 7♣",
        attacker="B",
        rules=Rules(transfer=True),
    )
    play(game, ("B", att("7♠")), ("C", tr("7♥")))
    assert game.defender == "D"
    game.apply("D", dfd("7♠", "9♠"))
    events = game.apply("D", dfd("7♥", "6♣"))
    assert game.table == []
    assert _draws(events) == [("B", 1), ("C", 1), ("A", 1), ("D", 2)]
    # B opened the bout: B, C, A clockwise from B, then D (the final defender)
    assert c("6♦") in game.hand("B")
    assert c("7♦") in game.hand("C")
    assert c("9♦") in game.hand("A")
    assert set(cs("6♥ 9♥")) <= hand(game, "D")
    assert game.stock_size == 2
    assert game.attacker == "D"
    assert game.defender == "A"


def test_r15_player_with_no_cards_draws_while_stock_lasts() -> None:
    """R15/R16: a player who emptied his hand draws and is not out while stock lasts."""
    game = position(
        {"A": "6♠", "B": "7♠ 8♠ 9♠"}, trump="A♦", stock="6♣ 7♣ 8♣ 9♣ 10♣ J♣ Q♣", attacker="A"
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert game.active_players == ("A", "B")
    assert len(game.hand("A")) == 6
    assert not game.is_over


# --- R16 going out ------------------------------------------------------------------------


def _one_out() -> Game:
    game = position(
        {"A": "6♠", "B": "7♠ 8♦ 9♦", "C": "10♣ J♣ Q♣"},
        trump="♥",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    return game


def test_r16_player_without_cards_is_out_once_stock_empty() -> None:
    """R16: once the stock is empty a player with no cards is out, safe."""
    game = _one_out()
    assert game.stock_size == 0
    assert game.active_players == ("B", "C")
    assert game.players == ("A", "B", "C")
    assert not game.is_over
    assert game.legal_actions("A") == []
    assert "A" not in game.to_act
    assert_illegal(game, "A", att("6♠"), ErrorCode.PLAYER_OUT)
    assert_illegal(game, "A", Pass(), ErrorCode.PLAYER_OUT)


def test_r16_out_players_are_skipped() -> None:
    """R16/R7: roles skip a player who is out."""
    game = _one_out()
    assert game.attacker == "B"
    assert game.defender == "C"
    play(game, ("B", att("8♦")), ("C", Take()))
    # B holds no other eight: C picks up; the next active player after C is B (A is out)
    assert game.table == []
    assert game.attacker == "B"
    assert game.defender == "C"
    assert game.to_act == frozenset({"B"})


def test_r16_out_player_cannot_resign() -> None:
    """R18/R16: resigning by a player who is already out is refused."""
    game = _one_out()
    assert Resign() not in game.legal_actions("A")
    assert_illegal(game, "A", Resign(), ErrorCode.PLAYER_OUT)
    assert not game.is_over


# --- R17 the durak ------------------------------------------------------------------------


def test_r17_last_player_holding_cards_is_durak() -> None:
    """R17: the game ends when one player still holds cards: he is the durak."""
    game = position({"A": "7♠", "B": "6♠ 6♥"}, trump="♦", attacker="A")
    play(game, ("A", att("7♠")), ("B", Take()))
    assert game.is_over
    assert game.durak == "B"
    outcome = game.outcome
    assert outcome is not None
    assert outcome.durak == "B"
    assert not outcome.draw
    assert outcome.resigned is None
    assert outcome.out_order == (("A",),)
    assert outcome.bouts == 1
    assert game.to_act == frozenset()
    assert game.legal_actions("A") == []
    assert game.legal_actions("B") == []


def test_r17_attacker_left_with_cards_is_durak() -> None:
    """R17: the defender beats his last card off; the attacker keeps cards and loses."""
    game = position({"A": "7♠ 9♥", "B": "8♠"}, trump="♦", attacker="A")
    play(game, ("A", att("7♠")), ("B", dfd("7♠", "8♠")))
    assert game.is_over
    assert game.durak == "A"
    assert game.outcome is not None
    assert game.outcome.out_order == (("B",),)
    assert not game.outcome.draw


def test_r17_last_cards_leave_together_is_a_draw() -> None:
    """R17: nobody holds cards after the last bout: a draw, no durak."""
    game = position({"A": "7♠", "B": "8♠"}, trump="♦", attacker="A")
    play(game, ("A", att("7♠")), ("B", dfd("7♠", "8♠")))
    assert game.is_over
    assert game.durak is None
    outcome = game.outcome
    assert outcome is not None
    assert outcome.draw
    assert outcome.durak is None
    assert outcome.resigned is None
    assert len(outcome.out_order) == 1
    assert set(outcome.out_order[0]) == {"A", "B"}


def test_r17_three_players_game_goes_on_until_one_holds_cards() -> None:
    """R17/R16: one player out of three: the game goes on; ends with the last holder."""
    game = _one_out()
    # B: 8♦ 9♦, C: 10♣ J♣ Q♣; trump hearts
    play(game, ("B", att("8♦")), ("C", Take()))
    play(game, ("B", att("9♦")))
    assert game.to_act == frozenset({"C"})
    game.apply("C", Take())
    assert game.is_over
    assert game.durak == "C"
    assert game.outcome is not None
    assert game.outcome.out_order == (("A",), ("B",))
    assert game.outcome.places(game.players) == {"A": 1, "B": 2, "C": 3}


def test_r17_a_draw_places_those_out_together_alike() -> None:
    """R17: players who went out together share a place; a draw has no last place."""
    game = position({"A": "7♠", "B": "8♠"}, trump="♦", attacker="A")
    play(game, ("A", att("7♠")), ("B", dfd("7♠", "8♠")))
    assert game.outcome is not None
    assert game.outcome.places(game.players) == {"A": 1, "B": 1}


def test_r17_no_moves_after_game_over() -> None:
    """R17: after the end every move is refused with game_over."""
    game = position({"A": "7♠", "B": "6♠ 6♥"}, trump="♦", attacker="A")
    play(game, ("A", att("7♠")), ("B", Take()))
    assert_illegal(game, "B", att("6♠"), ErrorCode.GAME_OVER)
    assert_illegal(game, "B", Resign(), ErrorCode.GAME_OVER)
    assert_illegal(game, "A", Pass(), ErrorCode.GAME_OVER)


# --- R18 resign ---------------------------------------------------------------------------


def test_r18_resign_makes_the_resigner_durak() -> None:
    """R18: a player who resigns is the durak; the game ends there (003)."""
    game = Game.new(["A", "B", "C"], seed=5)
    for p in game.players:
        assert Resign() in game.legal_actions(p)
    resigner = next(p for p in game.players if p not in game.to_act)
    game.apply(resigner, Resign())
    assert game.is_over
    assert game.durak == resigner
    outcome = game.outcome
    assert outcome is not None
    assert outcome.durak == resigner
    assert outcome.resigned == resigner
    assert not outcome.draw
    assert game.to_act == frozenset()
    for p in game.players:
        assert game.legal_actions(p) == []


def test_r18_resign_in_the_middle_of_a_bout() -> None:
    """R18: resigning is possible at any time, e.g. while defending."""
    game = position(
        {"A": "6♠ 7♠", "B": "8♠ 9♠", "C": "10♠ J♠"}, trump="A♦", stock="6♦ 7♦", attacker="A"
    )
    game.apply("A", att("6♠"))
    game.apply("B", Resign())
    assert game.is_over
    assert game.durak == "B"
    assert game.outcome is not None
    assert game.outcome.resigned == "B"
    # Nobody went out: the two still holding cards share the first place, the durak is last.
    assert game.outcome.places(game.players) == {"A": 1, "C": 1, "B": 3}


# --- R19 trump exchange -------------------------------------------------------------------

EXCHANGE = Rules(trump_exchange=True)


def test_r19_exchange_off_by_default() -> None:
    """R19: trump_exchange defaults to off."""
    assert Rules().trump_exchange is False
    game = position({"A": "7♠ 8♠", "B": "6♥ 9♠"}, trump="A♥", stock="10♣ J♣", attacker="A")
    assert ExchangeTrump() not in game.legal_actions("B")
    assert_illegal(game, "B", ExchangeTrump(), ErrorCode.EXCHANGE_NOT_ALLOWED)


def test_r19_holder_of_lowest_trump_swaps_it_for_face_up_trump() -> None:
    """R19: the trump six may be swapped for the face-up trump, by any player at any time."""
    game = position(
        {"A": "7♠ 8♠", "B": "6♥ 9♠"}, trump="A♥", stock="10♣ J♣", attacker="A", rules=EXCHANGE
    )
    assert game.to_act == frozenset({"A"})
    assert ExchangeTrump() in game.legal_actions("B")
    assert ExchangeTrump() not in game.legal_actions("A")
    assert_illegal(game, "A", ExchangeTrump(), ErrorCode.EXCHANGE_NOT_ALLOWED)
    game.apply("B", ExchangeTrump())
    assert hand(game, "B") == set(cs("A♥ 9♠"))
    assert game.trump_card == c("6♥")
    assert game.trump_suit == "♥"
    assert game.stock_size == 3
    assert game.to_act == frozenset({"A"})
    assert ExchangeTrump() not in game.legal_actions("B")


def test_r19_exchange_while_defending() -> None:
    """R19: 'at any time': also in the middle of a bout."""
    game = position(
        {"A": "7♠ 8♠", "B": "6♥ 9♠", "C": "10♦ J♦"},
        trump="A♥",
        stock="10♣ J♣",
        attacker="A",
        rules=EXCHANGE,
    )
    game.apply("A", att("7♠"))
    assert ExchangeTrump() in game.legal_actions("B")
    game.apply("B", ExchangeTrump())
    assert c("A♥") in game.hand("B")
    assert game.to_act == frozenset({"B"})
    assert game.table == [(c("7♠"), None)]


def test_r19_exchange_when_face_up_trump_is_the_last_stock_card() -> None:
    """R19: allowed also when the face-up trump is the only card left in the stock."""
    game = position({"A": "7♠ 8♠", "B": "6♥ 9♠"}, trump="A♥", attacker="A", rules=EXCHANGE)
    assert game.stock_size == 1
    assert ExchangeTrump() in game.legal_actions("B")
    game.apply("B", ExchangeTrump())
    assert c("A♥") in game.hand("B")
    assert game.trump_card == c("6♥")
    assert game.stock_size == 1


def test_r19_no_exchange_after_trump_drawn() -> None:
    """R19: once the face-up trump has been drawn there is nothing to exchange."""
    game = position({"A": "7♠ 8♠", "B": "6♥ 9♠"}, trump="♥", attacker="A", rules=EXCHANGE)
    assert ExchangeTrump() not in game.legal_actions("B")
    assert_illegal(game, "B", ExchangeTrump(), ErrorCode.EXCHANGE_NOT_ALLOWED)


def test_r19_no_exchange_after_trump_drawn_in_play() -> None:
    """R19: the face-up trump is drawn at the end of a bout; then no exchange."""
    game = position(
        {"A": "7♠ 9♥ 10♥ J♥ Q♥ K♥", "B": "6♦ 8♠ 9♣ 10♣ J♣ Q♣"},
        trump="A♦",
        attacker="A",
        rules=EXCHANGE,
    )
    assert ExchangeTrump() in game.legal_actions("B")
    play(game, ("A", att("7♠")), ("B", dfd("7♠", "8♠")))
    assert c("A♦") in game.hand("A")
    assert game.stock_size == 0
    assert ExchangeTrump() not in game.legal_actions("B")
    assert_illegal(game, "B", ExchangeTrump(), ErrorCode.EXCHANGE_NOT_ALLOWED)


def test_r19_lowest_trump_depends_on_deck() -> None:
    """R19: the lowest trump of the deck: 9 with 24 cards, 7 with 32, 2 with 52."""
    for deck_size, low, other in ((24, "9♥", "10♥"), (32, "7♥", "8♥"), (52, "2♥", "6♥")):
        rules = Rules(deck_size=deck_size, trump_exchange=True)
        game = position(
            {"A": f"A♠ {other}", "B": f"{low} K♠"},
            trump="A♥",
            stock="Q♣ K♣",
            attacker="A",
            rules=rules,
        )
        assert ExchangeTrump() in game.legal_actions("B"), deck_size
        assert ExchangeTrump() not in game.legal_actions("A"), deck_size
