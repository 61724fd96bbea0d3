"""The rules in words: /help, /howto, the "How to play" and "Rules" buttons, and the how-to
that comes before a newcomer's first practice game.

Every how-to is rendered from the `Rules` of the game it explains: in a group the running
game's, else the open lobby's, else the chat's settings for its next game; in a private
chat those of a running game of the person's (a group game's first, named in the title),
else practice's. A button's answer is a new message in the chat where it was tapped (the
lobby's, or /help's), as a reply to it: once per tap, but the same text goes to the same
chat at most once a minute (another tap meanwhile is told it is just above), so a group
where several people tap at once is not flooded. That minute is kept in memory only: after
a restart a tap may post the text once more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final, Literal

from bot import render
from bot.delivery import Tap
from bot.kit import Person, title
from bot.play.room import Room
from engine import Rules
from storage import NotFound

PRACTICE_RULES: Final = Rules()
"""The rules of every practice game."""

REPEAT_AFTER: Final = timedelta(seconds=60)
"""How soon the same text may be posted again in the same chat after a tap."""

Kind = Literal["howto", "rules"]


@dataclass(eq=False, repr=False)
class Guide(Room):
    _posted: dict[tuple[int, Kind], tuple[datetime, str]] = field(default_factory=dict, init=False)

    # ---------------------------------------------------------------- the rules in force

    async def in_force(self, chat_id: int, fallback_language: str | None) -> tuple[str, Rules]:
        """A group's language and the rules in force there: its running game's or open
        lobby's, else its settings for the next game."""
        record = await self.store.peek(chat_id)
        if record is not None:
            return record.language, record.rules
        async with self.kit.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id)
        return self.kit.tr.normalize(settings.language or fallback_language), settings.rules

    async def _private_howto(self, person: Person) -> str:
        """How to play for a private chat: the rules of the person's running game (a group
        game first, named), else practice's."""
        lang = self.kit.tr.normalize(person.language)
        games = sorted(await self.store.running_games_of(person), key=lambda r: r.meta.practice)
        if games and not games[0].meta.practice:
            record = games[0]
            lang = self.kit.personal_language(person, record)
            return render.howto(self.kit.tr, lang, record.rules, chat=title(record))
        return render.howto(self.kit.tr, lang, PRACTICE_RULES)

    # ---------------------------------------------------------------- commands

    async def help(self, *, chat_id: int, lang: str, message_id: int | None) -> None:
        """/help: the buttons and commands, with a "How to play" button."""
        await self.out.send(chat_id, render.help_message(self.kit.tr, lang), reply_to=message_id)

    async def howto_command(
        self, *, chat_id: int, in_group: bool, person: Person, message_id: int | None
    ) -> None:
        """/howto: how to play, with the rules in force in this chat."""
        if in_group:
            lang, rules = await self.in_force(chat_id, person.language)
            text = render.howto(self.kit.tr, lang, rules)
        else:
            text = await self._private_howto(person)
        await self.out.send(chat_id, render.Rendered(text), reply_to=message_id)

    # ---------------------------------------------------------------- buttons

    async def howto_tap(self, *, query: Tap, person: Person) -> None:
        """/help's "How to play" button: the text for the chat of the message it is on."""
        chat_id = query.chat_id
        if chat_id is None:  # not on a message of a chat: not ours
            await self.out.answer(query, self.kit.t(person.language, "error-unknown-button"))
            return
        if chat_id == person.user_id:
            text = await self._private_howto(person)
        else:
            lang, rules = await self.in_force(chat_id, person.language)
            text = render.howto(self.kit.tr, lang, rules)
        await self.post(query, "howto", text, toast_language=person.language)

    async def post(self, query: Tap, kind: Kind, text: str, *, toast_language: str | None) -> None:
        """Answer a tap with `text` as a new message in its chat, replying to the message
        with the button; if the same text went there less than a minute ago, say so
        instead."""
        chat_id = query.chat_id
        assert chat_id is not None
        now = self.kit.clock()
        last = self._posted.get((chat_id, kind))
        if last is not None and last[1] == text and now - last[0] < REPEAT_AFTER:
            await self.out.answer(query, self.kit.t(toast_language, "info-above"))
            return
        await self.out.answer(query)
        await self.out.send(chat_id, render.Rendered(text), reply_to=query.message_id)
        self._posted = {k: v for k, v in self._posted.items() if now - v[0] < REPEAT_AFTER}
        self._posted[chat_id, kind] = (now, text)

    # ---------------------------------------------------------------- practice

    async def newcomer(self, person: Person) -> bool:
        """Whether the person never finished a game: no group game in their statistics,
        and no practice game recorded in their private chat."""
        async with self.kit.db.transaction(readonly=True) as tx:
            if await tx.results.count(chat_id=person.user_id):  # practice games end there
                return False
            try:
                await tx.results.player_record(player_id=person.player_id)
            except NotFound:
                return True
        return False

    async def before_practice(self, person: Person, lang: str | None) -> None:
        """/practice: how to play first, for someone who never finished a game."""
        if await self.newcomer(person):
            text = render.howto(self.kit.tr, self.kit.tr.normalize(lang), PRACTICE_RULES)
            await self.out.send(person.user_id, render.Rendered(text))
