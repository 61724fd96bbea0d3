"""Durak rules engine: pure, synchronous, deterministic given a seed.

The one place the rules of docs/rules.md live. No I/O, no Telegram.

The same code runs as Python or compiled with mypyc (`tools/compile_engine.py`);
`COMPILED` tells which one was imported.
"""

from engine import advice
from engine import game as _game
from engine.actions import (
    Action,
    Attack,
    Defend,
    ExchangeTrump,
    Pass,
    Redeal,
    Resign,
    ShowTrump,
    Take,
    Transfer,
    parse_action,
)
from engine.cards import ALL_CARDS, Card, Suit, deck, format_cards, parse_cards
from engine.errors import ErrorCode, IllegalMove
from engine.events import (
    Attacked,
    BeatenOff,
    BoutStarted,
    Defended,
    Drew,
    Event,
    GameOver,
    Outcome,
    Passed,
    PickedUp,
    PlayerOut,
    Redealt,
    Resigned,
    TakeDeclared,
    Transferred,
    TrumpExchanged,
)
from engine.game import FORMAT_VERSION, Game
from engine.players import RandomPlayer
from engine.rules import PRESETS, Rules
from engine.view import GameView

COMPILED: bool = not _game.__file__.endswith(".py")
"""True when the engine's hot modules are C extensions built by mypyc."""

__all__ = [
    "ALL_CARDS",
    "COMPILED",
    "FORMAT_VERSION",
    "PRESETS",
    "Action",
    "Attack",
    "Attacked",
    "BeatenOff",
    "BoutStarted",
    "Card",
    "Defend",
    "Defended",
    "Drew",
    "ErrorCode",
    "Event",
    "ExchangeTrump",
    "Game",
    "GameOver",
    "GameView",
    "IllegalMove",
    "Outcome",
    "Pass",
    "Passed",
    "PickedUp",
    "PlayerOut",
    "RandomPlayer",
    "Redeal",
    "Redealt",
    "Resign",
    "Resigned",
    "Rules",
    "ShowTrump",
    "Suit",
    "Take",
    "TakeDeclared",
    "Transfer",
    "Transferred",
    "TrumpExchanged",
    "advice",
    "deck",
    "format_cards",
    "parse_action",
    "parse_cards",
]
