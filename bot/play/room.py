"""What every feature room works with: the kit, the store of games, and the screens."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot import render
from bot.delivery import Blocked, Outbox, SendError
from bot.delivery.screens import Screens
from bot.kit import Kit, Person
from bot.store import GameStore
from storage import NotFound

logger = logging.getLogger(__name__)


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

    async def tell(
        self, chat_id: int, person: Person, key: str, *, lang: str, message_id: int | None
    ) -> None:
        """Answer a command with what concerns the person alone (you are not playing, only
        admins may...): in a group, in their private chat (in their language) if the bot may
        write to them there, so that the group's members hear nothing of it and the group's
        budget is left for the game; else, and in a private chat, as a reply where it was
        sent (in `lang`; silent in a group, like every group message but a few)."""
        if chat_id != person.user_id and await self._may_write(person):
            own = self.kit.tr.available(person.language) or lang
            try:  # a courtesy: no waiting out a 429 under a chat's lock
                await self.out.send(
                    person.user_id, render.Rendered(self.kit.t(own, key)), patient=False
                )
                return
            except Blocked:
                await self.kit.note_player(person, can_message=False)
            except SendError as exc:
                logger.info("could not answer user %s privately: %s", person.user_id, exc)
        await self.out.send(chat_id, render.Rendered(self.kit.t(lang, key)), reply_to=message_id)

    async def _may_write(self, person: Person) -> bool:
        """Whether the person started the bot (and has not blocked it since, as far as the
        bot knows)."""
        async with self.kit.db.transaction(readonly=True) as tx:
            try:
                player = await tx.players.get(user_id=person.user_id)
            except NotFound:
                return False
        return player.can_message
