"""The lobby message: the rules in force, who sits, and its buttons."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.callbacks import encode_lobby
from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.render.common import Rendered, esc, rules_summary
from engine import Rules


@dataclass(frozen=True, slots=True)
class LobbySeat:
    name: str
    is_computer: bool = False


def lobby(
    tr: Translator,
    lang: str,
    *,
    game_id: int,
    opener: str,
    seats: Sequence[LobbySeat],
    rules: Rules,
    closed: str | None = None,
    levels: Sequence[str] = (),
    opener_seated: bool = True,
    invited: Sequence[str] = (),
    again: bool = False,
) -> Rendered:
    """The lobby message: the rules in one line, players so far, Join/Leave/Start/Cancel,
    computers, and Rules / How to play (each posts its text as a new message).

    `invited`: people asked by name (Play again) who have no seat yet; Join seats them.
    `again`: a lobby opened by Play again that starts by itself (`bot.play.again`).

    `closed` is a locale key ("lobby-expired", "lobby-cancelled"):
    the lobby is over and shows no buttons.
    """
    names = ", ".join(esc(s.name) + (" 🤖" if s.is_computer else "") for s in seats) or tr.t(
        lang, "lobby-nobody"
    )
    lines = [
        f"<b>{tr.t(lang, 'lobby-title')}</b>",
        # Once closed, nobody is asked to press Join any more.
        tr.t(lang, "lobby-opened-by" if closed else "lobby-created", name=esc(opener)),
        "",
        # One line (a closed lobby keeps it); the Rules button and /rules have
        # every option and the time per move.
        rules_summary(tr, lang, rules),
        "",
        tr.t(lang, "lobby-players", count=len(seats), max=rules.max_players, names=names),
    ]
    if closed:
        lines += ["", f"<i>{tr.t(lang, closed)}</i>"]
        return Rendered("\n".join(lines))
    if invited:
        key = "lobby-invited-again" if again else "lobby-invited"
        lines.append(tr.t(lang, key, names=", ".join(esc(n) for n in invited)))
        if again:
            lines.append(tr.t(lang, "lobby-again-starts"))
    if not opener_seated:  # the opener never started the bot: Join gives them the link
        lines.append(tr.t(lang, "lobby-opener-join", name=esc(opener)))
    if len(seats) > rules.max_players:  # the rules changed since (a smaller deck)
        lines.append(tr.t(lang, "lobby-too-many", extra=len(seats) - rules.max_players))
    elif len(seats) < 2 and not (invited and again):  # (Play again's line says "two or more")
        lines.append(tr.t(lang, "lobby-need-players", min=2))
    if levels:  # "Add computer" was tapped: which level?
        lines += ["", tr.t(lang, "lobby-pick-level")]
        picker = [
            Button(tr.t(lang, f"level-{level}"), callback_data=encode_lobby(game_id, "add", level))
            for level in levels
        ]
        back = Button(tr.t(lang, "button-back"), callback_data=encode_lobby(game_id, "refresh"))
        return Rendered("\n".join(lines), Keyboard([picker, [back]]))
    computer_row = [
        Button(tr.t(lang, "button-add-computer"), callback_data=encode_lobby(game_id, "add"))
    ]
    if any(s.is_computer for s in seats):
        remove = encode_lobby(game_id, "remove")
        computer_row.append(Button(tr.t(lang, "button-remove-computer"), callback_data=remove))
    keyboard = Keyboard(
        [
            [
                Button(tr.t(lang, "button-join"), callback_data=encode_lobby(game_id, "join")),
                Button(tr.t(lang, "button-leave"), callback_data=encode_lobby(game_id, "leave")),
            ],
            [
                Button(tr.t(lang, "button-start"), callback_data=encode_lobby(game_id, "start")),
                Button(tr.t(lang, "button-cancel"), callback_data=encode_lobby(game_id, "cancel")),
            ],
            computer_row,
            [
                Button(tr.t(lang, "button-rules"), callback_data=encode_lobby(game_id, "rules")),
                Button(tr.t(lang, "button-howto"), callback_data=encode_lobby(game_id, "howto")),
            ],
        ]
    )
    return Rendered("\n".join(lines), keyboard)
