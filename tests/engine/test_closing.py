"""R9, R12, R13: `Game.closing`, the point at which a bout waits only for throw-ins (the bot
gives that a short window, then ends the bout as if all had passed)."""

from __future__ import annotations

from engine import Pass, Take
from tests.engine.conftest import att, dfd, play, position

PLAYERS = {
    "A": "6♠ 7♣ 8♥ K♣",
    "B": "7♠ 8♠ 9♥ 10♥ A♣",
    "C": "6♥ 7♥ 6♣ Q♣",
}


def test_r9_closing_once_every_attack_card_is_covered() -> None:
    """R9/R12: open attack cards: not closing; all covered: closing, waiting only for the
    attackers who could add a card, in the game and in every view alike."""
    game = position(PLAYERS, trump="A♦", stock="6♦ 7♦ 8♦ 9♦ 10♦ J♦ Q♦", attacker="A")
    assert not game.closing
    game.apply("A", att("6♠"))
    assert not game.closing and not game.view(None).closing
    game.apply("B", dfd("6♠", "7♠"))
    assert game.closing and game.view(None).closing and game.view("B").closing
    assert game.to_act == frozenset({"A", "C"})
    game.apply("C", att("6♥"))  # a card thrown in: the defender is to move again
    assert not game.closing
    game.apply("B", dfd("6♥", "9♥"))
    assert game.closing


def test_r9_closing_waits_for_nobody_who_cannot_add() -> None:
    """R9: an attacker without a card of a rank on the table is never waited for; when
    nobody could add, the bout is not closing but over (R12)."""
    game = position(
        {"A": "6♠ K♣", "B": "7♠ 9♥ 10♥", "C": "6♥ Q♣"},
        trump="A♦",
        stock="6♦ 7♦ 8♦ 9♦",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert game.closing and game.to_act == frozenset({"C"})
    game.apply("C", Pass())
    assert not game.closing and game.table == []


def test_r13_closing_after_a_take() -> None:
    """R13: once the defender takes, the attackers who could add are waited for (closing);
    when the last of them passes, the defender picks up."""
    game = position(PLAYERS, trump="A♦", stock="6♦ 7♦ 8♦ 9♦ 10♦ J♦ Q♦", attacker="A")
    play(game, ("A", att("6♠")))
    game.apply("B", Take())
    assert game.closing and game.to_act == frozenset({"C"})
    game.apply("C", Pass())
    assert not game.closing and game.table == []
    assert len(game.hand("B")) == 6  # five of his own and the 6♠
