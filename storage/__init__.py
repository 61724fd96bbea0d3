"""Database boundary: repositories over SQLite (aiosqlite) or PostgreSQL (asyncpg, chosen by
a ``postgresql://`` URL). No SQL outside this package.

async with Database.connect("sqlite:///data/durak.sqlite3") as db:
    async with db.transaction() as tx:
        record = await tx.games.active_for_chat(chat_id=chat_id)
        ...
        record.version = await tx.games.save(record=record, expected_version=record.version)
"""

from storage.database import (
    QUICK_CHECK_SECONDS,
    ChatLocks,
    Database,
    Transaction,
    check_database,
)
from storage.errors import (
    Conflict,
    DatabaseBusy,
    DatabaseUnavailable,
    DatabaseUnreachable,
    DatabaseUnusable,
    Fenced,
    InvalidRecord,
    NotFound,
    SchemaTooNew,
    StorageError,
    StoredGameError,
)
from storage.lease import Lease, SoleLease, worker_name
from storage.meta import DEPARTURES, META_VERSION, Departure, GameMeta, LogEntry, LogKind
from storage.records import (
    ACTIVE_STATUSES,
    THROW_IN_WINDOW,
    ChatSettings,
    FinishedGame,
    GameRecord,
    GameStatus,
    LeaderboardRow,
    Lobby,
    Participant,
    ParticipantResult,
    Player,
    PlayerRecord,
    Seat,
    utcnow,
)
from storage.repositories import (
    OVERALL_SCOPE,
    ChatRepository,
    GameRepository,
    InboxRepository,
    PlayerRepository,
    ResultRepository,
    StateRepository,
    Stored,
)
from storage.schema import LATEST_VERSION
from storage.url import DEFAULT_DATABASE_URL, DatabaseURL, parse_database_url

__all__ = [
    "ACTIVE_STATUSES",
    "DEFAULT_DATABASE_URL",
    "DEPARTURES",
    "LATEST_VERSION",
    "META_VERSION",
    "OVERALL_SCOPE",
    "QUICK_CHECK_SECONDS",
    "THROW_IN_WINDOW",
    "ChatLocks",
    "ChatRepository",
    "ChatSettings",
    "Conflict",
    "Database",
    "DatabaseBusy",
    "DatabaseURL",
    "DatabaseUnavailable",
    "DatabaseUnreachable",
    "DatabaseUnusable",
    "Departure",
    "Fenced",
    "FinishedGame",
    "GameMeta",
    "GameRecord",
    "GameRepository",
    "GameStatus",
    "InboxRepository",
    "InvalidRecord",
    "LeaderboardRow",
    "Lease",
    "Lobby",
    "LogEntry",
    "LogKind",
    "NotFound",
    "Participant",
    "ParticipantResult",
    "Player",
    "PlayerRecord",
    "PlayerRepository",
    "ResultRepository",
    "SchemaTooNew",
    "Seat",
    "SoleLease",
    "StateRepository",
    "StorageError",
    "Stored",
    "StoredGameError",
    "Transaction",
    "check_database",
    "parse_database_url",
    "utcnow",
    "worker_name",
]
