"""Fixtures for the storage tests: a real SQLite file in a temporary directory, or a database
of its own on a real PostgreSQL server that the tests start (`tests.postgres`).

A test that takes ``db`` or ``db_url`` runs on each backend: SQLite through aiosqlite's
thread, SQLite inline on the loop, and PostgreSQL (``postgresql`` in its id, marked
``postgres``). A test about SQLite's files or its single connection (crashes of a file, its
checks, its stored format, its one-statement save batches) is marked ``sqlite_only`` and
runs on the two SQLite ones. Without PostgreSQL's programs the PostgreSQL runs are skipped,
with the reason (``pytest -rs``) and a line in the summary saying how to get them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engine import Game, Rules
from storage import Database, FinishedGame, GameRecord, Lobby, Participant, Seat
from tests import postgres

T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


SQLITE_ONLY = pytest.mark.sqlite_only


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``backend``: the two SQLite executors, and PostgreSQL unless the test is SQLite-only."""
    if "backend" not in metafunc.fixturenames:
        return
    backends: list[object] = ["aiosqlite", "inline"]
    if metafunc.definition.get_closest_marker("sqlite_only") is None:
        backends.append(pytest.param("postgresql", marks=pytest.mark.postgres))
    metafunc.parametrize("backend", backends)


@pytest.fixture
def executor(backend: str) -> str:
    """For a test of SQLite itself (marked ``sqlite_only``): the SQLite executor it runs on,
    aiosqlite's thread or inline on the loop."""
    assert backend != "postgresql", "a test of an SQLite executor is marked sqlite_only"
    return backend


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "durak.sqlite3"


@pytest.fixture
async def db_url(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[str]:
    """Every test using it runs on each backend: SQLite through aiosqlite's thread, SQLite
    inline on the loop, a database of its own on PostgreSQL (already migrated)."""
    if backend != "postgresql":
        db_path = request.getfixturevalue("db_path")
        yield f"sqlite:///{db_path}?executor={backend}"
        return
    server: postgres.PostgresServer = request.getfixturevalue("pg_server")
    async with postgres.fresh_database(server) as url:
        yield url


@pytest.fixture
async def empty_db_url(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[str]:
    """As `db_url`, never migrated (PostgreSQL: an empty database; SQLite: no file yet)."""
    if backend != "postgresql":
        db_path = request.getfixturevalue("db_path")
        yield f"sqlite:///{db_path}?executor={backend}"
        return
    server: postgres.PostgresServer = request.getfixturevalue("pg_server")
    async with postgres.fresh_database(server, migrated=False) as url:
        yield url


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    async with Database.connect(db_url) as database:
        yield database


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` a file this process may not write, for the block: chmod 444, or, as
    root (whom permissions do not stop), the immutable attribute (skips where chattr fails)."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o644)
        return
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(
            "running as root, whom file permissions do not stop, and chattr +i (which stops "
            f"root too) failed here: {made.stderr.decode().strip()}"
        )
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def seats(*user_ids: int) -> list[Seat]:
    return [Seat(player_id=str(u), user_id=u, name=f"user {u}") for u in user_ids]


def lobby_record(chat_id: int = -100, *user_ids: int) -> GameRecord:
    ids = user_ids or (1, 2)
    return GameRecord(
        chat_id=chat_id,
        status="lobby",
        language="ru",
        rules=Rules(),
        lobby=Lobby(opener_id=ids[0], seats=seats(*ids), message_id=77),
        created_at=T0,
    )


def running_record(chat_id: int = -100, *user_ids: int, seed: int = 1) -> GameRecord:
    ids = user_ids or (1, 2, 3)
    record = lobby_record(chat_id, *ids)
    record.status = "running"
    record.game = Game.new([str(u) for u in ids], rules=record.rules, seed=seed)
    record.started_at = T0 + timedelta(seconds=30)
    record.deadline = T0 + timedelta(seconds=90)
    record.table_message_id = 501
    record.hand_messages = {str(u): 600 + u for u in ids}
    return record


def result(
    chat_id: int,
    players: Sequence[str],
    durak: str | None,
    *,
    game_id: int | None = None,
    practice: bool = False,
    ended: datetime = T0,
    names: dict[str, str] | None = None,
) -> FinishedGame:
    """A finished game of ``players`` (seat order); ``durak`` None means a draw."""
    participants = []
    winners = [p for p in players if p != durak]
    for seat, player in enumerate(players):
        computer = player.startswith("cpu-")
        place = len(players) if player == durak else winners.index(player) + 1
        participants.append(
            Participant(
                seat=seat,
                player_id=player,
                user_id=None if computer else int(player),
                name=(names or {}).get(player, f"name {player}"),
                is_computer=computer,
                result="durak" if player == durak else ("draw" if durak is None else "won"),
                place=place,
            )
        )
    return FinishedGame(
        chat_id=chat_id,
        game_id=game_id,
        rules=Rules(),
        started_at=ended - timedelta(minutes=5),
        ended_at=ended,
        bouts=12,
        draw=durak is None,
        durak=durak,
        participants=participants,
        practice=practice,
    )


@contextlib.contextmanager
def small_file_system(folder: Path, size_kib: int = 2048) -> Iterator[Path]:
    """A tmpfs of ``size_kib`` mounted on ``folder`` (made) for the block, to fill up as a
    full disk would be: skips where mounting is not allowed (not root, a container without
    the right)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """Write a file in ``folder`` until its file system is full; the file (delete it to
    free the space again)."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out, contextlib.suppress(OSError):  # ENOSPC
        while out.write(b"\0" * 4096):
            pass
    return filler
