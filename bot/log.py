"""The table's "last few events": what happened, as `storage.LogEntry` values.

Entries are stored with the game (so the table reads the same after a restart) and put
into words by `render.log_line` in the chat's language. They name no cards: a card once
played may since have been picked up into a hand, and the table itself shows the cards
of the bout.

Besides the engine's events, a move may come from the bot itself: `TimedOut` (it moved for
a player whose time ran out), `RemovedForTimeouts` (R18: the third in a row), `Removed`
(kicked by an admin, or left the group). These are typed here, beside the engine's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from engine import (
    Attacked,
    BeatenOff,
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
from storage import LogEntry


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
            case Attacked(player=p, lead=lead):  # the bout's first card, or thrown in
                out.append(LogEntry("attack" if lead else "add", p))
            case Defended(player=p):
                out.append(LogEntry("defend", p))
            case Transferred(player=p, to=to, shown=shown):
                out.append(LogEntry("show" if shown else "transfer", p, target=to))
            case TakeDeclared(player=p):
                out.append(LogEntry("take", p))
            case PassedEvent(player=p):
                out.append(LogEntry("pass", p))
            case BeatenOff(cards=cards):
                out.append(LogEntry("beaten", count=len(cards)))
            case PickedUp(player=p, cards=cards):
                out.append(LogEntry("picked", p, count=len(cards)))
            case PlayerOut(player=p):
                out.append(LogEntry("out", p))
            case TrumpExchanged(player=p):
                out.append(LogEntry("exchange", p))
            case Resigned(player=p):
                out.append(LogEntry("resign", p))
            case Redealt(player=p):
                out.append(LogEntry("redeal", p))
    return out
