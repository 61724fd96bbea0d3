"""R7–R13: roles, attack cards, throw-ins, the limit, defence, beaten off, taking."""

from __future__ import annotations

import pytest

from engine import (
    Attack,
    Attacked,
    BeatenOff,
    BoutStarted,
    Defend,
    ErrorCode,
    Game,
    Pass,
    PickedUp,
    Rules,
    Take,
    TakeDeclared,
)
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
)

# --- R7 roles -----------------------------------------------------------------------------

FOUR = {"A": "6♠ 7♠", "B": "6♥ 7♥", "C": "6♦ 7♦", "D": "6♣ 7♣"}


@pytest.mark.parametrize(
    ("attacker", "defender"),
    [("A", "B"), ("B", "C"), ("C", "D"), ("D", "A")],
)
def test_r7_defender_is_next_player_clockwise(attacker: str, defender: str) -> None:
    """R7: the attacker attacks the next player to the left (seat order, wrapping)."""
    game = position(FOUR, trump="♠", attacker=attacker)
    assert game.players == ("A", "B", "C", "D")
    assert game.attacker == attacker
    assert game.bout_opener == attacker
    assert game.defender == defender
    assert game.to_act == frozenset({attacker})
    assert game.table == []


def test_r7_only_the_attacker_opens_the_bout() -> None:
    """R7/R8: nobody but the attacker may play the first card."""
    game = position(FOUR, trump="♠", attacker="A")
    for p in ("B", "C", "D"):
        assert attacks(game.legal_actions(p)) == set()
    assert_illegal(game, "B", att("6♥"), ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "C", att("6♦"), ErrorCode.NOT_YOUR_TURN)


def test_r7_waiting_for_defender_after_attack() -> None:
    """R7 (to_act): while an attack card is unbeaten the game waits for the defender alone."""
    game = position(FOUR, trump="♠", attacker="A")
    game.apply("A", att("6♠"))
    assert game.to_act == frozenset({"B"})
    assert game.table == [(c("6♠"), None)]
    assert hand(game, "A") == {c("7♠")}


# --- R8 attack cards ----------------------------------------------------------------------


def test_r8_first_card_is_any_card() -> None:
    """R8: the first card of a bout may be any card of the attacker's hand."""
    game = position(
        {"A": "6♠ 9♥ K♣ A♦ 10♠", "B": "7♠ 8♠ 9♠"}, trump="K♦", stock="Q♥ J♥", attacker="A"
    )
    assert attacks(game.legal_actions("A")) == set(cs("6♠ 9♥ K♣ A♦ 10♠"))


def test_r8_further_cards_need_a_rank_on_the_table() -> None:
    """R8: later attack cards match a rank of an attack or defence card of this bout."""
    game = position(
        {"A": "6♠ 6♥ 9♥ K♣", "B": "9♠ 10♣ J♣ Q♣"}, trump="K♦", stock="Q♥ J♥", attacker="A"
    )
    game.apply("A", att("6♠"))
    assert attacks(game.legal_actions("A")) == {c("6♥")}
    assert_illegal(game, "A", att("K♣"), ErrorCode.RANK_NOT_ON_TABLE)
    assert_illegal(game, "A", att("9♥"), ErrorCode.RANK_NOT_ON_TABLE)
    game.apply("B", dfd("6♠", "9♠"))
    # the rank of the defence card (9) now counts too
    assert attacks(game.legal_actions("A")) == {c("6♥"), c("9♥")}
    game.apply("A", att("9♥"))
    assert game.table == [(c("6♠"), c("9♠")), (c("9♥"), None)]


def test_r8_the_event_of_the_first_card_says_it_leads_the_bout() -> None:
    """R8/R9: the first card of a bout leads it; every further one is thrown in, by the
    attacker too (the table's log words them differently)."""
    game = position(
        {"A": "6♠ 6♥ 9♥", "B": "9♠ 10♣ J♣ Q♣", "C": "6♦ 7♣"},
        trump="K♦",
        stock="Q♥ J♥",
        attacker="A",
    )
    assert game.apply("A", att("6♠")) == [Attacked("A", c("6♠"), lead=True)]
    assert game.apply("A", att("6♥")) == [Attacked("A", c("6♥"), lead=False)]
    assert game.apply("C", att("6♦")) == [Attacked("C", c("6♦"), lead=False)]


# --- R9 who may throw in ------------------------------------------------------------------

THROW = {
    "A": "6♠ K♣",
    "B": "7♠ 8♠ 9♠ 10♠ 7♣",
    "C": "6♥ Q♣",
    "D": "6♦ A♣",
}


def test_r9_throw_in_all_every_attacker_may_add() -> None:
    """R9: throw_in=all: every active player but the defender may add, any time (000)."""
    game = position(THROW, trump="♣", attacker="A")
    game.apply("A", att("6♠"))
    assert game.to_act == frozenset({"B"})
    # attackers may still add while the defender thinks
    assert attacks(game.legal_actions("C")) == {c("6♥")}
    assert attacks(game.legal_actions("D")) == {c("6♦")}
    assert attacks(game.legal_actions("B")) == set()
    game.apply("D", att("6♦"))
    game.apply("C", att("6♥"))
    assert [a for a, _ in game.table] == cs("6♠ 6♦ 6♥")
    assert game.to_act == frozenset({"B"})


def test_r9_throw_in_neighbours_only_the_defenders_neighbours() -> None:
    """R9: throw_in=neighbours: only the two players beside the defender (000, 002)."""
    game = position(THROW, trump="♣", attacker="A", rules=Rules(throw_in="neighbours"))
    game.apply("A", att("6♠"))
    assert attacks(game.legal_actions("C")) == {c("6♥")}
    assert attacks(game.legal_actions("D")) == set()
    assert_illegal(game, "D", att("6♦"), ErrorCode.NOT_YOUR_TURN)
    # the public view says who may add, so the table can show it
    assert set(game.view(None).throw_ins) == {"A", "C"}
    game.apply("C", att("6♥"))
    game.apply("B", dfd("6♠", "7♠"))
    game.apply("B", dfd("6♥", "7♣"))
    # D is not eligible: his 6♦ does not keep the bout open; A and C hold nothing more
    assert game.table == []
    assert game.attacker == "B"
    assert game.defender == "C"


def test_r9_throw_in_neighbours_at_5_with_four_players_is_all() -> None:
    """R9: neighbours_at_5 with four active players: everyone throws in (003)."""
    game = position(THROW, trump="♣", attacker="A", rules=Rules(throw_in="neighbours_at_5"))
    game.apply("A", att("6♠"))
    assert attacks(game.legal_actions("D")) == {c("6♦")}
    game.apply("D", att("6♦"))
    assert len(game.table) == 2


@pytest.mark.parametrize("n", [5, 6])
def test_r9_throw_in_neighbours_at_5_with_five_or_six_players(n: int) -> None:
    """R9: neighbours_at_5 with five or six active players: only the neighbours (003)."""
    hands = {
        "A": "6♠ K♣",
        "B": "7♠ 8♠ 9♠ 10♠ J♠",
        "C": "6♥ Q♣",
        "D": "6♦ A♣",
        "E": "6♣ 7♥",
        "F": "8♥ 9♥",
    }
    hands = dict(list(hands.items())[:n])
    game = position(hands, trump="♣", attacker="A", rules=Rules(throw_in="neighbours_at_5"))
    game.apply("A", att("6♠"))
    assert attacks(game.legal_actions("C")) == {c("6♥")}
    assert attacks(game.legal_actions("D")) == set()
    assert attacks(game.legal_actions("E")) == set()
    assert_illegal(game, "D", att("6♦"), ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "E", att("6♣"), ErrorCode.NOT_YOUR_TURN)


PASSES = {
    "A": "6♠ 7♣ 8♥ K♣",
    "B": "7♠ 8♠ 9♥ 10♥ A♣",
    "C": "6♥ 7♥ 6♣ Q♣",
}


def test_r9_bout_closes_when_every_eligible_attacker_passed() -> None:
    """R9/R12: after a full defence the bout waits for all attackers; all pass: beaten off."""
    game = position(PASSES, trump="A♦", stock="6♦ 7♦ 8♦ 9♦ 10♦ J♦ Q♦", attacker="A")
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert game.to_act == frozenset({"A", "C"})
    assert Pass() in game.legal_actions("A")
    assert Pass() in game.legal_actions("C")
    game.apply("A", Pass())
    assert game.passed == frozenset({"A"})
    assert game.to_act == frozenset({"C"})
    assert game.table == [(c("6♠"), c("7♠"))]
    game.apply("C", Pass())
    assert game.table == []
    assert game.discard_size == 2
    assert game.attacker == "B"
    assert game.defender == "C"


def test_r9_a_new_card_cancels_earlier_passes() -> None:
    """R9: a new card cancels earlier passes (003)."""
    game = position(PASSES, trump="A♦", stock="6♦ 7♦ 8♦ 9♦ 10♦ J♦ Q♦", attacker="A")
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")), ("A", Pass()))
    game.apply("C", att("7♥"))
    assert game.passed == frozenset()
    assert game.to_act == frozenset({"B"})
    game.apply("B", dfd("7♥", "9♥"))
    # A passed before, but a card came since: A must pass again
    assert game.to_act == frozenset({"A", "C"})
    assert Pass() in game.legal_actions("A")
    game.apply("C", Pass())
    assert game.to_act == frozenset({"A"})
    assert len(game.table) == 2
    game.apply("A", Pass())
    assert game.table == []
    assert game.discard_size == 4


def test_r9_attacker_without_legal_card_counts_as_passed() -> None:
    """R9: an attacker with no card to add is not waited for."""
    game = position(
        {"A": "6♠ K♣", "B": "7♠ 9♥ 10♥", "C": "6♥ Q♣"},
        trump="A♦",
        stock="6♦ 7♦ 8♦ 9♦",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert game.to_act == frozenset({"C"})
    assert Pass() not in game.legal_actions("A")
    game.apply("C", Pass())
    assert game.table == []
    assert game.attacker == "B"


def test_r9_nobody_can_add_bout_ends_at_once() -> None:
    """R9/R12: when no attacker can add a card the bout is beaten off at once."""
    game = position(
        {"A": "6♠ K♣", "B": "7♠ 9♥ 10♥", "C": "8♥ Q♣"},
        trump="A♦",
        stock="6♦ 7♦ 8♦ 9♦",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert game.table == []
    assert game.discard_size == 2
    assert game.attacker == "B"
    assert game.defender == "C"
    assert game.to_act == frozenset({"B"})


def test_r9_pass_only_while_waiting_for_attackers() -> None:
    """R9 (Pass): not at the start of a bout, not while the defender is to act, not twice."""
    game = position(PASSES, trump="A♦", stock="6♦ 7♦ 8♦ 9♦ 10♦ J♦ Q♦", attacker="A")
    assert Pass() not in game.legal_actions("A")
    assert_illegal(game, "A", Pass(), ErrorCode.CANNOT_PASS)
    game.apply("A", att("6♠"))
    assert Pass() not in game.legal_actions("A")
    assert Pass() not in game.legal_actions("C")
    assert_illegal(game, "A", Pass(), ErrorCode.CANNOT_PASS, ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "C", Pass(), ErrorCode.CANNOT_PASS, ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "B", Pass(), ErrorCode.CANNOT_PASS, ErrorCode.NOT_YOUR_TURN)
    game.apply("B", dfd("6♠", "7♠"))
    game.apply("A", Pass())
    assert Pass() not in game.legal_actions("A")
    assert_illegal(game, "A", Pass(), ErrorCode.CANNOT_PASS, ErrorCode.NOT_YOUR_TURN)


# --- R10 limit ----------------------------------------------------------------------------


def test_r10_limit_is_defenders_hand_at_bout_start() -> None:
    """R10: no more attack cards than the defender held when the bout began."""
    game = position(
        {"A": "6♠ 6♣ 6♦ 6♥ K♣", "B": "8♠ 8♣ 9♥"},
        trump="A♠",
        stock="10♦ J♦ Q♦ K♦",
        attacker="A",
    )
    game.apply("A", att("6♠"))
    assert game.limit == 3
    game.apply("B", dfd("6♠", "8♠"))
    game.apply("A", att("6♣"))
    game.apply("B", dfd("6♣", "8♣"))
    game.apply("A", att("6♦"))
    # three attack cards: the limit, although A still holds 6♥
    assert attacks(game.legal_actions("A")) == set()
    assert_illegal(game, "A", att("6♥"), ErrorCode.LIMIT_REACHED)
    assert game.to_act == frozenset({"B"})


def test_r10_unbeaten_cards_never_outnumber_defenders_hand() -> None:
    """R10: with two cards in hand the defender faces at most two cards at once."""
    game = position({"A": "6♠ 6♣ 6♦ K♣", "B": "8♠ 8♣"}, trump="A♥", stock="10♦ J♦ Q♦", attacker="A")
    play(game, ("A", att("6♠")), ("A", att("6♣")))
    assert game.limit == 2
    assert_illegal(game, "A", att("6♦"), ErrorCode.LIMIT_REACHED)


def test_r10_limit_never_more_than_six() -> None:
    """R10: a defender with eight cards still faces at most six attack cards."""
    game = position(
        {"A": "6♠ 6♥ 6♦ 6♣ 7♥ 7♦ 7♣", "B": "7♠ 8♠ 9♠ 10♠ J♠ Q♠ K♠ A♠"},
        trump="♥",
        attacker="A",
    )
    game.apply("A", att("6♠"))
    assert game.limit == 6
    game.apply("B", dfd("6♠", "7♠"))
    for card in ("6♥", "6♦", "6♣", "7♥", "7♦"):
        game.apply("A", att(card))
    assert len(game.table) == 6
    assert attacks(game.legal_actions("A")) == set()
    assert_illegal(game, "A", att("7♣"), ErrorCode.LIMIT_REACHED)


FIRST = {"A": "6♠ 6♣ 6♦ 6♥ 8♦ 8♥", "B": "8♠ 8♣ 9♦ A♥ 10♦ J♠"}
FIRST_STOCK = "10♠ 10♣ J♣ J♦ Q♠ Q♣ Q♦ 7♠ 7♣"


def _first_five(game: Game) -> None:
    """A attacks with the four sixes, B beats 6♠ with 8♠, A adds 8♦: five attack cards."""
    for card in ("6♠", "6♣", "6♦", "6♥"):
        game.apply("A", att(card))
    game.apply("B", dfd("6♠", "8♠"))
    game.apply("A", att("8♦"))
    assert len(game.table) == 5


def test_r10_first_bout_limit_is_five_by_default() -> None:
    """R10: first_bout_limit=5 (default): five attack cards in the first bout (000, 002)."""
    assert Rules().first_bout_limit == 5
    game = position(FIRST, trump="K♥", stock=FIRST_STOCK, attacker="A", first_bout=True)
    assert game.first_bout
    _first_five(game)
    assert game.limit == 5
    # B still holds five cards, but the first bout allows only five attack cards
    assert len(game.hand("B")) == 5
    assert attacks(game.legal_actions("A")) == set()
    assert_illegal(game, "A", att("8♥"), ErrorCode.LIMIT_REACHED)


def test_r10_first_bout_limit_six_option() -> None:
    """R10: first_bout_limit=6 (003): six attack cards already in the first bout."""
    rules = Rules(first_bout_limit=6)
    game = position(
        FIRST, trump="K♥", stock=FIRST_STOCK, attacker="A", rules=rules, first_bout=True
    )
    _first_five(game)
    assert attacks(game.legal_actions("A")) == {c("8♥")}
    game.apply("A", att("8♥"))
    assert game.limit == 6
    assert len(game.table) == 6


def test_r10_first_bout_limit_does_not_apply_later() -> None:
    """R10: after the first discard the limit is six again."""
    game = position(FIRST, trump="K♥", stock=FIRST_STOCK, attacker="A", first_bout=False)
    assert not game.first_bout
    _first_five(game)
    game.apply("A", att("8♥"))
    assert game.limit == 6
    assert len(game.table) == 6


def test_r12_beaten_off_when_limit_reached_although_attackers_hold_cards() -> None:
    """R12: every card beaten and the limit reached: beaten off at once, defender attacks."""
    game = position(FIRST, trump="K♥", stock=FIRST_STOCK, attacker="A", first_bout=True)
    _first_five(game)
    for a, d in (("6♣", "8♣"), ("6♦", "9♦"), ("6♥", "A♥")):
        game.apply("B", dfd(a, d))
        assert len(game.table) == 5
    game.apply("B", dfd("8♦", "10♦"))
    # A still holds 8♥, a rank on the table, but the limit of five was reached
    assert game.table == []
    assert game.discard_size == 10
    assert not game.first_bout
    assert game.attacker == "B"
    assert game.defender == "A"
    assert game.to_act == frozenset({"B"})


def test_r10_first_bout_ends_only_at_first_discard_not_at_take() -> None:
    """R10: taking does not end the first bout; only the first discard does."""
    game = position(
        {"A": "6♠ 7♠ 8♠ 9♠ 10♠ J♠", "B": "6♥ 7♥ 8♥ 9♥ 10♥ Q♠"},
        trump="A♦",
        stock="6♣ 7♣ 8♣ 9♣ 10♣ J♣ Q♣ K♣ A♣",
        attacker="A",
        first_bout=True,
    )
    game.apply("A", att("6♠"))
    assert game.limit == 5
    assert Take() in game.legal_actions("B")  # B could beat with Q♠ but may take (R13)
    game.apply("B", Take())
    # A holds no other six: B picks up at once
    assert game.table == []
    assert game.first_bout
    assert game.attacker == "A"
    assert game.defender == "B"
    assert len(game.hand("B")) == 7
    game.apply("A", att("7♠"))
    assert game.limit == 5  # still the first bout
    game.apply("B", dfd("7♠", "Q♠"))
    assert game.table == []
    assert game.discard_size == 2
    assert not game.first_bout
    assert game.attacker == "B"
    assert game.defender == "A"
    assert len(game.hand("A")) == 6
    assert len(game.hand("B")) == 6
    card = game.hand("B")[0]
    game.apply("B", Attack(card))
    assert game.limit == 6


def test_r10_defender_with_one_card_gets_one_attack_card() -> None:
    """R10/R12: a defender with one card faces one card; beating it ends the bout."""
    game = position({"A": "6♠ 6♥ K♣", "B": "A♠"}, trump="A♦", stock="10♦ J♦ Q♦ K♦", attacker="A")
    game.apply("A", att("6♠"))
    assert game.limit == 1
    assert attacks(game.legal_actions("A")) == set()
    assert_illegal(game, "A", att("6♥"), ErrorCode.LIMIT_REACHED)
    game.apply("B", dfd("6♠", "A♠"))
    assert game.table == []
    assert game.discard_size == 2
    assert game.attacker == "B"


def test_r10_defence_cards_do_not_count() -> None:
    """R10: only attack cards count; the table may hold more cards than the limit."""
    game = position(
        {"A": "6♠ 6♣ 7♦ 8♣ K♣", "B": "7♠ 7♣ 8♦ A♥"},
        trump="K♥",
        stock="10♦ J♦ Q♦",
        attacker="A",
    )
    play(
        game,
        ("A", att("6♠")),
        ("B", dfd("6♠", "7♠")),
        ("A", att("6♣")),
        ("B", dfd("6♣", "7♣")),
        ("A", att("7♦")),
        ("B", dfd("7♦", "8♦")),
    )
    assert game.limit == 4
    assert len(game.table) == 3
    assert attacks(game.legal_actions("A")) == {c("8♣")}
    game.apply("A", att("8♣"))
    assert len(game.table) == 4
    assert game.to_act == frozenset({"B"})


# --- R11 defence --------------------------------------------------------------------------


def test_r11_defend_in_any_order() -> None:
    """R11: several unbeaten cards may be covered in any order."""
    game = position(
        {"A": "6♠ 6♥ K♣", "B": "7♠ 7♥ 9♣ 10♣"}, trump="A♦", stock="10♦ J♦ Q♦", attacker="A"
    )
    play(game, ("A", att("6♠")), ("A", att("6♥")))
    defends = {(a.attack, a.card) for a in game.legal_actions("B") if isinstance(a, Defend)}
    assert defends == {(c("6♠"), c("7♠")), (c("6♥"), c("7♥"))}
    game.apply("B", dfd("6♥", "7♥"))
    assert game.table == [(c("6♠"), None), (c("6♥"), c("7♥"))]
    assert game.to_act == frozenset({"B"})
    game.apply("B", dfd("6♠", "7♠"))
    assert game.table == []
    assert game.discard_size == 4


def test_r11_defend_names_an_unbeaten_attack_card() -> None:
    """R11: Defend must name an unbeaten attack card on the table."""
    game = position(
        {"A": "6♠ 6♥ K♣", "B": "7♠ 8♠ 7♥ 9♣"}, trump="A♦", stock="10♦ J♦ Q♦", attacker="A"
    )
    play(game, ("A", att("6♠")), ("A", att("6♥")), ("B", dfd("6♠", "7♠")))
    assert_illegal(game, "B", dfd("6♠", "8♠"), ErrorCode.NO_SUCH_ATTACK)
    assert_illegal(game, "B", dfd("6♦", "7♥"), ErrorCode.NO_SUCH_ATTACK)
    assert_illegal(game, "B", dfd("7♠", "8♠"), ErrorCode.NO_SUCH_ATTACK)


# --- R12 beaten off -----------------------------------------------------------------------


def test_r12_beaten_off_goes_to_discard_and_defender_attacks() -> None:
    """R12: the table is discarded for good; the defender attacks the next player."""
    game = position(
        {"A": "6♠ K♣", "B": "7♠ 9♥ 10♥", "C": "8♥ Q♣"},
        trump="A♦",
        stock="6♦ 7♦ 8♦ 9♦",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert game.table == []
    assert game.discard_size == 2
    assert all(c("6♠") not in game.hand(p) and c("7♠") not in game.hand(p) for p in game.players)
    assert game.attacker == "B"
    assert game.defender == "C"
    assert game.bout_opener == "B"
    assert game.to_act == frozenset({"B"})
    assert not game.defender_took
    assert game.passed == frozenset()


def test_r12_defender_out_next_active_player_attacks() -> None:
    """R12/R16: the defender went out beating off: the next active player attacks."""
    game = position(
        {"A": "6♠ 9♣", "B": "7♠", "C": "8♦ 10♦"},
        trump="♥",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert game.table == []
    assert game.active_players == ("A", "C")
    assert game.attacker == "C"
    assert game.defender == "A"
    assert game.to_act == frozenset({"C"})


# --- R13 taking ---------------------------------------------------------------------------


def test_r13_defender_may_take_even_when_he_could_beat() -> None:
    """R13: Take is legal while an attack card is unbeaten, even if a defence exists (003)."""
    game = position({"A": "6♠ 8♥ K♣", "B": "7♠ 9♣ 10♣"}, trump="A♦", stock="10♦ J♦", attacker="A")
    assert Take() not in game.legal_actions("B")
    game.apply("A", att("6♠"))
    legal = game.legal_actions("B")
    assert Take() in legal
    assert dfd("6♠", "7♠") in legal


def test_r13_attackers_add_after_take_up_to_limit() -> None:
    """R13: after Take the attackers add cards up to the limit, then he picks them up."""
    game = position({"A": "6♠ 6♥ 6♦ 8♥ K♣", "B": "7♠ 9♣ 10♣"}, trump="♦", attacker="A")
    play(game, ("A", att("6♠")), ("B", Take()))
    assert game.defender_took
    assert game.to_act == frozenset({"A"})
    assert game.table == [(c("6♠"), None)]
    assert attacks(game.legal_actions("A")) == set(cs("6♥ 6♦"))
    assert Pass() in game.legal_actions("A")
    assert not any(isinstance(a, Defend) for a in game.legal_actions("B"))
    assert Take() not in game.legal_actions("B")
    game.apply("A", att("6♥"))
    assert game.to_act == frozenset({"A"})
    game.apply("A", att("6♦"))
    # the limit (B's three cards) is reached: B picks up at once
    assert game.table == []
    assert hand(game, "B") == set(cs("7♠ 9♣ 10♣ 6♠ 6♥ 6♦"))
    assert hand(game, "A") == set(cs("8♥ K♣"))
    assert game.discard_size == 0
    # he loses his turn: in a two-player game A attacks again
    assert game.attacker == "A"
    assert game.defender == "B"
    assert game.to_act == frozenset({"A"})
    assert not game.defender_took


def test_r13_take_picks_up_attack_and_defence_cards() -> None:
    """R13: the defender picks up every card on the table, attack and defence."""
    game = position({"A": "6♠ 8♥ K♣ Q♦", "B": "8♠ 9♣ 10♣ J♥"}, trump="♦", attacker="A")
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "8♠")), ("A", att("8♥")), ("B", Take()))
    assert game.table == []
    assert hand(game, "B") == set(cs("9♣ 10♣ J♥ 6♠ 8♠ 8♥"))
    assert game.discard_size == 0
    assert game.attacker == "A"


def test_r13_take_then_pass_then_next_player_after_defender_attacks() -> None:
    """R13: all attackers pass after Take; the player after the defender attacks next."""
    game = position(
        {"A": "6♠ 6♥ K♣", "B": "7♠ 9♣ 10♣ J♣", "C": "6♦ Q♥ A♥"},
        trump="♣",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", Take()))
    assert game.to_act == frozenset({"A", "C"})
    game.apply("A", Pass())
    assert game.to_act == frozenset({"C"})
    game.apply("C", att("6♦"))
    # a new card cancels A's pass; C has nothing left to add
    assert game.to_act == frozenset({"A"})
    assert game.passed == frozenset()
    game.apply("A", Pass())
    assert game.table == []
    assert hand(game, "B") == set(cs("7♠ 9♣ 10♣ J♣ 6♠ 6♦"))
    assert game.attacker == "C"
    assert game.defender == "A"
    assert game.to_act == frozenset({"C"})


def test_r13_cannot_take_twice_or_with_nothing_unbeaten() -> None:
    """R13: Take only while an attack card is unbeaten, once."""
    game = position(
        {"A": "6♠ 6♥ 7♥ K♣", "B": "7♠ 8♥ 10♣ J♣"}, trump="A♦", stock="6♦ 7♦", attacker="A"
    )
    assert_illegal(game, "B", Take(), ErrorCode.CANNOT_TAKE, ErrorCode.NOT_YOUR_TURN)
    game.apply("A", att("6♠"))
    assert_illegal(game, "A", Take(), ErrorCode.CANNOT_TAKE, ErrorCode.NOT_YOUR_TURN)
    game.apply("B", dfd("6♠", "7♠"))
    assert game.to_act == frozenset({"A"})
    assert Take() not in game.legal_actions("B")
    assert_illegal(game, "B", Take(), ErrorCode.CANNOT_TAKE, ErrorCode.NOT_YOUR_TURN)
    play(game, ("A", att("6♥")), ("B", Take()))
    assert game.defender_took
    assert_illegal(game, "B", Take(), ErrorCode.CANNOT_TAKE, ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "B", dfd("6♥", "8♥"))


def test_r13_next_bout_after_take_in_four_players() -> None:
    """R13: A attacks B, B takes: C attacks D next."""
    game = position(FOUR, trump="A♣", stock="8♠ 8♥ 8♦ 8♣ 9♠ 9♥ 9♦ 9♣", attacker="A")
    play(game, ("A", att("7♠")), ("B", Take()))
    # nobody else holds a seven except C (7♦) and D (7♣): they may add
    assert game.to_act == frozenset({"C", "D"})
    play(game, ("C", Pass()), ("D", Pass()))
    assert game.table == []
    assert game.attacker == "C"
    assert game.defender == "D"


def test_r12_r13_events_tell_what_happened() -> None:
    """R12/R13: apply reports the public events: beaten off, picked up, the next bout."""
    game = position({"A": "6♠ 8♥ K♣", "B": "7♠ 9♣ 10♣", "C": "Q♥ A♥"}, trump="A♦", attacker="A")
    game.apply("A", att("6♠"))
    events = game.apply("B", dfd("6♠", "7♠"))
    beaten = [e for e in events if isinstance(e, BeatenOff)]
    assert len(beaten) == 1
    assert set(beaten[0].cards) == set(cs("6♠ 7♠"))
    assert BoutStarted("B", "C") in events
    game.apply("B", att("9♣"))
    events = game.apply("C", Take())
    assert TakeDeclared("C") in events
    picked = [e for e in events if isinstance(e, PickedUp)]
    assert len(picked) == 1
    assert picked[0].player == "C"
    assert set(picked[0].cards) == {c("9♣")}
    assert BoutStarted("A", "B") in events
