"""/settings: a group's house rules as an inline menu. Each button steps its option to
the next value (`bot.house_rules.step`); the message shows every option's current value and
what it means.
"""

from __future__ import annotations

from typing import Final

from bot.house_rules import OPTIONS, effective_timeout
from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.render.common import Rendered
from storage import ChatSettings

CLOSE: Final = "Sz"
"""The menu's last button: the menu stays as text, without buttons."""


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
        case "n":
            return on if settings.turn_alerts else off
        case _:
            return tr.t(lang, f"language-{settings.language or lang}")  # none set: as shown


def personal_menu(
    tr: Translator, lang: str, turn_alerts: bool | None, *, closed: bool = False
) -> Rendered:
    """/settings in a private chat: what the player chooses for all their games."""
    on, off = tr.t(lang, "value-on"), tr.t(lang, "value-off")
    value = tr.t(lang, "value-group-default") if turn_alerts is None else on if turn_alerts else off
    label = tr.t(lang, "settings-alerts")
    lines = [
        f"<b>{tr.t(lang, 'my-settings-title')}</b>",
        tr.t(lang, "my-settings-intro"),
        "",
        f"<b>{label}</b>: {value} — {tr.t(lang, 'my-settings-alerts-help')}",
    ]
    keyboard = Keyboard(
        [
            [Button(f"{label}: {value}", callback_data="Sn")],
            [Button(tr.t(lang, "settings-close"), callback_data=CLOSE)],
        ]
    )
    return Rendered("\n".join(lines), None if closed else keyboard)


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
