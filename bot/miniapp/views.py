"""What the Mini App shows each viewer: the State JSON of docs/miniapp.md, built from the
engine's `GameView` of that viewer.

A seated player gets `game.view(player)`: their own hand and legal actions; anyone else
(an onlooker) the public view `game.view(None)`, which holds no hand (`engine.view`). The
texts are the chat's: the status line, the log and the result come from `bot.render` (the
same functions that draw the group's table and result), made plain text (the page shows
text, not Telegram's HTML), so the app and the chat say the same.

`strings` gives the page its words: every `app-*` message of the viewer's language, with
Fluent variables left as `{ $name }` for the page to fill in.
"""

from __future__ import annotations

import html
import re
from functools import cache
from typing import Any, Final

from fluent.syntax import FluentParser, ast, visitor

from bot import render
from bot.delivery.screens import LEFT_KEYS
from bot.i18n import LOCALES_DIR, Translator
from bot.kit import Kit, computers
from bot.miniapp.auth import game_ref
from bot.render.common import card_str, card_text
from bot.render.table import log_lines, role_of, waiting_line
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
    Take,
    Transfer,
)
from storage import GameRecord

_TAG: Final = re.compile(r"<[^>]*>")
_TIME: Final = re.compile(r"<tg-time[^>]*>.*?</tg-time>")
_SPACES: Final = re.compile(r"[ \t]{2,}")
APP_PREFIX: Final = "app-"


def plain(text: str) -> str:
    """Telegram HTML as plain text: tags dropped, entities read (names arrive escaped, so
    a name's "<" is "&lt;" and no tag)."""
    return html.unescape(_TAG.sub("", text))


# ---------------------------------------------------------------- the page's words


class _Variables(visitor.Visitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def visit_VariableReference(self, node: ast.VariableReference) -> None:
        self.names.append(node.id.name)
        self.generic_visit(node)


@cache
def _app_messages() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The `app-*` message ids of the reference language (en) and their variables."""
    resource = FluentParser().parse((LOCALES_DIR / "en.ftl").read_text(encoding="utf-8"))
    found = []
    for entry in resource.body:
        if isinstance(entry, ast.Message) and entry.id.name.startswith(APP_PREFIX):
            names = _Variables()
            names.visit(entry)
            found.append((entry.id.name, tuple(dict.fromkeys(names.names))))
    return tuple(found)


def strings(tr: Translator, lang: str) -> dict[str, str]:
    """Every `app-*` text in `lang`, variables as `{ $name }` placeholders."""
    return {
        key: tr.t(lang, key, **{name: f"{{ ${name} }}" for name in names})
        for key, names in _app_messages()
    }


# ---------------------------------------------------------------- the state


def _role(view: GameView, player: str) -> str | None:
    """As the chat's table names it (`role_of`), and "thrower" for who may add cards."""
    if view.is_over:
        return None
    role = role_of(view, player)
    if role is None and view.table and player in view.throw_ins:
        return "thrower"
    return role


def _legal(tr: Translator, lang: str, view: GameView) -> list[dict[str, Any]]:
    """The viewer's actions, each with the words of its button in the chat."""
    legal = []
    for action in view.legal:
        card: Card | None = None
        if isinstance(action, Attack):
            kind, card, label = "attack", action.card, card_text(action.card)
        elif isinstance(action, Defend):
            kind, card = "defend", action.card
            label = tr.t(
                lang, "button-cover", attack=card_text(action.attack), card=card_text(card)
            )
        elif isinstance(action, Transfer):
            kind, card = "transfer", action.card
            label = tr.t(lang, "button-transfer", card=card_text(card))
        elif isinstance(action, ShowTrump):
            kind, card = "show", action.card
            label = tr.t(lang, "button-show-trump", card=card_text(card))
        elif isinstance(action, Take):
            kind, label = "take", tr.t(lang, "button-take")
        elif isinstance(action, Pass):
            kind = "pass"
            label = tr.t(lang, "button-pass-take" if view.defender_took else "button-pass")
        elif isinstance(action, ExchangeTrump):
            kind, label = "exchange", tr.t(lang, "button-exchange")
        elif isinstance(action, Redeal):
            kind, label = "redeal", tr.t(lang, "button-redeal")
        else:  # (resigning is /leave's, with its confirmation, not a button of the hand)
            continue
        legal.append(
            {
                "action": str(action),
                "card": str(card) if card is not None else None,
                "kind": kind,
                "label": plain(label),
            }
        )
    return legal


def _status(kit: Kit, record: GameRecord, view: GameView, lang: str) -> str:
    """The table's status line (whom the game waits for), without its time: the page
    counts down from `deadline` itself."""
    names = {p: render.esc(n) for p, n in kit.names(record, lang).items()}
    window = kit.in_window(record)
    line = waiting_line(
        kit.tr, lang, view, names, record.deadline if window else None, window=window
    )
    line = _TIME.sub(kit.t(lang, "app-soon"), line)
    return _SPACES.sub(" ", plain(line)).strip()


def _result(kit: Kit, record: GameRecord, view: GameView, lang: str) -> str | None:
    if not view.is_over or view.outcome is None or record.id is None:
        return None
    outcome = view.outcome
    reason = LEFT_KEYS.get(record.meta.left.get(outcome.durak, "")) if outcome.durak else None
    rendered = render.result(
        kit.tr,
        lang,
        outcome,
        game_id=record.id,
        names={p: render.esc(n) for p, n in kit.names(record, lang).items()},
        reason=reason,
        closed=True,
    )
    return plain(rendered.text)


def state(kit: Kit, record: GameRecord, viewer: str | None, lang: str) -> dict[str, Any]:
    """The State JSON for `viewer` (a seated player's id, or None: an onlooker)."""
    game = record.game
    assert game is not None and record.id is not None
    if viewer is not None and viewer not in game.players:
        viewer = None  # (never another's view: only a seat's own)
    view = game.view(viewer)
    names = kit.names(record, lang)
    cpu = computers(record)
    # In a throw-in window the table names nobody: who may still throw in would tell of
    # their cards (`waiting_line`). The viewer knows their own.
    hidden = kit.in_window(record)
    seats = [
        {
            "id": p,
            "name": names.get(p, p),
            "computer": p in cpu,
            "cards": view.hand_counts[p],
            "role": _role(view, p),
            "to_act": p in view.to_act and (p == viewer or not hidden),
            "you": p == viewer,
        }
        for p in view.players
    ]
    running = record.status == "running" and not view.is_over
    deadline = record.deadline.timestamp() if running and record.deadline is not None else None
    escaped = {p: render.esc(n) for p, n in names.items()}
    lines = log_lines(kit.tr, lang, record.meta.log, escaped)
    log = [_SPACES.sub(" ", plain(line)) for line in lines]
    return {
        "game": game_ref(kit.settings.bot_token.get_secret_value(), record.id),
        "version": record.version,
        "move": view.move_number,
        "lang": lang,
        "you": viewer,
        "seats": seats,
        "table": [
            {"attack": str(a), "defence": str(d) if d is not None else None} for a, d in view.table
        ],
        "trump": {
            "suit": view.trump_suit.value,
            "card": str(view.trump_card) if view.trump_card is not None else None,
        },
        "stock": view.stock_size,
        "discard": view.discard_size,
        "deadline": deadline,
        "now": kit.clock().timestamp(),
        "status": _status(kit, record, view, lang) if running else "",
        "log": log,
        "hand": [str(c) for c in view.hand] if view.hand is not None else None,
        "legal": _legal(kit.tr, lang, view) if running else [],
        "over": view.is_over,
        "result": _result(kit, record, view, lang),
    }


def action_card(action: Action) -> Card | None:
    """The card an action plays or shows (None: take, done, exchange, redeal)."""
    card = getattr(action, "card", None)
    return card if isinstance(card, Card) else None


__all__ = ["action_card", "card_str", "plain", "state", "strings"]
