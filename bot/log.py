"""The table's log of the last bouts: what happened, as `storage.LogEntry` values.

Entries are stored with the game (so the table reads the same after a restart) and put
into words by `render.log_line` in the chat's language. They name every card the rules
made public (played, covered, transferred with, shown, beaten off, picked up, exchanged);
never a card that only a hand holds. The table tells from them how the last bout ended,
with the cards that left the table then, and what it does not show of the bout on it
(`render.table.log_lines`): a card lying on the table is named there alone.

Besides the engine's events, a move may come from the bot itself: `TimedOut` (it moved for
a player whose time ran out), `RemovedForTimeouts` (R18: the third in a row), `Removed`
(kicked by an admin, or left the group). These are typed here, beside the engine's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from engine import (
    Attacked,
    BeatenOff,
    Card,
    Defended,
    Event,
    PickedUp,
    PlayerOut,
    Redealt,
    Resigned,
    TakeDeclared,
    Transferred,
    TrumpExchanged,
)
from engine import Passed as PassedEvent
from storage import LogEntry, LogKind


@dataclass(frozen=True, slots=True)
class TimedOut:
    """The bot moved for `player`, whose time ran out."""

    player: str


@dataclass(frozen=True, slots=True)
class RemovedForTimeouts:
    """`player` timed out three times in a row and is out of the game as its durak (R18)."""

    player: str


@dataclass(frozen=True, slots=True)
class Removed:
    """`player` is out of the game as its durak (R18): kicked, or left the group."""

    player: str
    why: Literal["kicked", "left"]


BotEvent = TimedOut | RemovedForTimeouts | Removed
Move = tuple[str, Sequence[Event | BotEvent]]
"""Who moved, and what came of it: the engine's events, and the bot's own."""


LOG_BOUTS: Final = 3
"""Bouts kept in the log (the table shows them, a line each)."""


def bouts(log: Sequence[LogEntry]) -> list[list[LogEntry]]:
    """The log as bouts: a bout starts with its first attack (R8); what came before the
    first one (a trump exchange, say) is a bout of its own."""
    out: list[list[LogEntry]] = []
    for entry in log:
        if entry.kind == "attack" or not out:
            out.append([])
        out[-1].append(entry)
    return out


def trim(log: list[LogEntry], keep: int = LOG_BOUTS) -> None:
    """Drop all but the last `keep` bouts from `log`, in place."""
    starts = [i for i, entry in enumerate(log) if entry.kind == "attack"]
    if len(starts) > keep:
        del log[: starts[-keep]]


def _cards(*cards: Card) -> tuple[str, ...]:
    return tuple(str(card) for card in cards)


def entries_for(events: Iterable[Event | BotEvent]) -> list[LogEntry]:
    """Log entries for what one move (a player's action, a timeout, a removal) caused."""
    out: list[LogEntry] = []
    for event in events:
        match event:
            case TimedOut(player=p):
                out.append(LogEntry("timeout", p))
            case RemovedForTimeouts(player=p):
                out.append(LogEntry("removed", p))
            case Removed(player=p, why=why):  # a resign the player did not make
                out.append(LogEntry(why, p))
            case Attacked(player=p, card=card, lead=lead):  # the bout's first, or thrown in
                out.append(LogEntry("attack" if lead else "add", p, cards=_cards(card)))
            case Defended(player=p, attack=attack, card=card):
                out.append(LogEntry("defend", p, cards=_cards(attack, card)))
            case Transferred(player=p, card=card, to=to, shown=shown):  # shown: R14
                kind: LogKind = "show" if shown else "transfer"
                out.append(LogEntry(kind, p, target=to, cards=_cards(card)))
            case TakeDeclared(player=p):
                out.append(LogEntry("take", p))
            case PassedEvent(player=p):
                out.append(LogEntry("pass", p))
            case BeatenOff(cards=cards):
                out.append(LogEntry("beaten", count=len(cards), cards=_cards(*cards)))
            case PickedUp(player=p, cards=cards):  # they were on the table: public
                out.append(LogEntry("picked", p, count=len(cards), cards=_cards(*cards)))
            case PlayerOut(player=p):
                out.append(LogEntry("out", p))
            case TrumpExchanged(player=p, card=card, trump=trump):  # R19: both face up once
                out.append(LogEntry("exchange", p, cards=_cards(card, trump)))
            case Resigned(player=p):
                out.append(LogEntry("resign", p))
            case Redealt(player=p):
                out.append(LogEntry("redeal", p))
    return out
