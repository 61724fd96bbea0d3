"""The game service: turns what people do into engine actions, stores, and renders.

One `GameService` per bot process. Every change to a chat's game happens under
that chat's lock, in this order: load (from the in-memory copy, or the database),
check, apply, save in one transaction (the move is acknowledged only then), and
render. If saving fails, the in-memory copy is dropped and the stored state wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import weakref
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from telegram import Bot, CallbackQuery, ChatMember
from telegram.constants import ChatMemberStatus
from telegram.error import BadRequest, TelegramError

from bot import render, stats_view
from bot.callbacks import AgainData, CardTap, LobbyData, MoveData, Refresh
from bot.config import Settings
from bot.i18n import Translator
from bot.log import entries_for
from bot.outbox import Blocked, Coalescer, Outbox, transient
from bot.settings_menu import effective_timeout, render_menu, step
from engine import (
    Action,
    Attack,
    Defend,
    ErrorCode,
    Game,
    IllegalMove,
    Pass,
    Resign,
    Resigned,
    Rules,
    Take,
    Transfer,
)
from engine.ai import LEVELS, make_player
from storage import (
    Conflict,
    Database,
    FinishedGame,
    GameRecord,
    Lobby,
    NotFound,
    Participant,
    Player,
    Seat,
    utcnow,
)

logger = logging.getLogger(__name__)

MAX_TIMEOUTS: Final = 3  # R18: removed after three timeouts in a row
DEADLINE_RETRY: Final = timedelta(seconds=15)  # after handling a deadline failed
LOG_KEEP: Final = 6
RESUME_GRACE: Final = timedelta(seconds=30)  # at least this long to move after a restart
HAND_RETRY_SECONDS: Final = 3.0  # a hand Telegram refused (429) or lost (timeout), again


@dataclass(frozen=True, slots=True)
class Person:
    """Who sent an update."""

    user_id: int
    name: str
    language: str | None = None

    @property
    def player_id(self) -> str:
        return str(self.user_id)


_DEEP_LINK = re.compile(r"j([0-9]{1,12})")
"""`/start j<game>`: the Join deep link's payload."""


def _title(record: GameRecord) -> str:
    """The group's title as the game stored it, escaped for HTML."""
    return render.esc(str(record.meta.get("title", "")))


def _seated(record: GameRecord, person: Person) -> bool:
    return any(seat.player_id == person.player_id for seat in record.lobby.seats)


LEFT_KEYS: Final = {
    "resigned": "result-resigned",
    "timed_out": "result-timed-out",
    "kicked": "result-kicked",
    "left": "result-left",
}
"""How a player left a running game (`meta["left"]`), in the words of the result."""


CHAT_WIDE_OPTIONS: Final = frozenset("lc")
"""/settings options that are the chat's, not a game's: language, computers on the leaderboard."""


class ChatLocks:
    """One `asyncio.Lock` per chat, kept only while a task holds it or waits for it: a bot
    that has seen many chats keeps no lock for each of them."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    def __getitem__(self, chat_id: int) -> asyncio.Lock:
        lock = self._locks.get(chat_id)
        if lock is None:
            lock = self._locks[chat_id] = asyncio.Lock()
        return lock

    def __len__(self) -> int:
        return len(self._locks)


class GameService:
    def __init__(
        self,
        *,
        db: Database,
        bot: Bot,
        tr: Translator,
        settings: Settings,
        bot_username: str,
        clock: Callable[[], datetime] = utcnow,
        seeds: Callable[[], int | None] = lambda: None,
    ) -> None:
        self.db = db
        self.bot = bot
        self.tr = tr
        self.settings = settings
        self.bot_username = bot_username
        self.clock = clock
        self.seeds = seeds  # None: a fresh random deal; tests pass fixed seeds
        self.out = Outbox(bot)
        self.tables = Coalescer(
            self._publish_table,
            settings.table_edit_interval,
            publish_later=self._publish_table_locked,
        )
        # Hands that Telegram refused for now (429) or that timed out are shown again later.
        self.hand_retries = Coalescer(self._republish_hands, HAND_RETRY_SECONDS)
        self._locks = ChatLocks()
        self._live: dict[int, GameRecord] = {}  # chat id -> its lobby or running game
        self._chat_of: dict[int, int] = {}  # game id -> chat id
        self._sent_hands: dict[tuple[int, str], Any] = {}  # what each hand message shows
        # game id -> what its table message shows: (chat, message id, text, keyboard)
        self._shown_tables: dict[int, tuple[int, int, str, str | None]] = {}
        # the move number of the keyboard each player has now: a tap from an older one is stale
        self._shown_move: dict[tuple[int, str], int] = {}
        self._deadline_changed = asyncio.Event()
        self._sleeping_until: datetime | None = None  # when the scheduler wakes up next
        # chat id -> not before: a deadline whose handling failed is retried later, not in a loop
        self._retry_at: dict[int, datetime] = {}
        self._computer_names: dict[tuple[str, str], str] = {}  # (language, player id)
        # Pauses before each attempt to load a game again after its save failed (a database
        # that is briefly locked or unreachable); then the chat waits for its next update.
        self.reload_delays: tuple[float, ...] = (0.0, 1.0, 5.0, 15.0, 60.0)
        self._thinking: dict[int, asyncio.Task[None]] = {}  # chat id -> a computer's move
        self._background: set[asyncio.Task[None]] = set()
        self._reloading: set[int] = set()  # chats whose game is being loaded again
        self._due_tasks: dict[int, asyncio.Task[None]] = {}  # chat id -> its deadline, handled

    # ------------------------------------------------------------------ helpers

    def t(self, lang: str | None, key: str, **args: str | int) -> str:
        return self.tr.t(lang, key, **args)

    def lang_of(self, record: GameRecord, player_id: str) -> str:
        langs: Mapping[str, str] = record.meta.get("langs", {})
        return langs.get(player_id) or record.language

    def names(self, record: GameRecord, lang: str | None = None) -> dict[str, str]:
        """Every seat's name; computers named in `lang` (default: the game's language)."""
        lang = lang or record.language
        return {s.player_id: self._seat_name(lang, s) for s in record.lobby.seats}

    def _seat_name(self, lang: str, seat: Seat) -> str:
        """A person's name; a computer's is made in the reader's language when shown, so a
        chat that changes its language sees its computers named in the new one."""
        if not seat.is_computer:
            return seat.name
        key = (lang, seat.player_id)
        name = self._computer_names.get(key)  # every render names every seat: made once
        if name is None:
            name = render.computer_name(self.tr, lang, seat.player_id) or seat.name
            self._computer_names[key] = name
        return name

    def computers(self, record: GameRecord) -> frozenset[str]:
        return frozenset(s.player_id for s in record.lobby.seats if s.is_computer)

    def deep_link(self, payload: str = "") -> str:
        base = f"https://t.me/{self.bot_username}"
        return f"{base}?start={payload}" if payload else base

    def seconds_left(self, record: GameRecord) -> int | None:
        if record.deadline is None:
            return None
        return max(0, round((record.deadline - self.clock()).total_seconds()))

    def turn_timeout(self, record: GameRecord) -> int:
        value = record.meta.get("turn_timeout")
        try:
            return int(value) if value is not None else self.settings.turn_timeout
        except (TypeError, ValueError):  # a damaged row must not stop the deadline scheduler
            return self.settings.turn_timeout

    async def _stored(self, chat_id: int) -> GameRecord | None:
        """The chat's lobby or running game as stored, or None."""
        try:
            async with self.db.transaction(readonly=True) as tx:
                return await tx.games.active_for_chat(chat_id=chat_id)
        except NotFound:
            return None

    async def _load(self, chat_id: int) -> GameRecord | None:
        """The chat's game, made the live copy if it came from the database (callers hold
        the chat's lock)."""
        record = self._live.get(chat_id)
        if record is None:
            record = await self._stored(chat_id)
            if record is not None:
                self._remember(record)
                self._wake_if_earlier(record)
        return record

    async def _peek(self, chat_id: int) -> GameRecord | None:
        """The chat's game for reading only, without the chat's lock: it does not become
        the live copy (only a locked `_load` may put one in place)."""
        record = self._live.get(chat_id)
        return record if record is not None else await self._stored(chat_id)

    def _reload_soon(self, chat_id: int) -> None:
        """After a failed save: load the stored game again (when the chat's lock is free) and
        show it, so that what players see is what is stored, and its deadline and computer
        players go on without waiting for a tap."""

        if chat_id in self._reloading:  # one at a time: a save failing within a reload
            return  # must not start another (new messages each time, for ever)

        async def reload() -> None:
            for attempt, delay in enumerate(self.reload_delays, 1):
                await asyncio.sleep(delay)
                try:
                    async with self._locks[chat_id]:
                        if chat_id in self._live:
                            return  # an update of the chat has loaded it meanwhile
                        record = await self._load(chat_id)
                        if record is None:
                            return
                        await self._show_again(record)  # the stored state, and on from it
                        if chat_id in self._live:
                            return
                        # a save within failed and dropped it again: try once more later
                except Exception:
                    logger.exception(
                        "could not reload the game of chat %s (attempt %s)", chat_id, attempt
                    )

        task = asyncio.create_task(reload())
        self._reloading.add(chat_id)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(lambda _: self._reloading.discard(chat_id))

    def _remember(self, record: GameRecord) -> None:
        assert record.id is not None
        self._live[record.chat_id] = record
        self._chat_of[record.id] = record.chat_id

    def _forget(self, record: GameRecord) -> None:
        if self._live.get(record.chat_id) is record:
            del self._live[record.chat_id]
        self._chat_of.pop(record.id or 0, None)  # a later tap finds the game in the database
        self.tables.forget(record.chat_id)
        self.hand_retries.forget(record.chat_id)
        self._retry_at.pop(record.chat_id, None)
        self._shown_tables.pop(record.id or 0, None)
        for seat in record.lobby.seats:
            self._sent_hands.pop((record.id or 0, seat.player_id), None)
            self._shown_move.pop((record.id or 0, seat.player_id), None)

    async def chat_of_game(self, game_id: int) -> int | None:
        chat_id = self._chat_of.get(game_id)
        if chat_id is not None:
            return chat_id
        try:
            async with self.db.transaction(readonly=True) as tx:
                record = await tx.games.get(game_id=game_id)
        except NotFound:
            return None
        self._chat_of[game_id] = record.chat_id
        return record.chat_id

    async def _save(self, record: GameRecord, result: FinishedGame | None = None) -> None:
        """Commit the record (and the finished game, if any) in one transaction."""
        try:
            if result is None:  # one statement, in the usual case (see `Database.save_game`)
                record.version = await self.db.save_game(record)
            else:
                async with self.db.transaction() as tx:
                    record.version = await tx.games.save(
                        record=record, expected_version=record.version
                    )
                    await tx.results.record(result=result)
        except BaseException:
            self._forget(record)  # the stored state wins ...
            self._reload_soon(record.chat_id)  # ... and keeps its deadlines and computers
            raise
        self._retry_at.pop(record.chat_id, None)  # the chat works again: its deadline as set
        if record.status not in ("lobby", "running"):
            self._forget(record)
        self._wake_if_earlier(record)

    def _wake_if_earlier(self, record: GameRecord) -> None:
        """Wake the scheduler only when this record's next time is earlier than its alarm."""
        times = [t for t in (record.deadline, self._warn_at(record)) if t is not None]
        if not times:
            return
        alarm = self._sleeping_until
        if alarm is None or min(times) < alarm:
            self._deadline_changed.set()

    async def _chat_member(self, chat_id: int, user_id: int) -> ChatMember | None:
        """The user's membership of the group; None when Telegram cannot say (an error, or an
        answer python-telegram-bot cannot read)."""
        try:
            return await self.bot.get_chat_member(chat_id, user_id)
        except Exception as exc:
            logger.info("could not look up %s in chat %s: %s", user_id, chat_id, exc)
            return None

    async def _is_member(self, chat_id: int, user_id: int) -> bool:
        """Whether the user belongs to the group (True when Telegram cannot say)."""
        member = await self._chat_member(chat_id, user_id)
        if member is None:
            return True
        if member.status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
            return False
        return bool(getattr(member, "is_member", True))  # a restricted member may have left

    async def _is_admin(self, chat_id: int, user_id: int) -> bool:
        member = await self._chat_member(chat_id, user_id)
        return member is not None and member.status in (
            ChatMemberStatus.OWNER,
            ChatMemberStatus.ADMINISTRATOR,
        )

    async def _note_player(self, person: Person, *, can_message: bool | None = None) -> Player:
        async with self.db.transaction() as tx:
            try:
                known = await tx.players.get(user_id=person.user_id)
            except NotFound:
                known = Player(user_id=person.user_id, name=person.name, can_message=False)
            player = Player(
                user_id=person.user_id,
                name=person.name,
                language=self.tr.normalize(person.language) if person.language else known.language,
                can_message=known.can_message if can_message is None else can_message,
            )
            if player != known or can_message is not None:
                await tx.players.upsert(player=player)
        return player

    # ------------------------------------------------------------------ lobby

    async def new_game(
        self, *, chat_id: int, chat_title: str, person: Person, message_id: int | None
    ) -> None:
        """/newgame in a group: open a lobby, or point to the one already open."""
        async with self._locks[chat_id]:
            record = await self._load(chat_id)
            if record is not None and record.status == "lobby" and record.lobby.message_id is None:
                await self._refresh_lobby(record)  # its message never arrived: send it now
                return
            if record is not None:
                anchor = record.table_message_id or record.lobby.message_id
                key = "newgame-running" if record.status == "running" else "newgame-lobby-open"
                await self.out.send(
                    chat_id,
                    render.Rendered(self.t(record.language, key)),
                    reply_to=anchor,
                )
                return
            await self._open_lobby(chat_id, chat_title, person, seats=[])

    async def _open_lobby(
        self, chat_id: int, chat_title: str, person: Person, seats: Sequence[Seat]
    ) -> GameRecord:
        player = await self._note_player(person)
        async with self.db.transaction() as tx:
            settings = await tx.chats.get(chat_id=chat_id)
            if settings.language is None:
                # The chat's language: first its first opener's, changeable in /settings.
                settings.language = self.tr.normalize(
                    player.language or self.settings.default_language
                )
                await tx.chats.save(settings=settings)
            seats = list(seats)
            if not any(s.user_id == person.user_id for s in seats) and player.can_message:
                seats.insert(
                    0, Seat(player_id=person.player_id, user_id=person.user_id, name=person.name)
                )
            # Each player's hand comes in their own language.
            langs = {}
            for seat in seats:
                if seat.user_id is not None:
                    known = player if seat.user_id == person.user_id else None
                    if known is None:
                        try:
                            known = await tx.players.get(user_id=seat.user_id)
                        except NotFound:
                            continue
                    if known.language:
                        langs[seat.player_id] = known.language
        language = self.tr.normalize(settings.language)
        now = self.clock()
        record = GameRecord(
            chat_id=chat_id,
            status="lobby",
            language=language,
            rules=settings.rules,
            lobby=Lobby(opener_id=person.user_id, seats=seats),
            deadline=now + timedelta(seconds=self.settings.lobby_timeout)
            if self.settings.lobby_timeout
            else None,
            meta={
                "title": chat_title,
                "opener": person.name,
                "turn_timeout": settings.turn_timeout,
                "langs": langs,
                "log": [],
            },
        )
        async with self.db.transaction() as tx:
            record = await tx.games.create(record=record)
        self._remember(record)
        try:
            record.lobby.message_id = await self.out.send(chat_id, self._render_lobby(record))
        except (Blocked, BadRequest):
            # Telegram refused it: nobody can see or join this lobby. Close it, so that the
            # next /newgame opens a fresh one instead of pointing at nothing.
            record.status = "cancelled"
            record.deadline = None
            await self._save(record)
            raise
        # A timeout or network error may have delivered the message all the same: the lobby
        # stays, its first change sends it anew (`_refresh_lobby`), and so does /newgame.
        await self._save(record)
        return record

    def _render_lobby(
        self, record: GameRecord, closed: str | None = None, *, pick_level: bool = False
    ) -> render.Rendered:
        assert record.id is not None
        return render.lobby(
            self.tr,
            record.language,
            game_id=record.id,
            opener=str(record.meta.get("opener", "")),
            seats=[
                render.LobbySeat(self._seat_name(record.language, s), s.is_computer)
                for s in record.lobby.seats
            ],
            rules=record.rules,
            turn_timeout=self.turn_timeout(record),
            closed=closed,
            levels=LEVELS if pick_level else (),
            opener_seated=any(s.user_id == record.lobby.opener_id for s in record.lobby.seats),
        )

    async def _refresh_lobby(
        self, record: GameRecord, closed: str | None = None, *, pick_level: bool = False
    ) -> None:
        if record.lobby.message_id is None and closed is not None:
            return
        try:
            sent = await self.out.show(
                record.chat_id,
                record.lobby.message_id,
                self._render_lobby(record, closed, pick_level=pick_level),
            )
        except (Blocked, TelegramError) as exc:
            logger.info("could not update lobby of chat %s: %s", record.chat_id, exc)
            return
        if sent.new and closed is None:
            record.lobby.message_id = sent.message_id
            await self._save(record)

    async def lobby_action(self, *, query: CallbackQuery, person: Person, data: LobbyData) -> None:
        chat_id = await self.chat_of_game(data.game_id)
        lang = person.language
        if chat_id is None:
            await self.out.answer(query, self.t(lang, "error-game-gone"))
            return
        async with self._locks[chat_id]:
            record = await self._load(chat_id)
            if record is None or record.id != data.game_id or record.status != "lobby":
                await self.out.answer(query, self.t(lang, "error-lobby-closed"))
                return
            # Toasts go to the tapper alone: in their language; the lobby is in the chat's.
            lang = self.personal_language(person, record)
            message = query.message
            if message is None or message.chat.id != record.chat_id:  # forged elsewhere
                await self.out.answer(query, self.t(lang, "error-unknown-button"))
                return
            if data.op == "join":
                await self._join(record, person, query)
            elif data.op == "leave":
                seats = record.lobby.seats
                if not any(s.user_id == person.user_id for s in seats):
                    await self.out.answer(query, self.t(lang, "lobby-not-joined"))
                    return
                record.lobby.seats = [s for s in seats if s.user_id != person.user_id]
                people = [(s.user_id, s.name) for s in record.lobby.seats if s.user_id is not None]
                if person.user_id == record.lobby.opener_id and people:
                    # The opener's say (Start, Cancel, computers) passes to who sits first.
                    record.lobby.opener_id, record.meta["opener"] = people[0]
                await self._save(record)
                await self.out.answer(query, self.t(lang, "lobby-left"))
                await self._refresh_lobby(record)
            elif data.op == "start":
                await self._start(record, person, query)
            elif data.op == "cancel":
                if not await self._may_manage(record, person):
                    await self.out.answer(query, self.t(lang, "error-not-opener"), alert=True)
                    return
                record.status = "cancelled"
                record.deadline = None
                await self._save(record)
                await self.out.answer(query, self.t(lang, "lobby-cancelled"))
                await self._lobby_closed(record, "cancelled", by=person.user_id)
            elif data.op == "remove":  # the computer seated last
                if not await self._may_manage(record, person):
                    await self.out.answer(query, self.t(lang, "error-not-opener"), alert=True)
                    return
                computers = [s for s in record.lobby.seats if s.is_computer]
                if computers:
                    record.lobby.seats.remove(computers[-1])
                    await self._save(record)
                await self.out.answer(query, self.t(lang, "lobby-computer-removed"))
                await self._refresh_lobby(record)
            elif data.op == "refresh":
                await self.out.answer(query)
                await self._refresh_lobby(record)
            else:  # "add"
                await self._add_computer_tap(record, person, query, data.arg)

    async def _add_computer_tap(
        self, record: GameRecord, person: Person, query: CallbackQuery, level: str
    ) -> None:
        """ "Add computer": first tap shows the levels, the second seats one."""
        lang = self.personal_language(person, record)
        if not await self._may_manage(record, person):
            await self.out.answer(query, self.t(lang, "error-not-opener"), alert=True)
            return
        if level not in LEVELS:
            await self.out.answer(query)
            await self._refresh_lobby(record, pick_level=True)
            return
        refused = await self.add_computer(record, person, level)
        await self.out.answer(query, self.t(lang, refused or "lobby-computer-added"))
        await self._refresh_lobby(record)

    async def _may_manage(self, record: GameRecord, person: Person) -> bool:
        if record.lobby.opener_id == person.user_id:
            return True
        return await self._is_admin(record.chat_id, person.user_id)

    async def _join(self, record: GameRecord, person: Person, query: CallbackQuery) -> None:
        lang = self.personal_language(person, record)
        assert record.id is not None
        if any(s.user_id == person.user_id for s in record.lobby.seats):
            await self.out.answer(query, self.t(lang, "lobby-already-joined"))
            return
        if len(record.lobby.seats) >= record.rules.max_players:
            await self.out.answer(query, self.t(lang, "lobby-full"), alert=True)
            return
        player = await self._note_player(person)
        if not player.can_message:
            # Only a user who started the bot can get a private hand. Try once: a user who
            # started it before we knew about them gets the message; others get the link.
            try:
                await self.out.send(
                    person.user_id,
                    render.Rendered(
                        self.t(
                            player.language or lang,
                            "private-joined",
                            chat=_title(record),
                        )
                    ),
                )
            except (Blocked, TelegramError):
                # Whoever gets the link here may use it, member or not (a public group's
                # readers can tap Join); a link passed on to others needs membership.
                invited: list[int] = record.meta.setdefault("invited", [])
                if person.user_id not in invited:
                    invited.append(person.user_id)
                    await self._save(record)
                await self.out.answer(query, url=self.deep_link(f"j{record.id}"))
                return
            await self._note_player(person, can_message=True)
        self._seat(record, person, player.language)
        await self._save(record)
        await self.out.answer(query, self.t(lang, "lobby-joined"))
        await self._refresh_lobby(record)

    def _seat(self, record: GameRecord, person: Person, language: str | None) -> None:
        record.lobby.seats.append(
            Seat(player_id=person.player_id, user_id=person.user_id, name=person.name)
        )
        if language:
            record.meta.setdefault("langs", {})[person.player_id] = language

    async def start_payload(self, *, person: Person, payload: str) -> None:
        """/start j<game> in the private chat: the deep link from Join."""
        player = await self._note_player(person, can_message=True)
        lang = player.language
        link = _DEEP_LINK.fullmatch(payload)  # game ids fit in 12 digits, as in callbacks
        game_id = int(link[1]) if link else None
        chat_id = await self.chat_of_game(game_id) if game_id is not None else None
        if chat_id is None:
            await self.welcome(person=person)
            return
        async with self._locks[chat_id]:
            record = await self._load(chat_id)
            if record is not None and record.id == game_id and record.status == "lobby":
                await self._join_by_link(record, person, lang)
                return
            # The link's lobby is closed. Say what the player can do instead.
            seated = record is not None and record.status == "running" and _seated(record, person)
            if record is not None and record.status == "lobby":  # a newer lobby is open
                key = "private-joined" if _seated(record, person) else "error-lobby-closed-newer"
                text = self.t(lang, key, chat=_title(record))
                await self.out.send(person.user_id, render.Rendered(text))
                return
        # The game started before they pressed Start: their cards. (Unless it ended meanwhile.)
        if seated and await self.resend_hand(person=person, chat_id=chat_id, quiet=True):
            return
        # Maybe their first message from the bot: how to play, too.
        text = self.t(lang, "error-lobby-closed") + "\n\n" + self.t(lang, "welcome")
        keyboard = render.add_to_group_keyboard(self.tr, lang, self.bot_username)
        await self.out.send(person.user_id, render.Rendered(text, keyboard))

    async def _join_by_link(self, record: GameRecord, person: Person, lang: str | None) -> None:
        """/start j<game> for an open lobby (under its chat's lock): seat the player."""
        title = _title(record)
        if any(s.user_id == person.user_id for s in record.lobby.seats):
            await self.out.send(
                person.user_id, render.Rendered(self.t(lang, "private-joined", chat=title))
            )
            return
        if len(record.lobby.seats) >= record.rules.max_players:
            await self.out.send(person.user_id, render.Rendered(self.t(lang, "lobby-full")))
            return
        invited = person.user_id in record.meta.get("invited", ())
        if not invited and not await self._is_member(record.chat_id, person.user_id):
            text = self.t(lang, "join-not-member", chat=title)
            await self.out.send(person.user_id, render.Rendered(text))
            return
        self._seat(record, person, lang)
        await self._save(record)
        await self.out.send(
            person.user_id, render.Rendered(self.t(lang, "private-joined", chat=title))
        )
        await self._refresh_lobby(record)
        joined = self.t(record.language, "group-joined", player=render.esc(person.name))
        await self.out.send(record.chat_id, render.Rendered(joined))

    async def welcome(self, *, person: Person) -> None:
        """/start without a payload: how to play; also unblocks a player mid-game."""
        player = await self._note_player(person, can_message=True)
        await self.out.send(
            person.user_id,
            render.Rendered(
                self.t(player.language, "welcome"),
                render.add_to_group_keyboard(self.tr, player.language, self.bot_username),
            ),
        )
        for record in list(self._live.values()):
            if record.status == "running" and person.player_id in record.meta.get("blocked", []):
                async with self._locks[record.chat_id]:
                    blocked = record.meta.get("blocked", [])
                    if (
                        self._live.get(record.chat_id) is not record
                        or person.player_id not in blocked
                    ):
                        continue  # changed while waiting for the lock
                    blocked.remove(person.player_id)
                    self._sent_hands.pop((record.id or 0, person.player_id), None)
                    await self._save(record)
                    await self._publish_hands(record, only={person.player_id}, force=True)

    async def _start(self, record: GameRecord, person: Person, query: CallbackQuery) -> None:
        lang = self.personal_language(person, record)
        if not await self._may_manage(record, person):
            await self.out.answer(query, self.t(lang, "error-not-opener"), alert=True)
            return
        if len(record.lobby.seats) < 2:
            await self.out.answer(query, self.t(lang, "lobby-need-players", min=2), alert=True)
            return
        if all(s.is_computer for s in record.lobby.seats):
            await self.out.answer(query, self.t(lang, "lobby-need-human"), alert=True)
            return
        if len(record.lobby.seats) > record.rules.max_players:  # the rules changed meanwhile
            await self.out.answer(query, self.t(lang, "lobby-too-many"), alert=True)
            return
        await self._begin(record, query=query, started=self.t(lang, "lobby-started"))

    async def _begin(
        self, record: GameRecord, *, query: CallbackQuery | None = None, started: str = ""
    ) -> None:
        """Deal, store, answer the Start tap (once stored), show the table and every hand."""
        players = [s.player_id for s in record.lobby.seats]
        previous = record.meta.get("previous_durak")
        record.game = Game.new(
            players,
            rules=record.rules,
            seed=self.seeds(),
            previous_durak=previous if previous in players else None,
        )
        record.status = "running"
        record.started_at = self.clock()
        record.meta["log"] = []
        self._set_deadline(record)
        await self._save(record)
        await self.out.answer(query, started or None)
        await self._refresh_lobby(record, closed="lobby-started")
        await self._publish_table_now(record)
        await self._publish_hands(record, force=True)
        await self._drive_computers(record)

    def _set_deadline(self, record: GameRecord) -> None:
        timeout = self.turn_timeout(record)
        running = record.status == "running" and record.game is not None
        record.deadline = self.clock() + timedelta(seconds=timeout) if running and timeout else None
        record.meta["warned"] = False

    async def play_again(self, *, query: CallbackQuery, person: Person, data: AgainData) -> None:
        chat_id = await self.chat_of_game(data.game_id)
        if chat_id is None:
            await self.out.answer(query, self.t(person.language, "error-game-gone"))
            return
        async with self._locks[chat_id]:
            current = await self._load(chat_id)
            if current is not None:
                # A lobby opened since this result was posted is below it, in the chat.
                key = "newgame-running" if current.status == "running" else "again-lobby-open"
                await self.out.answer(query, self.t(self.personal_language(person, current), key))
                return
            async with self.db.transaction(readonly=True) as tx:
                old = await tx.games.get(game_id=data.game_id)
            lang = self.personal_language(person, old)  # toasts: the tapper's language
            if old.game is None or not any(s.user_id == person.user_id for s in old.lobby.seats):
                await self.out.answer(query, self.t(lang, "error-not-in-game"))
                return
            if old.meta.get("practice"):  # practice again: same opponents, still unranked
                await self.out.answer(query)
                await self._practice(
                    person, [s.level or "easy" for s in old.lobby.seats if s.is_computer]
                )
                return
            # Everyone again, but those who were removed (kicked, timed out three times) or
            # left the group: they would have to join anew.
            gone = {
                pid
                for pid, why in old.meta.get("left", {}).items()
                if why in ("kicked", "timed_out", "left")
            }
            record = await self._open_lobby(
                chat_id,
                str(old.meta.get("title", "")),
                person,
                seats=[seat for seat in old.lobby.seats if seat.player_id not in gone],
            )
            record.meta["langs"] = {**old.meta.get("langs", {}), **record.meta.get("langs", {})}
            record.meta["previous_durak"] = old.game.durak
            await self._save(record)
            await self.out.answer(query, self.t(lang, "lobby-again"))

    # ------------------------------------------------------------------ moves

    def _running_games_of(self, person: Person) -> list[GameRecord]:
        """The running games (in memory) in which this person has a seat."""
        return [r for r in self._live.values() if r.status == "running" and _seated(r, person)]

    def personal_language(self, person: Person, record: GameRecord) -> str:
        """For what only this person sees (a toast): their language if the bot has it, else
        the game's (a Ukrainian in a Russian group reads Russian, not English)."""
        return self.tr.available(person.language) or record.language

    async def unknown_button(self, *, query: CallbackQuery, person: Person) -> None:
        """Callback data the bot never made (forged, or from a much older version): nothing
        changes; a player of a running game is answered "out of date" and gets the current
        keyboard, anyone else "unknown button"."""
        for peeked in self._running_games_of(person):
            async with self._locks[peeked.chat_id]:
                record = await self._load(peeked.chat_id)
                if record is None or record.game is None or record.status != "running":
                    continue
                pid = person.player_id
                await self.out.answer(query, self.t(self.lang_of(record, pid), "error-stale"))
                await self._publish_hands(record, only={pid}, force=True)
                return
        await self.out.answer(query, self.t(person.language, "error-unknown-button"))

    async def move(self, *, query: CallbackQuery, person: Person, data: MoveData) -> None:
        """A tap on a hand (or confirm) button."""
        chat_id = await self.chat_of_game(data.game_id)
        lang = person.language
        if chat_id is None:
            await self.out.answer(query, self.t(lang, "error-game-gone"))
            return
        async with self._locks[chat_id]:
            record = await self._load(chat_id)
            if (
                record is None
                or record.id != data.game_id
                or record.status != "running"
                or record.game is None
            ):
                await self.out.answer(query, self.t(lang, "error-game-gone"))
                return
            game = record.game
            pid = person.player_id
            if pid not in game.players:
                await self.out.answer(query, self.t(lang, "error-not-in-game"))
                return
            lang = self.lang_of(record, pid)
            intent = data.intent
            if isinstance(intent, Refresh):
                await self.out.answer(query)
                await self._publish_hands(record, only={pid}, force=True)
                return
            shown = self._shown_move.get((record.id or 0, pid), game.move_number)
            if data.move < shown or data.move > game.move_number:
                await self.out.answer(query, self.t(lang, "error-stale"))
                await self._publish_hands(record, only={pid}, force=True)
                return
            action: Action
            if isinstance(intent, CardTap):
                options = render.actions_for_card(game.legal_actions(pid), intent.card)
                if not options:
                    await self.out.answer(query, self._why_not(record, pid, intent))
                    return
                # A card that would only transfer asks first: a defender who meant to cover
                # must not pass the bout on by mistake (the Transfer buttons are one tap).
                if len(options) > 1 or isinstance(options[0], Transfer):
                    await self.out.answer(query)
                    await self._publish_hands(
                        record,
                        only={pid},
                        force=True,
                        choice=options,
                        transfer_to=_transfer_target(game, pid, options),
                    )
                    return
                action = options[0]
            else:
                action = intent
            try:
                events = game.apply(pid, action)
            except IllegalMove as exc:
                await self.out.answer(query, self.error_text(lang, exc.code))
                return
            record.timeouts.pop(pid, None)
            if isinstance(action, Resign):
                record.meta.setdefault("left", {})[pid] = "resigned"
            try:
                await self._after_moves(record, [(pid, events)])
            except Conflict:
                await self.out.answer(query, self.t(lang, "error-conflict"))
                return
            # The move is stored: its answer and its hands go out at once (one round trip
            # to Telegram for the tap, not two).
            answering = asyncio.ensure_future(self.out.answer(query))
            try:
                await self._render_after(record)
            finally:
                await answering

    def error_text(self, lang: str | None, code: ErrorCode) -> str:
        return self.t(lang, f"error-{code.value.replace('_', '-')}")

    def _why_not(self, record: GameRecord, pid: str, tap: CardTap) -> str:
        """Why the tapped card cannot be played now, in the engine's words."""
        assert record.game is not None
        lang = self.lang_of(record, pid)
        game = record.game
        probe = game.copy()
        attempt: Action = Attack(tap.card)
        if pid == game.defender:
            open_attacks = [a for a, d in game.table if d is None]
            if open_attacks and not game.defender_took:
                attempt = Defend(open_attacks[0], tap.card)
        try:
            probe.apply(pid, attempt)
        except IllegalMove as exc:
            return self.error_text(lang, exc.code)
        return self.t(lang, "error-not-your-turn")

    async def _after_moves(
        self, record: GameRecord, moves: Iterable[tuple[str, list[Any]]]
    ) -> None:
        """Log, set the deadline, store (with the result if the game ended)."""
        assert record.game is not None
        log: list[dict[str, Any]] = record.meta.setdefault("log", [])
        for pid, events in moves:
            log.extend(entries_for(pid, events))
        del log[:-LOG_KEEP]
        result = None
        if record.game.is_over:
            record.status = "finished"
            record.deadline = None
            result = self._finished(record)
        else:
            self._set_deadline(record)
        await self._save(record, result)

    def _finished(self, record: GameRecord) -> FinishedGame:
        game = record.game
        assert game is not None and game.outcome is not None and record.id is not None
        outcome = game.outcome
        left: Mapping[str, str] = record.meta.get("left", {})
        seats = {s.player_id: s for s in record.lobby.seats}
        places = outcome.places(game.players)
        participants = []
        for seat_no, p in enumerate(game.players):
            seat = seats[p]
            if outcome.draw:
                res = "draw"
            elif p == outcome.durak:
                # kicked, or left the group: resigned (R18); removed for timeouts: timed_out
                how = left.get(p)
                res = "durak" if how is None else "timed_out" if how == "timed_out" else "resigned"
            else:
                res = "won"
            participants.append(
                Participant(
                    seat=seat_no,
                    player_id=p,
                    user_id=seat.user_id,
                    name=seat.name,
                    is_computer=seat.is_computer,
                    result=res,  # type: ignore[arg-type]
                    place=places[p],
                )
            )
        return FinishedGame(
            chat_id=record.chat_id,
            game_id=record.id,
            rules=record.rules,
            started_at=record.started_at or record.created_at,
            ended_at=self.clock(),
            bouts=outcome.bouts,
            draw=outcome.draw,
            durak=outcome.durak,
            participants=participants,
            practice=bool(record.meta.get("practice")),
        )

    async def _render_after(self, record: GameRecord) -> None:
        """Show the new state, then let computer players the game waits for move."""
        await self._render_state(record)
        await self._drive_computers(record)

    async def _render_state(self, record: GameRecord) -> None:
        """Show the new state: hands whose options changed, the table, the result."""
        finished = record.status == "finished"
        # The last state of a game cannot be shown by a retry later (it is no longer live):
        # wait out a short 429 in place.
        await self._publish_hands(record, patient=finished)
        if finished:
            await self.tables.flush_key(record.chat_id)
            await self._publish_table_now(record, patient=True)
            await self._send_result(record)
        else:
            await self.tables.request(record.chat_id)

    async def _send_result(self, record: GameRecord) -> None:
        assert record.game is not None and record.game.outcome is not None
        assert record.id is not None
        outcome = record.game.outcome
        reason = None
        if outcome.durak is not None:
            why = record.meta.get("left", {}).get(outcome.durak)
            reason = LEFT_KEYS.get(why or "")
        rendered = render.result(
            self.tr,
            record.language,
            outcome,
            game_id=record.id,
            names=self.names(record),
            reason=reason,
        )
        try:
            await self.out.send(record.chat_id, rendered)
        except (Blocked, TelegramError) as exc:
            logger.warning("could not post the result in chat %s: %s", record.chat_id, exc)

    # ------------------------------------------------------------------ computer players

    def _computer_to_move(self, record: GameRecord) -> str | None:
        """The first computer seat (clockwise) the game waits for, if any."""
        game = record.game
        if record.status != "running" or game is None or game.is_over:
            return None
        computers = self.computers(record)
        return next((p for p in game.players if p in computers and p in game.to_act), None)

    async def _drive_computers(self, record: GameRecord) -> None:
        """Computer players move through the same path as people (apply, store, render).

        With `COMPUTER_DELAY` 0 they move at once, one after another; otherwise each move
        comes after the delay, in a task per chat (the caller holds the chat lock)."""
        if self._computer_to_move(record) is None:
            return
        if self.settings.computer_delay > 0:
            self._schedule_computer(record.chat_id)
            return
        while (pid := self._computer_to_move(record)) is not None:
            await self._computer_move(record, pid)

    def _schedule_computer(self, chat_id: int) -> None:
        if chat_id not in self._thinking:
            self._thinking[chat_id] = asyncio.create_task(self._think(chat_id))

    async def _think(self, chat_id: int) -> None:
        try:
            await asyncio.sleep(self.settings.computer_delay)
            async with self._locks[chat_id]:
                record = await self._load(chat_id)
                pid = self._computer_to_move(record) if record is not None else None
                if record is not None and pid is not None:
                    await self._computer_move(record, pid)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("a computer player's move in chat %s failed", chat_id)
        finally:
            self._thinking.pop(chat_id, None)
        record = self._live.get(chat_id)
        if record is not None and self._computer_to_move(record) is not None:
            self._schedule_computer(chat_id)

    async def _computer_move(self, record: GameRecord, pid: str) -> None:
        game = record.game
        assert game is not None
        seat = next(s for s in record.lobby.seats if s.player_id == pid)
        seed = zlib.crc32(f"{game.seed}:{game.move_number}:{pid}".encode())  # stable
        player = make_player(seat.level or "easy", seed)
        try:
            action = await asyncio.to_thread(player.choose, game.copy(), pid)
        except Exception:  # a bug in a stronger player must not stop the game: play easy
            logger.exception("the %s computer %s failed; it plays easy this move", seat.level, pid)
            action = make_player("easy", seed).choose(game.copy(), pid)
        events = game.apply(pid, action)
        record.timeouts.pop(pid, None)
        await self._after_moves(record, [(pid, events)])
        await self._render_state(record)

    async def add_computer(self, record: GameRecord, person: Person, level: str) -> str | None:
        """Seat a computer player in the lobby; returns a locale key if refused."""
        if len(record.lobby.seats) >= record.rules.max_players:
            return "lobby-full"
        number = 1 + sum(1 for s in record.lobby.seats if s.is_computer)
        player_id = render.computer_id(level, number)
        name = render.computer_name(self.tr, record.language, player_id) or player_id
        record.lobby.seats.append(
            Seat(
                player_id=player_id,
                user_id=None,
                name=name,
                is_computer=True,
                level=level,
            )
        )
        await self._save(record)
        return None

    async def close(self) -> None:
        """Shutdown: stop computer players' pending moves (they are re-planned after a
        restart) and hands waiting to be shown again (a restart shows every hand), publish
        pending table edits, then schedule nothing more."""
        self.hand_retries.close()
        for task in [*self._thinking.values(), *self._background]:
            task.cancel()
        for task in [*self._thinking.values(), *self._background]:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._thinking.clear()
        try:
            await self.tables.flush()
        except Exception:
            logger.exception("publishing the pending tables at shutdown failed")
        self.tables.close()  # a flush that hit a 429 leaves no retry behind

    # ------------------------------------------------------------------ practice

    async def practice_command(self, *, person: Person) -> None:
        """/practice in a private chat: choose opponents."""
        player = await self._note_player(person, can_message=True)
        current = await self._peek(person.user_id)
        if current is not None and current.status in ("lobby", "running"):  # one at a time
            text = self.t(player.language, "practice-running")
            await self.out.send(person.user_id, render.Rendered(text))
            return
        await self.out.send(person.user_id, render.practice_menu(self.tr, player.language, LEVELS))

    async def start_practice(
        self, *, query: CallbackQuery, person: Person, opponents: int, level: str
    ) -> None:
        """A game against computer players in the private chat: table and hand both there."""
        chat_id = person.user_id
        lang = self.tr.normalize(person.language)
        async with self._locks[chat_id]:
            if await self._load(chat_id) is not None:
                await self.out.answer(query, self.t(lang, "practice-running"), alert=True)
                return
            await self.out.answer(query)
            await self._practice(person, [level] * min(opponents, Rules().max_players - 1))

    async def _practice(self, person: Person, levels: Sequence[str]) -> None:
        """Create and begin a practice game (the caller holds the private chat's lock)."""
        chat_id = person.user_id
        lang = self.tr.normalize(person.language)
        await self._note_player(person, can_message=True)
        rules = Rules()
        record = GameRecord(
            chat_id=chat_id,
            status="lobby",
            language=lang,
            rules=rules,
            lobby=Lobby(opener_id=person.user_id, seats=[]),
            meta={
                "title": self.t(lang, "practice-title"),
                "practice": True,
                "turn_timeout": 0,
                "langs": {},
                "log": [],
            },
        )
        self._seat(record, person, lang)
        async with self.db.transaction() as tx:
            record = await tx.games.create(record=record)
        self._remember(record)
        for level in levels:
            await self.add_computer(record, person, level)
        await self._begin(record)

    # ------------------------------------------------------------------ rendering

    async def _publish_table(self, chat_id: int) -> None:
        """The table edit that is due at once (the caller holds the chat's lock)."""
        record = self._live.get(chat_id)
        if record is not None and record.status == "running":
            await self._publish_table_now(record, from_coalescer=True)

    async def _republish_hands(self, chat_id: int) -> None:
        """The hands of a running game that failed to show, again (see `hand_retries`)."""
        async with self._locks[chat_id]:
            record = self._live.get(chat_id)
            if record is not None and record.status == "running" and record.game is not None:
                await self._publish_hands(record, retrying=True)

    async def _publish_table_locked(self, chat_id: int) -> None:
        """A merged table edit, run later by the coalescer: it takes the chat's lock."""
        async with self._locks[chat_id]:
            await self._publish_table(chat_id)

    async def _publish_table_now(
        self,
        record: GameRecord,
        *,
        from_coalescer: bool = False,
        closed: str | None = None,
        patient: bool = False,
    ) -> None:
        assert record.game is not None
        rendered = render.table(
            self.tr,
            record.language,
            record.game.view(None),
            names=self.names(record),
            computers=self.computers(record),
            log=record.meta.get("log", []),
            seconds_left=self.seconds_left(record) if record.status == "running" else None,
            # The way to the hand; not in a practice game, whose table is in that same chat.
            bot_username=self.bot_username
            if record.status == "running" and not record.meta.get("practice")
            else None,
            closed=closed,
        )
        keyboard = rendered.keyboard.json if rendered.keyboard is not None else None
        game_id = record.id or 0
        showing = (record.chat_id, record.table_message_id, rendered.text, keyboard)
        if self._shown_tables.get(game_id) == showing:
            # Nothing new to show (a merged edit that an earlier one already covered, say):
            # Telegram would only answer "message is not modified", and the call would take
            # one of the group's twenty a minute. (A failed edit leaves the entry as it was:
            # the message still shows that.)
            self.tables.reset(record.chat_id)
            return
        try:
            # Not patient: a 429 goes to the coalescer, which retries without holding the lock.
            sent = await self.out.show(
                record.chat_id, record.table_message_id, rendered, patient=patient
            )
        except Blocked:
            await self._bot_gone(record)
            return
        except TelegramError as exc:
            if from_coalescer and transient(exc):
                raise  # the coalescer publishes again later
            # 429 or a timeout: again later; otherwise the next change or a restart shows it
            logger.warning("could not update the table of chat %s: %s", record.chat_id, exc)
            self.tables.retry_later(record.chat_id, exc)
            return
        self.tables.reset(record.chat_id)
        if record.status == "running" and self._live.get(record.chat_id) is record:
            # (not for a game that ended or was forgotten: nothing would drop the entry)
            self._shown_tables[game_id] = (record.chat_id, sent.message_id, rendered.text, keyboard)
        if sent.new:
            record.table_message_id = sent.message_id
            # Quietly: the game goes on (hands, computers) even if this id is not stored.
            await self._save_quietly(record)

    async def _save_quietly(self, record: GameRecord) -> None:
        try:
            await self._save(record)
        except Exception:
            logger.exception("could not store message ids of game %s", record.id)

    def _hand_state(self, record: GameRecord, pid: str) -> Any:
        """What a hand message depends on. A player who can act sees the table, so their
        message follows every change; a passive player's message shows no table and changes
        only with their cards, the roles or the stock (see `render.hand`); a player who is
        out sees only that (and the end)."""
        game = record.game
        assert game is not None
        if pid not in game.active_players:
            return ("out", game.is_over)
        timeouts = record.timeouts.get(pid, 0)  # shown until the player moves again
        legal = tuple(game.legal_actions(pid))
        # The trump card shown changes with an exchange (R19), not with any move of this player.
        shown = (game.trump_card, game.stock_size, game.discard_size)
        if render.is_active(legal) or pid in game.to_act:
            table = tuple(game.table)
            return (game.hand(pid), legal, table, game.attacker, game.defender, shown, timeouts)
        return (game.hand(pid), game.attacker, game.defender, shown, game.is_over, timeouts)

    async def _publish_hands(
        self,
        record: GameRecord,
        *,
        only: set[str] | None = None,
        force: bool = False,
        choice: Sequence[Action] | None = None,
        transfer_to: str | None = None,
        patient: bool = False,
        retrying: bool = False,
    ) -> None:
        """Edit each hand message whose cards or options changed (or all, with `force`).
        `choice`, `transfer_to`: a tap's options to choose from (see `render.hand`).

        A hand that fails for a while (429, a timeout) is shown again by `hand_retries`:
        scheduled once per pass, or (`retrying`, a pass of `hand_retries` itself) raised for
        it to count. `patient`: wait out a short 429 in place (the end of a game)."""
        game = record.game
        assert game is not None and record.id is not None
        blocked: list[str] = record.meta.setdefault("blocked", [])
        shows: list[tuple[Seat, Any, render.Rendered]] = []
        for seat in record.lobby.seats:
            pid = seat.player_id
            if seat.is_computer or seat.user_id is None or (only is not None and pid not in only):
                continue
            if pid in blocked and not force:
                continue
            state = self._hand_state(record, pid)
            if not force and self._sent_hands.get((record.id, pid)) == state:
                continue
            view = game.view(pid)
            lang = self.lang_of(record, pid)
            rendered = render.hand(
                self.tr,
                lang,
                view,
                game_id=record.id,
                names=self.names(record, lang),
                chat_title=str(record.meta.get("title", "")),
                practice=bool(record.meta.get("practice")),
                seconds_left=self.seconds_left(record),
                choice=choice,
                transfer_to=transfer_to,
                timeouts=record.timeouts.get(pid, 0),
                max_timeouts=MAX_TIMEOUTS,
            )
            if game.is_over:
                rendered = render.Rendered(rendered.text)
            shows.append((seat, None if choice else state, rendered))
        # Each hand is its own private chat: all go out at once, so a move's hands take one
        # round trip to Telegram, not one each (the chat's lock is held meanwhile).
        if len(shows) == 1:
            outcomes: list[Any] = [await self._show_hand(record, *shows[0], patient=patient)]
        else:
            outcomes = await asyncio.gather(
                *(self._show_hand(record, *show, patient=patient) for show in shows),
                return_exceptions=True,
            )
        errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        if errors:  # none of them expects these: raised once all are done, the first one
            for error in errors[1:]:
                logger.error("showing a hand failed", exc_info=error)
            raise errors[0]
        changed_ids = any(changed for changed, _ in outcomes)
        failed = next((error for _, error in outcomes if error is not None), None)
        if changed_ids:
            await self._save_quietly(record)
        if failed is None:
            self.hand_retries.reset(record.chat_id)
        elif retrying:
            raise failed  # hand_retries counts it and tries again later, or gives up
        else:
            self.hand_retries.retry_later(record.chat_id, failed)

    async def _show_hand(
        self,
        record: GameRecord,
        seat: Seat,
        state: Any,
        rendered: render.Rendered,
        *,
        patient: bool,
    ) -> tuple[bool, TelegramError | None]:
        """Show one hand (for `_publish_hands`): whether its message id or the blocked list
        changed, and the error worth another try, if it failed with one."""
        game = record.game
        assert game is not None and record.id is not None and seat.user_id is not None
        pid = seat.player_id
        key = (record.id, pid)
        try:
            sent = await self.out.show(  # a 429: `hand_retries`, without holding the lock
                seat.user_id, record.hand_messages.get(pid), rendered, patient=patient
            )
        except Blocked:
            self._sent_hands.pop(key, None)
            blocked: list[str] = record.meta.setdefault("blocked", [])
            if pid in blocked:
                return False, None
            blocked.append(pid)
            await self._announce_blocked(record, seat)
            return True, None
        except TelegramError as exc:
            logger.warning("could not update the hand of %s: %s", pid, exc)
            self._sent_hands.pop(key, None)
            return False, exc if transient(exc) else None
        self._sent_hands[key] = state
        self._shown_move[key] = game.move_number
        if sent.new:
            record.hand_messages[pid] = sent.message_id
            return True, None
        return False, None

    async def _announce_blocked(self, record: GameRecord, seat: Seat) -> None:
        with contextlib.suppress(Blocked, TelegramError):
            await self.out.send(
                record.chat_id,
                render.Rendered(
                    self.t(
                        record.language,
                        # with no time limit, nothing times out: the game waits
                        "group-blocked" if self.turn_timeout(record) else "group-blocked-no-limit",
                        player=render.esc(seat.name),
                        link=self.deep_link(),
                    )
                ),
            )
        with contextlib.suppress(Exception):
            async with self.db.transaction() as tx:
                if seat.user_id is not None:
                    await tx.players.set_can_message(user_id=seat.user_id, value=False)

    async def resend_hand(
        self,
        *,
        person: Person,
        chat_id: int | None,
        message_id: int | None = None,
        quiet: bool = False,
    ) -> bool:
        """/hand: send the hand again as a new private message (the old one loses its keys).

        In a group: that group's game. In private: every running game of the player, the
        ones waiting for them last (nearest the bottom of the chat)."""
        records = (
            [r for r in (await self._peek(chat_id),) if r is not None]
            if chat_id is not None
            else self._running_games_of(person)
        )
        records.sort(key=lambda r: r.game is not None and person.player_id in r.game.to_act)
        sent = False
        for peeked in records:
            if peeked.status != "running" or not _seated(peeked, person):
                continue
            async with self._locks[peeked.chat_id]:
                record = await self._load(peeked.chat_id)  # the live copy, under the lock
                if record is None or record.game is None:
                    continue
                old = record.hand_messages.pop(person.player_id, None)
                self._sent_hands.pop((record.id or 0, person.player_id), None)
                blocked = record.meta.get("blocked", [])
                if person.player_id in blocked:
                    blocked.remove(person.player_id)
                await self._publish_hands(record, only={person.player_id}, force=True)
                new = record.hand_messages.get(person.player_id)
                if old is not None and new is None:  # not sent: the old one stays the hand
                    record.hand_messages[person.player_id] = old
                elif old is not None and new != old:
                    lang = self.lang_of(record, person.player_id)
                    await self.out.close_keyboard(
                        person.user_id, old, render.Rendered(self.t(lang, "hand-replaced"))
                    )
            sent = True
        if sent or quiet:  # quiet: the caller says what else to say, and where
            return sent
        if chat_id is not None:  # in a group, from someone who does not play there
            lang = await self.chat_language(chat_id, person.language)
            running = any(r.status == "running" for r in records)
            key = "error-not-in-game" if running else "error-no-game"
            await self.out.send(chat_id, render.Rendered(self.t(lang, key)), reply_to=message_id)
            return False
        await self.out.send(
            person.user_id, render.Rendered(self.t(person.language, "error-no-game"))
        )
        return False

    # ------------------------------------------------------------------ commands

    async def chat_language(self, chat_id: int, fallback: str | None) -> str:
        """The language of what the bot posts in a group: the chat's, once it has one (its
        first lobby sets it), else ``fallback`` (the sender's)."""
        async with self.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id)
        return self.tr.normalize(settings.language or fallback)

    async def rules_text(
        self, *, chat_id: int, fallback_language: str | None, person: Person | None = None
    ) -> str | list[str]:
        """/rules: the rules of the running game, or the chat's settings for the next one.
        In a private chat: the rules of each of the person's running games, practice and
        group games alike (a list: the caller packs it into messages)."""
        if person is not None and chat_id == person.user_id:  # private: the person's games
            texts = []
            for r in self._running_games_of(person):  # practice (this chat's own) and groups
                lang = self.personal_language(person, r)
                title = self.t(lang, "practice-title") if r.meta.get("practice") else _title(r)
                timeout = self.turn_timeout(r)
                texts.append(
                    f"<b>{title}</b>\n" + render.rules_text(self.tr, lang, r.rules, timeout)
                )
            if texts:
                return texts
        record = await self._peek(chat_id)
        if record is not None:
            return render.rules_text(
                self.tr, record.language, record.rules, self.turn_timeout(record)
            )
        async with self.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id)
        lang = self.tr.normalize(settings.language or fallback_language)
        timeout = (
            settings.turn_timeout
            if settings.turn_timeout is not None
            else self.settings.turn_timeout
        )
        return render.rules_text(self.tr, lang, settings.rules, timeout)

    async def leave(self, *, chat_id: int, person: Person, message_id: int | None) -> None:
        """/leave in a group: ask to confirm resigning (R18)."""
        record = await self._peek(chat_id)
        if record is None and await self._point_to_groups(chat_id, person, "/leave"):
            return
        lang = record.language if record else await self.chat_language(chat_id, person.language)
        if record is None or record.game is None:
            # A lobby has its own Leave button.
            key = "leave-in-lobby" if record is not None else "error-no-game"
            await self.out.send(chat_id, render.Rendered(self.t(lang, key)), reply_to=message_id)
            return
        if person.player_id not in record.game.active_players:
            out = person.player_id in record.game.players
            key = "error-player-out" if out else "error-not-in-game"
            await self.out.send(chat_id, render.Rendered(self.t(lang, key)), reply_to=message_id)
            return
        await self.out.send(
            chat_id,
            render.confirm_leave(
                self.tr,
                record.language,
                game_id=record.id or 0,
                user_id=person.user_id,
                name=person.name,
                practice=bool(record.meta.get("practice")),
            ),
            reply_to=message_id,
        )

    async def _point_to_groups(self, chat_id: int, person: Person, command: str) -> bool:
        """A game command sent in the private chat, which has no game of its own, by someone
        playing in groups: say where it works. False if there is nothing to point to."""
        games = self._running_games_of(person) if chat_id == person.user_id else []
        for record in games:
            text = self.t(
                self.personal_language(person, record),
                "use-in-group",
                command=command,
                chat=_title(record),
            )
            await self.out.send(chat_id, render.Rendered(text))
        return bool(games)

    async def cancel(self, *, chat_id: int, person: Person, message_id: int | None) -> None:
        """/cancel: the opener or an admin ends the lobby or game; no result is stored."""
        if self._live.get(chat_id) is None and await self._point_to_groups(
            chat_id, person, "/cancel"
        ):
            return
        async with self._locks[chat_id]:
            record = await self._load(chat_id)
            if record is None:
                lang = await self.chat_language(chat_id, person.language)
                await self.out.send(
                    chat_id, render.Rendered(self.t(lang, "error-no-game")), reply_to=message_id
                )
                return
            lang = record.language
            if not await self._may_manage(record, person):
                await self.out.send(
                    chat_id, render.Rendered(self.t(lang, "error-not-opener")), reply_to=message_id
                )
                return
            was_lobby = record.status == "lobby"
            record.status = "cancelled"
            record.deadline = None
            await self._save(record)
            if was_lobby:
                await self._lobby_closed(record, "cancelled", by=person.user_id)
            else:
                await self._close_hands(record, "hand-cancelled")
                # The table's last state, without "waiting for" or the button to the hand.
                await self._publish_table_now(record, closed=self.t(lang, "hand-cancelled"))
            # A lobby has no result to speak of: the lobby's own words, under the /cancel.
            key = "lobby-cancelled" if was_lobby else "game-cancelled"
            await self.out.send(chat_id, render.Rendered(self.t(lang, key)), reply_to=message_id)

    async def _lobby_closed(
        self, record: GameRecord, why: Literal["cancelled", "expired"], *, by: int | None = None
    ) -> None:
        """A lobby closed (stored already) before its game started: the lobby message says
        so, and so do private messages to the people seated in it (but `by`, who closed it),
        whom Join told that their cards would come in private."""
        await self._refresh_lobby(record, closed=f"lobby-{why}")
        title = _title(record)
        for seat in record.lobby.seats:
            if seat.user_id is None or seat.user_id == by:
                continue
            lang = self.lang_of(record, seat.player_id)
            text = self.t(lang, f"private-lobby-{why}", chat=title)
            try:  # a courtesy, sent under the chat's lock: no waiting out a 429
                await self.out.send(seat.user_id, render.Rendered(text), patient=False)
            except (Blocked, TelegramError) as exc:
                logger.info("could not tell user %s of the closed lobby: %s", seat.user_id, exc)

    async def _close_hands(self, record: GameRecord, key: str) -> None:
        for seat in record.lobby.seats:
            mid = record.hand_messages.get(seat.player_id)
            if seat.user_id is None or mid is None:
                continue
            lang = self.lang_of(record, seat.player_id)
            await self.out.close_keyboard(seat.user_id, mid, render.Rendered(self.t(lang, key)))

    async def bot_added(self, *, chat_id: int, person: Person) -> None:
        """The bot was added to a group it never played in: say how to start a game, in the
        language of whoever added it. (Telegram also reports the bot "added" to the
        supergroup a group becomes; once the game moved there, that chat is known.)"""
        try:  # a group that has played already knows (a group that became a supergroup too)
            async with self.db.transaction(readonly=True) as tx:
                await tx.games.latest_for_chat(chat_id=chat_id)
            return
        except NotFound:
            pass
        lang = await self.chat_language(chat_id, person.language)
        try:
            await self.out.send(chat_id, render.Rendered(self.t(lang, "group-hello")))
        except (Blocked, TelegramError) as exc:  # e.g. added without the right to post
            logger.info("could not greet chat %s: %s", chat_id, exc)

    async def bot_removed(self, *, chat_id: int) -> None:
        """The bot was removed from a group: its game ends without a result."""
        async with self._locks[chat_id]:
            record = await self._load(chat_id)
            if record is not None:
                await self._bot_gone(record)

    async def _bot_gone(self, record: GameRecord) -> None:
        if record.status not in ("lobby", "running"):
            return
        record.status = "cancelled"
        record.deadline = None
        try:
            await self._save(record)
        except Conflict:
            return
        await self._close_hands(record, "hand-bot-removed")

    async def migrate(self, *, old_chat_id: int, new_chat_id: int) -> None:
        """A group became a supergroup: its game moves with it."""
        async with self._locks[old_chat_id], self._locks[new_chat_id]:
            async with self.db.transaction() as tx:
                await tx.migrate_chat(old_chat_id=old_chat_id, new_chat_id=new_chat_id)
            record = self._live.pop(old_chat_id, None)
            self.tables.forget(old_chat_id)
            self.hand_retries.forget(old_chat_id)
            thinking = self._thinking.pop(old_chat_id, None)
            if thinking is not None:  # it would look for the game in the old chat
                thinking.cancel()
            if record is not None:
                self._chat_of.pop(record.id or 0, None)
            fresh = await self._load(new_chat_id)
            if fresh is not None:
                logger.info("game %s moved from chat %s to %s", fresh.id, old_chat_id, new_chat_id)
                if fresh.status == "lobby":  # its buttons belong to the old chat: post it anew
                    fresh.lobby.message_id = None
                    await self._refresh_lobby(fresh)
                await self._drive_computers(fresh)  # a computer on turn moves in the new chat

    # ------------------------------------------------------------------ stats

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
        async with self.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id) if in_group else None
            lang = self.tr.normalize((settings and settings.language) or person.language)
            if in_group and target is None:
                assert settings is not None
                show = settings.show_computers
                rows = await tx.results.leaderboard(
                    chat_id=chat_id,
                    limit=stats_view.TOP,
                    min_games=stats_view.MIN_RANKED_GAMES,
                    include_computers=show,
                )
                me = None
                try:
                    mine = await tx.results.player_record(
                        player_id=person.player_id, chat_id=chat_id
                    )
                    rank = await tx.results.rank_of(
                        player_id=person.player_id,
                        chat_id=chat_id,
                        min_games=stats_view.MIN_RANKED_GAMES,
                        include_computers=show,
                    )
                    me = (rank, stats_view.as_row(mine))
                except NotFound:
                    pass
                title = chat_title or await self._chat_title(tx, chat_id)
                rendered = stats_view.leaderboard(
                    self.tr, lang, title=title, rows=rows, me=me, show_computers=show
                )
            else:
                who = target or person
                rendered = await self._player_card(tx, lang, who, chat_id if in_group else None)
        await self.out.send(chat_id, rendered, reply_to=message_id)

    async def _chat_title(self, tx: Any, chat_id: int) -> str:
        try:
            record = await tx.games.latest_for_chat(chat_id=chat_id)
        except NotFound:
            return ""
        return str(record.meta.get("title", ""))

    async def _player_card(
        self, tx: Any, lang: str, who: Person, only_chat: int | None
    ) -> render.Rendered:
        try:
            overall = await tx.results.player_record(player_id=who.player_id)
        except NotFound:
            overall = None
        chats = []
        if overall is not None:
            ids = (
                [only_chat]
                if only_chat is not None
                else await tx.results.chats_of(player_id=who.player_id)
            )
            for chat in ids[:10]:
                try:
                    record = await tx.results.player_record(player_id=who.player_id, chat_id=chat)
                except NotFound:
                    continue
                chats.append((await self._chat_title(tx, chat) or str(chat), record))
        return stats_view.player_card(self.tr, lang, name=who.name, overall=overall, chats=chats)

    # ------------------------------------------------------------------ settings

    async def _may_change_settings(self, chat_id: int, person: Person) -> bool:
        """Chat admins; and the opener of an open lobby, before the game starts."""
        record = await self._peek(chat_id)
        lobby_opener = record is not None and record.status == "lobby"
        if lobby_opener and record is not None and record.lobby.opener_id == person.user_id:
            return True
        return await self._is_admin(chat_id, person.user_id)

    async def settings_command(
        self, *, chat_id: int, person: Person, message_id: int | None
    ) -> None:
        """/settings in a group: the house-rules menu (admins, or the lobby's opener)."""
        async with self.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id)
        lang = self.tr.normalize(settings.language or person.language)
        if not await self._may_change_settings(chat_id, person):
            await self.out.send(
                chat_id, render.Rendered(self.t(lang, "error-admins-only")), reply_to=message_id
            )
            return
        menu = render_menu(self.tr, lang, settings, default_timeout=self.settings.turn_timeout)
        await self.out.send(chat_id, menu, reply_to=message_id)

    async def settings_tap(self, *, query: CallbackQuery, person: Person, option: str) -> None:
        """A tap in the /settings menu: step that option; an open lobby follows."""
        message = query.message
        if message is None:
            await self.out.answer(query, self.t(person.language, "error-unknown-button"))
            return
        chat_id = message.chat.id
        async with self._locks[chat_id]:
            # The chat's language and its leaderboard are the admins' alone; a lobby's opener
            # may set the rules of the game about to start.
            chat_wide = option in CHAT_WIDE_OPTIONS
            if chat_wide:
                allowed = await self._is_admin(chat_id, person.user_id)
            else:
                allowed = await self._may_change_settings(chat_id, person)
            if not allowed:
                key = "error-admins-only-chat" if chat_wide else "error-admins-only"
                await self.out.answer(query, self.t(person.language, key), alert=True)
                return
            default = self.settings.turn_timeout
            if option == "z":  # Done: the menu stays as a record of the rules, without buttons
                async with self.db.transaction(readonly=True) as tx:
                    current = await tx.chats.get(chat_id=chat_id)
                lang = self.tr.normalize(current.language or person.language)
                menu = render_menu(self.tr, lang, current, default_timeout=default, closed=True)
                await self.out.answer(query)
                await self.out.show(chat_id, message.message_id, menu)
                return
            async with self.db.transaction() as tx:
                current = await tx.chats.get(chat_id=chat_id)
                shown = self.tr.normalize(current.language or person.language)  # as the menu
                settings = step(current, option, default_timeout=default, shown_language=shown)
                await tx.chats.save(settings=settings)
            lang = self.tr.normalize(settings.language or person.language)
            toast = self.tr.available(person.language) or lang  # the tapper's, as all toasts
            await self.out.answer(query, self.t(toast, "settings-saved"))
            await self.out.show(
                chat_id,
                message.message_id,
                render_menu(self.tr, lang, settings, default_timeout=default),
            )
            record = await self._load(chat_id)
            if record is not None and record.status == "lobby":  # the lobby shows the rules
                record.rules = settings.rules
                record.meta["turn_timeout"] = effective_timeout(settings, default)
                if settings.language:
                    record.language = settings.language
                await self._save(record)
                await self._refresh_lobby(record)

    # ------------------------------------------------------------------ moderation

    async def kick(
        self, *, chat_id: int, person: Person, target: Person | None, message_id: int | None
    ) -> None:
        """/kick as a reply, for admins: ask to confirm removing that player (R18)."""
        record = await self._peek(chat_id)
        lang = record.language if record else await self.chat_language(chat_id, person.language)
        if not await self._is_admin(chat_id, person.user_id):
            await self.out.send(
                chat_id, render.Rendered(self.t(lang, "error-kick-admins")), reply_to=message_id
            )
            return
        game = record.game if record is not None and record.status == "running" else None
        if target is None or game is None or target.player_id not in game.active_players:
            await self.out.send(
                chat_id, render.Rendered(self.t(lang, "kick-how")), reply_to=message_id
            )
            return
        assert record is not None and record.id is not None
        await self.out.send(
            chat_id,
            render.confirm_kick(
                self.tr, lang, game_id=record.id, user_id=target.user_id, name=target.name
            ),
            reply_to=message_id,
        )

    async def kick_confirmed(
        self, *, query: CallbackQuery, person: Person, game_id: int, user_id: int
    ) -> None:
        chat_id = await self.chat_of_game(game_id)
        if chat_id is None or not await self._is_admin(chat_id, person.user_id):
            await self.out.answer(query, self.t(person.language, "error-kick-admins"), alert=True)
            return
        current = self._live.get(chat_id)
        if current is None or current.id != game_id:
            await self.out.answer(query, self.t(person.language, "error-game-gone"))
            await self._close_question(query, self.t(person.language, "error-game-gone"))
            return
        await self.remove_player(
            chat_id=chat_id, player_id=str(user_id), why="kicked", query=query, tapper=person
        )

    async def leave_confirmed(
        self, *, query: CallbackQuery, person: Person, game_id: int, user_id: int
    ) -> None:
        """The player who sent /leave confirms: he resigns and is the durak (R18)."""
        if person.user_id != user_id:
            await self.out.answer(query, self.t(person.language, "error-not-your-button"))
            return
        chat_id = await self.chat_of_game(game_id)
        current = self._live.get(chat_id) if chat_id is not None else None
        if chat_id is None or current is None or current.id != game_id:
            await self.out.answer(query, self.t(person.language, "error-game-gone"))
            await self._close_question(query, self.t(person.language, "error-game-gone"))
            return
        await self.remove_player(
            chat_id=chat_id, player_id=person.player_id, why="resigned", query=query, tapper=person
        )

    async def remove_player(
        self,
        *,
        chat_id: int,
        player_id: str,
        why: str,
        query: CallbackQuery | None = None,
        tapper: Person | None = None,
    ) -> None:
        """The player leaves the running game as its durak (R18): kicked, or left the group.
        `query` and `tapper`: the confirming tap, answered in the tapper's language."""
        async with self._locks[chat_id]:
            record = await self._load(chat_id)
            game = record.game if record is not None and record.status == "running" else None
            if record is None or game is None:
                lang = tapper.language if tapper is not None else None
                await self.out.answer(query, self.t(lang, "error-game-gone"))
                await self._close_question(query, self.t(lang, "error-game-gone"))
                return
            if player_id not in game.active_players:  # a second tap, or out meanwhile
                lang = self.personal_language(tapper, record) if tapper else record.language
                await self.out.answer(query, self.t(lang, "kick-already-out"))
                await self._close_question(query, self.t(record.language, "kick-already-out"))
                return
            if why == "resigned":  # /leave: the player's own choice, logged as giving up
                events: list[Any] = game.apply(player_id, Resign())
            else:
                events = [{"gone": player_id, "why": why}, *forced_resign(game, player_id)]
            record.meta.setdefault("left", {})[player_id] = why
            await self._after_moves(record, [(player_id, events)])
            await self.out.answer(query)
            await self._render_after(record)
            name = render.esc(self.names(record, record.language).get(player_id, player_id))
            # what happened, as the result says it (the log's words are a running commentary)
            key = LEFT_KEYS[why]
            await self._close_question(query, self.t(record.language, key, player=name))

    async def _close_question(self, query: CallbackQuery | None, text: str) -> None:
        """The /kick or /leave question `query` was tapped on: answered, no more buttons.
        Only an edit (a question deleted meanwhile stays gone), and no waiting out a 429:
        callers hold the chat's lock."""
        question = query.message if query is not None else None
        if question is not None:
            await self.out.close_keyboard(
                question.chat.id,
                question.message_id,
                render.Rendered(text),
                patient=False,
                resend=False,
            )

    async def member_left(self, *, chat_id: int, user_id: int) -> None:
        """A player who leaves the group during a game is treated as resigned; one seated in
        the lobby loses the seat."""
        record = await self._peek(chat_id)
        if record is not None and record.status == "lobby":
            async with self._locks[chat_id]:
                record = await self._load(chat_id)
                if record is None or record.status != "lobby":
                    return
                seats = record.lobby.seats
                if any(s.user_id == user_id for s in seats):
                    record.lobby.seats = [s for s in seats if s.user_id != user_id]
                    await self._save(record)
                    await self._refresh_lobby(record)
            return
        game = record.game if record is not None and record.status == "running" else None
        if game is not None and str(user_id) in game.active_players:
            await self.remove_player(chat_id=chat_id, player_id=str(user_id), why="left")

    # ------------------------------------------------------------------ deadlines

    def _warn_due(self, record: GameRecord, now: datetime) -> bool:
        """Half time has come and the turn is not over yet."""
        warn_at = self._warn_at(record)
        deadline = record.deadline
        return warn_at is not None and warn_at <= now and deadline is not None and deadline > now

    def _warn_at(self, record: GameRecord) -> datetime | None:
        """Half time of a turn: when players the game waits for are warned privately."""
        if record.status != "running" or record.deadline is None or record.meta.get("warned"):
            return None
        return record.deadline - timedelta(seconds=self.turn_timeout(record) / 2)

    def next_deadline(self) -> datetime | None:
        """The next time something is due, leaving out chats being handled right now."""
        records = [r for r in self._live.values() if r.chat_id not in self._due_tasks]
        times = [self._due_at(r) for r in records if r.deadline is not None]
        now = self.clock()
        times += [  # a turn already past its deadline gets no warning, only its timeout
            w
            for r in records
            if (w := self._warn_at(r)) is not None and r.deadline is not None and r.deadline > now
        ]
        return min(times, default=None)

    def _due_at(self, record: GameRecord) -> datetime:
        """When the record's deadline is handled: its deadline, or later after a failure."""
        assert record.deadline is not None
        retry = self._retry_at.get(record.chat_id)
        return record.deadline if retry is None else max(record.deadline, retry)

    async def _warn(self, record: GameRecord) -> None:
        game = record.game
        assert game is not None
        record.meta["warned"] = True  # kept in memory; stored with the next move
        seconds = self.seconds_left(record) or 0
        for seat in record.lobby.seats:
            if seat.user_id is None or seat.is_computer or seat.player_id not in game.to_act:
                continue
            text = self.t(
                self.lang_of(record, seat.player_id),
                "warn-time",
                seconds=seconds,
                chat=_title(record),
            )
            with contextlib.suppress(Blocked, TelegramError):
                await self.out.send(seat.user_id, render.Rendered(text))
        # The time left shown on the table and in the hands of those it waits for is brought
        # up to date once per turn, here (the table through the coalescer, as ever).
        # (Not a hand showing a choice of covers: the refresh would take that choice away.)
        plain = {p for p in game.to_act if self._sent_hands.get((record.id or 0, p)) is not None}
        await self._publish_hands(record, only=plain, force=True)
        await self.tables.request(record.chat_id)

    async def run_due(self, now: datetime | None = None) -> int:
        """Warn at half time; handle every lobby and turn whose deadline has passed.
        Returns how many deadlines expired.

        One chat's failure is logged and does not keep the others from their deadlines; its
        deadline is tried again after `DEADLINE_RETRY`, so a lasting fault does not spin.
        """
        now = now or self.clock()
        due = [r.chat_id for r in self._live.values() if r.deadline and self._due_at(r) <= now]
        self._start_due(now)
        await asyncio.gather(*list(self._due_tasks.values()))
        return len(due)

    def _start_due(self, now: datetime) -> None:
        """Start handling every chat whose warning or deadline is due, each in a task of its
        own (one per chat at a time): a chat whose lock is held (a slow Telegram call, a
        computer thinking) holds back no other chat's deadline, not even a later one."""
        for record in list(self._live.values()):
            chat_id = record.chat_id
            if chat_id in self._due_tasks:
                continue
            if record.deadline and self._due_at(record) <= now:
                work = self._expire_chat(chat_id, now)
            elif self._warn_due(record, now):
                work = self._warn_chat(record, now)
            else:
                continue
            task = asyncio.create_task(work)
            self._due_tasks[chat_id] = task
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            task.add_done_callback(functools.partial(self._due_done, chat_id))

    def _due_done(self, chat_id: int, task: asyncio.Task[None]) -> None:
        if self._due_tasks.get(chat_id) is task:
            del self._due_tasks[chat_id]
        self._deadline_changed.set()  # the scheduler looks again

    async def _warn_chat(self, record: GameRecord, now: datetime) -> None:
        try:
            async with self._locks[record.chat_id]:
                # Checked again under the lock: meanwhile the game may have been cancelled,
                # moved on or dropped (the warning and refresh would be wrong).
                if self._live.get(record.chat_id) is record and self._warn_due(record, now):
                    await self._warn(record)
        except Exception:
            record.meta["warned"] = True  # a warning is a courtesy: never retried
            logger.exception("warning chat %s of its deadline failed", record.chat_id)

    async def _expire_chat(self, chat_id: int, now: datetime) -> None:
        try:
            await self._expire(chat_id, now)
        except Exception:
            logger.exception("handling the deadline of chat %s failed", chat_id)
            self._retry_at[chat_id] = now + DEADLINE_RETRY
        else:
            self._retry_at.pop(chat_id, None)

    async def _expire(self, chat_id: int, now: datetime) -> None:
        async with self._locks[chat_id]:
            record = await self._load(chat_id)
            if record is None or record.deadline is None or record.deadline > now:
                return
            if record.status == "lobby":
                record.status = "cancelled"
                record.deadline = None
                await self._save(record)
                await self._lobby_closed(record, "expired")
                return
            game = record.game
            assert game is not None
            moves: list[tuple[str, list[Any]]] = []
            for pid in [p for p in game.players if p in game.to_act]:
                if game.is_over or pid not in game.to_act:
                    continue
                count = record.timeouts.get(pid, 0) + 1
                record.timeouts[pid] = count
                if count >= MAX_TIMEOUTS:
                    record.meta.setdefault("left", {})[pid] = "timed_out"
                    moves.append((pid, [{"timeout_removed": pid}, *forced_resign(game, pid)]))
                    break
                action = timeout_action(game, pid)
                moves.append((pid, [{"timeout": pid}]))
                moves.append((pid, game.apply(pid, action)))
            await self._after_moves(record, moves)
            await self._render_after(record)

    async def run_scheduler(self) -> None:
        """Sleep until the next deadline (or a change), then handle what is due. Runs forever."""
        while True:
            try:
                self._deadline_changed.clear()
                nxt = self.next_deadline()
                self._sleeping_until = nxt
                timeout = None if nxt is None else max(0.0, (nxt - self.clock()).total_seconds())
                # asyncio.timeout, not wait_for: on Python 3.11, wait_for swallows a cancellation
                # that arrives just as the event is set, and stop_services would wait forever.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._deadline_changed.wait()
                self._start_due(self.clock())  # not awaited: each chat in a task of its own
            except Exception:  # run_due guards each chat; this keeps the scheduler alive anyway
                logger.exception("the deadline scheduler hit an error; it goes on")
                await asyncio.sleep(1)  # back off: an error that repeats must not spin

    # ------------------------------------------------------------------ start-up

    async def resume_all(self) -> int:
        """After a (re)start: load every lobby and game, re-render, re-arm deadlines."""
        async with self.db.transaction(readonly=True) as tx:
            records = await tx.games.all_active()
        now = self.clock()
        extended = {r.chat_id for r in records if self._grant_grace(r, now)}
        for record in records:
            self._remember(record)
        for record in records:
            async with self._locks[record.chat_id]:
                try:
                    if record.chat_id in extended:
                        await self._save(record)  # kept after a reload, and given once
                    await self._show_again(record)
                except Exception:
                    logger.exception("could not resume game %s", record.id)
        self._deadline_changed.set()
        return len(records)

    def _grant_grace(self, record: GameRecord, now: datetime) -> bool:
        """Nobody could move while the bot was down, and taps sent meanwhile arrive only
        now: a turn that ran out (or nearly) meanwhile gets `RESUME_GRACE` more, once per
        move (a bot that keeps crashing must not hold the game up for ever)."""
        game = record.game
        if record.status != "running" or record.deadline is None or game is None:
            return False
        grace = min(RESUME_GRACE, timedelta(seconds=self.turn_timeout(record)))
        if record.deadline >= now + grace or record.meta.get("grace_move") == game.move_number:
            return False
        record.deadline = now + grace
        record.meta["grace_move"] = game.move_number
        return True

    async def _show_again(self, record: GameRecord) -> None:
        """Show a game as loaded (after a restart or a failed save): lobby, or table and
        hands; then let its computer players move."""
        if record.status == "lobby":
            await self._refresh_lobby(record)
        elif record.game is not None:
            await self._publish_table_now(record)
            await self._publish_hands(record, force=True)
            await self._drive_computers(record)

    async def flush(self) -> None:
        await self.tables.flush()


def _transfer_target(game: Game, player: str, options: Sequence[Action]) -> str | None:
    """Who would defend after `player`'s transfer, when that is the only option (R14)."""
    if len(options) != 1 or not isinstance(options[0], Transfer):
        return None
    probe = game.copy()
    probe.apply(player, options[0])
    return probe.defender


def forced_resign(game: Game, player: str) -> list[Any]:
    """R18 for a player who did not resign (kicked, left the group, timed out three times):
    the events, without the "gave up" that the log would show."""
    return [e for e in game.apply(player, Resign()) if not isinstance(e, Resigned)]


def timeout_action(game: Game, player: str) -> Action:
    """What the game does for a player whose time ran out (the bot issue):
    a defender takes, an opener plays the lowest card (non-trump first), others pass."""
    legal = game.legal_actions(player)
    if Take() in legal:
        return Take()
    if Pass() in legal:
        return Pass()
    attacks = [a for a in legal if isinstance(a, Attack)]
    if attacks:
        trump = game.trump_suit
        return min(attacks, key=lambda a: (a.card.suit is trump, a.card.rank, a.card.index))
    return Resign()
