"""Error codes of IllegalMove, their precedence, and that a refused move changes nothing."""

from __future__ import annotations

import pytest

from engine import (
    Attack,
    ErrorCode,
    ExchangeTrump,
    Game,
    IllegalMove,
    Pass,
    Redeal,
    Resign,
    Rules,
    Take,
)
from tests.engine.conftest import assert_illegal, att, dfd, play, position, tr
from tests.engine.conftest import c as _card

ALL_CODES = {
    "game_over",
    "unknown_player",
    "player_out",
    "not_your_turn",
    "card_not_in_hand",
    "rank_not_on_table",
    "does_not_beat",
    "limit_reached",
    "transfer_not_allowed",
    "no_such_attack",
    "cannot_take",
    "cannot_pass",
    "exchange_not_allowed",
    "redeal_not_allowed",
}


def _game() -> Game:
    """A: attacker, B: defender (2 cards), C: third player; trump ♦, stock left."""
    return position(
        {"A": "6♠ 6♥ 6♣ 9♣ K♣", "B": "7♠ 8♥", "C": "6♦ Q♠ J♥"},
        trump="A♦",
        stock="10♦ J♦ Q♦",
        attacker="A",
    )


def test_errors_codes_are_the_documented_strings() -> None:
    """Errors: ErrorCode is a StrEnum with exactly the documented codes."""
    assert {str(code) for code in ErrorCode} == ALL_CODES
    assert ErrorCode.LIMIT_REACHED == "limit_reached"
    assert issubclass(IllegalMove, ValueError)


def test_errors_game_over() -> None:
    """R17: any move after the end: game_over."""
    game = position({"A": "7♠", "B": "8♠"}, trump="♦", attacker="A")
    play(game, ("A", att("7♠")), ("B", dfd("7♠", "8♠")))
    assert game.is_over
    assert_illegal(game, "A", Resign(), ErrorCode.GAME_OVER)
    assert_illegal(game, "B", att("8♠"), ErrorCode.GAME_OVER)


def test_errors_unknown_player() -> None:
    """Errors: a name not at the table: unknown_player."""
    game = _game()
    before = game.to_dict()
    with pytest.raises(IllegalMove) as info:
        game.apply("Zed", att("6♠"))
    assert info.value.code == ErrorCode.UNKNOWN_PLAYER
    assert game.to_dict() == before
    with pytest.raises(IllegalMove) as info:
        game.apply("Zed", Resign())
    assert info.value.code == ErrorCode.UNKNOWN_PLAYER
    assert game.to_dict() == before


def test_errors_player_out() -> None:
    """R16: a player who is out: player_out, also for Resign (R18)."""
    game = position(
        {"A": "6♠", "B": "7♠ 8♦ 9♦", "C": "10♣ J♣ Q♣"},
        trump="♥",
        attacker="A",
    )
    play(game, ("A", att("6♠")), ("B", dfd("6♠", "7♠")))
    assert "A" not in game.active_players
    assert_illegal(game, "A", Resign(), ErrorCode.PLAYER_OUT)
    assert_illegal(game, "A", att("8♦"), ErrorCode.PLAYER_OUT)


def test_errors_not_your_turn() -> None:
    """R7: the defender (or a third player) cannot open the bout: not_your_turn."""
    game = _game()
    assert_illegal(game, "B", att("7♠"), ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "C", att("6♦"), ErrorCode.NOT_YOUR_TURN)
    game.apply("A", att("6♠"))
    # only the defender defends
    assert_illegal(game, "C", dfd("6♠", "Q♠"), ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "A", dfd("6♠", "9♣"), ErrorCode.NOT_YOUR_TURN)


def test_errors_card_not_in_hand() -> None:
    """Errors: playing a card one does not hold: card_not_in_hand."""
    game = _game()
    assert_illegal(game, "A", att("7♠"), ErrorCode.CARD_NOT_IN_HAND)
    game.apply("A", att("6♠"))
    assert_illegal(game, "B", dfd("6♠", "9♠"), ErrorCode.CARD_NOT_IN_HAND)
    assert_illegal(game, "C", att("6♣"), ErrorCode.CARD_NOT_IN_HAND)


def test_errors_rank_not_on_table() -> None:
    """R8: a further attack card of another rank: rank_not_on_table."""
    game = _game()
    game.apply("A", att("6♠"))
    assert_illegal(game, "A", att("9♣"), ErrorCode.RANK_NOT_ON_TABLE)
    assert_illegal(game, "C", att("Q♠"), ErrorCode.RANK_NOT_ON_TABLE)


def test_errors_does_not_beat() -> None:
    """R2/R11: a card that does not beat: does_not_beat."""
    game = _game()
    game.apply("A", att("6♥"))
    assert_illegal(game, "B", dfd("6♥", "7♠"), ErrorCode.DOES_NOT_BEAT)


def test_errors_limit_reached() -> None:
    """R10: one attack card too many: limit_reached."""
    game = _game()
    play(game, ("A", att("6♠")), ("A", att("6♥")))
    assert_illegal(game, "A", att("6♣"), ErrorCode.LIMIT_REACHED)
    assert_illegal(game, "C", att("6♦"), ErrorCode.LIMIT_REACHED)


def test_errors_transfer_not_allowed() -> None:
    """R14: transfer with the option off: transfer_not_allowed."""
    game = position(
        {"A": "7♠ K♣", "B": "7♥ 9♠", "C": "8♠ 9♥"}, trump="A♦", stock="6♦", attacker="A"
    )
    game.apply("A", att("7♠"))
    assert_illegal(game, "B", tr("7♥"), ErrorCode.TRANSFER_NOT_ALLOWED)


def test_errors_no_such_attack() -> None:
    """R11: Defend naming a card that is not an unbeaten attack card: no_such_attack."""
    game = _game()
    game.apply("A", att("6♥"))
    assert_illegal(game, "B", dfd("6♠", "7♠"), ErrorCode.NO_SUCH_ATTACK)
    game.apply("B", dfd("6♥", "8♥"))
    game.apply("A", att("6♠"))
    # 6♥ is already beaten (7♠ would not beat it anyway; either code is right)
    assert_illegal(game, "B", dfd("6♥", "7♠"), ErrorCode.NO_SUCH_ATTACK, ErrorCode.DOES_NOT_BEAT)


def test_errors_cannot_take() -> None:
    """R13: no Take without an open attack card, and not twice: cannot_take."""
    game = _game()
    assert_illegal(game, "A", Take(), ErrorCode.CANNOT_TAKE, ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "B", Take(), ErrorCode.CANNOT_TAKE, ErrorCode.NOT_YOUR_TURN)
    game.apply("A", att("6♥"))
    game.apply("B", dfd("6♥", "8♥"))
    assert_illegal(game, "B", Take(), ErrorCode.CANNOT_TAKE, ErrorCode.NOT_YOUR_TURN)
    game = _game()
    game.apply("A", att("6♠"))
    game.apply("B", Take())
    assert game.defender_took
    assert game.to_act == frozenset({"A", "C"})
    assert_illegal(game, "B", Take(), ErrorCode.CANNOT_TAKE)


def test_errors_cannot_pass() -> None:
    """R9: the attacker cannot pass before the first card: cannot_pass."""
    game = _game()
    assert_illegal(game, "A", Pass(), ErrorCode.CANNOT_PASS)


def test_errors_exchange_not_allowed() -> None:
    """R19: exchange with the option off: exchange_not_allowed."""
    game = position({"A": "7♠ 8♠", "B": "6♥ 9♠"}, trump="A♥", stock="10♣", attacker="A")
    assert_illegal(game, "B", ExchangeTrump(), ErrorCode.EXCHANGE_NOT_ALLOWED)


def test_errors_redeal_not_allowed() -> None:
    """R6: redeal with the option off: redeal_not_allowed."""
    game = _game()
    assert_illegal(game, "A", Redeal(), ErrorCode.REDEAL_NOT_ALLOWED)
    game = position(
        {"A": "6♠ 6♥ 6♣ 9♣ K♣", "B": "7♠ 8♥", "C": "6♦ Q♠ J♥"},
        trump="A♦",
        stock="10♦ J♦ Q♦",
        attacker="A",
        rules=Rules(redeal_on_flush=True),
        first_bout=True,
    )
    assert_illegal(game, "C", Redeal(), ErrorCode.REDEAL_NOT_ALLOWED)


# --- precedence: not your turn, card not in hand, rank not on table, does not beat, limit ---


def test_errors_precedence_not_your_turn_before_card_not_in_hand() -> None:
    """Errors precedence: not_your_turn wins over card_not_in_hand."""
    game = _game()
    assert_illegal(game, "B", att("A♠"), ErrorCode.NOT_YOUR_TURN)
    game.apply("A", att("6♠"))
    assert_illegal(game, "C", dfd("6♠", "A♠"), ErrorCode.NOT_YOUR_TURN)


def test_errors_precedence_card_not_in_hand_before_rank_not_on_table() -> None:
    """Errors precedence: card_not_in_hand wins over rank_not_on_table."""
    game = _game()
    game.apply("A", att("6♠"))
    assert_illegal(game, "A", att("A♠"), ErrorCode.CARD_NOT_IN_HAND)


def test_errors_precedence_card_not_in_hand_before_does_not_beat() -> None:
    """Errors precedence: card_not_in_hand wins over does_not_beat."""
    game = _game()
    game.apply("A", att("6♥"))
    assert_illegal(game, "B", dfd("6♥", "6♣"), ErrorCode.CARD_NOT_IN_HAND)


def test_errors_precedence_card_not_in_hand_before_limit_reached() -> None:
    """Errors precedence: card_not_in_hand wins over limit_reached."""
    game = _game()
    play(game, ("A", att("6♠")), ("A", att("6♥")))
    assert_illegal(game, "A", att("6♦"), ErrorCode.CARD_NOT_IN_HAND)


def test_errors_precedence_rank_not_on_table_before_limit_reached() -> None:
    """Errors precedence: rank_not_on_table wins over limit_reached."""
    game = _game()
    play(game, ("A", att("6♠")), ("A", att("6♥")))
    assert_illegal(game, "A", att("9♣"), ErrorCode.RANK_NOT_ON_TABLE)
    assert_illegal(game, "C", att("Q♠"), ErrorCode.RANK_NOT_ON_TABLE)


def test_errors_precedence_not_your_turn_before_everything() -> None:
    """Errors precedence: a third player defending a card he does not hold: not_your_turn."""
    game = _game()
    game.apply("A", att("6♥"))
    assert_illegal(game, "C", dfd("6♥", "2♣"), ErrorCode.NOT_YOUR_TURN)
    assert_illegal(game, "B", Attack(_card("6♣")), ErrorCode.NOT_YOUR_TURN)


def test_errors_state_unchanged_after_each_refusal() -> None:
    """Errors: after any IllegalMove, to_dict() and history are exactly as before."""
    game = _game()
    game.apply("A", att("6♠"))
    before = game.to_dict()
    history = game.history
    moves = [
        ("A", att("9♣")),
        ("A", att("7♦")),
        ("B", dfd("6♠", "8♥")),
        ("B", dfd("6♥", "7♠")),
        ("C", Take()),
        ("A", Pass()),
        ("B", tr("7♠")),
        ("B", ExchangeTrump()),
        ("C", Redeal()),
        ("Zed", Take()),
    ]
    for player, action in moves:
        try:
            game.apply(player, action)
        except IllegalMove:
            pass
        else:
            raise AssertionError(f"{player} {action} accepted")
        assert game.to_dict() == before
        assert game.history == history
        assert game.move_number == len(history)


@pytest.mark.parametrize(
    "name",
    [
        "attacker",
        "defender",
        "bout_opener",
        "trump_suit",
        "trump_card",
        "players",
        "rules",
        "first_bout",
        "seed",
        "deal_number",
    ],
)
def test_the_games_state_is_read_only(name: str) -> None:
    """Only actions change a game: its public state cannot be assigned around the rules."""
    game = Game.new(["a", "b", "c"], seed=1)
    before = game.to_dict()
    with pytest.raises(AttributeError):
        setattr(game, name, getattr(game, name))
    assert game.to_dict() == before
