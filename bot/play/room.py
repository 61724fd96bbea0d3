"""What every feature room works with: the kit, the store of games, and the screens."""

from __future__ import annotations

from dataclasses import dataclass

from bot.delivery import Outbox
from bot.delivery.screens import Screens
from bot.kit import Kit
from bot.store import GameStore


@dataclass(eq=False, repr=False)
class Room:
    """The base of each room of `bot.play`: a room declares the other rooms it calls as
    fields of its own, and `bot.play.Rooms` builds them in order."""

    kit: Kit
    store: GameStore
    screens: Screens

    @property
    def out(self) -> Outbox:
        return self.kit.out
