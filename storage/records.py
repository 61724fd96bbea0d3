"""The records the repositories take and return. Plain dataclasses; no SQL here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, Literal, get_args

from engine import Game, Rules
from storage.meta import GameMeta

GameStatus = Literal["lobby", "running", "finished", "cancelled"]
ACTIVE_STATUSES: tuple[GameStatus, ...] = ("lobby", "running")
GAME_STATUSES: tuple[GameStatus, ...] = get_args(GameStatus)

THROW_IN_WINDOW: Final = 5
"""The throw-in window's default, in seconds (`ChatSettings.throw_in_window`)."""

ParticipantResult = Literal["won", "durak", "resigned", "timed_out", "draw"]
PARTICIPANT_RESULTS: tuple[ParticipantResult, ...] = get_args(ParticipantResult)


def utcnow() -> datetime:
    """The current time as a timezone-aware UTC datetime (what every record stores)."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat in a lobby or game. Humans: player_id == str(user_id); computers: user_id None."""

    player_id: str
    user_id: int | None
    name: str
    is_computer: bool = False
    level: str | None = None


@dataclass(slots=True)
class Lobby:
    """Who opened the game and who sat down, in seat order; the lobby message being edited."""

    opener_id: int
    seats: list[Seat] = field(default_factory=list)
    message_id: int | None = None


@dataclass(kw_only=True, slots=True)
class GameRecord:
    """One game of one group chat, from lobby to finish, with everything needed to resume it.

    ``id`` is None and ``version`` 0 until ``games.create`` returns the stored record.
    ``game`` is None while in the lobby. ``deadline`` is when the current turn times out.
    ``hand_messages`` maps player id to the message id of that player's private hand message;
    ``timeouts`` counts consecutive timeouts per player id. Datetimes are timezone-aware.
    ``meta`` is the bot's own state of the game (chat title, event log, languages, who left
    how): a typed `GameMeta`, stored as versioned JSON (see `storage.meta`).
    ``result_message_id``: the group's message with a finished game's result, once posted
    (None until then: a leader that takes over posts what its predecessor did not).
    ``hand_floors`` maps player id to the latest message id the bot knew in that player's
    private chat when the game was dealt: a hand message a killed process sent and never
    stored lies after it (found and deleted once the next process sends the hand).
    """

    chat_id: int
    status: GameStatus
    language: str
    rules: Rules
    lobby: Lobby
    game: Game | None = None
    table_message_id: int | None = None
    hand_messages: dict[str, int] = field(default_factory=dict)
    deadline: datetime | None = None
    timeouts: dict[str, int] = field(default_factory=dict)
    created_at: datetime = field(default_factory=utcnow)
    started_at: datetime | None = None
    meta: GameMeta = field(default_factory=GameMeta)
    id: int | None = None
    version: int = 0
    result_message_id: int | None = None
    hand_floors: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Player:
    """A Telegram user the bot has seen. ``can_message``: the bot may write to them privately.
    ``turn_alerts``: whether a turn that comes after a pause arrives as a new, notifying
    hand message (None: as the group's default)."""

    user_id: int
    name: str
    language: str | None = None
    can_message: bool = False
    turn_alerts: bool | None = None


@dataclass(kw_only=True, slots=True)
class ChatSettings:
    """Per-group settings. ``turn_timeout`` is seconds (0: no limit); None: the global default.

    ``language`` None means: follow each user's own language / the global default.
    """

    chat_id: int
    language: str | None = None
    preset: str = "classic"
    rules: Rules = field(default_factory=Rules)
    turn_timeout: int | None = None
    show_computers: bool = True
    """Whether computer players appear on the chat's leaderboard."""
    turn_alerts: bool = True
    """The default of the chat's players: a turn after a pause arrives as a new, notifying
    hand message (each player may choose otherwise)."""
    throw_in_window: int = THROW_IN_WINDOW
    """Seconds the players who could still throw in get once every attack card is covered
    (or the defender takes); then the bout ends as if all had passed. 0: it waits for each
    of them to tap Done (within the turn's time)."""


@dataclass(frozen=True, slots=True)
class Participant:
    """One player of a finished game. ``place`` 1 is the first player out; the durak is last."""

    seat: int
    player_id: str
    user_id: int | None
    name: str
    is_computer: bool
    result: ParticipantResult
    place: int


@dataclass(kw_only=True, slots=True)
class FinishedGame:
    """The permanent record of a finished game; never deleted, stats derive from it.

    Either ``draw`` is True and ``durak`` None, or ``durak`` names one participant's player id.
    ``practice`` games are stored but count in no leaderboard or player record.
    ``id`` is None until recorded; ``game_id`` is the ``GameRecord.id`` it came from, if any.
    """

    chat_id: int
    game_id: int | None
    rules: Rules
    started_at: datetime
    ended_at: datetime
    bouts: int
    draw: bool
    durak: str | None
    participants: list[Participant]
    practice: bool = False
    id: int | None = None


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One line of a leaderboard. ``rating`` stays None until the stats issue computes it.

    ``streak``: games in a row ending with the latest one, positive for games not lost as
    durak, negative for games lost as durak.
    """

    player_id: str
    user_id: int | None
    name: str
    is_computer: bool
    games: int
    durak_count: int
    durak_rate: float
    rating: float | None
    streak: int


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """A player's record in one chat (``chat_id``) or over all chats (``chat_id`` None)."""

    player_id: str
    chat_id: int | None
    user_id: int | None
    name: str
    is_computer: bool
    games: int
    durak_count: int
    won: int
    draws: int
    resigned: int
    timed_out: int
    durak_rate: float
    rating: float | None
    streak: int
    last_played_at: datetime
