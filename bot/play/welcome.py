"""The private chat's way in: /start (how to play, and unblocking a player mid-game), the
Join deep link (`/start j<game>`) for people who never started the bot, and /newgame sent
in private (games are played in groups; practice here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot import render
from bot.kit import Person, seated, title
from bot.play.lobby import Lobbies, seat
from bot.play.moves import Moves
from bot.play.room import Room
from storage import GameRecord

_DEEP_LINK = re.compile(r"j([0-9]{1,12})")
"""`/start j<game>`: the Join deep link's payload."""


@dataclass(eq=False, repr=False)
class Welcome(Room):
    lobbies: Lobbies
    moves: Moves

    async def new_game_in_private(self, *, person: Person) -> None:
        """/newgame in a private chat: games are played in groups (a button adds the bot to
        one); practice is played here."""
        kit = self.kit
        lang = kit.tr.normalize(person.language)
        keyboard = render.add_to_group_keyboard(kit.tr, lang, kit.bot_username)
        text = render.Rendered(kit.t(lang, "newgame-in-group"), keyboard)
        await self.out.send(person.user_id, text)

    async def start_payload(self, *, person: Person, payload: str) -> bool:
        """/start j<game> in the private chat: the deep link from Join. False if the payload
        is no lobby's (the caller welcomes the person)."""
        kit = self.kit
        player = await kit.note_player(person, can_message=True)
        lang = player.language
        link = _DEEP_LINK.fullmatch(payload)  # game ids fit in 12 digits, as in callbacks
        game_id = int(link[1]) if link else None
        if game_id is None:
            return False
        async with self.store.for_game(game_id) as unit:
            if unit is None:
                return False
            record = unit.record
            lobby = unit.game(game_id, "lobby")
            if lobby is not None:
                await self._join_by_link(lobby, person, lang)
                return True
            # The link's lobby is closed. Say what the player can do instead.
            running = record is not None and record.status == "running" and seated(record, person)
            if record is not None and record.status == "lobby":  # a newer lobby is open
                key = "private-joined" if seated(record, person) else "error-lobby-closed-newer"
                text = kit.t(lang, key, chat=title(record))
                await self.out.send(person.user_id, render.Rendered(text))
                return True
        # The game started before they pressed Start: their cards. (Unless it ended meanwhile.)
        if running and await self.moves.resend_hand(
            person=person, chat_id=unit.chat_id, quiet=True
        ):
            return True
        # Maybe their first message from the bot: how to play, too.
        text = kit.t(lang, "error-lobby-closed") + "\n\n" + kit.t(lang, "welcome")
        keyboard = render.add_to_group_keyboard(kit.tr, lang, kit.bot_username)
        await self.out.send(person.user_id, render.Rendered(text, keyboard))
        return True

    async def welcome(self, *, person: Person) -> None:
        """/start without a payload: how to play; also unblocks a player mid-game."""
        kit = self.kit
        player = await kit.note_player(person, can_message=True)
        keyboard = render.add_to_group_keyboard(kit.tr, player.language, kit.bot_username)
        await self.out.send(
            person.user_id, render.Rendered(kit.t(player.language, "welcome"), keyboard)
        )
        for peeked in await self.store.running_games_of(person):
            if person.player_id in peeked.meta.blocked:
                async with self.store.locked(peeked.chat_id):
                    record = self.store.checked(peeked.chat_id)
                    if (
                        record is None
                        or record.id != peeked.id
                        or record.status != "running"
                        or person.player_id not in record.meta.blocked
                    ):
                        continue  # changed while waiting for the lock
                    blocked = record.meta.blocked
                    blocked.remove(person.player_id)
                    self.screens.drop_hand(record, person.player_id)
                    await self.store.save(record)
                    await self.screens.hands(record, only={person.player_id}, force=True)

    async def _join_by_link(self, record: GameRecord, person: Person, lang: str | None) -> None:
        """/start j<game> for an open lobby (under its chat's lock): seat the player."""
        kit = self.kit
        chat = title(record)
        refusal = None
        if any(s.user_id == person.user_id for s in record.lobby.seats):
            refusal = kit.t(lang, "private-joined", chat=chat)
        elif len(record.lobby.seats) >= record.rules.max_players:
            refusal = kit.t(lang, "lobby-full")
        elif person.user_id not in record.meta.invited and not await kit.is_member(
            record.chat_id, person.user_id
        ):
            refusal = kit.t(lang, "join-not-member", chat=chat)
        if refusal is not None:
            await self.out.send(person.user_id, render.Rendered(refusal))
            return
        seat(record, person, lang)
        await self.store.save(record)
        await self.out.send(
            person.user_id, render.Rendered(kit.t(lang, "private-joined", chat=chat))
        )
        # The lobby shows the new seat: no message of its own in the group.
        await self.lobbies.refresh(record, paced=True)
        if self.lobbies.joined is not None:  # a Play again lobby may start now
            await self.lobbies.joined(record)
