"""What a chat asks of the bot besides playing: /rules, /stats, /settings.

/settings is for admins, and for a lobby's opener before the start (the game's rules
only: the chat's language and its leaderboard are the admins'); a change applies to the
next game and to an open lobby, never to a running game.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot import render
from bot.delivery import Tap
from bot.house_rules import (
    CHAT_WIDE_OPTIONS,
    PERSONAL_ALERTS,
    choose_language,
    effective_timeout,
    step,
)
from bot.kit import Person, title
from bot.play.lobby import Lobbies
from bot.play.room import Room
from bot.render import stats as stats_view
from bot.render.settings import personal_menu, render_menu
from storage import GameRecord, NotFound, Transaction


@dataclass(eq=False, repr=False)
class ChatRoom(Room):
    lobbies: Lobbies

    # ---------------------------------------------------------------- /rules

    async def rules_text(
        self, *, chat_id: int, fallback_language: str | None, person: Person | None = None
    ) -> list[str]:
        """/rules: the rules of the running game, or the chat's settings for the next one.
        In a private chat: the rules of each of the person's running games, practice and
        group games alike (the caller packs them into messages)."""
        kit = self.kit
        if person is not None and chat_id == person.user_id:  # private: the person's games
            texts = []
            # practice (this chat's own), groups
            for r in await self.store.running_games_of(person):
                lang = kit.personal_language(person, r)
                heading = (  # one title line naming the game, not a bare name above "Rules"
                    kit.t(lang, "rules-title-practice")
                    if r.meta.practice
                    else kit.t(lang, "rules-title-chat", chat=title(r))
                )
                texts.append(
                    render.rules_text(kit.tr, lang, r.rules, kit.turn_timeout(r), title=heading)
                )
            if texts:
                return texts
        record = await self.store.peek(chat_id)
        if record is not None:
            return [
                render.rules_text(kit.tr, record.language, record.rules, kit.turn_timeout(record))
            ]
        async with kit.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id)
        lang = kit.tr.normalize(settings.language or fallback_language)
        timeout = effective_timeout(settings, kit.settings.turn_timeout)
        return [render.rules_text(kit.tr, lang, settings.rules, timeout)]

    # ---------------------------------------------------------------- /stats

    async def stats(
        self,
        *,
        chat_id: int,
        in_group: bool,
        person: Person,
        target: Person | None,
        message_id: int | None,
        chat_title: str = "",
    ) -> None:
        """/stats: in a group the leaderboard (or, as a reply, that person's record);
        in a private chat the caller's own record, overall and per group. ``chat_title``:
        the group's title as Telegram gives it (else the one its last game stored)."""
        async with self.kit.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id) if in_group else None
            lang = self.kit.tr.normalize((settings and settings.language) or person.language)
            if in_group and target is None:
                assert settings is not None
                name = chat_title or await _chat_title(tx, chat_id)
                rendered = await self._leaderboard(
                    tx, lang, chat_id, person, name, settings.show_computers
                )
            else:
                who = target or person
                only = chat_id if in_group else None
                rendered = await self._player_card(tx, lang, who, only)
        await self.out.send(chat_id, rendered, reply_to=message_id)

    async def _leaderboard(
        self,
        tx: Transaction,
        lang: str,
        chat_id: int,
        person: Person,
        name: str,
        show: bool,
    ) -> render.Rendered:
        """The group's top players and the caller's own line (everyone ranked from their
        first game)."""
        results, least = tx.results, stats_view.MIN_RANKED_GAMES
        rows = await results.leaderboard(
            chat_id=chat_id, limit=stats_view.TOP, min_games=least, include_computers=show
        )
        me = None
        try:
            mine = await results.player_record(player_id=person.player_id, chat_id=chat_id)
            rank = await results.rank_of(
                player_id=person.player_id,
                chat_id=chat_id,
                min_games=least,
                include_computers=show,
            )
            me = (rank, stats_view.as_row(mine))
        except NotFound:
            pass
        return stats_view.leaderboard(
            self.kit.tr,
            lang,
            title=name,
            rows=rows,
            me=me,
            show_computers=show,
        )

    async def _standing(
        self, tx: Transaction, who: Person, chat_id: int | None, heading: str | None
    ) -> stats_view.Standing | None:
        """The person's record in a group (or over all groups, ``chat_id`` None) and their
        place among that scope's ranked players: people only over all groups, where no
        group's choice about computers applies."""
        try:
            record = await tx.results.player_record(player_id=who.player_id, chat_id=chat_id)
        except NotFound:
            return None
        show = False
        if chat_id is not None:
            show = (await tx.chats.get(chat_id=chat_id)).show_computers
        least = stats_view.MIN_RANKED_GAMES
        rank = await tx.results.rank_of(
            player_id=who.player_id, chat_id=chat_id, min_games=least, include_computers=show
        )
        ranked = 0
        if rank is not None:
            ranked = await tx.results.player_count(
                chat_id=chat_id, min_games=least, include_computers=show
            )
        return stats_view.Standing(title=heading, record=record, rank=rank, ranked=ranked)

    async def _player_card(
        self, tx: Transaction, lang: str, who: Person, only_chat: int | None
    ) -> render.Rendered:
        overall = await self._standing(tx, who, None, None)
        chats = []
        if overall is not None:
            ids = (
                [only_chat]
                if only_chat is not None
                else await tx.results.chats_of(player_id=who.player_id)
            )
            for chat in ids[:10]:
                heading = await _chat_title(tx, chat) or str(chat)
                standing = await self._standing(tx, who, chat, heading)
                if standing is not None:
                    chats.append(standing)
        return stats_view.player_card(
            self.kit.tr, lang, name=who.name, overall=overall, chats=chats
        )

    # ---------------------------------------------------------------- /settings

    async def _may_change_settings(self, chat_id: int, person: Person) -> bool:
        """Chat admins; and the opener of an open lobby, before the game starts."""
        record = await self.store.peek(chat_id)
        lobby_opener = record is not None and record.status == "lobby"
        if lobby_opener and record is not None and record.lobby.opener_id == person.user_id:
            return True
        return await self.kit.is_admin(chat_id, person.user_id)

    async def settings_command(
        self, *, chat_id: int, person: Person, message_id: int | None
    ) -> None:
        """/settings in a group: the house-rules menu (admins, or the lobby's opener)."""
        kit = self.kit
        async with kit.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id)
        lang = kit.tr.normalize(settings.language or person.language)
        if not await self._may_change_settings(chat_id, person):
            await self.tell(chat_id, person, "error-admins-only", lang=lang, message_id=message_id)
            return
        menu = render_menu(kit.tr, lang, settings, default_timeout=kit.settings.turn_timeout)
        await self.out.send(chat_id, menu, reply_to=message_id)

    async def personal_settings(self, *, person: Person) -> None:
        """/settings in a private chat: the player's own settings (turn alerts)."""
        player = await self.kit.note_player(person, can_message=True)
        lang = self.kit.tr.normalize(player.language)
        await self.out.send(person.user_id, personal_menu(self.kit.tr, lang, player.turn_alerts))

    async def _personal_tap(self, query: Tap, person: Person, option: str, value: str) -> None:
        """A tap on the private /settings menu: choose the turn alerts, or close the menu; the
        player's running games follow at once."""
        kit = self.kit
        assert query.message_id is not None
        player = await kit.note_player(person, can_message=True)
        lang = kit.tr.normalize(player.language)
        if option not in ("n", "z"):  # a group's option: forged, or an old menu
            await self.out.answer(query, kit.t(lang, "error-unknown-button"))
            return
        closed = option == "z"
        if closed:
            await self.out.answer(query)
        elif not value:  # a menu from before the choices were buttons: it shows them now
            await self.out.answer(query, kit.t(lang, "settings-menu-changed"))
        else:
            player.turn_alerts = PERSONAL_ALERTS[value]
            async with kit.db.transaction() as tx:
                await tx.players.upsert(player=player)
            await self.out.answer(query, kit.t(lang, "settings-saved"))
        menu = personal_menu(kit.tr, lang, player.turn_alerts, closed=closed)
        await self.out.show(person.user_id, query.message_id, menu)
        if not value:
            return
        for record in await self.store.running_games_of(person):
            async with self.store.for_chat(record.chat_id) as unit:
                if unit.record is not None and unit.record.status == "running":
                    await self._follow(unit.record, person, player.turn_alerts)

    async def _follow(self, record: GameRecord, person: Person, own: bool | None) -> None:
        """A running game takes a player's new choice of turn alerts."""
        if own is None:
            async with self.kit.db.transaction(readonly=True) as tx:
                own = (await tx.chats.get(chat_id=record.chat_id)).turn_alerts
        quiet = record.meta.quiet
        if own and person.player_id in quiet:
            quiet.remove(person.player_id)
        elif not own and person.player_id not in quiet:
            quiet.append(person.player_id)
        else:
            return
        await self.store.save(record)

    async def settings_tap(
        self, *, query: Tap, person: Person, option: str, value: str = ""
    ) -> None:
        """A tap in the /settings menu: step that option (or choose `value`, the language);
        an open lobby follows."""
        kit = self.kit
        chat_id, message_id = query.chat_id, query.message_id
        if chat_id is None or message_id is None:
            await self.out.answer(query, kit.t(person.language, "error-unknown-button"))
            return
        if chat_id == person.user_id:  # the private menu
            await self._personal_tap(query, person, option, value)
            return
        if option == "n" and value:  # a choice of the private menu: forged here
            await self.out.answer(query, kit.t(person.language, "error-unknown-button"))
            return
        async with self.store.locked(chat_id):
            # The chat's language and its leaderboard are the admins' alone; a lobby's opener
            # may set the rules of the game about to start.
            chat_wide = option in CHAT_WIDE_OPTIONS
            if chat_wide:
                allowed = await kit.is_admin(chat_id, person.user_id)
            else:
                allowed = await self._may_change_settings(chat_id, person)
            if not allowed:
                key = "error-admins-only-chat" if chat_wide else "error-admins-only"
                await self.out.answer(query, kit.t(person.language, key), alert=True)
                return
            default = kit.settings.turn_timeout
            toast = kit.tr.available(person.language)  # the tapper's, as all toasts
            if option == "z" or (option == "l" and not value):
                # Done: the menu stays as a record of the rules, without buttons. A language
                # button of a menu from before the languages were a choice: the menu anew.
                async with kit.db.transaction(readonly=True) as tx:
                    current = await tx.chats.get(chat_id=chat_id)
                lang = kit.tr.normalize(current.language or person.language)
                closed = option == "z"
                menu = render_menu(kit.tr, lang, current, default_timeout=default, closed=closed)
                await self.out.answer(
                    query, None if closed else kit.t(toast or lang, "settings-menu-changed")
                )
                await self.out.show(chat_id, message_id, menu)
                return
            async with kit.db.transaction() as tx:
                current = await tx.chats.get(chat_id=chat_id)
                if option == "l":
                    settings = choose_language(current, value)
                else:
                    settings = step(current, option, default_timeout=default)
                await tx.chats.save(settings=settings)
            lang = kit.tr.normalize(settings.language or person.language)
            await self.out.answer(query, kit.t(toast or lang, "settings-saved"))
            menu = render_menu(kit.tr, lang, settings, default_timeout=default)
            await self.out.show(chat_id, message_id, menu)
            record = await self.store.load(chat_id)
            if record is not None and record.status == "lobby":  # the lobby shows the rules
                record.rules = settings.rules
                record.meta.turn_timeout = effective_timeout(settings, default)
                record.meta.throw_in_window = settings.throw_in_window
                if settings.language:
                    record.language = settings.language
                await self.store.save(record)
                await self.lobbies.refresh(record)


async def _chat_title(tx: Transaction, chat_id: int) -> str:
    """The group's title as its latest game stored it."""
    try:
        record = await tx.games.latest_for_chat(chat_id=chat_id)
    except NotFound:
        return ""
    return record.meta.title
