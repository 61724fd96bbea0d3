"""/settings: a group's house rules as an inline menu, and a player's own settings in the
private chat. Most buttons step their option to the next value (`bot.house_rules.step`);
the language (and a player's turn alerts) is a row of choices, the current one marked. The
message shows every option's current value and what it means.

The buttons are sized for a phone: a row shows about `ROW_WIDTH` characters, shared by the
buttons in it (two options a row where both labels are short, a long one alone).
"""

from __future__ import annotations

from typing import Final

from bot.callbacks import encode_settings
from bot.house_rules import LANGUAGES, OPTIONS, PERSONAL_ALERTS, effective_timeout
from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.render.common import Rendered
from storage import ChatSettings

CLOSE: Final = encode_settings("z")
"""The menu's last button: the menu stays as text, without buttons."""

ROW_WIDTH: Final = 40
"""Characters a phone shows across one row of inline buttons; each of n buttons in a row
gets ROW_WIDTH // n (tests/bot/test_settings_menu.py checks every label in every language)."""

LAYOUT: Final = (
    ("p",),
    ("d", "t"),
    ("s", "x"),
    ("i",),
    ("f", "o"),
    ("w",),
    ("l",),
    ("c",),
    ("n",),
)
"""The group menu's rows of options, in the order of `OPTIONS`; "l": a button per language."""

UNEXPLAINED: Final = frozenset("pdilc")
"""Options whose name and value say it all (preset, deck, throwing in, language, computers on
the leaderboard): the menu's text gives them no explanation."""

CHOSEN: Final = "✓ "
"""Marks the current choice among choice buttons."""


TIMED: Final = frozenset("ow")
"""Options whose help says what happens when the time runs out: none when they are off."""


def _value(tr: Translator, lang: str, settings: ChatSettings, key: str, default: int) -> str:
    rules = settings.rules
    on, off = tr.t(lang, "value-on"), tr.t(lang, "value-off")
    match key:
        case "p":  # a preset's name while the options equal it, else "custom"
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
        case "w":
            seconds = settings.throw_in_window
            return tr.t(lang, "settings-seconds", seconds=seconds) if seconds else off
        case "c":
            return on if settings.show_computers else off
        case "n":
            return on if settings.turn_alerts else off
        case _:
            return tr.t(lang, f"language-{settings.language or lang}")  # none set: as shown


def _choice(text: str, chosen: bool, callback_data: str) -> Button:
    return Button(CHOSEN + text if chosen else text, callback_data=callback_data)


def personal_menu(
    tr: Translator, lang: str, turn_alerts: bool | None, *, closed: bool = False
) -> Rendered:
    """/settings in a private chat: what the player chooses for all their games."""
    on, off = tr.t(lang, "value-on"), tr.t(lang, "value-off")
    value = tr.t(lang, "value-group-default") if turn_alerts is None else on if turn_alerts else off
    label, help_ = tr.t(lang, "settings-alerts"), tr.t(lang, "my-settings-alerts-help")
    lines = [
        f"<b>{tr.t(lang, 'my-settings-title')}</b>",
        tr.t(lang, "my-settings-intro"),
        "",
        f"<b>{label}</b>: {value} — {help_}",
    ]
    if closed:
        return Rendered("\n".join(lines))
    choices = {
        code: _choice(tr.t(lang, f"my-settings-alerts-{code}"), choice is turn_alerts, f"Sn{code}")
        for code, choice in PERSONAL_ALERTS.items()
    }
    keyboard = Keyboard(
        [
            [choices["y"], choices["n"]],
            [choices["g"]],
            [Button(tr.t(lang, "settings-close"), callback_data=CLOSE)],
        ]
    )
    return Rendered("\n".join(lines), keyboard)


def render_menu(
    tr: Translator, lang: str, settings: ChatSettings, *, default_timeout: int, closed: bool = False
) -> Rendered:
    """The /settings menu; `closed` (after Done): the same as text, a record of the rules."""
    intro = tr.t(lang, "settings-closed" if closed else "settings-intro")
    lines = [f"<b>{tr.t(lang, 'settings-title')}</b>", intro, ""]
    buttons = {}
    for key, stem in OPTIONS.items():
        label = tr.t(lang, f"settings-{stem}")
        value = _value(tr, lang, settings, key, default_timeout)
        line = f"<b>{label}</b>: {value}"
        untimed = key in TIMED and value == tr.t(lang, "value-off")  # "then ..." says nothing
        if key not in UNEXPLAINED and not untimed:
            line += f" — {tr.t(lang, f'settings-{stem}-help')}"
        lines.append(line)
        if key == "i":  # the full value is in the text; the button has its short form
            value = tr.t(lang, f"settings-throw-in-{settings.rules.throw_in}")
        buttons[key] = Button(f"{label}: {value}", callback_data=encode_settings(key))
    if closed:
        return Rendered("\n".join(lines))
    current = settings.language or lang  # none set: the one the chat is served in
    languages = [
        _choice(tr.t(lang, f"language-{code}"), code == current, encode_settings("l", code))
        for code in LANGUAGES
    ]
    rows = [languages if keys == ("l",) else [buttons[key] for key in keys] for keys in LAYOUT]
    rows.append([Button(tr.t(lang, "settings-close"), callback_data=CLOSE)])
    return Rendered("\n".join(lines), Keyboard(rows))
