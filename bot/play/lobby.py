"""The lobby: /newgame, Join (with the deep link for people who never started the bot),
Leave, computers, Start, Cancel, Rules and How to play; and /practice, a game
against computers in the private chat (for a newcomer, how to play comes first).

Start works for the opener or a chat admin once two players are in; an opener who leaves
hands the lobby to the first player seated. Play again (`bot.play.again`) opens a lobby
through `_open` and seats through `_join`; it hears of every seat (`joined`), lobby opened
by /newgame (`opened`) and game begun (`began`). Lobby
buttons count only on the lobby message itself (forged data from elsewhere is refused).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Literal

from bot import render
from bot.callbacks import LobbyData
from bot.delivery import Blocked, Refused, SendError, Tap, telegram_fault
from bot.delivery.screens import lobby_key
from bot.kit import Person, title
from bot.ops import games
from bot.play.computers import Computers
from bot.play.guide import PRACTICE_RULES, Guide
from bot.play.room import Room
from engine import Game
from engine.ai import LEVELS
from storage import GameMeta, GameRecord, Lobby, Seat, StorageError

logger = logging.getLogger(__name__)


@dataclass(eq=False, repr=False)
class Lobbies(Room):
    computers: Computers
    guide: Guide
    joined: Callable[[GameRecord], Awaitable[None]] | None = field(default=None)
    """Told of each seat taken with Join or its link (the caller holds the lobby's lock):
    Play again."""
    opened: Callable[[GameRecord], Awaitable[None]] | None = field(default=None)
    """Told of each lobby /newgame opened: the result before it closes (Play again)."""
    began: Callable[[GameRecord], Awaitable[None]] | None = field(default=None)
    """Told of each game that began: the result it follows closes (Play again)."""

    # ---------------------------------------------------------------- opening

    async def new_game(
        self, *, chat_id: int, chat_title: str, person: Person, message_id: int | None
    ) -> None:
        """/newgame in a group: open a lobby, or point to the one already open."""
        async with self.store.for_chat(chat_id) as unit:
            record = unit.record
            if record is not None and record.status == "lobby" and record.lobby.message_id is None:
                await self.refresh(record)  # its message never arrived: send it now
                return
            if record is not None:
                anchor = record.table_message_id or record.lobby.message_id
                key = "newgame-running" if record.status == "running" else "newgame-lobby-open"
                text = render.Rendered(self.kit.t(record.language, key))
                await self.out.send(chat_id, text, reply_to=anchor)
                return
            record = await self._open(chat_id, chat_title, person, after=message_id)
            if self.opened is not None:
                await self.opened(record)

    async def _open(
        self,
        chat_id: int,
        chat_title: str,
        person: Person,
        asked: Mapping[str, str] | None = None,
        *,
        fill: Callable[[GameRecord], None] | None = None,
        after: int | None = None,
    ) -> GameRecord:
        """A new lobby, its opener seated (if the bot may write to them); `asked`: the
        people invited by name (player id: name), not seated until they tap Join; `fill`:
        whatever else the new record holds, stored with it; `after`: the message that
        asked for it (/newgame)."""
        kit = self.kit
        player = await kit.note_player(person)
        async with kit.db.transaction() as tx:
            settings = await tx.chats.get(chat_id=chat_id)
            if settings.language is None:
                # The chat's language: first its first opener's, changeable in /settings.
                settings.language = kit.tr.normalize(
                    player.language or kit.settings.default_language
                )
                await tx.chats.save(settings=settings)
        seats = []
        langs = {}  # each player's hand comes in their own language
        if player.can_message:
            seats.append(Seat(player_id=person.player_id, user_id=person.user_id, name=person.name))
            if player.language:
                langs[person.player_id] = player.language
        lobby_timeout = kit.settings.lobby_timeout
        record = GameRecord(
            chat_id=chat_id,
            status="lobby",
            language=kit.tr.normalize(settings.language),
            rules=settings.rules,
            lobby=Lobby(opener_id=person.user_id, seats=seats),
            deadline=kit.clock() + timedelta(seconds=lobby_timeout) if lobby_timeout else None,
            meta=GameMeta(
                title=chat_title,
                opener=person.name,
                turn_timeout=settings.turn_timeout,
                throw_in_window=settings.throw_in_window,
                langs=langs,
                asked=dict(asked or {}),
            ),
        )
        if fill is not None:
            fill(record)
        record = await self.store.create(record)
        assert record.id is not None
        try:
            # The lobby's opening is one of the few group messages that notify.
            opening = replace(self._render(record), notify=True)
            record.lobby.message_id = await self.out.send(
                chat_id, opening, key=lobby_key(record.id), after=after
            )
        except (Blocked, Refused):
            # Telegram refused it: nobody can see or join this lobby. Close it, so that the
            # next /newgame opens a fresh one instead of pointing at nothing.
            record.status = "cancelled"
            record.deadline = None
            await self.store.save(record)
            raise
        except SendError as exc:
            if not telegram_fault(exc):
                raise
            # Telegram's faults outlasted the reply's retries (`Outbox.send`): the sender
            # tries longer, beside the chat's lock, so the lobby is not left invisible.
            self.screens.lobby(record, opening)
        # A timeout or network error may have delivered the message all the same: the lobby
        # stays, its first change sends it anew (`refresh`), and so does /newgame, and the
        # copy that landed is deleted then (`Outbox.send`'s key), or is the lobby if a tap
        # on it comes first.
        # Its id, if it cannot be stored now, is kept in memory (never a reason to send it
        # again).
        await self.store.save_quietly(record)
        return record

    def _render(
        self, record: GameRecord, closed: str | None = None, *, pick_level: bool = False
    ) -> render.Rendered:
        assert record.id is not None
        kit = self.kit
        seated = {s.player_id for s in record.lobby.seats}
        return render.lobby(
            kit.tr,
            record.language,
            game_id=record.id,
            opener=render.short_name(record.meta.opener),
            seats=[
                render.LobbySeat(kit.seat_name(record.language, s), s.is_computer)
                for s in record.lobby.seats
            ],
            rules=record.rules,
            closed=closed,
            levels=LEVELS if pick_level else (),
            opener_seated=any(s.user_id == record.lobby.opener_id for s in record.lobby.seats),
            invited=[
                render.short_name(name)
                for pid, name in record.meta.asked.items()
                if pid not in seated
            ],
            again=record.meta.again_of is not None,
        )

    async def refresh(
        self,
        record: GameRecord,
        closed: str | None = None,
        *,
        pick_level: bool = False,
        paced: bool = False,
    ) -> None:
        """Bring the lobby message up to date (`closed`: its last words, no buttons). Its
        latest state wins and is never lost, not even to 429s. `paced` (a seat taken or
        left): at most one edit every `LOBBY_EDIT_INTERVAL` s, the seats taken meanwhile
        shown together (each joiner heard so in the tap's answer), so that the group's
        budget is left for the table."""
        if closed is not None and record.lobby.message_id is None:
            return
        rendered = self._render(record, closed, pick_level=pick_level)
        self.screens.lobby(record, rendered, paced=paced)

    # ---------------------------------------------------------------- the lobby's buttons

    async def tap(self, *, query: Tap, person: Person, data: LobbyData) -> None:
        lang = person.language
        async with self.store.for_game(data.game_id) as unit:
            if unit is None:
                await self.out.answer(query, self.kit.t(lang, "error-game-gone"))
                return
            record = unit.game(data.game_id, "lobby")
            if record is None:
                await self.out.answer(query, self.kit.t(lang, "error-lobby-closed"))
                await self._close_old(unit.chat_id, unit.record, query)
                return
            # Toasts go to the tapper alone: in their language; the lobby is in the chat's.
            lang = self.kit.personal_language(person, record)
            if query.chat_id != record.chat_id:  # forged elsewhere
                await self.out.answer(query, self.kit.t(lang, "error-unknown-button"))
                return
            await self._one_lobby(record, query)
            if data.op == "join":
                await self._join(record, person, query)
            elif data.op == "leave":
                await self._leave(record, person, query, lang)
            elif data.op == "start":
                await self._start(record, person, query)
            elif data.op == "refresh":
                await self.out.answer(query)
                await self.refresh(record)
            elif data.op in ("rules", "howto"):  # for anyone: a new message in the group
                await self.guide.post(
                    query, data.op, self._info(record, data.op), toast_language=lang
                )
            elif not await self.may_manage(record, person):  # cancel, and the computers
                # Everyone sees the lobby's buttons (a group message has one keyboard for
                # all): a tap on one that is not theirs is told whose it is.
                key = "error-not-opener" if data.op == "cancel" else "error-computers-opener"
                opener = render.short_name(record.meta.opener)  # (a toast is plain text)
                await self.out.answer(query, self.kit.t(lang, key, opener=opener), alert=True)
            elif data.op == "cancel":
                await self.store.close_game(record)  # a Conflict: nothing was applied
                await self.out.answer(query, self.kit.t(lang, "lobby-cancelled"))
                await self.closed(record, "cancelled", by=person.user_id)
            elif data.op == "remove":  # the computer seated last
                computers = [s for s in record.lobby.seats if s.is_computer]
                if computers:
                    record.lobby.seats.remove(computers[-1])
                    await self.store.save(record)
                await self.out.answer(query, self.kit.t(lang, "lobby-computer-removed"))
                await self.refresh(record)
            elif data.arg not in LEVELS:  # "Add computer": first the levels, then one seated
                await self.out.answer(query)
                await self.refresh(record, pick_level=True)
            else:
                refused = await self.computers.add(record, data.arg)
                await self.out.answer(query, self.kit.t(lang, refused or "lobby-computer-added"))
                await self.refresh(record)

    async def _one_lobby(self, record: GameRecord, query: Tap) -> None:
        """A tap on a lobby message of this lobby that is not the one it knows (and that
        carries the button tapped: not forged data on another message): one whose send
        landed though its answer was lost (or a killed bot never stored its id). With no
        lobby message known, it is the lobby message from now on (edited, never sent
        again); else it is a duplicate, deleted (or edited to a line pointing to the
        other), and the tap counts as one on the lobby."""
        tapped, known = query.message_id, record.lobby.message_id
        if tapped is None or tapped == known or not query.carried:
            return  # (forged data on another message changes none of them)
        if known is None:
            record.lobby.message_id = tapped
            self.screens.adopt_lobby(record)
            await self.store.save_quietly(record)
            return
        moved = render.Rendered(self.kit.t(record.language, "lobby-moved"))
        self.screens.retire(record.chat_id, tapped, moved)

    async def _close_old(self, chat_id: int, live: GameRecord | None, query: Tap) -> None:
        """A lobby tap on a game that is no longer a lobby (it began, ended or closed):
        the message it came from loses its buttons, one line saying the lobby is closed
        (not the lobby that became the table, nor the chat's live lobby)."""
        tapped = query.message_id
        if tapped is None or query.chat_id != chat_id or not query.carried:
            return
        if live is not None and tapped in (live.lobby.message_id, live.table_message_id):
            return
        if live is not None:
            language = live.language
        else:
            try:
                language = await self.kit.chat_language(chat_id, None)
            except StorageError:
                language = self.kit.settings.default_language
        closed = render.Rendered(self.kit.t(language, "error-lobby-closed"))
        self.screens.retire(chat_id, tapped, closed, delete=False)

    def _info(self, record: GameRecord, kind: Literal["rules", "howto"]) -> str:
        """The lobby's Rules (every option and the time per move) or How to play, in the
        group's language."""
        tr, lang = self.kit.tr, record.language
        if kind == "rules":
            return render.rules_text(tr, lang, record.rules, self.kit.turn_timeout(record))
        return render.howto(tr, lang, record.rules)

    async def may_manage(self, record: GameRecord, person: Person) -> bool:
        """The opener, or a chat admin."""
        if record.lobby.opener_id == person.user_id:
            return True
        return await self.kit.is_admin(record.chat_id, person.user_id)

    async def _leave(self, record: GameRecord, person: Person, query: Tap, lang: str) -> None:
        seats = record.lobby.seats
        if not any(s.user_id == person.user_id for s in seats):
            await self.out.answer(query, self.kit.t(lang, "lobby-not-joined"))
            return
        record.lobby.seats = [s for s in seats if s.user_id != person.user_id]
        people = [(s.user_id, s.name) for s in record.lobby.seats if s.user_id is not None]
        if person.user_id == record.lobby.opener_id and people:
            # The opener's say (Start, Cancel, computers) passes to who sits first.
            record.lobby.opener_id, record.meta.opener = people[0]
        await self.store.save(record)
        await self.out.answer(query, self.kit.t(lang, "lobby-left"))
        await self.refresh(record, paced=True)

    async def _join(self, record: GameRecord, person: Person, query: Tap) -> None:
        kit = self.kit
        lang = kit.personal_language(person, record)
        assert record.id is not None
        if any(s.user_id == person.user_id for s in record.lobby.seats):
            await self.out.answer(query, kit.t(lang, "lobby-already-joined"))
            return
        if len(record.lobby.seats) >= record.rules.max_players:
            await self.out.answer(query, kit.t(lang, "lobby-full"), alert=True)
            return
        player = await kit.note_player(person)
        if not player.can_message:
            # Only a user who started the bot can get a private hand. Try once: a user who
            # started it before we knew about them gets the message; others get the link.
            text = kit.t(player.language or lang, "private-joined", chat=title(record))
            try:
                await self.out.send(person.user_id, render.Rendered(text))
            except (Blocked, SendError):
                # Whoever gets the link here may use it, member or not (a public group's
                # readers can tap Join); a link passed on to others needs membership.
                invited = record.meta.invited
                if person.user_id not in invited:
                    invited.append(person.user_id)
                    await self.store.save(record)
                await self.out.answer(query, url=kit.deep_link(f"j{record.id}"))
                return
            await kit.note_player(person, can_message=True)
        seat(record, person, player.language)
        await self.store.save(record)
        await self.out.answer(query, kit.t(lang, "lobby-joined"))
        await self.refresh(record, paced=True)
        if self.joined is not None:
            await self.joined(record)

    async def _start(self, record: GameRecord, person: Person, query: Tap) -> None:
        kit = self.kit
        lang = kit.personal_language(person, record)
        seats = record.lobby.seats
        refusal: tuple[str, dict[str, int]] | None = None
        if not await self.may_manage(record, person):
            refusal = ("error-not-opener", {})
        elif len(seats) < 2:
            refusal = ("lobby-need-players", {"min": 2})
        elif all(s.is_computer for s in seats):
            refusal = ("lobby-need-human", {})
        elif len(seats) > record.rules.max_players:  # the rules changed meanwhile
            refusal = ("lobby-too-many", {})
        if refusal is not None:
            key, args = refusal
            await self.out.answer(query, kit.t(lang, key, **args), alert=True)
            return
        await self._begin(record, query=query, started=kit.t(lang, "lobby-started"))

    async def _begin(
        self, record: GameRecord, *, query: Tap | None = None, started: str = ""
    ) -> None:
        """Deal, store, answer the Start tap (once stored), show the table and every hand."""
        players = [s.player_id for s in record.lobby.seats]
        previous = record.meta.previous_durak
        record.game = Game.new(
            players,
            rules=record.rules,
            seed=self.kit.seeds(),
            previous_durak=previous if previous in players else None,
        )
        record.status = "running"
        record.started_at = self.kit.clock()
        record.meta.log = []
        record.meta.quiet = await self.kit.alerts_off(record)
        # The lobby message becomes the table (one group message fewer, and none of the
        # group's budget spent on a lobby nobody needs any more); without one, a new table.
        record.table_message_id = self.screens.lobby_to_table(record)
        self.screens.deal(record)
        self.store.set_deadline(record)
        await self.store.save(record)
        games.started(record)
        await self.out.answer(query, started or None)
        self.screens.table(record)
        await self.screens.hands(record, force=True)
        await self.computers.drive(record)
        if self.began is not None:
            await self.began(record)

    async def closed(
        self, record: GameRecord, why: Literal["cancelled", "expired"], *, by: int | None = None
    ) -> None:
        """A lobby closed (stored already) before its game started: the lobby message says
        so, and so do private messages to the people seated in it (but `by`, who closed it),
        whom Join told that their cards would come in private."""
        await self.refresh(record, closed=f"lobby-{why}")
        for seat in record.lobby.seats:
            if seat.user_id is None or seat.user_id == by:
                continue
            lang = self.kit.lang_of(record, seat.player_id)
            text = self.kit.t(lang, f"private-lobby-{why}", chat=title(record))
            try:  # a courtesy, sent under the chat's lock: no waiting out a 429
                await self.out.send(seat.user_id, render.Rendered(text), patient=False)
            except (Blocked, SendError) as exc:
                logger.info("could not tell user %s of the closed lobby: %s", seat.user_id, exc)

    # ---------------------------------------------------------------- practice

    async def practice_command(self, *, person: Person) -> None:
        """/practice in a private chat: choose opponents."""
        kit = self.kit
        player = await kit.note_player(person, can_message=True)
        current = await self.store.peek(person.user_id)
        if current is not None and current.status in ("lobby", "running"):  # one at a time
            text = kit.t(player.language, "practice-running")
            await self.out.send(person.user_id, render.Rendered(text))
            return
        await self.guide.before_practice(person, player.language)
        await self.out.send(person.user_id, render.practice_menu(kit.tr, player.language, LEVELS))

    async def start_practice(
        self, *, query: Tap, person: Person, opponents: int, level: str
    ) -> None:
        """A game against computer players in the private chat: table and hand both there."""
        lang = self.kit.tr.normalize(person.language)
        if query.chat_id is not None and query.chat_id != person.user_id:  # (a forged tap)
            await self.out.answer(query, self.kit.t(lang, "practice-in-private"), alert=True)
            return
        async with self.store.for_chat(person.user_id) as unit:
            if unit.record is not None:
                await self.out.answer(query, self.kit.t(lang, "practice-running"), alert=True)
                return
            await self.out.answer(query)
            await self._practice(person, [level] * min(opponents, PRACTICE_RULES.max_players - 1))

    async def _practice(self, person: Person, levels: Sequence[str]) -> None:
        """Create and begin a practice game (the caller holds the private chat's lock)."""
        lang = self.kit.tr.normalize(person.language)
        await self.kit.note_player(person, can_message=True)
        record = GameRecord(
            chat_id=person.user_id,
            status="lobby",
            language=lang,
            rules=PRACTICE_RULES,
            lobby=Lobby(opener_id=person.user_id, seats=[]),
            # No clock in practice: no time per move, no throw-in window (it waits for Done).
            meta=GameMeta(
                title=self.kit.t(lang, "practice-title"),
                practice=True,
                turn_timeout=0,
                throw_in_window=0,
            ),
        )
        seat(record, person, lang)
        record = await self.store.create(record)
        for level in levels:
            await self.computers.add(record, level)
        await self._begin(record)


def seat(record: GameRecord, person: Person, language: str | None) -> None:
    """Seat the person in the lobby, their hand in `language`."""
    record.lobby.seats.append(
        Seat(player_id=person.player_id, user_id=person.user_id, name=person.name)
    )
    if language:
        record.meta.langs[person.player_id] = language
