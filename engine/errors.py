"""Errors the engine raises for bad moves."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Stable reasons an action is refused; the bot maps each to a localised answer."""

    GAME_OVER = "game_over"
    UNKNOWN_PLAYER = "unknown_player"
    PLAYER_OUT = "player_out"
    NOT_YOUR_TURN = "not_your_turn"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    RANK_NOT_ON_TABLE = "rank_not_on_table"
    DOES_NOT_BEAT = "does_not_beat"
    LIMIT_REACHED = "limit_reached"
    TRANSFER_NOT_ALLOWED = "transfer_not_allowed"
    NO_SUCH_ATTACK = "no_such_attack"
    CANNOT_TAKE = "cannot_take"
    CANNOT_PASS = "cannot_pass"
    EXCHANGE_NOT_ALLOWED = "exchange_not_allowed"
    REDEAL_NOT_ALLOWED = "redeal_not_allowed"


class IllegalMove(ValueError):
    """An action the rules do not allow now. The game is left exactly as it was."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
