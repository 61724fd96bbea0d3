"""The table's "last few events": engine events turned into small JSON-safe entries.

Entries are stored with the game (so the table reads the same after a restart)
and put into words by `render.log_line` in the chat's language. They name no
cards: a card once played may since have been picked up into a hand, and the
table itself shows the cards of the bout.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine import (
    Attacked,
    BeatenOff,
    Defended,
    PickedUp,
    PlayerOut,
    Redealt,
    Resigned,
    TakeDeclared,
    Transferred,
    TrumpExchanged,
)
from engine import Passed as PassedEvent


def entries_for(player: str, events: Iterable[Any]) -> list[dict[str, Any]]:
    """Log entries for what `player`'s action (or a timeout) caused."""
    out: list[dict[str, Any]] = []
    for event in events:
        match event:
            case {"timeout": pid}:
                out.append({"e": "timeout", "p": pid})
            case {"timeout_removed": pid}:
                out.append({"e": "removed", "p": pid})
            case {"gone": pid, "why": "kicked" | "left" as why}:  # a resign the player did not make
                out.append({"e": why, "p": pid})
            case Attacked(player=p, lead=lead):  # the bout's first card, or thrown in
                out.append({"e": "attack" if lead else "add", "p": p})
            case Defended(player=p):
                out.append({"e": "defend", "p": p})
            case Transferred(player=p, to=to, shown=shown):
                out.append({"e": "show" if shown else "transfer", "p": p, "to": to})
            case TakeDeclared(player=p):
                out.append({"e": "take", "p": p})
            case PassedEvent(player=p):
                out.append({"e": "pass", "p": p})
            case BeatenOff(cards=cards):
                out.append({"e": "beaten", "n": len(cards)})
            case PickedUp(player=p, cards=cards):
                out.append({"e": "picked", "p": p, "n": len(cards)})
            case PlayerOut(player=p):
                out.append({"e": "out", "p": p})
            case TrumpExchanged(player=p):
                out.append({"e": "exchange", "p": p})
            case Resigned(player=p):
                out.append({"e": "resign", "p": p})
            case Redealt(player=p):
                out.append({"e": "redeal", "p": p})
    return out
