"""R14: transfer (Perevodnoy) and transfer by showing the trump."""

from __future__ import annotations

from engine import Defend, Drew, ErrorCode, Rules, ShowTrump, Take, Transfer
from tests.engine.conftest import (
    assert_illegal,
    att,
    attacks,
    c,
    cs,
    dfd,
    hand,
    play,
    position,
    raises_value_error,
    show,
    tr,
)

TRANSFER = Rules(transfer=True)
SHOWING = Rules(transfer=True, transfer_by_showing_trump=True)


def _three(c_hand: str = "8♠ 9♥ J♣ Q♥", rules: Rules = TRANSFER):
    return position(
        {"A": "7♠ 7♣ K♣ Q♦", "B": "7♥ 9♠ 10♣", "C": c_hand},
        trump="A♦",
        stock="6♦ 7♦ 8♦",
        attacker="A",
        rules=rules,
    )


def test_r14_transfer_off_by_default() -> None:
    """R14: transfer is an option, off by default (classic)."""
    assert Rules().transfer is False
    game = _three(rules=Rules())
    game.apply("A", att("7♠"))
    assert not any(isinstance(a, Transfer) for a in game.legal_actions("B"))
    assert_illegal(game, "B", tr("7♥"), ErrorCode.TRANSFER_NOT_ALLOWED)


def test_r14_transfer_passes_the_bout_to_the_next_player() -> None:
    """R14: the defender adds a card of the same rank; the next player defends them all."""
    game = _three()
    game.apply("A", att("7♠"))
    assert tr("7♥") in game.legal_actions("B")
    game.apply("B", tr("7♥"))
    assert game.table == [(c("7♠"), None), (c("7♥"), None)]
    assert game.defender == "C"
    assert game.attacker == "B"  # the player who transferred attacks this bout
    assert game.bout_opener == "A"
    assert game.to_act == frozenset({"C"})
    assert hand(game, "B") == set(cs("9♠ 10♣"))
    # the new defender must beat both cards (or take)
    legal = game.legal_actions("C")
    assert Take() in legal
    assert {a.attack for a in legal if isinstance(a, Defend)} <= {c("7♠"), c("7♥")}


def test_r14_transfer_same_rank_only() -> None:
    """R14: only a card of the rank of the attack cards transfers."""
    game = _three()
    game.apply("A", att("7♠"))
    transfers = {a.card for a in game.legal_actions("B") if isinstance(a, Transfer)}
    assert transfers == {c("7♥")}
    assert_illegal(game, "B", tr("9♠"), ErrorCode.TRANSFER_NOT_ALLOWED, ErrorCode.RANK_NOT_ON_TABLE)
    assert_illegal(game, "B", tr("7♦"), ErrorCode.CARD_NOT_IN_HAND)


def test_r14_transfer_only_before_any_defence() -> None:
    """R14: once an attack card of the bout is beaten there is no transfer."""
    game = _three()
    play(game, ("A", att("7♠")), ("B", dfd("7♠", "9♠")), ("A", att("7♣")))
    assert game.to_act == frozenset({"B"})
    assert not any(isinstance(a, Transfer) for a in game.legal_actions("B"))
    assert_illegal(game, "B", tr("7♥"), ErrorCode.TRANSFER_NOT_ALLOWED)


def test_r14_transfer_needs_enough_cards_in_next_hand() -> None:
    """R14: the new defender must hold at least as many cards as the attack cards (000, 002)."""
    game = _three(c_hand="8♠")
    game.apply("A", att("7♠"))
    assert tr("7♥") not in game.legal_actions("B")
    assert_illegal(game, "B", tr("7♥"), ErrorCode.TRANSFER_NOT_ALLOWED)
    # exactly as many is enough
    game = _three(c_hand="8♠ 9♥")
    game.apply("A", att("7♠"))
    assert tr("7♥") in game.legal_actions("B")


def test_r14_transfer_counts_all_attack_cards_then_on_table() -> None:
    """R14: two sevens attack, a third transfers: the next player needs three cards."""
    game = _three(c_hand="8♠ 9♥")
    play(game, ("A", att("7♠")), ("A", att("7♣")))
    assert tr("7♥") not in game.legal_actions("B")
    assert_illegal(game, "B", tr("7♥"), ErrorCode.TRANSFER_NOT_ALLOWED)
    game = _three(c_hand="8♠ 9♥ J♣")
    play(game, ("A", att("7♠")), ("A", att("7♣")))
    assert tr("7♥") in game.legal_actions("B")
    game.apply("B", tr("7♥"))
    assert [a for a, _ in game.table] == cs("7♠ 7♣ 7♥")
    assert game.defender == "C"


def test_r14_chained_transfers_around_the_table() -> None:
    """R14: the new defender may transfer again, even back to the first attacker."""
    game = position(
        {"A": "7♠ 7♣ 8♠ 9♠ 10♠", "B": "7♥ 8♥ 9♥ 10♥ J♥", "C": "7♦ 8♣ 9♣ 10♣"},
        trump="A♣",
        stock="6♠ 6♥",
        attacker="A",
        rules=TRANSFER,
    )
    game.apply("A", att("7♠"))
    game.apply("B", tr("7♥"))
    assert (game.attacker, game.defender) == ("B", "C")
    assert tr("7♦") in game.legal_actions("C")
    game.apply("C", tr("7♦"))
    assert (game.attacker, game.defender) == ("C", "A")
    assert game.to_act == frozenset({"A"})
    assert tr("7♣") in game.legal_actions("A")
    game.apply("A", tr("7♣"))
    assert (game.attacker, game.defender) == ("A", "B")
    assert game.bout_opener == "A"
    assert [a for a, _ in game.table] == cs("7♠ 7♥ 7♦ 7♣")
    assert game.to_act == frozenset({"B"})
    assert game.limit == 4


def test_r14_limit_recounted_on_new_defender() -> None:
    """R14/R10: after a transfer the limit counts the new defender's hand."""
    game = position(
        {"A": "7♠ 7♦ 7♣ K♠", "B": "7♥ 8♥ 9♥ 10♥ J♥ Q♥", "C": "8♠ 9♠ 10♠"},
        trump="A♣",
        stock="6♠ 6♥",
        attacker="A",
        rules=TRANSFER,
    )
    game.apply("A", att("7♠"))
    assert game.limit == 6
    game.apply("B", tr("7♥"))
    assert game.limit == 3
    assert attacks(game.legal_actions("A")) == set(cs("7♦ 7♣"))
    game.apply("A", att("7♦"))
    assert attacks(game.legal_actions("A")) == set()
    assert_illegal(game, "A", att("7♣"), ErrorCode.LIMIT_REACHED)
    assert game.to_act == frozenset({"C"})


def test_r14_transferring_player_may_throw_in_as_attacker() -> None:
    """R14: the player who transferred is an attacker of the bout."""
    game = position(
        {"A": "7♠ K♠", "B": "7♥ 8♥ 9♦", "C": "8♠ 9♠ 10♠ J♠"},
        trump="A♣",
        stock="6♠ 6♥",
        attacker="A",
        rules=TRANSFER,
    )
    play(game, ("A", att("7♠")), ("B", tr("7♥")), ("C", dfd("7♠", "8♠")))
    # 8 is now on the table; B (now an attacker) may add 8♥
    assert attacks(game.legal_actions("B")) == {c("8♥")}
    game.apply("B", att("8♥"))
    assert [a for a, _ in game.table] == cs("7♠ 7♥ 8♥")


def test_r14_two_players_transfer_back_to_attacker() -> None:
    """R14: with two players the transfer goes back to the attacker."""
    game = position(
        {"A": "7♠ K♣ 9♠", "B": "7♥ 8♦ 10♠"},
        trump="A♣",
        stock="6♠ 6♥",
        attacker="A",
        rules=TRANSFER,
    )
    game.apply("A", att("7♠"))
    assert tr("7♥") in game.legal_actions("B")
    game.apply("B", tr("7♥"))
    assert game.attacker == "B"
    assert game.defender == "A"
    assert game.to_act == frozenset({"A"})
    assert game.table == [(c("7♠"), None), (c("7♥"), None)]
    game.apply("A", Take())
    # B holds nothing of rank 7: A picks up at once; B attacks next
    assert game.table == []
    assert {c("7♠"), c("7♥")} <= hand(game, "A")
    assert game.attacker == "B"
    assert game.defender == "A"


def test_r14_two_players_transfer_back_needs_enough_cards() -> None:
    """R14: the attacker receiving a transfer must hold enough cards too."""
    game = position(
        {"A": "7♠ K♣", "B": "7♥ 8♦ 10♠"},
        trump="A♣",
        stock="6♠ 6♥",
        attacker="A",
        rules=TRANSFER,
    )
    game.apply("A", att("7♠"))
    assert tr("7♥") not in game.legal_actions("B")
    assert_illegal(game, "B", tr("7♥"), ErrorCode.TRANSFER_NOT_ALLOWED)


def test_r14_show_trump_requires_the_option() -> None:
    """R14: transfer_by_showing_trump is off by default; it needs transfer on."""
    assert Rules().transfer_by_showing_trump is False
    with raises_value_error():
        Rules(transfer_by_showing_trump=True)
    with raises_value_error():
        Rules(transfer=False, transfer_by_showing_trump=True)
    game = position(
        {"A": "7♠ 7♥ K♣ 9♠ Q♣", "B": "7♦ 8♦ 10♠ J♠"},
        trump="A♦",
        stock="6♣ 6♥",
        attacker="A",
        rules=TRANSFER,
    )
    game.apply("A", att("7♠"))
    assert not any(isinstance(a, ShowTrump) for a in game.legal_actions("B"))
    assert tr("7♦") in game.legal_actions("B")
    assert_illegal(game, "B", show("7♦"), ErrorCode.TRANSFER_NOT_ALLOWED)


def test_r14_show_trump_transfers_without_playing_once_per_card() -> None:
    """R14: showing the trump of the rank transfers; the card stays; once per bout (002)."""
    game = position(
        {"A": "7♠ 7♥ K♣ 9♠ Q♣", "B": "7♦ 8♦ 10♠ J♠"},
        trump="A♦",
        stock="6♣ 6♥",
        attacker="A",
        rules=SHOWING,
    )
    game.apply("A", att("7♠"))
    legal = game.legal_actions("B")
    assert show("7♦") in legal
    assert tr("7♦") in legal
    game.apply("B", show("7♦"))
    assert c("7♦") in game.hand("B")
    assert game.table == [(c("7♠"), None)]
    assert game.attacker == "B"
    assert game.defender == "A"
    assert game.to_act == frozenset({"A"})
    # A transfers back by playing 7♥
    game.apply("A", tr("7♥"))
    assert game.defender == "B"
    assert game.table == [(c("7♠"), None), (c("7♥"), None)]
    # 7♦ was shown once in this bout: no second show, but it may still be played
    legal = game.legal_actions("B")
    assert show("7♦") not in legal
    assert tr("7♦") in legal
    assert_illegal(game, "B", show("7♦"), ErrorCode.TRANSFER_NOT_ALLOWED)
    game.apply("B", tr("7♦"))
    assert game.defender == "A"
    assert [a for a, _ in game.table] == cs("7♠ 7♥ 7♦")


def test_r14_show_only_a_trump_of_the_rank() -> None:
    """R14: only the trump of the attack rank may be shown, and only one held."""
    game = position(
        {"A": "8♠ 7♠ K♣ 9♠ Q♣", "B": "7♦ 8♦ 8♥ J♠"},
        trump="A♦",
        stock="6♣ 6♥",
        attacker="A",
        rules=SHOWING,
    )
    game.apply("A", att("8♠"))
    shows = {a.card for a in game.legal_actions("B") if isinstance(a, ShowTrump)}
    assert shows == {c("8♦")}
    assert_illegal(game, "B", show("8♥"), ErrorCode.TRANSFER_NOT_ALLOWED)
    assert_illegal(
        game, "B", show("7♦"), ErrorCode.TRANSFER_NOT_ALLOWED, ErrorCode.RANK_NOT_ON_TABLE
    )
    assert_illegal(game, "B", show("8♣"), ErrorCode.CARD_NOT_IN_HAND)


def test_r14_show_trump_needs_enough_cards_in_next_hand() -> None:
    """R14: showing is a transfer: the next player must hold enough cards."""
    game = position(
        {"A": "7♠ 7♥ K♣", "B": "7♦ 8♦ 10♠ J♠"},
        trump="A♦",
        stock="6♣ 6♥",
        attacker="A",
        rules=SHOWING,
    )
    # two attack cards, A keeps only K♣: A cannot receive the transfer
    play(game, ("A", att("7♠")), ("A", att("7♥")))
    assert show("7♦") not in game.legal_actions("B")
    assert_illegal(game, "B", show("7♦"), ErrorCode.TRANSFER_NOT_ALLOWED)


def test_r14_transfer_skips_out_players() -> None:
    """R14/R16: the bout passes to the next *active* player."""
    game = position(
        {"A": "6♠", "B": "7♠ 8♦ 9♦ 10♦", "C": "10♣ J♣ 8♣"},
        trump="♥",
        attacker="A",
        rules=TRANSFER,
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert game.active_players == ("B", "C")
    play(game, ("B", att("8♦")))
    assert tr("8♣") in game.legal_actions("C")
    game.apply("C", tr("8♣"))
    assert game.defender == "B"
    assert game.attacker == "C"
    assert game.to_act == frozenset({"B"})


def test_r14_first_bout_limit_applies_to_new_defender() -> None:
    """R14/R10: in the first bout the recounted limit is still at most five."""
    game = position(
        {"A": "7♠ K♠", "B": "7♥ 8♥ 9♦", "C": "8♠ 9♠ 10♠ J♠ Q♠ K♣"},
        trump="A♣",
        stock="6♠ 6♥",
        attacker="A",
        rules=TRANSFER,
        first_bout=True,
    )
    game.apply("A", att("7♠"))
    assert game.limit == 3
    game.apply("B", tr("7♥"))
    assert game.limit == 5


def test_r15_draw_after_transfer_back_in_two_player_game() -> None:
    """R15/R14: the opener received the transfer: the other player draws first."""
    game = position(
        {"A": "7♠ 8♠ 8♥ 9♦ 10♦ J♦", "B": "7♥ Q♠ Q♥ K♠ K♥ J♠"},
        trump="A♣",
        stock="6♦ 7♦ 9♠ 10♠",
        attacker="A",
        rules=TRANSFER,
    )
    play(game, ("A", att("7♠")), ("B", tr("7♥")), ("A", dfd("7♠", "8♠")))
    events = game.apply("A", dfd("7♥", "8♥"))
    draws = [(e.player, e.count) for e in events if isinstance(e, Drew) and e.count]
    assert draws == [("B", 1), ("A", 3)]
    assert c("6♦") in game.hand("B")
    assert set(cs("7♦ 9♠ 10♠")) <= hand(game, "A")
    assert game.attacker == "A"
    assert game.defender == "B"
