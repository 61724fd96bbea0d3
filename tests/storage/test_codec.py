"""Column conversions, checked with generated values."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game, Rules
from storage import DEPARTURES, Database, GameMeta, GameRecord, Lobby, LogEntry, Seat
from storage.backend import split_statements
from storage.codec import (
    dumps,
    from_us,
    game_from_json,
    game_to_json,
    int_map_from_json,
    int_map_to_json,
    loads,
    lobby_from_json,
    lobby_to_json,
    to_us,
)
from storage.meta import LOG_KINDS

zones = st.sampled_from(
    [UTC, timezone(timedelta(hours=3)), timezone(timedelta(hours=-9, minutes=-30))]
)
aware = st.datetimes(
    min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1), timezones=zones
)
ids = st.integers(min_value=-(2**62), max_value=2**62)
texts = st.text(max_size=40)
seats = st.builds(
    Seat,
    player_id=st.text(min_size=1, max_size=20),
    user_id=st.none() | ids,
    name=texts,
    is_computer=st.booleans(),
    level=st.none() | st.sampled_from(["easy", "normal", "hard"]),
)
lobbies = st.builds(
    Lobby,
    opener_id=ids,
    seats=st.lists(seats, max_size=6),
    message_id=st.none() | ids,
)
int_maps = st.dictionaries(st.text(max_size=20), st.integers(min_value=0, max_value=2**53))


@given(aware)
def test_datetimes_round_trip_exactly_as_utc(value: datetime) -> None:
    restored = from_us(to_us(value))
    assert restored == value
    assert restored.tzinfo is UTC


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        to_us(datetime(2025, 1, 1))


@given(lobbies)
def test_lobby_round_trip(lobby: Lobby) -> None:
    assert lobby_from_json(lobby_to_json(lobby)) == lobby


@given(int_maps)
def test_int_map_round_trip(values: dict[str, int]) -> None:
    assert int_map_from_json(int_map_to_json(values)) == values


def test_split_statements() -> None:
    script = (
        "-- a comment; with a semicolon\n"
        "CREATE TABLE a (x TEXT DEFAULT ';');\n"
        "\n"
        "INSERT INTO a VALUES ('1;\n2');  -- trailing\n"
        "-- the end\n"
    )
    statements = split_statements(script)
    assert len(statements) == 2
    assert statements[1].startswith("INSERT")
    with pytest.raises(ValueError, match="incomplete"):
        split_statements("SELECT 1; SELECT")


records = st.builds(
    GameRecord,
    chat_id=ids,
    status=st.sampled_from(["lobby", "running"]),
    language=st.sampled_from(["ru", "en", "uk"]),
    rules=st.sampled_from([Rules.preset(n) for n in ("classic", "perevodnoy", "online", "short")]),
    lobby=lobbies,
    table_message_id=st.none() | ids,
    hand_messages=int_maps,
    deadline=st.none() | aware,
    timeouts=int_maps,
    created_at=aware,
    started_at=st.none() | aware,
    meta=st.builds(
        GameMeta,
        title=texts,
        opener=texts,
        turn_timeout=st.none() | st.integers(0, 600),
        throw_in_window=st.none() | st.integers(0, 60),
        langs=st.dictionaries(st.text(max_size=5), st.sampled_from(["en", "de", "ru"]), max_size=3),
        log=st.lists(
            st.builds(
                LogEntry,
                kind=st.sampled_from(sorted(LOG_KINDS)),
                player=st.none() | st.text(max_size=5),
                target=st.none() | st.text(max_size=5),
                count=st.none() | st.integers(0, 36),
            ),
            max_size=6,
        ),
        left=st.dictionaries(st.text(max_size=5), st.sampled_from(DEPARTURES), max_size=3),
        blocked=st.lists(st.text(max_size=5), max_size=3),
        invited=st.lists(ids, max_size=3),
        asked=st.dictionaries(st.text(max_size=5), texts, max_size=3),
        practice=st.booleans(),
        previous_durak=st.none() | st.text(max_size=5),
        again_of=st.none() | ids,
        warned=st.booleans(),
        warnings=st.dictionaries(st.text(max_size=5), ids, max_size=2),
        questions=st.lists(ids, max_size=2),
        grace_move=st.none() | st.integers(0, 500),
        extra=st.dictionaries(
            st.text(max_size=9).map(lambda k: "x" + k),  # a key of a newer release
            st.none() | st.integers() | texts,
            max_size=2,
        ),
    ).flatmap(  # graces count the grace_move's: none without one
        lambda meta: st.builds(
            dataclasses.replace,
            st.just(meta),
            graces=st.just(0) if meta.grace_move is None else st.integers(0, 3),
        )
    ),
)


@settings(max_examples=40, deadline=None)
@given(records)
def test_game_record_round_trip_through_the_database(record: GameRecord) -> None:
    async def round_trip() -> tuple[GameRecord, GameRecord]:
        async with Database.connect("sqlite:///:memory:") as db:
            async with db.transaction() as tx:
                created = await tx.games.create(record=record)
            assert created.id is not None
            async with db.transaction() as tx:
                return created, await tx.games.get(game_id=created.id)

    created, loaded = asyncio.run(round_trip())
    assert loaded == created


@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | texts,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
        max_leaves=12,
    )
)
def test_json_text_round_trips_exactly_integers_of_any_size_included(value: object) -> None:
    assert loads(dumps(value)) == value
    assert dumps(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def test_a_game_with_a_seed_beyond_64_bits_loads_with_the_same_future() -> None:
    game = Game.new(["a", "b"], seed=2**70 + 1)
    loaded = game_from_json(game_to_json(game), game_id=1)
    assert loaded.seed == 2**70 + 1
    assert loaded.to_dict() == game.to_dict()
