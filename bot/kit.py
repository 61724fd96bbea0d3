"""What every room of the bot works with: its settings, the database, the translator, the
clock, the outbox, and the small questions about a game that every room asks (whose
language, which names, how long a turn may take).

`Kit` holds no state of any game; the games are in `bot.store.GameStore`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from bot import render
from bot.config import Settings
from bot.delivery import Outbox
from bot.i18n import Translator
from bot.miniapp.auth import game_ref
from storage import THROW_IN_WINDOW, Database, GameRecord, NotFound, Player, Seat

MAX_TIMEOUTS: Final = 3  # R18: removed after three timeouts in a row


@dataclass(frozen=True, slots=True)
class Person:
    """Who sent an update."""

    user_id: int
    name: str
    language: str | None = None

    @property
    def player_id(self) -> str:
        return str(self.user_id)


def seated(record: GameRecord, person: Person) -> bool:
    return any(seat.player_id == person.player_id for seat in record.lobby.seats)


def title(record: GameRecord) -> str:
    """The group's title as the game stored it, escaped for HTML."""
    return render.esc(record.meta.title)


def computers(record: GameRecord) -> frozenset[str]:
    return frozenset(s.player_id for s in record.lobby.seats if s.is_computer)


class Kit:
    def __init__(
        self,
        *,
        db: Database,
        out: Outbox,
        tr: Translator,
        settings: Settings,
        bot_username: str,
        clock: Callable[[], datetime],
        seeds: Callable[[], int | None],
    ) -> None:
        self.db = db
        self.out = out
        self.tr = tr
        self.settings = settings
        self.bot_username = bot_username
        self.clock = clock
        self.seeds = seeds  # None: a fresh random deal; tests pass fixed seeds
        self._computer_names: dict[tuple[str, str], str] = {}  # (language, player id)

    # ---------------------------------------------------------------- words

    def t(self, lang: str | None, key: str, **args: str | int) -> str:
        return self.tr.t(lang, key, **args)

    def lang_of(self, record: GameRecord, player_id: str) -> str:
        """The language of a player's hand and private messages in this game."""
        return record.meta.langs.get(player_id) or record.language

    def personal_language(self, person: Person, record: GameRecord) -> str:
        """For what only this person sees (a toast): their language if the bot has it, else
        the game's (a Ukrainian in a Russian group reads Russian, not English)."""
        return self.tr.available(person.language) or record.language

    async def chat_language(self, chat_id: int, fallback: str | None) -> str:
        """The language of what the bot posts in a group: the chat's, once it has one (its
        first lobby sets it), else ``fallback`` (the sender's)."""
        async with self.db.transaction(readonly=True) as tx:
            settings = await tx.chats.get(chat_id=chat_id)
        return self.tr.normalize(settings.language or fallback)

    def names(self, record: GameRecord, lang: str | None = None) -> dict[str, str]:
        """Every seat's name; computers named in `lang` (default: the game's language)."""
        lang = lang or record.language
        return {s.player_id: self.seat_name(lang, s) for s in record.lobby.seats}

    def seat_name(self, lang: str, seat: Seat) -> str:
        """A person's name; a computer's is made in the reader's language when shown, so a
        chat that changes its language sees its computers named in the new one."""
        if not seat.is_computer:
            return render.short_name(seat.name)
        key = (lang, seat.player_id)
        name = self._computer_names.get(key)  # every render names every seat: made once
        if name is None:
            name = render.computer_name(self.tr, lang, seat.player_id) or seat.name
            self._computer_names[key] = name
        return name

    def app_link(self, record: GameRecord) -> str | None:
        """The Mini App's direct link to this game (a group's "Table" button), where
        WEBAPP_URL and WEBAPP_NAME are set."""
        settings = self.settings
        if not settings.webapp_url or not settings.webapp_name or record.id is None:
            return None
        ref = game_ref(settings.bot_token.get_secret_value(), record.id)
        return f"https://t.me/{self.bot_username}/{settings.webapp_name}?startapp={ref}"

    def deep_link(self, payload: str = "") -> str:
        base = f"https://t.me/{self.bot_username}"
        return f"{base}?start={payload}" if payload else base

    # ---------------------------------------------------------------- time

    def turn_timeout(self, record: GameRecord) -> int:
        """Seconds per move in this game (0: no limit)."""
        value = record.meta.turn_timeout
        return self.settings.turn_timeout if value is None else value

    def throw_in_window(self, record: GameRecord) -> int:
        """Seconds of this game's throw-in window (0: none, the bout waits for Done)."""
        value = record.meta.throw_in_window
        return THROW_IN_WINDOW if value is None else value

    def in_window(self, record: GameRecord) -> bool:
        """Whether the game is in a throw-in window: all is covered (or taken), only
        throw-ins are waited for (`Game.closing`), and the game has a window. Its deadline
        is then the window's end, which ends the bout, not a turn's (no strike)."""
        game = record.game
        return (
            record.status == "running"
            and game is not None
            and game.closing
            and self.throw_in_window(record) > 0
        )

    def wait_length(self, record: GameRecord) -> int:
        """Seconds the current wait takes from its start: the throw-in window, or a turn."""
        return self.throw_in_window(record) if self.in_window(record) else self.turn_timeout(record)

    # ---------------------------------------------------------------- people

    async def is_member(self, chat_id: int, user_id: int) -> bool:
        """Whether the user belongs to the group (True when Telegram cannot say)."""
        member = await self.out.member(chat_id, user_id)
        return member is None or member.belongs

    async def is_admin(self, chat_id: int, user_id: int) -> bool:
        member = await self.out.member(chat_id, user_id)
        return member is not None and member.is_admin

    async def alerts_off(self, record: GameRecord) -> list[str]:
        """The players of `record` who switched turn alerts off: their own choice, else the
        group's default."""
        quiet = []
        async with self.db.transaction(readonly=True) as tx:
            default = (await tx.chats.get(chat_id=record.chat_id)).turn_alerts
            for seat in record.lobby.seats:
                if seat.user_id is None:
                    continue
                try:
                    own = (await tx.players.get(user_id=seat.user_id)).turn_alerts
                except NotFound:
                    own = None
                if not (default if own is None else own):
                    quiet.append(seat.player_id)
        return quiet

    async def note_player(self, person: Person, *, can_message: bool | None = None) -> Player:
        """Store what the bot knows of the person (name, language, whether it may write to
        them privately); the stored player."""
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
                turn_alerts=known.turn_alerts,
            )
            if player != known or can_message is not None:
                await tx.players.upsert(player=player)
        return player
