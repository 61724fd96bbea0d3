"""Pure rendering: (game view, language) -> message text (Telegram HTML) and keyboards.

Nothing here talks to Telegram or the database, so every text is tested without
either. The public table is drawn from `game.view(None)`, which holds no hand:
a hand can only reach the player it belongs to, through `hand()`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bot.callbacks import (
    CardTap,
    Refresh,
    encode_again,
    encode_kick,
    encode_leave,
    encode_lobby,
    encode_move,
    encode_practice,
)
from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from engine import (
    Action,
    Attack,
    Card,
    Defend,
    ExchangeTrump,
    GameView,
    Outcome,
    Pass,
    Redeal,
    Resign,
    Rules,
    ShowTrump,
    Suit,
    Take,
    Transfer,
)
from engine.ai import LEVELS

CARDS_PER_ROW: Final = 6
MAX_LOG_LINES: Final = 4
_REFRESH: Final = Refresh()


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    keyboard: Keyboard | None = None


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def computer_id(level: str, number: int) -> str:
    """The player id of a lobby's `number`th computer player of `level`."""
    return f"cpu-{level}-{number}"


def computer_name(tr: Translator, lang: str, player_id: str) -> str | None:
    """A computer player's name in `lang`, made from its id (see `computer_id`), so that it
    follows the chat's language; None for an id that is not a computer's."""
    prefix, _, rest = player_id.partition("-")
    level, _, number = rest.rpartition("-")
    if prefix != "cpu" or level not in LEVELS or not number.isdigit():
        return None
    return tr.t(lang, "computer-name", n=int(number), level=tr.t(lang, f"level-{level}"))


def card_text(card: Card | None) -> str:
    return "—" if card is None else str(card)


def _name(names: Mapping[str, str], player: str) -> str:
    return esc(names.get(player, player))


# ---------------------------------------------------------------- rules


def rules_lines(tr: Translator, lang: str, rules: Rules) -> list[str]:
    """The rules in force, one short line each."""
    preset = rules.preset_name()
    yes, no = tr.t(lang, "value-on"), tr.t(lang, "value-off")
    lines = [
        tr.t(lang, "rules-preset", preset=tr.t(lang, f"preset-{preset or 'custom'}")),
        tr.t(lang, "rules-deck", count=rules.deck_size),
        tr.t(lang, "rules-throw-in", mode=tr.t(lang, f"throw-in-{rules.throw_in}")),
        tr.t(lang, "rules-first-bout", count=rules.first_bout_limit),
        tr.t(lang, "rules-transfer", value=yes if rules.transfer else no),
    ]
    if rules.transfer:
        lines.append(
            tr.t(lang, "rules-show-trump", value=yes if rules.transfer_by_showing_trump else no)
        )
    lines.append(tr.t(lang, "rules-trump-exchange", value=yes if rules.trump_exchange else no))
    if rules.redeal_on_flush:  # R6: no /settings entry and off in every preset; named when on
        lines.append(tr.t(lang, "rules-redeal", value=yes))
    return lines


def pack(texts: Sequence[str], limit: int = 4000) -> list[str]:
    """Join texts with a blank line between them into as few messages as Telegram takes
    (4096 characters; `limit` counts the HTML source, which is never shorter)."""
    messages: list[str] = []
    for text in texts:
        if messages and len(messages[-1]) + 2 + len(text) <= limit:
            messages[-1] += "\n\n" + text
        else:
            messages.append(text)
    return messages


def rules_text(tr: Translator, lang: str, rules: Rules, turn_timeout: int) -> str:
    lines = [f"<b>{tr.t(lang, 'rules-title')}</b>", *rules_lines(tr, lang, rules)]
    if turn_timeout:
        lines.append(tr.t(lang, "rules-timeout", seconds=turn_timeout))
    else:
        lines.append(tr.t(lang, "rules-no-timeout"))
    return "\n".join(lines)


# ---------------------------------------------------------------- lobby


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
    turn_timeout: int,
    closed: str | None = None,
    levels: Sequence[str] = (),
    opener_seated: bool = True,
) -> Rendered:
    """The lobby message: rules in force, players so far, Join/Leave/Start/Cancel.

    `closed` is a locale key ("lobby-expired", "lobby-cancelled", "lobby-started"):
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
        *rules_lines(tr, lang, rules),
        tr.t(lang, "rules-timeout", seconds=turn_timeout)
        if turn_timeout
        else tr.t(lang, "rules-no-timeout"),
        "",
        tr.t(lang, "lobby-players", count=len(seats), max=rules.max_players, names=names),
    ]
    if closed:
        lines += ["", f"<i>{tr.t(lang, closed)}</i>"]
        return Rendered("\n".join(lines))
    if not opener_seated:  # the opener never started the bot: Join gives them the link
        lines.append(tr.t(lang, "lobby-opener-join", name=esc(opener)))
    if len(seats) > rules.max_players:  # the rules changed since (a smaller deck)
        lines.append(tr.t(lang, "lobby-too-many", extra=len(seats) - rules.max_players))
    elif len(seats) < 2:
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
        ]
    )
    return Rendered("\n".join(lines), keyboard)


# ---------------------------------------------------------------- event log


def log_line(tr: Translator, lang: str, entry: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """One past event in words. Entries are small dicts stored with the game (see bot.log)."""
    kind = entry.get("e", "")
    args: dict[str, str | int] = {}
    for key in ("p", "to"):
        if key in entry:
            args["player" if key == "p" else "target"] = _name(names, str(entry[key]))
    if "n" in entry:
        args["count"] = int(entry["n"])
    key = f"log-{kind}"
    if not tr.has(key):
        return ""
    return tr.t(lang, key, **args)


# ---------------------------------------------------------------- table (public)


def _role_of(view: GameView, player: str) -> str | None:
    if player not in view.active_players:
        return "out"
    if player == view.defender:
        return "defender"
    if player == view.attacker:
        return "attacker"
    return None


def _table_lines(tr: Translator, lang: str, view: GameView) -> list[str]:
    if not view.table:
        return [tr.t(lang, "table-empty")]
    pairs = []
    for attack, defence in view.table:
        pairs.append(f"{card_text(attack)} ← {card_text(defence)}" if defence else str(attack))
    return ["  ".join(pairs[i : i + 3]) for i in range(0, len(pairs), 3)]


def _trump_line(tr: Translator, lang: str, view: GameView) -> str:
    return tr.t(
        lang,
        "table-trump",
        card=card_text(view.trump_card) if view.trump_card else view.trump_suit.value,
        stock=view.stock_size,
        discard=view.discard_size,
    )


def waiting_line(
    tr: Translator, lang: str, view: GameView, names: Mapping[str, str], seconds: int | None
) -> str:
    if not view.to_act:
        return ""
    who = ", ".join(_name(names, p) for p in view.players if p in view.to_act)
    if seconds is not None:
        return tr.t(lang, "table-waiting-deadline", names=who, seconds=max(0, seconds))
    return tr.t(lang, "table-waiting", names=who)


def table(
    tr: Translator,
    lang: str,
    view: GameView,
    *,
    names: Mapping[str, str],
    computers: frozenset[str] = frozenset(),
    log: Sequence[Mapping[str, Any]] = (),
    seconds_left: int | None = None,
    bot_username: str | None = None,
    closed: str | None = None,
) -> Rendered:
    """The group's table message, from the public view only.

    ``closed``: the game ended without a result (a cancel, say); that line replaces whom the
    game waits for."""
    assert view.hand is None, "the group table is drawn from the public view"
    lines = [f"<b>{tr.t(lang, 'table-title')}</b>", _trump_line(tr, lang, view), ""]
    durak = view.outcome.durak if view.outcome is not None else None
    for p in view.players:
        role = _role_of(view, p)
        mark = {"attacker": "⚔️", "defender": "🛡", "out": "✅"}.get(role or "", "▫️")
        bot_mark = " 🤖" if p in computers else ""
        status = ""
        if view.is_over:  # no roles any more: who went out, and the durak
            mark = "🃏" if p == durak else "✅"
            count = view.hand_counts[p]
            if p == durak:
                status = tr.t(lang, "seat-durak")
            elif not count:
                status = tr.t(lang, "seat-out")
            if count:  # the durak's cards, or everyone's after a resign (R18)
                count_text = tr.t(lang, "cards-count", count=count)
                status = f"{count_text} · {status}" if status else count_text
        elif role == "out":
            status = tr.t(lang, "seat-out")
        else:
            status = tr.t(lang, "cards-count", count=view.hand_counts[p])
            if role == "defender" and view.defender_took:
                status += " · " + tr.t(lang, "seat-takes")
            elif p in view.passed:
                status += " · " + tr.t(
                    lang, "seat-passed-take" if view.defender_took else "seat-passed"
                )
            elif role is None and view.table and p in view.throw_ins:
                status += " · " + tr.t(lang, "seat-may-add")
        lines.append(f"{mark} {_name(names, p)}{bot_mark}: {status}")
    lines += ["", *_table_lines(tr, lang, view)]
    recent = [line for e in log[-MAX_LOG_LINES:] if (line := log_line(tr, lang, e, names))]
    if recent:
        lines += ["", *(f"<i>{line}</i>" for line in recent)]
    waiting = waiting_line(tr, lang, view, names, seconds_left)
    if closed:
        lines += ["", f"<b>{closed}</b>"]
    elif waiting:
        lines += ["", waiting]
    keyboard = None
    if bot_username and not closed:
        keyboard = Keyboard(
            [[Button(tr.t(lang, "button-open-hand"), url=f"https://t.me/{bot_username}")]]
        )
    return Rendered("\n".join(lines), keyboard)


# ---------------------------------------------------------------- hand (private)


def _your_role(tr: Translator, lang: str, view: GameView, names: Mapping[str, str]) -> str:
    me = view.viewer
    assert me is not None
    if view.is_over:
        return ""
    if me not in view.active_players:
        return tr.t(lang, "hand-you-are-out")
    if me == view.defender:
        if view.defender_took:
            return tr.t(lang, "hand-you-take")
        if not view.table:
            return tr.t(lang, "hand-you-are-attacked", player=_name(names, view.attacker))
        if not view.open_attacks:
            return tr.t(lang, "hand-you-covered")
        transfers = any(isinstance(a, Transfer | ShowTrump) for a in view.legal)
        key = "hand-you-defend-transfer" if transfers else "hand-you-defend"
        return tr.t(lang, key, player=_name(names, view.attacker))
    if not view.table:
        if me == view.attacker:
            return tr.t(lang, "hand-you-open", player=_name(names, view.defender))
        return tr.t(
            lang,
            "hand-they-open",
            player=_name(names, view.attacker),
            target=_name(names, view.defender),
        )
    if any(isinstance(a, Attack) for a in view.legal):
        if not any(isinstance(a, Pass) for a in view.legal):  # the defender is still to move
            key = "hand-you-may-add-now"
        elif view.defender_took:
            key = "hand-you-may-add-take"
        else:
            key = "hand-you-may-add"
        return tr.t(lang, key, player=_name(names, view.defender))
    if me == view.attacker:  # nothing (more) to add: the defender is to move, or done
        return tr.t(lang, "hand-you-attack", player=_name(names, view.defender))
    return tr.t(
        lang,
        "hand-they-open",
        player=_name(names, view.attacker),
        target=_name(names, view.defender),
    )


def _action_buttons(tr: Translator, lang: str, view: GameView, game_id: int) -> list[Button]:
    move = view.move_number
    buttons = []
    for transfer in (a for a in view.legal if isinstance(a, Transfer)):  # R14: each card
        buttons.append(
            Button(
                tr.t(lang, "button-transfer", card=str(transfer.card)),
                callback_data=encode_move(game_id, move, transfer),
            )
        )
    for action in view.legal:
        if isinstance(action, ShowTrump):
            label = tr.t(lang, "button-show-trump", card=str(action.card))
        elif isinstance(action, Take):
            label = tr.t(lang, "button-take")
        elif isinstance(action, Pass):
            label = tr.t(lang, "button-pass-take" if view.defender_took else "button-pass")
        elif isinstance(action, ExchangeTrump):
            label = tr.t(lang, "button-exchange")
        elif isinstance(action, Redeal):
            label = tr.t(lang, "button-redeal")
        else:
            continue
        buttons.append(Button(label, callback_data=encode_move(game_id, move, action)))
    return buttons


def _card_label(card: Card, playable: bool) -> str:
    return str(card) if playable else f"·{card}·"


def hand(
    tr: Translator,
    lang: str,
    view: GameView,
    *,
    game_id: int,
    names: Mapping[str, str],
    chat_title: str,
    practice: bool = False,
    seconds_left: int | None = None,
    choice: Sequence[Action] | None = None,
    transfer_to: str | None = None,
    timeouts: int = 0,
    max_timeouts: int = 3,
) -> Rendered:
    """A player's private hand message: what they need to decide, and their cards as buttons.

    Cards that can be played now are plain; others are shown between dots and answer
    why not when tapped. `choice` replaces the cards with the options of an ambiguous
    tap (a card that covers several attack cards, or covers and transfers); a card that can
    only transfer asks to confirm, naming who would defend then (`transfer_to`).
    """
    me = view.viewer
    assert me is not None
    assert view.hand is not None
    active = is_active(view.legal) or me in view.to_act
    title = (
        tr.t(lang, "hand-title-practice")
        if practice
        else tr.t(lang, "hand-title", chat=esc(chat_title))
    )
    lines = [title, _trump_line(tr, lang, view)]
    if active:  # a passive player's message shows no table: it would go stale unedited
        if view.table:
            lines += ["", f"{tr.t(lang, 'hand-table')} {'  '.join(_table_lines(tr, lang, view))}"]
        else:  # "The table is empty.", not "Table: The table is empty."
            lines += ["", *_table_lines(tr, lang, view)]
    if view.is_over:
        return _hand_at_the_end(tr, lang, view, names, lines)
    role = _your_role(tr, lang, view, names)
    if role:
        lines += ["", f"<b>{role}</b>"]
    if me in view.to_act and seconds_left is not None:
        lines.append(tr.t(lang, "hand-seconds-left", seconds=max(0, seconds_left)))
    if timeouts:  # the bot moved for this player (R18): say so until they move themselves
        lines += ["", tr.t(lang, "hand-timed-out", count=timeouts, max=max_timeouts)]
    move = view.move_number
    rows: list[list[Button]] = []
    if choice:
        if transfer_to is not None:
            lines += ["", tr.t(lang, "hand-confirm-transfer", player=_name(names, transfer_to))]
        else:
            lines += ["", tr.t(lang, "hand-choose")]
        for action in choice:
            if isinstance(action, Defend):
                label = tr.t(lang, "button-cover", attack=str(action.attack), card=str(action.card))
            elif isinstance(action, Transfer):
                label = tr.t(lang, "button-transfer", card=str(action.card))
            else:
                label = str(action)
            rows.append([Button(label, callback_data=encode_move(game_id, move, action))])
        rows.append(
            [Button(tr.t(lang, "button-back"), callback_data=encode_move(game_id, move, _REFRESH))]
        )
        return Rendered("\n".join(lines), Keyboard(rows))
    playable = playable_cards(view.legal)
    rows = _card_rows(
        [
            (c.suit, Button(_card_label(c, c in playable), encode_move(game_id, move, CardTap(c))))
            for c in view.hand
        ]
    )
    actions = _action_buttons(tr, lang, view, game_id)
    if actions:
        rows += [actions[i : i + 2] for i in range(0, len(actions), 2)]
    if not view.hand:
        lines += ["", tr.t(lang, "hand-empty")]
    return Rendered("\n".join(lines), Keyboard(rows) if rows else None)


def _card_rows(cards: Sequence[tuple[Suit, Button]]) -> list[list[Button]]:
    """A hand's card buttons (in hand order: by suit, trumps last) as keyboard rows: up to
    `CARDS_PER_ROW` a row; a hand of more than two rows (a player who picked up a lot) one
    suit a row, so that a suit never breaks off in mid-row."""
    if len(cards) <= 2 * CARDS_PER_ROW:  # a usual hand keeps its compact rows
        buttons = [button for _, button in cards]
        return [buttons[i : i + CARDS_PER_ROW] for i in range(0, len(buttons), CARDS_PER_ROW)]
    rows: list[list[Button]] = []
    suit: Suit | None = None
    for card_suit, button in cards:
        if card_suit != suit or len(rows[-1]) == CARDS_PER_ROW:
            rows.append([])
            suit = card_suit
        rows[-1].append(button)
    return rows


def _hand_at_the_end(
    tr: Translator, lang: str, view: GameView, names: Mapping[str, str], lines: list[str]
) -> Rendered:
    """The last state of a hand message: the result, and the cards the player was left with
    (as text: no more buttons)."""
    outcome = view.outcome
    assert outcome is not None and view.hand is not None
    lines += ["", f"<b>{tr.t(lang, 'result-title')}</b>"]
    if outcome.durak is None:
        lines.append(tr.t(lang, "result-draw"))
    elif outcome.durak == view.viewer:
        lines.append(tr.t(lang, "hand-result-you-durak"))
    else:
        lines.append(tr.t(lang, "result-durak", player=_name(names, outcome.durak)))
    place = outcome.places(view.players).get(view.viewer or "")
    if place is not None and outcome.durak != view.viewer:
        lines.append(tr.t(lang, "hand-result-place", place=place, count=len(view.players)))
    if view.hand:
        lines.append(tr.t(lang, "hand-last-cards", cards=" ".join(map(str, view.hand))))
    return Rendered("\n".join(lines))


def is_active(legal: Sequence[Action]) -> bool:
    """Whether the player has something to decide now (anything but resigning)."""
    return any(not isinstance(a, Resign) for a in legal)


def playable_cards(legal: Sequence[Action]) -> frozenset[Card]:
    """Cards that some legal action plays: attack, cover or transfer."""
    out: set[Card] = set()
    for a in legal:
        if isinstance(a, (Attack | Transfer, Defend)):
            out.add(a.card)
    return frozenset(out)


def actions_for_card(legal: Sequence[Action], card: Card) -> list[Action]:
    """What tapping `card` can mean now: one action (play it), several (ask), none (why not)."""
    return [a for a in legal if isinstance(a, Attack | Transfer | Defend) and a.card is card]


# ---------------------------------------------------------------- the end


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
        lines.append(tr.t(lang, "result-durak", player=_name(names, outcome.durak)))
        if reason:
            lines.append(tr.t(lang, reason, player=_name(names, outcome.durak)))
    place = 1
    order = []
    for group in outcome.out_order:
        order.append(f"{place}. " + ", ".join(_name(names, p) for p in group))
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


def _short(name: str, limit: int = 32) -> str:
    """A name for a button label (plain text, which a phone cuts off early)."""
    return name if len(name) <= limit else name[: limit - 1].rstrip() + "…"


def confirm_kick(tr: Translator, lang: str, *, game_id: int, user_id: int, name: str) -> Rendered:
    """/kick: an admin confirms removing a player from the running game (R18)."""
    keyboard = Keyboard(
        [
            [
                Button(
                    tr.t(lang, "button-kick", player=_short(name)),
                    callback_data=encode_kick(game_id, user_id),
                )
            ]
        ]
    )
    return Rendered(tr.t(lang, "kick-confirm", player=esc(name)), keyboard)


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
