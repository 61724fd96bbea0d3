"""The group's table message, drawn from the public view only, and its log of events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.log import bouts
from bot.render.common import Rendered, card_text, name_of
from engine import GameView
from storage import LogEntry

MAX_TEXT: Final = 4000
"""Telegram takes 4,096 characters; the oldest bouts of the log give way first."""

# ---------------------------------------------------------------- event log


def log_line(tr: Translator, lang: str, entry: LogEntry, names: Mapping[str, str]) -> str:
    """One past event in words (entries are stored with the game: `storage.LogEntry`)."""
    args: dict[str, str | int] = {}
    if entry.player is not None:
        args["player"] = name_of(names, entry.player)
    if entry.target is not None:
        args["target"] = name_of(names, entry.target)
    if entry.count is not None:
        args["count"] = entry.count
    key = f"log-{entry.kind}"
    if entry.cards and tr.has(f"{key}-cards"):  # (entries stored before cards were named)
        key += "-cards"
        args["cards"] = " ".join(entry.cards)
        if len(entry.cards) == 2:  # a cover (attack, card); an exchange (card, trump)
            first, second = entry.cards
            args.update(attack=first, card=first if entry.kind == "exchange" else second)
            args["trump"] = second
    if not tr.has(key):
        return ""
    return tr.t(lang, key, **args)


def log_lines(
    tr: Translator, lang: str, log: Sequence[LogEntry], names: Mapping[str, str]
) -> list[str]:
    """The log in words, a line per bout (see `bot.log.bouts`), oldest first."""
    lines = []
    for bout in bouts(log):
        # "Bob takes" and, at the bout's end, "Bob picks up 6♣ Q♣": one event, one line
        picked = {e.player for e in bout if e.kind == "picked" and e.cards}
        shown = [e for e in bout if not (e.kind == "take" and e.player in picked)]
        words = [line for entry in shown if (line := log_line(tr, lang, entry, names))]
        if words:
            lines.append(" · ".join(words))
    return lines


# ---------------------------------------------------------------- table (public)


def _role_of(view: GameView, player: str) -> str | None:
    if player not in view.active_players:
        return "out"
    if player == view.defender:
        return "defender"
    if player == view.attacker:
        return "attacker"
    return None


def table_lines(tr: Translator, lang: str, view: GameView) -> list[str]:
    if not view.table:
        return [tr.t(lang, "table-empty")]
    pairs = []
    for attack, defence in view.table:
        pairs.append(f"{card_text(attack)} ← {card_text(defence)}" if defence else str(attack))
    return ["  ".join(pairs[i : i + 3]) for i in range(0, len(pairs), 3)]


def trump_line(tr: Translator, lang: str, view: GameView) -> str:
    return tr.t(
        lang,
        "table-trump",
        card=card_text(view.trump_card) if view.trump_card else view.trump_suit.value,
        stock=view.stock_size,
        discard=view.discard_size,
    )


def waiting_line(
    tr: Translator,
    lang: str,
    view: GameView,
    names: Mapping[str, str],
    seconds: int | None,
    window: bool = False,
) -> str:
    if not view.to_act:
        return ""
    if window and view.closing and seconds is not None:
        # A throw-in window: when the bout ends by itself, naming nobody (who could still
        # throw in would tell of their cards).
        if view.defender_took:
            player = name_of(names, view.defender)
            return tr.t(lang, "table-window-take", player=player, seconds=max(0, seconds))
        return tr.t(lang, "table-window", seconds=max(0, seconds))
    who = ", ".join(name_of(names, p) for p in view.players if p in view.to_act)
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
    log: Sequence[LogEntry] = (),
    seconds_left: int | None = None,
    window: bool = False,
    bot_username: str | None = None,
    closed: str | None = None,
) -> Rendered:
    """The group's table message, from the public view only.

    ``window``: ``seconds_left`` is a throw-in window's (the bout ends by itself then).
    ``closed``: the game ended without a result (a cancel, say); that line replaces whom the
    game waits for."""
    assert view.hand is None, "the group table is drawn from the public view"
    lines = [f"<b>{tr.t(lang, 'table-title')}</b>", trump_line(tr, lang, view), ""]
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
        elif not view.hand_counts[p] and not view.stock_size:  # done: out once the bout ends
            mark, status = "✅", tr.t(lang, "seat-out")
        elif not view.hand_counts[p]:  # nothing to play now: draws when the bout ends
            status = tr.t(lang, "cards-count", count=0) + " · " + tr.t(lang, "seat-draws")
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
        lines.append(f"{mark} {name_of(names, p)}{bot_mark}: {status}")
    lines += ["", *table_lines(tr, lang, view)]
    end = []
    waiting = waiting_line(tr, lang, view, names, seconds_left, window)
    if closed:
        end = ["", f"<b>{closed}</b>"]
    elif waiting:
        end = ["", waiting]
    recent = [f"<i>{line}</i>" for line in log_lines(tr, lang, log, names)]
    room = MAX_TEXT - sum(len(line) + 1 for line in (*lines, *end)) - 1
    while recent and sum(len(line) + 1 for line in recent) > room:
        recent.pop(0)  # the oldest bout first
    if recent:
        lines += ["", *recent]
    lines += end
    keyboard = None
    if bot_username and not closed:
        keyboard = Keyboard(
            [[Button(tr.t(lang, "button-open-hand"), url=f"https://t.me/{bot_username}")]]
        )
    return Rendered("\n".join(lines), keyboard)


# ---------------------------------------------------------------- hand (private)
