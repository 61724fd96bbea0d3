"""/settings: a group's house rules as an inline menu. Each button steps its option to
the next value; the message shows every option's current value and what it means.

Pure functions: `step` changes a `ChatSettings`, `render_menu` draws it. Changes apply to
the next game (and to an open lobby), never to a running one: the service sees to that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.render.common import Rendered
from engine import PRESETS, Rules
from storage import ChatSettings

TIMEOUTS: Final = (0, 30, 60, 90, 180)  # seconds; 0 = no time limit
LANGUAGES: Final = ("en", "de", "ru")
CLOSE: Final = "Sz"
"""The menu's last button: the menu stays as text, without buttons."""
PRESET_ORDER: Final = tuple(PRESETS)
DECKS: Final = (24, 32, 36, 52)
THROW_INS: Final = ("all", "neighbours", "neighbours_at_5")

# option key in callback data -> locale key stem
OPTIONS: Final = {
    "p": "preset",
    "d": "deck",
    "t": "transfer",
    "s": "show-trump",
    "i": "throw-in",
    "f": "first-bout",
    "x": "trump-exchange",
    "o": "timeout",
    "l": "language",
    "c": "computers",
}


def _next(values: Sequence[Any], current: Any) -> Any:
    try:
        return values[(list(values).index(current) + 1) % len(values)]
    except ValueError:
        return values[0]


def effective_timeout(settings: ChatSettings, default: int) -> int:
    return default if settings.turn_timeout is None else settings.turn_timeout


def step(
    settings: ChatSettings, key: str, *, default_timeout: int, shown_language: str = "en"
) -> ChatSettings:
    """The settings with option `key` moved to its next value. ``shown_language``: the
    language the menu showed as the chat's while it had none set (the next one follows it)."""
    rules = settings.rules
    if key == "p":
        name = _next(PRESET_ORDER, rules.preset_name())
        return replace(settings, preset=name, rules=PRESETS[name])
    if key == "o":
        value = _next(TIMEOUTS, effective_timeout(settings, default_timeout))
        return replace(settings, turn_timeout=value)
    if key == "l":
        return replace(settings, language=_next(LANGUAGES, settings.language or shown_language))
    if key == "c":
        return replace(settings, show_computers=not settings.show_computers)
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


def _value(tr: Translator, lang: str, settings: ChatSettings, key: str, default: int) -> str:
    rules = settings.rules
    on, off = tr.t(lang, "value-on"), tr.t(lang, "value-off")
    match key:
        case "p":
            return tr.t(lang, f"preset-{rules.preset_name() or 'custom'}")
        case "d":
            return str(rules.deck_size)
        case "t":
            return on if rules.transfer else off
        case "s":
            return on if rules.transfer_by_showing_trump else off
        case "i":
            return tr.t(lang, f"throw-in-{rules.throw_in}")
        case "f":
            return str(rules.first_bout_limit)
        case "x":
            return on if rules.trump_exchange else off
        case "o":
            seconds = effective_timeout(settings, default)
            return tr.t(lang, "settings-seconds", seconds=seconds) if seconds else off
        case "c":
            return on if settings.show_computers else off
        case _:
            return tr.t(lang, f"language-{settings.language or lang}")  # none set: as shown


def render_menu(
    tr: Translator, lang: str, settings: ChatSettings, *, default_timeout: int, closed: bool = False
) -> Rendered:
    """The /settings menu; `closed` (after Done): the same as text, a record of the rules."""
    intro = tr.t(lang, "settings-closed" if closed else "settings-intro")
    lines = [f"<b>{tr.t(lang, 'settings-title')}</b>", intro, ""]
    buttons = []
    for key, stem in OPTIONS.items():
        label = tr.t(lang, f"settings-{stem}")
        value = _value(tr, lang, settings, key, default_timeout)
        lines.append(f"<b>{label}</b>: {value} — {tr.t(lang, f'settings-{stem}-help')}")
        buttons.append(Button(f"{label}: {value}", callback_data=f"S{key}"))
    rows = [buttons[i : i + 2] for i in range(0, len(buttons), 2)]
    rows.append([Button(tr.t(lang, "settings-close"), callback_data=CLOSE)])
    return Rendered("\n".join(lines), None if closed else Keyboard(rows))
