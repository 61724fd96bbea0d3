"""The result, the confirm questions, how to play, and the small messages with buttons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.callbacks import encode_again, encode_howto, encode_kick, encode_leave, encode_practice
from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.render.common import Rendered, esc, name_of, short_name
from engine import Card, Outcome, Rules, Suit
from engine.rules import MAX_BOUT_CARDS


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


# ---------------------------------------------------------------- how to play


def howto(tr: Translator, lang: str, rules: Rules, *, chat: str | None = None) -> str:
    """How to play, in at most 12 short lines (one phone screen), with the options of `rules`
    as the engine plays them (docs/rules.md): the goal and the end (R16, R17), the deck and
    the first attack (R1, R4, R5), what beats what (R2), a bout and throwing in (R7–R11),
    transfers (R14), beaten off or taken and who attacks next (R12, R13), drawing (R15), the
    trump swap (R19), a new deal (R6). `chat`: the group whose rules these are (escaped),
    named in the title."""
    low = Card(rules.lowest_rank, Suit.HEARTS)
    title = tr.t(lang, "howto-title-chat", chat=chat) if chat else tr.t(lang, "howto-title")
    deal = tr.t(
        lang,
        "howto-deal",
        cards=tr.t(lang, "cards-count", count=rules.deck_size),
        low=low.rank_name,
        hand=rules.hand_size,
    )
    if rules.first_bout_limit < MAX_BOUT_CARDS:
        limit = tr.t(lang, "howto-limit", max=MAX_BOUT_CARDS, first=rules.first_bout_limit)
    else:
        limit = tr.t(lang, "howto-limit-flat", max=MAX_BOUT_CARDS)
    beat = tr.t(
        lang,
        "howto-beat",
        higher=str(Card(10, Suit.HEARTS)),
        lower=str(low),
        suit=Suit.SPADES.value,
        trump=str(Card(rules.lowest_rank, Suit.SPADES)),
        ace=str(Card(14, Suit.HEARTS)),
    )
    lines = [
        f"<b>{title}</b>",
        tr.t(lang, "howto-goal"),
        f"{deal} {tr.t(lang, f'howto-first-{rules.no_trump_start}')}",
        beat,
        tr.t(lang, "howto-bout"),
        f"{tr.t(lang, f'howto-throw-in-{rules.throw_in}')} {limit}",
    ]
    if rules.transfer:
        transfer = tr.t(lang, "howto-transfer")
        if rules.transfer_by_showing_trump:
            transfer += " " + tr.t(lang, "howto-show-trump")
        lines.append(transfer)
    lines += [
        f"{tr.t(lang, 'howto-beaten')} {tr.t(lang, 'howto-taken')}",
        tr.t(lang, "howto-draw", hand=rules.hand_size),
    ]
    if rules.trump_exchange:
        lines.append(tr.t(lang, "howto-exchange", low=low.rank_name))
    if rules.redeal_on_flush:
        lines.append(tr.t(lang, "howto-redeal"))
    return "\n".join(lines)


def help_message(tr: Translator, lang: str) -> Rendered:
    """/help: the buttons and commands, with a "How to play" button for the rules."""
    button = Button(tr.t(lang, "button-howto"), callback_data=encode_howto())
    return Rendered(tr.t(lang, "help-text"), Keyboard([[button]]))
