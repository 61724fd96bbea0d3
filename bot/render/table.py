"""The group's table message, drawn from the public view only, and its log of events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final

from bot.i18n import Translator
from bot.keyboard import Button, Keyboard
from bot.log import bouts
from bot.render.common import Rendered, card_str, card_text, cards_text, name_of, time_html
from engine import GameView
from storage import LogEntry

MAX_TEXT: Final = 4000
"""Telegram takes 4,096 characters."""

# ---------------------------------------------------------------- event log

MAX_NOTES: Final = 4
"""Notes a line at most (the latest): a table read at a glance, whatever a bout brought."""
_ON_THE_TABLE: Final = frozenset({"attack", "add", "defend", "pass", "take"})
"""What the table shows as it lies (the pairs, the seats' "done" and "takes"): not told again."""
_ENDS: Final = frozenset({"beaten", "picked"})
_BOUT_ONLY: Final = frozenset({"transfer", "show"})
"""Told while their bout lies on the table, not once it has ended."""


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
    # A plain transfer's card lies on the table: named there, not again.
    if entry.cards and entry.kind != "transfer" and tr.has(f"{key}-cards"):
        key += "-cards"  # (entries stored before cards were named have none)
        args["cards"] = cards_text(entry.cards)
        if len(entry.cards) == 2:  # a cover (attack, card); an exchange (card, trump)
            first, second = (card_str(c) for c in entry.cards)
            args.update(attack=first, card=first if entry.kind == "exchange" else second)
            args["trump"] = second
    if not tr.has(key):
        return ""
    return tr.t(lang, key, **args)


def log_lines(
    tr: Translator, lang: str, log: Sequence[LogEntry], names: Mapping[str, str]
) -> list[str]:
    """What the table says of the log, oldest first, each card once: a line for how the last
    bout ended (beaten off or taken, with its cards: they left the table), then what the
    table itself does not show of the bout on it (a transfer, a shown trump, a timeout...).
    Cards lying on the table are not named here: the table shows them."""
    done: list[LogEntry] | None = None
    current: list[LogEntry] = []
    for bout in bouts(log):
        if any(entry.kind in _ENDS for entry in bout):
            done, current = bout, []
        else:  # the bout on the table (and a trump swap before its first card)
            current += bout
    lines = []
    if done is not None:
        ended = [e for e in done if e.kind in _ENDS]
        notes = [e for e in done if e.kind not in _ON_THE_TABLE | _ENDS | _BOUT_ONLY]
        words = [_ending(tr, lang, e, names) for e in ended]
        words += [line for e in notes if (line := log_line(tr, lang, e, names))]
        if words:
            lines.append(" · ".join(words[:MAX_NOTES]))
    notes = [e for e in current if e.kind not in _ON_THE_TABLE]
    words = [line for e in notes if (line := log_line(tr, lang, e, names))]
    if words:
        lines.append(_joined(words[-MAX_NOTES:], len(words)))
    return lines


def _joined(words: list[str], of: int) -> str:
    """A line of notes; "… " before it when older ones gave way."""
    return ("… " if len(words) < of else "") + " · ".join(words)


def _ending(tr: Translator, lang: str, entry: LogEntry, names: Mapping[str, str]) -> str:
    """How a bout ended: "Last bout: 7♠ 9♠ beaten off", "Last bout: Bob took 6♣ Q♣"."""
    if not entry.cards:  # (stored before cards were named)
        return log_line(tr, lang, entry, names)
    cards = cards_text(entry.cards)
    if entry.kind == "beaten":
        return tr.t(lang, "table-last-beaten", cards=cards)
    return tr.t(lang, "table-last-picked", player=name_of(names, entry.player or ""), cards=cards)


# ---------------------------------------------------------------- table (public)

PAIRS_PER_LINE: Final = 3
SEATS_PER_LINE: Final = 2


def role_of(view: GameView, player: str) -> str | None:
    """A seat's role in the bout: "out" (of cards, or gone), "defender", "attacker", or
    None."""
    if player not in view.active_players:
        return "out"
    if player == view.defender:
        return "defender"
    if player == view.attacker:
        return "attacker"
    return None


def table_lines(tr: Translator, lang: str, view: GameView) -> list[str]:
    """The bout on the table, attack ← cover pairs, `PAIRS_PER_LINE` a line: each card once."""
    if not view.table:
        return [tr.t(lang, "table-empty")]
    pairs = []
    for attack, defence in view.table:
        pairs.append(
            f"{card_text(attack)} ← {card_text(defence)}" if defence else card_text(attack)
        )
    step = PAIRS_PER_LINE
    return ["   ".join(pairs[i : i + step]) for i in range(0, len(pairs), step)]


def trump_line(tr: Translator, lang: str, view: GameView) -> str:
    return tr.t(
        lang,
        "table-trump",
        card=card_text(view.trump_card) if view.trump_card else card_str(view.trump_suit.value),
        stock=view.stock_size,
        discard=view.discard_size,
    )


def waiting_line(
    tr: Translator,
    lang: str,
    view: GameView,
    names: Mapping[str, str],
    deadline: datetime | None,
    window: bool = False,
) -> str:
    """The table's status line: whom the game waits for, and until when (a date_time entity
    that each reader's client counts down: see `time_html`)."""
    if not view.to_act:
        return ""
    if window and view.closing and deadline is not None:
        # A throw-in window: when the bout ends by itself, naming nobody (who could still
        # throw in would tell of their cards).
        if view.defender_took:
            player = name_of(names, view.defender)
            return tr.t(
                lang, "table-window-take", player=player, time=time_html(tr, lang, deadline)
            )
        return tr.t(lang, "table-window", time=time_html(tr, lang, deadline))
    who = ", ".join(name_of(names, p) for p in view.players if p in view.to_act)
    if deadline is not None:
        return tr.t(lang, "table-waiting-until", names=who, time=time_html(tr, lang, deadline))
    return tr.t(lang, "table-waiting", names=who)


def _seat(
    tr: Translator, lang: str, view: GameView, names: Mapping[str, str], p: str, computer: bool
) -> str:
    """A seat, short: "⚔️ Alice (6)" (six cards), "🛡 Bob (4) takes", "✅ Eve out"."""
    role = role_of(view, p)
    mark = {"attacker": "⚔️", "defender": "🛡", "out": "✅"}.get(role or "", "▫️")
    name = name_of(names, p) + (" 🤖" if computer else "")
    count = view.hand_counts[p]
    status = ""
    if view.is_over:  # no roles any more: who went out, and the durak
        durak = view.outcome.durak if view.outcome is not None else None
        mark = "🃏" if p == durak else "✅"
        status = tr.t(lang, "seat-durak") if p == durak else ""
        if count:  # the durak's cards, or everyone's after a resign (R18)
            return f"{mark} {name} ({count}) {status}".rstrip()
        return f"{mark} {name} {status or tr.t(lang, 'seat-out')}"
    if role == "out" or (not count and not view.stock_size):  # (done: out once the bout ends)
        return f"✅ {name} {tr.t(lang, 'seat-out')}"
    if not count:  # nothing to play now: draws when the bout ends
        status = tr.t(lang, "seat-draws")
    elif role == "defender" and view.defender_took:
        status = tr.t(lang, "seat-takes")
    elif p in view.passed:
        status = tr.t(lang, "seat-passed-take" if view.defender_took else "seat-passed")
    elif role is None and view.table and p in view.throw_ins:
        status = tr.t(lang, "seat-may-add")
    return f"{mark} {name} ({count}) {status}".rstrip()


def table(
    tr: Translator,
    lang: str,
    view: GameView,
    *,
    names: Mapping[str, str],
    computers: frozenset[str] = frozenset(),
    log: Sequence[LogEntry] = (),
    deadline: datetime | None = None,
    window: bool = False,
    bot_username: str | None = None,
    closed: str | None = None,
    app_link: str | None = None,
) -> Rendered:
    """The group's table message, from the public view only, to be read at a glance: the
    trump and the stock, the seats (two a line), the bout on the table (each card once), a
    line for how the last bout ended, and last the status line (whom the game waits for,
    until when; or why it closed).

    ``window``: ``deadline`` is a throw-in window's (the bout ends by itself then).
    ``closed``: the game ended without a result (a cancel, say); that line replaces whom the
    game waits for. ``app_link``: the Mini App's direct link to this game (a "Table"
    button beside "My cards")."""
    assert view.hand is None, "the group table is drawn from the public view"
    lines = [f"<b>{tr.t(lang, 'table-title')}</b> · {trump_line(tr, lang, view)}"]
    seats = [_seat(tr, lang, view, names, p, p in computers) for p in view.players]
    step = SEATS_PER_LINE
    lines += [" · ".join(seats[i : i + step]) for i in range(0, len(seats), step)]
    bout = table_lines(tr, lang, view)
    if view.table:  # "Table: 6♠ ← 9♠   7♠" (no blank line: the table is read at a glance)
        bout[0] = f"{tr.t(lang, 'hand-table')} {bout[0]}"
    lines += bout
    end = []
    if closed:
        end.append(f"<b>{closed}</b>")
    elif waiting := waiting_line(tr, lang, view, names, deadline, window):
        end.append(waiting)
    notes = [f"<i>{line}</i>" for line in log_lines(tr, lang, log, names)]
    room = MAX_TEXT - sum(len(line) + 1 for line in (*lines, *end))
    while notes and sum(len(line) + 1 for line in notes) > room:
        notes.pop(0)  # (only with Telegram's longest names and a long bout) the oldest first
    text = "\n".join([*lines, *notes, *end])
    keyboard = None
    if bot_username and not closed:
        row = [Button(tr.t(lang, "button-open-hand"), url=f"https://t.me/{bot_username}")]
        if app_link:
            row.append(Button(tr.t(lang, "button-app-table"), url=app_link))
        keyboard = Keyboard([row])
    return Rendered(text, keyboard)


# ---------------------------------------------------------------- hand (private)
