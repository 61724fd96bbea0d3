"""Who may end or leave a game, and what the group's membership changes do to it.

/leave (a player gives up, after a confirm: the durak, R18), /cancel (the opener or an
admin; no result is stored), /kick (admins, as a reply, after a confirm: the durak, R18),
a player leaving the group (resigns; in a lobby, loses the seat), the bot added to a group
(it says how to start) or removed from one (the game ends without a result), and a group
that became a supergroup (its game moves with it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot import render
from bot.delivery import Blocked, SendError, Tap
from bot.delivery.screens import LEFT_KEYS
from bot.kit import Person, seated, title
from bot.log import Removed
from bot.play.computers import Computers
from bot.play.lobby import Lobbies
from bot.play.room import Room
from engine import Event, Resign
from engine.advice import forced_resign
from storage import Conflict, Departure, GameRecord, NotFound

logger = logging.getLogger(__name__)


@dataclass(eq=False, repr=False)
class Moderation(Room):
    computers: Computers
    lobbies: Lobbies

    async def _reply(self, chat_id: int, lang: str, key: str, message_id: int | None) -> None:
        await self.out.send(chat_id, render.Rendered(self.kit.t(lang, key)), reply_to=message_id)

    # ---------------------------------------------------------------- /leave, /cancel

    async def leave(self, *, chat_id: int, person: Person, message_id: int | None) -> None:
        """/leave: ask to confirm resigning (R18)."""
        kit = self.kit
        record = await self.store.peek(chat_id)
        if record is None and chat_id == person.user_id:  # the private chat, no practice game
            await self._leave_from_private(person)
            return
        lang = record.language if record else await kit.chat_language(chat_id, person.language)
        if record is None or record.game is None:
            # A lobby has its own Leave button.
            if record is None:  # about the chat ("here"): answered where it was asked
                await self._reply(chat_id, lang, "error-no-game", message_id)
            else:
                await self.tell(chat_id, person, "leave-in-lobby", lang=lang, message_id=message_id)
            return
        if person.player_id not in record.game.active_players:
            out = person.player_id in record.game.players
            key = "error-player-out" if out else "error-not-in-game"
            await self.tell(chat_id, person, key, lang=lang, message_id=message_id)
            return
        question = render.confirm_leave(
            kit.tr,
            record.language,
            game_id=record.id or 0,
            user_id=person.user_id,
            name=person.name,
            practice=record.meta.practice,
        )
        await self._ask(chat_id, record.id or 0, question, message_id)

    async def _leave_from_private(self, person: Person) -> None:
        """/leave in the private chat of someone without a practice game: their one running
        group game's question, asked here in their own language (what only they see), with
        the group named; seated in one lobby, its Leave button (as in the group); seated in
        several games or lobbies, where to send it in each (a mistaken Yes would cost a
        game); in none, a clear answer."""
        games = await self.store.running_games_of(person)
        lobbies = [
            r
            for r in self.store.live_records()
            if r.status == "lobby" and r.chat_id != person.user_id and seated(r, person)
        ]
        if len(games) + len(lobbies) > 1:
            for record in [*games, *lobbies]:
                lang = self.kit.personal_language(person, record)
                text = self.kit.t(lang, "use-in-group", command="/leave", chat=title(record))
                await self.out.send(person.user_id, render.Rendered(text))
            return
        if not games and not lobbies:
            lang = self.kit.tr.normalize(person.language)
            await self._reply(person.user_id, lang, "leave-no-game", None)
            return
        if lobbies:  # as in the group: a lobby's seat is given up with its Leave button
            lang = self.kit.personal_language(person, lobbies[0])
            text = self.kit.t(lang, "leave-in-lobby-group", chat=title(lobbies[0]))
            await self.out.send(person.user_id, render.Rendered(text))
            return
        record = games[0]
        lang = self.kit.personal_language(person, record)
        assert record.game is not None and record.id is not None
        if person.player_id not in record.game.active_players:
            await self._reply(person.user_id, lang, "error-player-out", None)
            return
        question = render.confirm_leave(
            self.kit.tr,
            lang,
            game_id=record.id,
            user_id=person.user_id,
            name=person.name,
            chat=title(record),
        )
        asked = await self.out.send(person.user_id, question)
        async with self.store.for_chat(record.chat_id) as unit:  # deleted if the game ends
            kept = unit.record
            if kept is not None and kept.id == record.id and kept.status == "running":
                kept.meta.private_questions[person.player_id] = asked
                await self.store.save_quietly(kept)

    async def _point_to_groups(self, chat_id: int, person: Person, command: str) -> bool:
        """A game command sent in the private chat, which has no game of its own, by someone
        playing in groups: say where it works. False if there is nothing to point to."""
        games = await self.store.running_games_of(person) if chat_id == person.user_id else []
        for record in games:
            lang = self.kit.personal_language(person, record)
            text = self.kit.t(lang, "use-in-group", command=command, chat=title(record))
            await self.out.send(chat_id, render.Rendered(text))
        return bool(games)

    async def cancel(self, *, chat_id: int, person: Person, message_id: int | None) -> None:
        """/cancel: the opener or an admin ends the lobby or game; no result is stored."""
        private = chat_id == person.user_id  # its own game is practice, else point to groups
        if (
            private
            and await self.store.peek(chat_id) is None
            and await self._point_to_groups(chat_id, person, "/cancel")
        ):
            return
        async with self.store.for_chat(chat_id) as unit:
            record = unit.record
            if record is None:
                lang = await self.kit.chat_language(chat_id, person.language)
                await self._reply(chat_id, lang, "error-no-game", message_id)
                return
            lang = record.language
            if not await self.lobbies.may_manage(record, person):
                await self.tell(
                    chat_id, person, "error-not-opener", lang=lang, message_id=message_id
                )
                return
            was_lobby = record.status == "lobby"
            await self.store.close_game(record)
            if was_lobby:
                await self.lobbies.closed(record, "cancelled", by=person.user_id)
            else:
                self.screens.close_hands(record, "hand-cancelled")
                # The table's last state, without "waiting for" or the button to the hand.
                self.screens.table(record, closed=self.kit.t(lang, "hand-cancelled"))
            # A lobby has no result to speak of: the lobby's own words, under the /cancel.
            key = "lobby-cancelled" if was_lobby else "game-cancelled"
            await self._reply(chat_id, lang, key, message_id)

    # ---------------------------------------------------------------- /kick

    async def kick(
        self, *, chat_id: int, person: Person, target: Person | None, message_id: int | None
    ) -> None:
        """/kick as a reply, for admins: ask to confirm removing that player (R18)."""
        kit = self.kit
        record = await self.store.peek(chat_id)
        lang = record.language if record else await kit.chat_language(chat_id, person.language)
        if not await kit.is_admin(chat_id, person.user_id):
            await self.tell(chat_id, person, "error-kick-admins", lang=lang, message_id=message_id)
            return
        game = record.game if record is not None and record.status == "running" else None
        if target is None or game is None or target.player_id not in game.active_players:
            await self.tell(chat_id, person, "kick-how", lang=lang, message_id=message_id)
            return
        assert record is not None and record.id is not None
        question = render.confirm_kick(
            kit.tr, lang, game_id=record.id, user_id=target.user_id, name=target.name
        )
        await self._ask(chat_id, record.id, question, message_id)

    async def _ask(
        self, chat_id: int, game_id: int, question: render.Rendered, message_id: int | None
    ) -> None:
        """Send a /leave or /kick question; its message id is kept with the game, so that
        the question goes when the game ends unanswered (`Deadlines.saved`)."""
        asked = await self.out.send(chat_id, question, reply_to=message_id)
        async with self.store.for_chat(chat_id) as unit:
            record = unit.record
            if record is not None and record.id == game_id and record.status == "running":
                record.meta.questions.append(asked)
                await self.store.save_quietly(record)

    async def kick_confirmed(
        self, *, query: Tap, person: Person, game_id: int, user_id: int
    ) -> None:
        if await self._admins_chat(query, person, game_id) is not None:
            await self._confirmed(query, person, game_id, str(user_id), "kicked")

    async def _admins_chat(self, query: Tap, person: Person, game_id: int) -> int | None:
        """The chat of the game a /kick question is about, if the tapper is one of its
        admins; else None, the tap answered with who may."""
        chat_id = await self.store.chat_of_game(game_id)
        if chat_id is None or not await self.kit.is_admin(chat_id, person.user_id):
            refused = self.kit.t(person.language, "error-kick-admins")
            await self.out.answer(query, refused, alert=True)
            return None
        return chat_id

    async def leave_confirmed(
        self, *, query: Tap, person: Person, game_id: int, user_id: int
    ) -> None:
        """The player who sent /leave confirms: he resigns and is the durak (R18)."""
        if person.user_id != user_id:
            await self.out.answer(query, self.kit.t(person.language, "error-not-your-button"))
            return
        await self._confirmed(query, person, game_id, person.player_id, "resigned")

    async def leave_declined(self, *, query: Tap, person: Person, user_id: int) -> None:
        """The player who sent /leave says No: they play on, and the question goes."""
        if person.user_id != user_id:
            await self.out.answer(query, self.kit.t(person.language, "error-not-your-button"))
            return
        await self.out.answer(query, self.kit.t(person.language, "leave-kept"))
        await self._withdraw(query, self.kit.t(person.language, "leave-kept"))

    async def kick_declined(
        self, *, query: Tap, person: Person, game_id: int, user_id: int
    ) -> None:
        """An admin says No to a /kick question: nobody is removed, and the question goes."""
        t = self.kit.t
        chat_id = await self._admins_chat(query, person, game_id)
        if chat_id is None:
            return
        record = await self.store.peek(chat_id)
        lang = record.language if record is not None else person.language
        name = str(user_id)
        if record is not None and record.id == game_id:
            name = self.kit.names(record, lang).get(str(user_id), name)
        await self.out.answer(query, t(lang, "kick-dropped", player=name))  # (a toast: text)
        await self._withdraw(query, t(lang, "kick-dropped", player=render.esc(name)))

    async def _withdraw(self, query: Tap, last_words: str) -> None:
        """A /kick or /leave question answered No: deleted (nothing is left of it in the
        chat); where Telegram refuses, it says `last_words`, without buttons. No waiting out
        a 429."""
        if query.chat_id is None or query.message_id is None:
            return
        if not await self.out.delete(query.chat_id, query.message_id):
            await self._close_question(query, last_words)

    async def _confirmed(
        self, query: Tap, person: Person, game_id: int, player_id: str, why: Departure
    ) -> None:
        """A /kick or /leave question was confirmed: remove the player from that game."""
        async with self.store.for_game(game_id) as unit:
            record = unit.game(game_id, "running") if unit is not None else None
            if record is None:
                gone = self.kit.t(person.language, "error-game-gone")
                await self.out.answer(query, gone)
                await self._close_question(query, gone)
                return
            await self._remove(record, player_id, why, query, person)

    async def remove_player(self, *, chat_id: int, player_id: str, why: Departure) -> None:
        """The player leaves the chat's running game as its durak (R18)."""
        async with self.store.for_chat(chat_id) as unit:
            record = unit.record
            if record is not None and record.status == "running" and record.game is not None:
                await self._remove(record, player_id, why)

    async def _remove(
        self,
        record: GameRecord,
        player_id: str,
        why: Departure,
        query: Tap | None = None,
        tapper: Person | None = None,
    ) -> None:
        """The player leaves the running game as its durak (R18): resigned, kicked, or left
        the group (callers hold the chat's lock). `query` and `tapper`: the confirming tap,
        answered in the tapper's language."""
        t = self.kit.t
        game = record.game
        assert game is not None
        # A question about a group's game asked in the player's private chat is theirs
        # alone: in their language (a practice game's chat is that private chat).
        private = (
            tapper is not None
            and query is not None
            and query.chat_id == tapper.user_id != record.chat_id
        )
        asked_in = self.kit.personal_language(tapper, record) if private and tapper else None
        if player_id not in game.active_players:  # a second tap, or out meanwhile
            lang = self.kit.personal_language(tapper, record) if tapper else record.language
            await self.out.answer(query, t(lang, "kick-already-out"))
            await self._close_question(query, t(asked_in or record.language, "kick-already-out"))
            return
        events: list[Event | Removed]
        if why == "resigned":  # /leave: the player's own choice, logged as giving up
            events = list(game.apply(player_id, Resign()))
        else:
            assert why in ("kicked", "left")
            events = [Removed(player_id, why), *forced_resign(game, player_id)]
        record.meta.left[player_id] = why
        if query is not None and query.message_id in record.meta.questions:
            record.meta.questions.remove(query.message_id)  # answered: it says so, and stays
        if (
            private
            and query is not None
            and record.meta.private_questions.get(player_id) == query.message_id
        ):
            del record.meta.private_questions[player_id]
        await self.store.commit(record, [(player_id, events)])
        await self.out.answer(query)
        await self.computers.after_move(record)
        lang = asked_in or record.language
        name = render.esc(self.kit.names(record, lang).get(player_id, player_id))
        # what happened, as the result says it (the log's words are a running commentary);
        # in the private chat it was asked in, said to the player who gave up
        key = "leave-done-private" if private and why == "resigned" else LEFT_KEYS[why]
        await self._close_question(query, t(lang, key, player=name))

    async def _close_question(self, query: Tap | None, text: str) -> None:
        """The /kick or /leave question `query` was tapped on: answered, no more buttons.
        Only an edit (a question deleted meanwhile stays gone), and no waiting out a 429:
        callers hold the chat's lock."""
        if query is not None and query.chat_id is not None and query.message_id is not None:
            await self.out.close_keyboard(
                query.chat_id,
                query.message_id,
                render.Rendered(text),
                patient=False,
                resend=False,
            )

    # ---------------------------------------------------------------- membership

    async def member_left(self, *, chat_id: int, user_id: int) -> None:
        """A player who leaves the group during a game is treated as resigned; one seated in
        the lobby loses the seat."""
        record = await self.store.peek(chat_id)
        if record is not None and record.status == "lobby":
            async with self.store.for_chat(chat_id) as unit:
                record = unit.record
                if record is None or record.status != "lobby":
                    return
                seats = record.lobby.seats
                if any(s.user_id == user_id for s in seats):
                    record.lobby.seats = [s for s in seats if s.user_id != user_id]
                    await self.store.save(record)
                    await self.lobbies.refresh(record)
            return
        game = record.game if record is not None and record.status == "running" else None
        if game is not None and str(user_id) in game.active_players:
            await self.remove_player(chat_id=chat_id, player_id=str(user_id), why="left")

    async def bot_added(self, *, chat_id: int, person: Person) -> None:
        """The bot was added to a group it never played in: say how to start a game, in the
        language of whoever added it. (Telegram also reports the bot "added" to the
        supergroup a group becomes; once the game moved there, that chat is known.)"""
        try:  # a group that has played already knows (a group that became a supergroup too)
            async with self.kit.db.transaction(readonly=True) as tx:
                await tx.games.latest_for_chat(chat_id=chat_id)
            return
        except NotFound:
            pass
        lang = await self.kit.chat_language(chat_id, person.language)
        try:
            await self.out.send(chat_id, render.Rendered(self.kit.t(lang, "group-hello")))
        except (Blocked, SendError) as exc:  # e.g. added without the right to post
            logger.info("could not greet chat %s: %s", chat_id, exc)

    async def bot_removed(self, *, chat_id: int) -> None:
        """The bot was removed from a group: its game ends without a result."""
        async with self.store.for_chat(chat_id) as unit:
            if unit.record is not None:
                await self.bot_gone(unit.record)

    async def bot_gone(self, record: GameRecord) -> None:
        """The bot can no longer write to the group (callers hold its lock)."""
        if record.status not in ("lobby", "running"):
            return
        try:
            await self.store.close_game(record)
        except Conflict:
            return
        self.screens.close_hands(record, "hand-bot-removed")

    async def migrate(self, *, old_chat_id: int, new_chat_id: int) -> None:
        """A group became a supergroup: its game moves with it."""
        async with self.store.locked(old_chat_id, new_chat_id):
            await self.store.migrate(old_chat_id, new_chat_id)
            self.screens.forget_chat(old_chat_id)
            self.computers.cancel(old_chat_id)  # it would look for the game in the old chat
            fresh = await self.store.load(new_chat_id)
            if fresh is not None:
                logger.info("game %s moved from chat %s to %s", fresh.id, old_chat_id, new_chat_id)
                if fresh.status == "lobby":  # its buttons belong to the old chat: post it anew
                    fresh.lobby.message_id = None
                    await self.lobbies.refresh(fresh)
                await self.computers.drive(fresh)  # a computer on turn moves in the new chat
