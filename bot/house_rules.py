"""A group's house rules, the options of /settings: which there are, which values each
takes, and what a tap on one changes. Pure functions over `ChatSettings`; the menu itself
is drawn by `bot.render.settings`, the tap handled by `bot.play.chat`.

Most options step to their next value on a tap. The language is a choice (a button per
language, so Russian is one tap away, not two through German), and so are a player's own
turn alerts in the private /settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from engine import PRESETS, Rules
from storage import ChatSettings

TIMEOUTS: Final = (0, 30, 60, 90, 180)  # seconds; 0 = no time limit
WINDOWS: Final = (0, 3, 5, 10)  # seconds of the throw-in window; 0 = wait for Done
LANGUAGES: Final = ("en", "de", "ru")
PRESET_ORDER: Final = tuple(PRESETS)
DECKS: Final = (24, 32, 36, 52)
THROW_INS: Final = ("all", "neighbours", "neighbours_at_5")

# option key in callback data -> locale key stem
OPTIONS: Final = {
    "p": "preset",
    "d": "deck",
    "t": "transfer",
    "s": "show-trump",
    "x": "trump-exchange",
    "i": "throw-in",
    "f": "first-bout",
    "o": "timeout",
    "w": "window",  # the throw-in window
    "l": "language",  # a choice: a button per language (`choose_language`)
    "c": "computers",
    "n": "alerts",
}
"""In the order the menu lists them."""

CHAT_WIDE_OPTIONS: Final = frozenset("lcn")
"""Options that are the chat's, not a game's (admins only): language, computers on the
leaderboard, the players' default for turn alerts."""


PERSONAL_ALERTS: Final[dict[str, bool | None]] = {"y": True, "n": False, "g": None}
"""A player's choice of turn alerts in the private /settings, by its code in the callback
data: on, off, as each group sets it."""


def _next(values: Sequence[Any], current: Any) -> Any:
    try:
        return values[(list(values).index(current) + 1) % len(values)]
    except ValueError:
        return values[0]


def effective_timeout(settings: ChatSettings, default: int) -> int:
    return default if settings.turn_timeout is None else settings.turn_timeout


def choose_language(settings: ChatSettings, language: str) -> ChatSettings:
    """The settings with the chat's language set to `language` (one of `LANGUAGES`)."""
    if language not in LANGUAGES:
        raise ValueError(f"no language {language!r}")
    return replace(settings, language=language)


def step(settings: ChatSettings, key: str, *, default_timeout: int) -> ChatSettings:
    """The settings with option `key` moved to its next value (not the language: a choice,
    `choose_language`)."""
    rules = settings.rules
    if key == "p":
        name = _next(PRESET_ORDER, rules.preset_name())
        return replace(settings, preset=name, rules=PRESETS[name])
    if key == "o":
        value = _next(TIMEOUTS, effective_timeout(settings, default_timeout))
        return replace(settings, turn_timeout=value)
    if key == "w":
        return replace(settings, throw_in_window=_next(WINDOWS, settings.throw_in_window))
    if key == "c":
        return replace(settings, show_computers=not settings.show_computers)
    if key == "n":
        return replace(settings, turn_alerts=not settings.turn_alerts)
    changes: dict[str, Any]
    if key == "d":
        changes = {"deck_size": _next(DECKS, rules.deck_size)}
    elif key == "t":
        changes = {"transfer": not rules.transfer, "transfer_by_showing_trump": False}
    elif key == "s":
        on = not rules.transfer_by_showing_trump
        changes = {"transfer_by_showing_trump": on, "transfer": rules.transfer or on}
    elif key == "i":
        changes = {"throw_in": _next(THROW_INS, rules.throw_in)}
    elif key == "f":
        changes = {"first_bout_limit": 6 if rules.first_bout_limit == 5 else 5}
    elif key == "x":
        changes = {"trump_exchange": not rules.trump_exchange}
    else:
        raise ValueError(f"no option {key!r}")
    new_rules = Rules.model_validate({**rules.model_dump(), **changes})
    return replace(settings, rules=new_rules, preset=new_rules.preset_name() or "custom")
