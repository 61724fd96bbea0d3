"""Repositories: domain records in, domain records out. The only module that writes queries."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, cast

from storage import ratings
from storage.backend import Backend, Params, Row
from storage.codec import (
    dumps,
    from_us,
    from_us_or_none,
    game_from_json,
    game_to_json,
    int_map_from_json,
    int_map_to_json,
    loads,
    lobby_from_json,
    lobby_to_json,
    rules_from_json,
    rules_to_json,
    to_us,
    to_us_or_none,
)
from storage.errors import Conflict, Fenced, NotFound, StoredGameError
from storage.meta import GameMeta
from storage.ratings import Skill
from storage.records import (
    ACTIVE_STATUSES,
    GAME_STATUSES,
    PARTICIPANT_RESULTS,
    ChatSettings,
    FinishedGame,
    GameRecord,
    GameStatus,
    LeaderboardRow,
    Participant,
    ParticipantResult,
    Player,
    PlayerRecord,
    utcnow,
)

logger = logging.getLogger(__name__)

OVERALL_SCOPE = 0
"""The ``player_stats.scope`` of the all-chats aggregates (Telegram never uses chat id 0)."""


RESULTS_LOCK = 0x44_75_72_61_6B_01
"""`Session.lock` key of whoever records finished games or rewrites ratings: one at a time."""


class Session:
    """The backend, usable only while its transaction is open.

    ``epoch``: the leader's lease epoch that this transaction's game saves must still hold
    (PostgreSQL, several workers: `storage.lease`); a save whose epoch has passed writes
    nothing and raises `Fenced`. None (SQLite, one process; reads): no such check."""

    __slots__ = ("_backend", "active", "epoch")

    def __init__(self, backend: Backend, epoch: int | None = None) -> None:
        self._backend = backend
        self.active = True
        self.epoch = epoch

    @property
    def dialect(self) -> str:
        """The backend's SQL dialect: ``sqlite`` or ``postgresql``."""
        return self._backend.dialect

    def _check(self) -> Backend:
        if not self.active:
            raise RuntimeError("this transaction is over; open a new one with db.transaction()")
        return self._backend

    def fence(self) -> tuple[str, Params]:
        """The condition (after ``AND``) and parameters that make a statement write only
        while this transaction's epoch still leads; ("", ()) without an epoch."""
        if self.epoch is None:
            return "", ()
        return " AND EXISTS (SELECT 1 FROM leader WHERE epoch = ?)", (self.epoch,)

    async def fenced(self) -> None:
        """Raise `Fenced` if this transaction's epoch no longer leads (a fenced statement
        wrote nothing: this tells why)."""
        if self.epoch is None:
            return
        row = await self.fetchone("SELECT epoch FROM leader WHERE id = 1")
        current = None if row is None else int(row["epoch"])
        if current != self.epoch:
            raise Fenced(
                f"this worker's lead (epoch {self.epoch}) has passed to another "
                f"(epoch {current}): nothing was written"
            )

    async def execute(self, sql: str, params: Params = ()) -> None:
        await self._check().execute(sql, params)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._check().executemany(sql, rows)

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        return await self._check().fetchone(sql, params)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        return await self._check().fetchall(sql, params)

    async def lock(self, key: int) -> None:
        await self._check().lock(key)

    async def new_ids(self, table: str, count: int) -> list[int]:
        return await self._check().new_ids(table, count)


# ----------------------------------------------------------------------------------- games

_GAME_COLUMNS = (
    "id, chat_id, status, language, rules, state, lobby, table_message_id, hand_messages, "
    "deadline_us, timeouts, created_us, started_us, meta, version, result_message_id, "
    "hand_floors"
)


def _game_values(record: GameRecord) -> tuple[Any, ...]:
    if record.status not in GAME_STATUSES:
        raise ValueError(f"unknown game status {record.status!r}")
    return (
        record.chat_id,
        record.status,
        record.language,
        rules_to_json(record.rules),
        None if record.game is None else game_to_json(record.game),
        lobby_to_json(record.lobby),
        record.table_message_id,
        int_map_to_json(record.hand_messages),
        to_us_or_none(record.deadline),
        int_map_to_json(record.timeouts),
        to_us(record.created_at),
        to_us_or_none(record.started_at),
        dumps(record.meta.to_json()),
        record.result_message_id,
        int_map_to_json(record.hand_floors),
    )


def _game_record(row: Row) -> GameRecord:
    game_id = int(row["id"])
    state = row["state"]
    game = None if state is None else game_from_json(state, game_id=game_id)
    return GameRecord(
        id=game_id,
        chat_id=int(row["chat_id"]),
        status=cast(GameStatus, row["status"]),
        language=str(row["language"]),
        rules=rules_from_json(row["rules"], game_id=game_id),
        game=game,
        lobby=lobby_from_json(row["lobby"]),
        table_message_id=row["table_message_id"],
        hand_messages=int_map_from_json(row["hand_messages"]),
        deadline=from_us_or_none(row["deadline_us"]),
        timeouts=int_map_from_json(row["timeouts"]),
        created_at=from_us(row["created_us"]),
        started_at=from_us_or_none(row["started_us"]),
        meta=GameMeta.from_json(loads(row["meta"]) if row["meta"] else None),
        version=int(row["version"]),
        result_message_id=row["result_message_id"],
        hand_floors=int_map_from_json(row["hand_floors"]),
    )


def _loadable(rows: list[Row]) -> list[GameRecord]:
    """The records of ``rows``, leaving out (with a warning naming it) any game this code
    cannot load, so that one bad row does not keep every other game from going on."""
    records = []
    for row in rows:
        try:
            records.append(_game_record(row))
        except StoredGameError as error:
            logger.warning(
                "active game %s of chat %s left out: %s", row["id"], row["chat_id"], error
            )
    return records


class GameRepository:
    """Games of group chats, with optimistic concurrency on ``version``."""

    def __init__(self, session: Session) -> None:
        self._s = session

    async def create(self, *, record: GameRecord) -> GameRecord:
        """Store a new lobby or running game; return it with its ``id`` and ``version`` 1.

        Raises `Conflict` if the chat already has a game in the lobby or running.
        """
        if record.id is not None:
            raise ValueError(f"game {record.id} is already stored; save it instead")
        if record.status not in ACTIVE_STATUSES:
            raise ValueError(f"a new game must be in the lobby or running, not {record.status!r}")
        fence, fenced = self._s.fence()
        try:
            row = await self._s.fetchone(
                "INSERT INTO games (chat_id, status, language, rules, state, lobby, "
                "table_message_id, hand_messages, deadline_us, timeouts, created_us, started_us, "
                "meta, result_message_id, hand_floors, updated_us, version) "
                f"SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1 WHERE 1 = 1{fence} "
                "RETURNING id",
                (*_game_values(record), to_us(utcnow()), *fenced),
            )
        except Conflict as error:
            raise Conflict(
                f"chat {record.chat_id} already has a game in the lobby or running"
            ) from error
        if row is None:
            await self._s.fenced()
        assert row is not None
        return replace(record, id=int(row["id"]), version=1)

    async def get(self, *, game_id: int) -> GameRecord:
        """The game with this id, whatever its status. Raises `NotFound`."""
        row = await self._s.fetchone(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", (game_id,))
        if row is None:
            raise NotFound(f"game {game_id} does not exist")
        return _game_record(row)

    async def active_for_chat(self, *, chat_id: int) -> GameRecord:
        """The chat's game in the lobby or running. Raises `NotFound` if it has none."""
        row = await self._s.fetchone(
            f"SELECT {_GAME_COLUMNS} FROM games "
            "WHERE chat_id = ? AND status IN ('lobby', 'running')",
            (chat_id,),
        )
        if row is None:
            raise NotFound(f"chat {chat_id} has no game in the lobby or running")
        return _game_record(row)

    async def save_in_place(self, *, record: GameRecord, expected_version: int) -> int | None:
        """`save`'s usual case, in one statement: the game is at ``expected_version`` and
        keeps its chat and status. The new version; None, writing nothing, otherwise."""
        if record.id is None:
            raise ValueError("this game was never created; use games.create")
        chat_id, status, *rest = _game_values(record)
        fence, fenced = self._s.fence()
        # Chat and status unchanged, so neither is written and SQLite leaves the active-game
        # index alone (rewriting it cost more than the rest of the save).
        row = await self._s.fetchone(
            "UPDATE games SET language = ?, rules = ?, state = ?, lobby = ?, "
            "table_message_id = ?, hand_messages = ?, deadline_us = ?, timeouts = ?, "
            "created_us = ?, started_us = ?, meta = ?, result_message_id = ?, hand_floors = ?, "
            "updated_us = ?, version = version + 1 "
            f"WHERE id = ? AND version = ? AND chat_id = ? AND status = ?{fence} "
            "RETURNING version",
            (*rest, to_us(utcnow()), record.id, expected_version, chat_id, status, *fenced),
        )
        return None if row is None else int(row["version"])

    async def save(self, *, record: GameRecord, expected_version: int) -> int:
        """Overwrite the stored game if it is still at ``expected_version``; return the new one.

        Raises `Conflict` (writing nothing) if another writer saved it since, or if the save
        would give the chat a second active game; `NotFound` if the game does not exist.
        The record itself is not changed: set ``record.version`` to the result to keep using it.
        """
        version = await self.save_in_place(record=record, expected_version=expected_version)
        if version is not None:
            return version
        await self._s.fenced()
        fence, fenced = self._s.fence()
        chat_id, status, *rest = _game_values(record)
        now = to_us(utcnow())
        current = await self._s.fetchone("SELECT version FROM games WHERE id = ?", (record.id,))
        if current is None:
            raise NotFound(f"game {record.id} does not exist")
        if current["version"] != expected_version:
            raise Conflict(
                f"game {record.id} was saved by another writer: expected version "
                f"{expected_version}, stored version is {current['version']}"
            )
        # The status or chat changes: one statement, so a unique violation writes nothing.
        try:
            row = await self._s.fetchone(
                "UPDATE games SET chat_id = ?, status = ?, language = ?, rules = ?, state = ?, "
                "lobby = ?, table_message_id = ?, hand_messages = ?, deadline_us = ?, "
                "timeouts = ?, created_us = ?, started_us = ?, meta = ?, result_message_id = ?, "
                "hand_floors = ?, updated_us = ?, version = version + 1 "
                f"WHERE id = ? AND version = ?{fence} "
                "RETURNING version",
                (chat_id, status, *rest, now, record.id, expected_version, *fenced),
            )
        except Conflict as error:
            raise Conflict(
                f"game {record.id}: chat {record.chat_id} already has another game in the "
                f"lobby or running"
            ) from error
        if row is None:  # PostgreSQL: another writer saved it since the SELECT (SQLite holds
            # the write lock, so nothing changed there), or the lead passed meanwhile
            await self._s.fenced()
            raise Conflict(
                f"game {record.id} was saved by another writer: expected version {expected_version}"
            )
        return int(row["version"])

    async def latest_for_chat(self, *, chat_id: int) -> GameRecord:
        """The chat's most recent game, whatever its status. Raises `NotFound`."""
        row = await self._s.fetchone(
            f"SELECT {_GAME_COLUMNS} FROM games WHERE chat_id = ? ORDER BY id DESC LIMIT 1",
            (chat_id,),
        )
        if row is None:
            raise NotFound(f"chat {chat_id} has no games")
        return _game_record(row)

    async def previous(self, *, chat_id: int, game_id: int) -> GameRecord:
        """The chat's game before game ``game_id``, whatever its status. Raises `NotFound`."""
        row = await self._s.fetchone(
            f"SELECT {_GAME_COLUMNS} FROM games WHERE chat_id = ? AND id < ? "
            "ORDER BY id DESC LIMIT 1",
            (chat_id, game_id),
        )
        if row is None:
            raise NotFound(f"chat {chat_id} has no game before {game_id}")
        return _game_record(row)

    async def all_active(self) -> list[GameRecord]:
        """Every game in the lobby or running, oldest first (to resume them after a restart).

        A game this code cannot load (`StoredGameError`: engine state or rules in a format it
        does not know, or damaged) is left out with a warning naming it, so that one bad row
        does not keep every other game from resuming. `get` and `active_for_chat` still raise
        for it.
        """
        rows = await self._s.fetchall(
            f"SELECT {_GAME_COLUMNS} FROM games WHERE status IN ('lobby', 'running') ORDER BY id"
        )
        return _loadable(rows)

    async def due(self, *, now: datetime) -> list[GameRecord]:
        """Running games whose turn deadline is at or before ``now``, earliest first.

        A game this code cannot load is left out with a warning, as in `all_active`."""
        rows = await self._s.fetchall(
            f"SELECT {_GAME_COLUMNS} FROM games WHERE status = 'running' "
            "AND deadline_us IS NOT NULL AND deadline_us <= ? ORDER BY deadline_us, id",
            (to_us(now),),
        )
        return _loadable(rows)

    async def ended(self, *, since: datetime) -> list[GameRecord]:
        """Finished games whose result message was never posted (their leader died in
        between), and the games that ended `since`, oldest first (a game this code cannot
        load is left out, as in `all_active`)."""
        rows = await self._s.fetchall(
            f"SELECT {_GAME_COLUMNS} FROM games WHERE status = 'finished' "
            "AND result_message_id IS NULL "
            f"UNION SELECT {_GAME_COLUMNS} FROM games WHERE status = 'finished' "
            "AND updated_us >= ? ORDER BY id",
            (to_us(since),),
        )
        return _loadable(rows)

    async def result_posted(self, *, game_id: int, message_id: int) -> None:
        """The finished game's result message is `message_id` (its version stays)."""
        fence, fenced = self._s.fence()
        await self._s.execute(
            f"UPDATE games SET result_message_id = ? WHERE id = ?{fence}",
            (message_id, game_id, *fenced),
        )

    async def migrate_chat(self, *, old_chat_id: int, new_chat_id: int) -> int:
        """Move the chat's games to its new id (group upgraded to supergroup).

        Bumps the version of each moved game, so copies loaded before the move cannot be saved
        back over it. Returns how many games moved. Raises `Conflict` if both ids have an active
        game. See also `Transaction.migrate_chat`, which moves settings and results as well.
        """
        try:
            rows = await self._s.fetchall(
                "UPDATE games SET chat_id = ?, version = version + 1, updated_us = ? "
                "WHERE chat_id = ? RETURNING id",
                (new_chat_id, to_us(utcnow()), old_chat_id),
            )
        except Conflict as error:
            raise Conflict(
                f"chats {old_chat_id} and {new_chat_id} both have a game in the lobby or running"
            ) from error
        return len(rows)


# --------------------------------------------------------------------------------- players


class PlayerRepository:
    """Telegram users the bot has seen."""

    def __init__(self, session: Session) -> None:
        self._s = session

    async def upsert(self, *, player: Player) -> Player:
        """Insert the player or overwrite every field of the stored one; return it."""
        await self._s.execute(
            "INSERT INTO players (user_id, name, language, can_message, turn_alerts, updated_us) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET name = excluded.name, "
            "language = excluded.language, can_message = excluded.can_message, "
            "turn_alerts = excluded.turn_alerts, updated_us = excluded.updated_us",
            (
                player.user_id,
                player.name,
                player.language,
                bool(player.can_message),
                None if player.turn_alerts is None else bool(player.turn_alerts),
                to_us(utcnow()),
            ),
        )
        return player

    async def get(self, *, user_id: int) -> Player:
        """Raises `NotFound` if the user was never stored."""
        row = await self._s.fetchone(
            "SELECT user_id, name, language, can_message, turn_alerts FROM players "
            "WHERE user_id = ?",
            (user_id,),
        )
        if row is None:
            raise NotFound(f"player {user_id} does not exist")
        return Player(
            user_id=int(row["user_id"]),
            name=str(row["name"]),
            language=row["language"],
            can_message=bool(row["can_message"]),
            turn_alerts=None if row["turn_alerts"] is None else bool(row["turn_alerts"]),
        )

    async def set_can_message(self, *, user_id: int, value: bool) -> None:
        """Record whether the bot can write to the user privately. Raises `NotFound`."""
        row = await self._s.fetchone(
            "UPDATE players SET can_message = ?, updated_us = ? WHERE user_id = ? "
            "RETURNING user_id",
            (bool(value), to_us(utcnow()), user_id),
        )
        if row is None:
            raise NotFound(f"player {user_id} does not exist")


# ----------------------------------------------------------------------------------- chats


class ChatRepository:
    """Per-group settings."""

    def __init__(self, session: Session) -> None:
        self._s = session

    async def get(self, *, chat_id: int) -> ChatSettings:
        """The chat's settings, or the defaults if it never saved any."""
        row = await self._s.fetchone(
            "SELECT chat_id, language, preset, rules, turn_timeout, show_computers, turn_alerts, "
            "throw_in_window FROM chat_settings "
            "WHERE chat_id = ?",
            (chat_id,),
        )
        if row is None:
            return ChatSettings(chat_id=chat_id)
        return ChatSettings(
            chat_id=int(row["chat_id"]),
            language=row["language"],
            preset=str(row["preset"]),
            rules=rules_from_json(row["rules"]),
            turn_timeout=row["turn_timeout"],
            show_computers=bool(row["show_computers"]),
            turn_alerts=bool(row["turn_alerts"]),
            throw_in_window=int(row["throw_in_window"]),
        )

    async def save(self, *, settings: ChatSettings) -> None:
        if settings.turn_timeout is not None and settings.turn_timeout < 0:
            raise ValueError(
                f"turn_timeout must be 0 (off) or seconds, not {settings.turn_timeout}"
            )
        if settings.throw_in_window < 0:
            raise ValueError(
                f"throw_in_window must be 0 (off) or seconds, not {settings.throw_in_window}"
            )
        await self._s.execute(
            "INSERT INTO chat_settings (chat_id, language, preset, rules, turn_timeout, "
            "show_computers, turn_alerts, throw_in_window, updated_us) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (chat_id) DO UPDATE SET "
            "language = excluded.language, preset = excluded.preset, rules = excluded.rules, "
            "turn_timeout = excluded.turn_timeout, show_computers = excluded.show_computers, "
            "turn_alerts = excluded.turn_alerts, throw_in_window = excluded.throw_in_window, "
            "updated_us = excluded.updated_us",
            (
                settings.chat_id,
                settings.language,
                settings.preset,
                rules_to_json(settings.rules),
                settings.turn_timeout,
                bool(settings.show_computers),
                bool(settings.turn_alerts),
                settings.throw_in_window,
                to_us(utcnow()),
            ),
        )

    async def migrate_chat(self, *, old_chat_id: int, new_chat_id: int) -> None:
        """Move the settings to the new chat id, unless the new id already has its own."""
        await self._s.execute(
            "UPDATE chat_settings SET chat_id = ? WHERE chat_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM chat_settings WHERE chat_id = ?)",
            (new_chat_id, old_chat_id, new_chat_id),
        )
        await self._s.execute("DELETE FROM chat_settings WHERE chat_id = ?", (old_chat_id,))


# --------------------------------------------------------------------------------- results


def _validate_result(result: FinishedGame) -> None:
    if result.id is not None:
        raise ValueError(f"finished game {result.id} is already recorded")
    if result.chat_id == OVERALL_SCOPE:
        raise ValueError("chat id 0 is reserved for the all-chats statistics")
    if not result.participants:
        raise ValueError("a finished game needs its participants")
    seats = {p.seat for p in result.participants}
    players = {p.player_id for p in result.participants}
    if len(seats) != len(result.participants) or len(players) != len(result.participants):
        raise ValueError("participants must have distinct seats and player ids")
    if result.draw and result.durak is not None:
        raise ValueError("a draw has no durak")
    if not result.draw and result.durak not in players:
        raise ValueError(f"the durak {result.durak!r} is not one of the participants")
    for p in result.participants:
        if p.result not in PARTICIPANT_RESULTS:
            raise ValueError(f"unknown participant result {p.result!r}")
        if p.place < 1:
            raise ValueError(f"place must be 1 or more, not {p.place}")
    if result.bouts < 0:
        raise ValueError(f"bouts must not be negative, not {result.bouts}")


@dataclass(slots=True)
class _Tally:
    """Aggregates of one (scope, player) over a batch of results, in recording order."""

    user_id: int | None
    name: str
    is_computer: bool
    games: int = 0
    durak_count: int = 0
    won: int = 0
    draws: int = 0
    resigned: int = 0
    timed_out: int = 0
    streak: int = 0
    last_game_id: int = 0
    last_played_us: int = 0

    def add(self, participant: Participant, is_durak: bool, game_id: int, ended: int) -> None:
        self.user_id = participant.user_id
        self.name = participant.name
        self.is_computer = participant.is_computer
        self.games += 1
        if is_durak:
            self.durak_count += 1
            self.streak = self.streak - 1 if self.streak < 0 else -1
        else:
            self.streak = self.streak + 1 if self.streak > 0 else 1
        result = participant.result
        if result == "won":
            self.won += 1
        elif result == "draw":
            self.draws += 1
        elif result == "resigned":
            self.resigned += 1
        elif result == "timed_out":
            self.timed_out += 1
        self.last_game_id = game_id
        if ended > self.last_played_us:
            self.last_played_us = ended

    def merged_after(self, older: _Tally) -> _Tally:
        """This tally's games came after ``older``'s: combine them."""
        streak = self.streak
        if abs(self.streak) == self.games and self.streak * older.streak > 0:
            streak += older.streak
        return replace(
            self,
            games=self.games + older.games,
            durak_count=self.durak_count + older.durak_count,
            won=self.won + older.won,
            draws=self.draws + older.draws,
            resigned=self.resigned + older.resigned,
            timed_out=self.timed_out + older.timed_out,
            streak=streak,
            last_game_id=max(self.last_game_id, older.last_game_id),
            last_played_us=max(self.last_played_us, older.last_played_us),
        )

    def params(self, scope: int, player_id: str) -> tuple[Any, ...]:
        return (
            scope,
            player_id,
            self.user_id,
            self.name,
            self.is_computer,
            self.games,
            self.durak_count,
            self.won,
            self.draws,
            self.resigned,
            self.timed_out,
            self.durak_count / self.games,
            self.streak,
            self.last_game_id,
            self.last_played_us,
        )


_STATS_COLUMNS = (
    "scope, player_id, user_id, name, is_computer, games, durak_count, won, draws, resigned, "
    "timed_out, durak_rate, streak, last_game_id, last_played_us"
)

# Adds a batch tally (``excluded``, newer games) to the stored one (older games).
_UPSERT_STATS = (
    f"INSERT INTO player_stats ({_STATS_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (scope, player_id) DO UPDATE SET "
    "user_id = excluded.user_id, name = excluded.name, is_computer = excluded.is_computer, "
    "games = player_stats.games + excluded.games, "
    "durak_count = player_stats.durak_count + excluded.durak_count, "
    "won = player_stats.won + excluded.won, "
    "draws = player_stats.draws + excluded.draws, "
    "resigned = player_stats.resigned + excluded.resigned, "
    "timed_out = player_stats.timed_out + excluded.timed_out, "
    "durak_rate = (player_stats.durak_count + excluded.durak_count) * 1.0 "
    "/ (player_stats.games + excluded.games), "
    "streak = CASE WHEN abs(excluded.streak) = excluded.games "
    "AND player_stats.streak * excluded.streak > 0 "
    "THEN player_stats.streak + excluded.streak ELSE excluded.streak END, "
    "last_game_id = excluded.last_game_id, "
    "last_played_us = CASE WHEN excluded.last_played_us > player_stats.last_played_us "
    "THEN excluded.last_played_us ELSE player_stats.last_played_us END"
)

_SELECT_STATS = (
    "SELECT s.scope, s.player_id, s.user_id, COALESCE(p.name, s.name) AS name, s.is_computer, "
    "s.games, s.durak_count, s.won, s.draws, s.resigned, s.timed_out, s.durak_rate, s.rating, "
    "s.streak, s.last_game_id, s.last_played_us "
    "FROM player_stats AS s LEFT JOIN players AS p ON p.user_id = s.user_id "
)


# Parameters: scope, min_games, include_computers, limit. Walks player_stats_leaderboard in order.
LEADERBOARD_SQL = (
    _SELECT_STATS + "WHERE s.scope = ? AND s.games >= ? AND (? OR s.is_computer = 0) "
    "ORDER BY s.rating DESC NULLS LAST, s.durak_rate ASC, s.games DESC, s.player_id ASC LIMIT ?"
)


def _tally_from_row(row: Row) -> _Tally:
    return _Tally(
        user_id=row["user_id"],
        name=str(row["name"]),
        is_computer=bool(row["is_computer"]),
        games=int(row["games"]),
        durak_count=int(row["durak_count"]),
        won=int(row["won"]),
        draws=int(row["draws"]),
        resigned=int(row["resigned"]),
        timed_out=int(row["timed_out"]),
        streak=int(row["streak"]),
        last_game_id=int(row["last_game_id"]),
        last_played_us=int(row["last_played_us"]),
    )


def _leaderboard_row(row: Row) -> LeaderboardRow:
    return LeaderboardRow(
        player_id=str(row["player_id"]),
        user_id=row["user_id"],
        name=str(row["name"]),
        is_computer=bool(row["is_computer"]),
        games=int(row["games"]),
        durak_count=int(row["durak_count"]),
        durak_rate=float(row["durak_rate"]),
        rating=None if row["rating"] is None else float(row["rating"]),
        streak=int(row["streak"]),
    )


_SELECT_RESULT = (
    "SELECT id, chat_id, game_id, rules, started_us, ended_us, bouts, draw, durak, practice "
    "FROM finished_games "
)


class ResultRepository:
    """Finished games (append-only) and the statistics derived from them."""

    def __init__(self, session: Session) -> None:
        self._s = session

    async def record(self, *, result: FinishedGame) -> int:
        """Store a finished game and update the aggregates; return its id.

        Raises `Conflict` if a result for the same ``game_id`` is already recorded,
        ValueError if the result is inconsistent (durak not a participant, ...).
        """
        (result_id,) = await self.record_many(results=[result])
        return result_id

    async def record_many(
        self, *, results: Iterable[FinishedGame], chunk: int = 10_000, rate: bool = True
    ) -> list[int]:
        """Store many finished games (an import); return their ids in order.

        ``results`` is consumed lazily, ``chunk`` games at a time, and the aggregates are
        written once at the end, so a generator of a million games needs little memory.
        ``rate=False`` leaves the ratings alone (a bulk import; run `recompute_ratings`).
        """
        rated: list[tuple[int, FinishedGame]] = []
        # One recorder at a time (PostgreSQL: an advisory lock; SQLite's write lock does it
        # anyway): ids come out in the order games are recorded, and each game is rated from
        # the ratings the one before it left, also in the overall scope every game shares.
        await self._s.lock(RESULTS_LOCK)
        ids: list[int] = []
        tallies: dict[tuple[int, str], _Tally] = {}
        batch: list[FinishedGame] = []
        iterator = iter(results)
        while True:
            batch.clear()
            for result in iterator:
                _validate_result(result)
                batch.append(result)
                if len(batch) >= chunk:
                    break
            if not batch:
                break
            # Ids drawn here, so participants can be inserted in bulk with theirs.
            batch_ids = await self._s.new_ids("finished_games", len(batch))
            ids.extend(batch_ids)
            games, players = self._rows(batch, batch_ids, tallies, rated if rate else None)
            await self._insert(games, players)
        if tallies:
            # In a fixed order (scope, player): whoever else writes these rows locks them in
            # the same order, so two writers never wait for each other in a circle.
            await self._s.executemany(
                _UPSERT_STATS, [tallies[key].params(*key) for key in sorted(tallies)]
            )
        if rated:
            await self._rate([r for _, r in rated], skills={})
        return ids

    @staticmethod
    def _rows(
        batch: list[FinishedGame],
        batch_ids: list[int],
        tallies: dict[tuple[int, str], _Tally],
        rated: list[tuple[int, FinishedGame]] | None,
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """The rows of ``batch`` for finished_games and finished_game_players, adding each
        game to ``tallies`` (and to ``rated``, unless None)."""
        games: list[tuple[Any, ...]] = []
        players: list[tuple[Any, ...]] = []
        for result_id, result in zip(batch_ids, batch, strict=True):
            ended = to_us(result.ended_at)
            games.append(
                (
                    result_id,
                    result.chat_id,
                    result.game_id,
                    rules_to_json(result.rules),
                    to_us(result.started_at),
                    ended,
                    result.bouts,
                    bool(result.draw),
                    result.durak,
                    bool(result.practice),
                )
            )
            scopes = () if result.practice else (result.chat_id, OVERALL_SCOPE)
            if rated is not None and scopes:
                rated.append((result_id, result))
            for p in result.participants:
                players.append(
                    (
                        result_id,
                        p.seat,
                        p.player_id,
                        p.user_id,
                        p.name,
                        bool(p.is_computer),
                        p.result,
                        p.place,
                    )
                )
                is_durak = p.player_id == result.durak
                for scope in scopes:
                    tally = tallies.get((scope, p.player_id))
                    if tally is None:
                        tally = tallies[scope, p.player_id] = _Tally(
                            user_id=p.user_id, name=p.name, is_computer=p.is_computer
                        )
                    tally.add(p, is_durak, result_id, ended)
        return games, players

    async def _skill(
        self, scope: int, player_id: str, skills: dict[tuple[int, str], Skill]
    ) -> Skill:
        skill = skills.get((scope, player_id))
        if skill is None:
            row = await self._s.fetchone(
                "SELECT mu, sigma FROM player_stats WHERE scope = ? AND player_id = ?",
                (scope, player_id),
            )
            has = row is not None and row["mu"] is not None
            skill = Skill(float(row["mu"]), float(row["sigma"])) if has and row else Skill()
        return skill

    async def _rate(
        self,
        results: Iterable[FinishedGame],
        *,
        skills: dict[tuple[int, str], Skill],
        scope_filter: int | None = None,
    ) -> None:
        """Update the ratings of every scope of each game, in order, then store them."""
        touched: set[tuple[int, str]] = set()
        for result in results:
            if result.practice:
                continue
            game_ranks = ratings.ranks(result)
            for scope in (result.chat_id, OVERALL_SCOPE):
                if scope_filter is not None and scope != scope_filter:
                    continue
                keys = [(scope, p.player_id) for p in result.participants]
                before = [await self._skill(scope, pid, skills) for _, pid in keys]
                for key, skill in zip(keys, ratings.rate(before, game_ranks), strict=True):
                    skills[key] = skill
                    touched.add(key)
        await self._s.executemany(
            "UPDATE player_stats SET mu = ?, sigma = ?, rating = ? "
            "WHERE scope = ? AND player_id = ?",
            [(skills[k].mu, skills[k].sigma, skills[k].rating, *k) for k in sorted(touched)],
        )

    async def recompute_ratings(self, *, chat_id: int | None = None) -> int:
        """Ratings from scratch, from the stored games in the order they were recorded
        (all scopes, or one chat's). Returns how many games were replayed."""
        await self._s.lock(RESULTS_LOCK)
        if chat_id is None:
            await self._s.execute("UPDATE player_stats SET mu = NULL, sigma = NULL, rating = NULL")
            where, params = "WHERE practice = 0", cast(tuple[int, ...], ())
        else:
            await self._s.execute(
                "UPDATE player_stats SET mu = NULL, sigma = NULL, rating = NULL WHERE scope = ?",
                (chat_id,),
            )
            where, params = "WHERE practice = 0 AND chat_id = ?", (chat_id,)
        rows = await self._s.fetchall(_SELECT_RESULT + where + " ORDER BY id", params)
        games = [await self._finished_game(row) for row in rows]
        await self._rate(games, skills={}, scope_filter=chat_id)
        return len(games)

    async def unrated(self) -> int:
        """How many (scope, player) aggregates have no rating yet (e.g. after an upgrade)."""
        row = await self._s.fetchone("SELECT COUNT(*) AS n FROM player_stats WHERE mu IS NULL")
        return int(row["n"]) if row else 0

    async def _insert(self, games: list[tuple[Any, ...]], players: list[tuple[Any, ...]]) -> None:
        try:
            await self._s.executemany(
                "INSERT INTO finished_games (id, chat_id, game_id, rules, started_us, ended_us, "
                "bouts, draw, durak, practice) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                games,
            )
        except Conflict as error:
            raise Conflict(f"a result for one of these games is already recorded: {error}") from (
                error
            )
        await self._s.executemany(
            "INSERT INTO finished_game_players (finished_game_id, seat, player_id, user_id, "
            "name, is_computer, result, place) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            players,
        )

    async def get(self, *, result_id: int) -> FinishedGame:
        """A recorded finished game with its participants in seat order. Raises `NotFound`."""
        row = await self._s.fetchone(_SELECT_RESULT + "WHERE id = ?", (result_id,))
        if row is None:
            raise NotFound(f"finished game {result_id} does not exist")
        return await self._finished_game(row)

    async def for_game(self, *, game_id: int) -> FinishedGame:
        """The result recorded for the game ``game_id``. Raises `NotFound`."""
        row = await self._s.fetchone(_SELECT_RESULT + "WHERE game_id = ?", (game_id,))
        if row is None:
            raise NotFound(f"no result is recorded for game {game_id}")
        return await self._finished_game(row)

    async def evening(
        self, *, game_id: int, gap: timedelta, within: timedelta, limit: int = 50
    ) -> list[FinishedGame]:
        """The games of the evening of game ``game_id`` (its result is recorded), newest
        first, itself included: going back from it the chat's games with the same
        participants (people and computers), as long as no more than ``gap`` passed between
        one game's end and the next one's start, none ended more than ``within`` before it,
        at most ``limit``. Empty if no result is recorded for that game."""
        try:
            last = await self.for_game(game_id=game_id)
        except NotFound:
            return []
        rows = await self._s.fetchall(
            _SELECT_RESULT + "WHERE chat_id = ? AND ended_us >= ? AND ended_us <= ? "
            "ORDER BY ended_us DESC, id DESC LIMIT ?",
            (last.chat_id, to_us(last.ended_at - within), to_us(last.ended_at), limit),
        )
        players = {p.player_id for p in last.participants}
        games = [last]
        for row in rows:
            if int(row["id"]) == last.id:
                continue
            earlier = await self._finished_game(row)
            if {p.player_id for p in earlier.participants} != players:
                break
            if games[-1].started_at - earlier.ended_at > gap:
                break
            games.append(earlier)
        return games

    async def _finished_game(self, row: Row) -> FinishedGame:
        result_id = int(row["id"])
        rows = await self._s.fetchall(
            "SELECT seat, player_id, user_id, name, is_computer, result, place "
            "FROM finished_game_players WHERE finished_game_id = ? ORDER BY seat",
            (result_id,),
        )
        return FinishedGame(
            id=int(row["id"]),
            chat_id=int(row["chat_id"]),
            game_id=row["game_id"],
            rules=rules_from_json(row["rules"], game_id=row["game_id"]),
            started_at=from_us(row["started_us"]),
            ended_at=from_us(row["ended_us"]),
            bouts=int(row["bouts"]),
            draw=bool(row["draw"]),
            durak=row["durak"],
            practice=bool(row["practice"]),
            participants=[
                Participant(
                    seat=int(r["seat"]),
                    player_id=str(r["player_id"]),
                    user_id=r["user_id"],
                    name=str(r["name"]),
                    is_computer=bool(r["is_computer"]),
                    result=cast(ParticipantResult, r["result"]),
                    place=int(r["place"]),
                )
                for r in rows
            ],
        )

    async def count(self, *, chat_id: int | None = None) -> int:
        """How many finished games are recorded (in one chat, or in all), practice included."""
        if chat_id is None:
            row = await self._s.fetchone("SELECT COUNT(*) AS n FROM finished_games")
        else:
            row = await self._s.fetchone(
                "SELECT COUNT(*) AS n FROM finished_games WHERE chat_id = ?", (chat_id,)
            )
        return int(row["n"]) if row else 0

    async def leaderboard(
        self,
        *,
        chat_id: int | None = None,
        limit: int = 10,
        min_games: int = 1,
        include_computers: bool = False,
    ) -> list[LeaderboardRow]:
        """The best players of a chat (``chat_id``) or of all chats (None).

        Ordered by rating (highest first; players without one after), then durak rate (lowest
        first), then games played (most first). Practice games never count. Reads about
        ``limit`` index entries when most players have ``min_games``.
        """
        rows = await self._s.fetchall(
            LEADERBOARD_SQL,
            (
                OVERALL_SCOPE if chat_id is None else chat_id,
                min_games,
                bool(include_computers),
                limit,
            ),
        )
        return [_leaderboard_row(row) for row in rows]

    async def rank_of(
        self,
        *,
        player_id: str,
        chat_id: int | None = None,
        min_games: int = 1,
        include_computers: bool = False,
    ) -> int | None:
        """The player's place on the leaderboard (1 = top), or None if not ranked there."""
        scope = OVERALL_SCOPE if chat_id is None else chat_id
        me = await self._s.fetchone(
            "SELECT rating, games, is_computer FROM player_stats WHERE scope = ? AND player_id = ?",
            (scope, player_id),
        )
        if me is None or me["rating"] is None or int(me["games"]) < min_games:
            return None
        if me["is_computer"] and not include_computers:
            return None
        row = await self._s.fetchone(
            "SELECT COUNT(*) AS n FROM player_stats WHERE scope = ? AND games >= ? "
            "AND (? OR is_computer = 0) AND rating > ?",
            (scope, min_games, bool(include_computers), me["rating"]),
        )
        return (int(row["n"]) if row else 0) + 1

    async def unranked(
        self,
        *,
        chat_id: int | None = None,
        min_games: int = 1,
        limit: int = 10,
        include_computers: bool = False,
    ) -> list[LeaderboardRow]:
        """The players with fewer than ``min_games`` games (not on the leaderboard yet):
        the closest to being ranked first (most games), then the most recent."""
        rows = await self._s.fetchall(
            _SELECT_STATS + "WHERE s.scope = ? AND s.games < ? AND (? OR s.is_computer = 0) "
            "ORDER BY s.games DESC, s.last_played_us DESC, s.player_id ASC LIMIT ?",
            (
                OVERALL_SCOPE if chat_id is None else chat_id,
                min_games,
                bool(include_computers),
                limit,
            ),
        )
        return [_leaderboard_row(row) for row in rows]

    async def player_count(
        self,
        *,
        chat_id: int | None = None,
        ranked: bool = True,
        min_games: int = 1,
        include_computers: bool = False,
    ) -> int:
        """How many players have at least ``min_games`` games (``ranked``: the leaderboard's
        length), or fewer (not ranked: the length of `unranked` without a limit)."""
        row = await self._s.fetchone(
            "SELECT COUNT(*) AS n FROM player_stats WHERE scope = ? "
            f"AND games {'>=' if ranked else '<'} ? AND (? OR is_computer = 0)",
            (OVERALL_SCOPE if chat_id is None else chat_id, min_games, bool(include_computers)),
        )
        return int(row["n"]) if row else 0

    async def chats_of(self, *, player_id: str) -> list[int]:
        """The chats the player has a record in, most recently played first."""
        rows = await self._s.fetchall(
            "SELECT scope FROM player_stats WHERE player_id = ? AND scope != ? "
            "ORDER BY last_played_us DESC",
            (player_id, OVERALL_SCOPE),
        )
        return [int(row["scope"]) for row in rows]

    async def player_record(self, *, player_id: str, chat_id: int | None = None) -> PlayerRecord:
        """The player's record in a chat, or over all chats. Raises `NotFound` if no games."""
        row = await self._s.fetchone(
            _SELECT_STATS + "WHERE s.scope = ? AND s.player_id = ?",
            (OVERALL_SCOPE if chat_id is None else chat_id, player_id),
        )
        if row is None:
            where = "any chat" if chat_id is None else f"chat {chat_id}"
            raise NotFound(f"player {player_id} has no finished games in {where}")
        return PlayerRecord(
            player_id=str(row["player_id"]),
            chat_id=chat_id,
            user_id=row["user_id"],
            name=str(row["name"]),
            is_computer=bool(row["is_computer"]),
            games=int(row["games"]),
            durak_count=int(row["durak_count"]),
            won=int(row["won"]),
            draws=int(row["draws"]),
            resigned=int(row["resigned"]),
            timed_out=int(row["timed_out"]),
            durak_rate=float(row["durak_rate"]),
            rating=None if row["rating"] is None else float(row["rating"]),
            streak=int(row["streak"]),
            last_played_at=from_us(row["last_played_us"]),
        )

    async def migrate_chat(self, *, old_chat_id: int, new_chat_id: int) -> None:
        """Move the chat's finished games and its statistics to its new id."""
        if OVERALL_SCOPE in (old_chat_id, new_chat_id):
            raise ValueError("chat id 0 is reserved for the all-chats statistics")
        await self._s.lock(RESULTS_LOCK)
        await self._s.execute(
            "UPDATE finished_games SET chat_id = ? WHERE chat_id = ?", (new_chat_id, old_chat_id)
        )
        old = {
            str(row["player_id"]): _tally_from_row(row)
            for row in await self._s.fetchall(
                f"SELECT {_STATS_COLUMNS} FROM player_stats WHERE scope = ?", (old_chat_id,)
            )
        }
        if not old:
            return
        new = {
            str(row["player_id"]): _tally_from_row(row)
            for row in await self._s.fetchall(
                f"SELECT {_STATS_COLUMNS} FROM player_stats WHERE scope = ?", (new_chat_id,)
            )
        }
        merged: list[tuple[Any, ...]] = []
        for player_id, tally in old.items():
            other = new.get(player_id)
            if other is not None:
                newer, older = (
                    (other, tally) if other.last_game_id > tally.last_game_id else (tally, other)
                )
                tally = newer.merged_after(older)
            merged.append(tally.params(new_chat_id, player_id))
        await self._s.execute("DELETE FROM player_stats WHERE scope = ?", (old_chat_id,))
        await self._s.executemany(
            f"INSERT INTO player_stats ({_STATS_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (scope, player_id) DO UPDATE SET user_id = excluded.user_id, "
            "name = excluded.name, is_computer = excluded.is_computer, games = excluded.games, "
            "durak_count = excluded.durak_count, won = excluded.won, draws = excluded.draws, "
            "resigned = excluded.resigned, timed_out = excluded.timed_out, "
            "durak_rate = excluded.durak_rate, streak = excluded.streak, "
            "last_game_id = excluded.last_game_id, last_played_us = excluded.last_played_us",
            merged,
        )
        await self.recompute_ratings(chat_id=new_chat_id)  # the merged games, in order


class InboxRepository:
    """The updates Telegram posted (webhook mode), by update id: stored by whichever worker
    took the POST, before it answered 200 (`accept`), and handled by the leader in order,
    each marked handled in the transaction of its changes (`done`) or right after it (`note`).
    Kept `prune`'s age, so that Telegram's redelivery of one is recognised."""

    def __init__(self, session: Session) -> None:
        self._s = session

    async def accept(self, *, update_id: int, body: str, at: datetime) -> bool:
        """Store a posted update unless it is here already; True if it was new."""
        row = await self._s.fetchone(
            "INSERT INTO inbox (update_id, body, received_us) VALUES (?, ?, ?) "
            "ON CONFLICT (update_id) DO NOTHING RETURNING update_id",
            (update_id, body, to_us(at)),
        )
        return row is not None

    async def waiting(self, *, limit: int, ids: Iterable[int] | None = None) -> list[Stored]:
        """Updates not handled yet, oldest id first (of ``ids`` only, if given)."""
        if ids is None:
            rows = await self._s.fetchall(
                "SELECT update_id, body FROM inbox WHERE handled_us IS NULL "
                "ORDER BY update_id LIMIT ?",
                (limit,),
            )
        else:
            wanted = list(ids)[:limit]
            if not wanted:
                return []
            marks = ", ".join("?" * len(wanted))
            rows = await self._s.fetchall(
                "SELECT update_id, body FROM inbox WHERE handled_us IS NULL "
                f"AND update_id IN ({marks}) ORDER BY update_id",
                tuple(wanted),
            )
        return [Stored(int(row["update_id"]), str(row["body"])) for row in rows]

    async def handled(self, *, update_id: int) -> bool:
        """Whether update `update_id` is stored as handled."""
        row = await self._s.fetchone(
            "SELECT update_id FROM inbox WHERE update_id = ? AND handled_us IS NOT NULL",
            (update_id,),
        )
        return row is not None

    async def done(self, *, update_id: int, at: datetime) -> None:
        """Mark the update handled, in the transaction of its changes. Raises `Conflict` if
        it was handled already (the transaction must roll back: nothing of it twice), and
        `Fenced` if this transaction's lead has passed. An update that is not stored (long
        polling) is stored as handled."""
        if not await self.note(update_id=update_id, at=at):
            raise Conflict(f"update {update_id} was handled already")

    async def note(self, *, update_id: int, at: datetime) -> bool:
        """Mark the update handled unless it is; True if it was not handled before."""
        fence, fenced = self._s.fence()
        row = await self._s.fetchone(
            "UPDATE inbox SET handled_us = ? "
            f"WHERE update_id = ? AND handled_us IS NULL{fence} RETURNING update_id",
            (to_us(at), update_id, *fenced),
        )
        if row is not None:
            return True
        await self._s.fenced()
        row = await self._s.fetchone(
            "INSERT INTO inbox (update_id, body, received_us, handled_us) VALUES (?, '', ?, ?) "
            "ON CONFLICT (update_id) DO NOTHING RETURNING update_id",
            (update_id, to_us(at), to_us(at)),
        )
        return row is not None

    async def prune(self, *, before: datetime) -> int:
        """Forget the handled updates received before `before`; how many."""
        rows = await self._s.fetchall(
            "DELETE FROM inbox WHERE received_us < ? AND handled_us IS NOT NULL "
            "RETURNING update_id",
            (to_us(before),),
        )
        return len(rows)

    async def count_waiting(self) -> int:
        """How many updates wait for the leader."""
        row = await self._s.fetchone("SELECT COUNT(*) AS n FROM inbox WHERE handled_us IS NULL")
        return 0 if row is None else int(row["n"])


@dataclass(frozen=True, slots=True)
class Stored:
    """An update as the inbox keeps it: its id and the JSON Telegram posted."""

    update_id: int
    body: str


class StateRepository:
    """What the bot keeps of itself across leaders and restarts, by key: digests of what it
    last told Telegram (its webhook, its command menus: a new leader calls Telegram only
    when something changed) and the leader's calls in Telegram's open windows."""

    def __init__(self, session: Session) -> None:
        self._s = session

    async def get(self, *, key: str) -> str | None:
        row = await self._s.fetchone("SELECT value FROM bot_state WHERE key = ?", (key,))
        return None if row is None else str(row["value"])

    async def put(self, *, key: str, value: str) -> None:
        await self._s.execute(
            "INSERT INTO bot_state (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )
