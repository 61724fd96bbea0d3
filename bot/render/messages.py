"""The result, the confirm questions, how to play, and the small messages with buttons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.callbacks import encode_again, encode_howto, encode_kick, encode_leave, encode_practice
from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.render.common import Rendered, card_text, esc, name_of, short_name
from engine import Card, Outcome, Rules, Suit
from engine.rules import MAX_BOUT_CARDS
from storage import FinishedGame


def result(
    tr: Translator,
    lang: str,
    outcome: Outcome,
    *,
    game_id: int,
    names: Mapping[str, str],
    reason: str | None = None,
    evening: Sequence[FinishedGame] = (),
    closed: bool = False,
) -> Rendered:
    """The result message, with its Play again button ("Ready for another"; none once
    `closed`: a newer game has begun). `evening`: the games of the evening it ends (see
    `ResultRepository.evening`), newest first; their tally is shown from the second on."""
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
    if len(evening) > 1:
        lines += ["", evening_tally(tr, lang, evening, names)]
    if closed:
        return Rendered("\n".join(lines))
    keyboard = Keyboard([[Button(tr.t(lang, "button-again"), callback_data=encode_again(game_id))]])
    return Rendered("\n".join(lines), keyboard)


def evening_tally(
    tr: Translator, lang: str, evening: Sequence[FinishedGame], names: Mapping[str, str]
) -> str:
    """ "Tonight, 3 games together — times the durak: Carol 2, Bob 1, Alice 0": every player
    of the evening, the most often durak first (then by name), and the draws if any."""
    counts = {p.player_id: 0 for p in evening[0].participants}
    draws = 0
    for game in evening:
        if game.durak is None:
            draws += 1
        elif game.durak in counts:
            counts[game.durak] += 1
    order = sorted(counts, key=lambda pid: (-counts[pid], name_of(names, pid)))
    entries = [
        tr.t(lang, "result-evening-durak", player=name_of(names, pid), count=counts[pid])
        for pid in order
    ]
    if draws:
        entries.append(tr.t(lang, "result-evening-draws", count=draws))
    return tr.t(lang, "result-evening", games=len(evening), tally=", ".join(entries))


# ---------------------------------------------------------------- small messages


def confirm_leave(
    tr: Translator,
    lang: str,
    *,
    game_id: int,
    user_id: int,
    name: str,
    practice: bool = False,
    chat: str | None = None,
) -> Rendered:
    """/leave: Yes and No buttons that only the player who asked can press (R18). In a
    private chat the question names the practice game (the player may have group games),
    or the group (`chat`, escaped) of the game asked about from there."""
    keyboard = Keyboard(
        [
            [
                Button(
                    tr.t(lang, "button-resign"),
                    callback_data=encode_leave(game_id, user_id),
                ),
                Button(
                    tr.t(lang, "button-play-on"),
                    callback_data=encode_leave(game_id, user_id, no=True),
                ),
            ]
        ]
    )
    if chat is not None:
        return Rendered(tr.t(lang, "leave-confirm-group", player=esc(name), chat=chat), keyboard)
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
    """/kick: an admin confirms removing a player from the running game (R18), or says
    No."""
    keyboard = Keyboard(
        [
            [
                Button(
                    tr.t(lang, "button-kick", player=short_name(name)),
                    callback_data=encode_kick(game_id, user_id),
                ),
                Button(
                    tr.t(lang, "button-kick-no"),
                    callback_data=encode_kick(game_id, user_id, no=True),
                ),
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
        higher=card_text(Card(10, Suit.HEARTS)),
        lower=card_text(low),
        suit=Suit.SPADES.value,
        trump=card_text(Card(rules.lowest_rank, Suit.SPADES)),
        ace=card_text(Card(14, Suit.HEARTS)),
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
