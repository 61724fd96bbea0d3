"""Conversions between records and column values. Pure functions, no I/O.

Datetimes are stored as integer microseconds since the Unix epoch, UTC (columns named ``*_us``):
exact for Python datetimes, sortable, and portable to PostgreSQL's BIGINT. Structured values
(engine state, rules, lobby, per-player maps) are compact JSON text.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

import orjson

from engine import Game, Rules
from storage.errors import StoredGameError
from storage.records import Lobby, Seat

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def dumps(value: object) -> str:
    """Compact JSON text, as ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``.

    orjson: the engine state is written on every move, and orjson encodes it about ten times
    as fast as the standard library (and decodes it twice as fast). What orjson refuses but the
    standard library takes (an integer beyond 64 bits) goes to the standard library.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return _ENCODER.encode(value)


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def loads(text: str) -> Any:
    """Parse JSON text; malformed text raises ValueError (``json.JSONDecodeError``).

    orjson reads an integer beyond 64 bits as a float: text with a run of 19 or more digits
    (where such an integer could be) goes to the standard library, which reads it exactly.
    """
    if _LONG_DIGITS.search(text) is None:
        return orjson.loads(text)
    return json.loads(text)


_LONG_DIGITS = re.compile(r"\d{19}")


def to_us(value: datetime) -> int:
    """Microseconds since the epoch. Naive datetimes are refused: their zone is unknowable."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"datetime {value!r} has no timezone; store timezone-aware datetimes")
    return (value - EPOCH) // _MICROSECOND


def to_us_or_none(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def from_us(value: int) -> datetime:
    return EPOCH + timedelta(microseconds=value)


def from_us_or_none(value: int | None) -> datetime | None:
    return None if value is None else from_us(value)


@lru_cache(maxsize=256)
def rules_to_json(rules: Rules) -> str:
    return dumps(rules.model_dump(mode="json"))


@lru_cache(maxsize=256)
def _rules_from_json(text: str) -> Rules:
    return Rules.model_validate_json(text)


def rules_from_json(text: str, *, game_id: int | None = None) -> Rules:
    try:
        return _rules_from_json(text)
    except ValueError as error:
        raise StoredGameError(
            game_id=game_id, format=None, reason=f"stored rules are not valid: {error}"
        ) from error


def game_to_json(game: Game) -> str:
    return dumps(game.to_dict())


def game_from_json(text: str, *, game_id: int | None) -> Game:
    """Load engine state; any failure becomes a StoredGameError naming the game and format."""
    try:
        data = loads(text)
    except ValueError as error:
        raise StoredGameError(
            game_id=game_id, format=None, reason=f"engine state is not valid JSON: {error}"
        ) from error
    version = data.get("format") if isinstance(data, dict) else None
    try:
        return Game.from_dict(data)
    except Exception as error:
        raise StoredGameError(game_id=game_id, format=version, reason=str(error)) from error


def lobby_to_json(lobby: Lobby) -> str:
    return dumps(
        {
            "opener_id": lobby.opener_id,
            "message_id": lobby.message_id,
            "seats": [
                {
                    "player_id": seat.player_id,
                    "user_id": seat.user_id,
                    "name": seat.name,
                    "is_computer": seat.is_computer,
                    "level": seat.level,
                }
                for seat in lobby.seats
            ],
        }
    )


def lobby_from_json(text: str) -> Lobby:
    data: dict[str, Any] = loads(text)
    return Lobby(
        opener_id=int(data["opener_id"]),
        message_id=data.get("message_id"),
        seats=[
            Seat(
                player_id=str(seat["player_id"]),
                user_id=seat.get("user_id"),
                name=str(seat["name"]),
                is_computer=bool(seat.get("is_computer", False)),
                level=seat.get("level"),
            )
            for seat in data.get("seats", [])
        ],
    )


def int_map_to_json(values: dict[str, int]) -> str:
    return dumps({str(key): int(value) for key, value in values.items()})


def int_map_from_json(text: str) -> dict[str, int]:
    data: dict[str, Any] = loads(text)
    return {str(key): int(value) for key, value in data.items()}
