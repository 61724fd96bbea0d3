"""The result, the confirm questions, and the small messages with buttons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.callbacks import encode_again, encode_kick, encode_leave, encode_practice
from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.render.common import Rendered, esc, name_of, short_name
from engine import Outcome


def result(
    tr: Translator,
    lang: str,
    outcome: Outcome,
    *,
    game_id: int,
    names: Mapping[str, str],
    reason: str | None = None,
) -> Rendered:
    """The result message, with a Play again button."""
    lines = [f"<b>{tr.t(lang, 'result-title')}</b>"]
    if outcome.durak is None:
        lines.append(tr.t(lang, "result-draw"))
    else:
        lines.append(tr.t(lang, "result-durak", player=name_of(names, outcome.durak)))
        if reason:
            lines.append(tr.t(lang, reason, player=name_of(names, outcome.durak)))
    place = 1
    order = []
    for group in outcome.out_order:
        order.append(f"{place}. " + ", ".join(name_of(names, p) for p in group))
        place += len(group)
    if order:
        lines += ["", tr.t(lang, "result-order"), *order]
    lines.append(tr.t(lang, "result-bouts", count=outcome.bouts))
    keyboard = Keyboard([[Button(tr.t(lang, "button-again"), callback_data=encode_again(game_id))]])
    return Rendered("\n".join(lines), keyboard)


# ---------------------------------------------------------------- small messages


def confirm_leave(
    tr: Translator, lang: str, *, game_id: int, user_id: int, name: str, practice: bool = False
) -> Rendered:
    """/leave: a confirm button that only the player who asked can press (R18). In a
    private chat the question names the practice game (the player may have group games)."""
    keyboard = Keyboard(
        [
            [
                Button(
                    tr.t(lang, "button-resign"),
                    callback_data=encode_leave(game_id, user_id),
                )
            ]
        ]
    )
    key = "leave-confirm-practice" if practice else "leave-confirm"
    return Rendered(tr.t(lang, key, player=esc(name)), keyboard)


def add_to_group_keyboard(tr: Translator, lang: str | None, bot_username: str) -> Keyboard:
    return Keyboard(
        [
            [
                Button(
                    tr.t(lang, "button-add-to-group"),
                    url=f"https://t.me/{bot_username}?startgroup=play",
                )
            ]
        ]
    )


def confirm_kick(tr: Translator, lang: str, *, game_id: int, user_id: int, name: str) -> Rendered:
    """/kick: an admin confirms removing a player from the running game (R18)."""
    keyboard = Keyboard(
        [
            [
                Button(
                    tr.t(lang, "button-kick", player=short_name(name)),
                    callback_data=encode_kick(game_id, user_id),
                )
            ]
        ]
    )
    return Rendered(tr.t(lang, "kick-confirm", player=esc(name)), keyboard)  # whom: whole


def practice_menu(tr: Translator, lang: str | None, levels: Sequence[str]) -> Rendered:
    """/practice: how many computer opponents, and how strong."""
    rows = [
        [
            Button(
                tr.t(lang, "practice-button", level=tr.t(lang, f"level-{level}"), count=n)
                if n == 1
                else str(n),
                callback_data=encode_practice(n, level),
            )
            for n in range(1, 6)
        ]
        for level in levels
    ]
    return Rendered(tr.t(lang, "practice-intro"), Keyboard(rows))
