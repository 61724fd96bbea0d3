"""A player's private hand message: what they decide, and their cards as buttons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final

from bot.callbacks import CardTap, Refresh, encode_move
from bot.i18n import Translator
from bot.keyboard import DANGER, PRIMARY, SUCCESS, Button, Keyboard, Style
from bot.render.common import Rendered, card_text, cards_text, esc, name_of, time_html
from bot.render.table import table_lines, trump_line
from engine import (
    Action,
    Attack,
    Card,
    Defend,
    ExchangeTrump,
    GameView,
    Pass,
    Redeal,
    ShowTrump,
    Suit,
    Take,
    Transfer,
)
from engine.advice import playable_cards

CARDS_PER_ROW: Final = 6
_REFRESH: Final = Refresh()


def _your_role(tr: Translator, lang: str, view: GameView, names: Mapping[str, str]) -> str:
    me = view.viewer
    assert me is not None
    if view.is_over:
        return ""
    if me not in view.active_players:
        return tr.t(lang, "hand-you-are-out")
    if me == view.defender:
        others = [p for p in view.active_players if p != me]
        one = {"player": name_of(names, others[0])} if len(others) == 1 else None
        if view.defender_took:  # exactly one other player: say who may still throw in
            return tr.t(lang, "hand-you-take-one", **one) if one else tr.t(lang, "hand-you-take")
        if not view.table:
            return tr.t(lang, "hand-you-are-attacked", player=name_of(names, view.attacker))
        if not view.open_attacks:
            if one:
                return tr.t(lang, "hand-you-covered-one", **one)
            return tr.t(lang, "hand-you-covered")
        transfers = any(isinstance(a, Transfer | ShowTrump) for a in view.legal)
        key = "hand-you-defend-transfer" if transfers else "hand-you-defend"
        return tr.t(lang, key, player=name_of(names, view.attacker))
    if not view.table:
        if me == view.attacker:
            return tr.t(lang, "hand-you-open", player=name_of(names, view.defender))
        return tr.t(
            lang,
            "hand-they-open",
            player=name_of(names, view.attacker),
            target=name_of(names, view.defender),
        )
    if any(isinstance(a, Attack) for a in view.legal):
        if not any(isinstance(a, Pass) for a in view.legal):  # the defender is still to move
            key = "hand-you-may-add-now"
        elif view.defender_took:
            key = "hand-you-may-add-take"
        else:
            key = "hand-you-may-add"
        return tr.t(lang, key, player=name_of(names, view.defender))
    if me == view.attacker:  # nothing (more) to add: the defender is to move, or done
        return tr.t(lang, "hand-you-attack", player=name_of(names, view.defender))
    return tr.t(
        lang,
        "hand-they-open",
        player=name_of(names, view.attacker),
        target=name_of(names, view.defender),
    )


def _action_buttons(tr: Translator, lang: str, view: GameView, game_id: int) -> list[Button]:
    move = view.move_number
    buttons = []
    for transfer in (a for a in view.legal if isinstance(a, Transfer)):  # R14: each card
        buttons.append(
            Button(
                tr.t(lang, "button-transfer", card=card_text(transfer.card)),
                callback_data=encode_move(game_id, move, transfer),
                style=PRIMARY,
            )
        )
    for action in view.legal:
        style: Style | None = None
        if isinstance(action, ShowTrump):
            label = tr.t(lang, "button-show-trump", card=card_text(action.card))
            style = PRIMARY
        elif isinstance(action, Take):
            label, style = tr.t(lang, "button-take"), DANGER
        elif isinstance(action, Pass):
            key = "button-pass-take" if view.defender_took else "button-pass"
            label, style = tr.t(lang, key), SUCCESS
        elif isinstance(action, ExchangeTrump):
            label = tr.t(lang, "button-exchange")
        elif isinstance(action, Redeal):
            label = tr.t(lang, "button-redeal")
        else:
            continue
        buttons.append(Button(label, encode_move(game_id, move, action), style=style))
    return buttons


def _card_label(card: Card, playable: bool) -> str:
    return card_text(card) if playable else f"·{card_text(card)}·"


def hand(
    tr: Translator,
    lang: str,
    view: GameView,
    *,
    game_id: int,
    names: Mapping[str, str],
    chat_title: str,
    practice: bool = False,
    deadline: datetime | None = None,
    window: bool = False,
    choice: Sequence[Action] | None = None,
    transfer_to: str | None = None,
    timeouts: int = 0,
    max_timeouts: int = 3,
    app_url: str | None = None,
) -> Rendered:
    """A player's private hand message: what they need to decide, and their cards as buttons.

    Cards that can be played now are plain; others are shown between dots and answer
    why not when tapped. `choice` replaces the cards with the options of an ambiguous
    tap (a card that covers several attack cards, or covers and transfers); a card that can
    only transfer asks to confirm, naming who would defend then (`transfer_to`).
    `window`: `deadline` is a throw-in window's (the bout ends by itself then).
    `app_url`: the Mini App's (a button that opens it, below the cards).
    """
    me = view.viewer
    assert me is not None
    assert view.hand is not None
    title = (
        tr.t(lang, "hand-title-practice")
        if practice
        else tr.t(lang, "hand-title", chat=esc(chat_title))
    )
    lines = [title, trump_line(tr, lang, view)]
    if me in view.active_players and not view.is_over:  # every seated player sees the bout
        if view.table:
            lines += ["", f"{tr.t(lang, 'hand-table')} {'   '.join(table_lines(tr, lang, view))}"]
        else:  # "The table is empty.", not "Table: The table is empty."
            lines += ["", *table_lines(tr, lang, view)]
    if view.is_over:
        return _hand_at_the_end(tr, lang, view, names, lines)
    role = _your_role(tr, lang, view, names)
    in_window = window and view.closing and me in view.to_act and deadline is not None
    if in_window:  # what they may do, and when the bout ends by itself
        assert deadline is not None
        time = time_html(tr, lang, deadline)  # counted down by the reader's client
        if view.defender_took:
            player = name_of(names, view.defender)
            role = tr.t(lang, "hand-window-take", player=player, time=time)
        else:
            role = tr.t(lang, "hand-window", time=time)
    if role:
        lines += ["", f"<b>{role}</b>"]
    if me in view.to_act and deadline is not None and not in_window:  # counted down by the
        lines.append(tr.t(lang, "hand-time-left", time=time_html(tr, lang, deadline)))  # client
    if timeouts:  # the bot moved for this player (R18): say so until they move themselves
        lines += ["", tr.t(lang, "hand-timed-out", count=timeouts, max=max_timeouts)]
    move = view.move_number
    rows: list[list[Button]] = []
    if choice:
        if transfer_to is not None:
            lines += ["", tr.t(lang, "hand-confirm-transfer", player=name_of(names, transfer_to))]
        else:
            lines += ["", tr.t(lang, "hand-choose")]
        for action in choice:
            if isinstance(action, Defend):
                label = tr.t(
                    lang,
                    "button-cover",
                    attack=card_text(action.attack),
                    card=card_text(action.card),
                )
            elif isinstance(action, Transfer):
                label = tr.t(lang, "button-transfer", card=card_text(action.card))
            else:
                label = str(action)
            rows.append([Button(label, encode_move(game_id, move, action), style=PRIMARY)])
        rows.append(
            [Button(tr.t(lang, "button-back"), callback_data=encode_move(game_id, move, _REFRESH))]
        )
        return Rendered("\n".join(lines), Keyboard(rows))
    playable = playable_cards(view.legal)
    cards = [  # a card that can be played now is coloured (blue), one that cannot is plain
        (
            c.suit,
            Button(
                _card_label(c, c in playable),
                encode_move(game_id, move, CardTap(c)),
                style=PRIMARY if c in playable else None,
            ),
        )
        for c in view.hand
    ]
    # Trumps, which beat every other suit, set apart on rows of their own (the hand sorts
    # them last): a beginner sees at a glance what they hold.
    trumps = [card for card in cards if card[0] is view.trump_suit]
    by_suit = len(cards) > 2 * CARDS_PER_ROW  # a big hand: a suit a row
    rows = _card_rows([card for card in cards if card[0] is not view.trump_suit], by_suit)
    rows += _card_rows(trumps, by_suit)
    actions = _action_buttons(tr, lang, view, game_id)
    if actions:
        rows += [actions[i : i + 2] for i in range(0, len(actions), 2)]
    if app_url:
        rows.append([Button(tr.t(lang, "button-app-hand"), web_app=app_url)])
    if not view.hand:
        lines += ["", tr.t(lang, "hand-empty")]
    return Rendered("\n".join(lines), Keyboard(rows) if rows else None)


def _card_rows(cards: Sequence[tuple[Suit, Button]], by_suit: bool) -> list[list[Button]]:
    """Card buttons (in hand order, by suit) as keyboard rows: up to `CARDS_PER_ROW` a row;
    `by_suit` (a hand of more than two rows: a player who picked up a lot) one suit a row,
    so that a suit never breaks off in mid-row."""
    if not by_suit:  # a usual hand keeps its compact rows
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
        lines.append(tr.t(lang, "result-durak", player=name_of(names, outcome.durak)))
    place = outcome.places(view.players).get(view.viewer or "")
    if place is not None and outcome.durak != view.viewer:
        lines.append(tr.t(lang, "hand-result-place", place=place, count=len(view.players)))
    if view.hand:
        lines.append(tr.t(lang, "hand-last-cards", cards=cards_text(view.hand)))
    return Rendered("\n".join(lines))
