"""What an operator reads when `python -m bot` cannot start, or loses the network while it
runs (docs/operating.md, "Starting and stopping" and "Outages"): one line naming what failed
and what to check, an exit code, no traceback; a damaged or unusable database is refused
before anything writes to it."""

from __future__ import annotations

import asyncio
import random
import socket
import sqlite3
from pathlib import Path

from storage import LATEST_VERSION, Database
from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import lobby_text, start_bot, stop_bot, until
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram
from tests.storage.conftest import read_only

OPERATOR = 4242


def closed_port() -> int:
    """A loopback port nothing listens on: connecting is refused, as with no network."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def run_to_exit(base_url: str, workdir: Path, **settings: str) -> tuple[int, str]:
    """Start the bot, wait for it to exit; its exit code and everything it printed."""
    bot = await start_bot(base_url, workdir, **settings)
    try:
        async with asyncio.timeout(60):
            await bot.wait()
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
    assert bot.returncode is not None
    return bot.returncode, (workdir / "bot.log").read_text()


def contents(path: Path) -> bytes:
    return path.read_bytes()


def database(workdir: Path) -> Path:
    """Where `start_bot` puts the bot's database."""
    return workdir / "data" / "durak.sqlite3"


async def write_database(path: Path, rows: int = 2000) -> None:
    """A database as the bot leaves it (migrated, checkpointed), with some pages of data."""
    path.parent.mkdir(parents=True, exist_ok=True)
    async with Database.connect(f"sqlite:///{path}"):
        pass
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE filler (id INTEGER PRIMARY KEY, text TEXT)")
        connection.executemany(
            "INSERT INTO filler (text) VALUES (?)", [(f"row {n} " * 20,) for n in range(rows)]
        )
    connection.close()


async def test_without_network_start_up_says_so_in_one_line_and_exits_3(tmp_path: Path) -> None:
    port = closed_port()
    code, log = await run_to_exit(f"http://127.0.0.1:{port}/bot", tmp_path)
    assert code == 3, log
    [line] = log.splitlines()  # no retry loop's error, no traceback
    assert line.startswith(f"durak-bot: cannot reach the Bot API at 127.0.0.1:{port} ("), log
    assert line.endswith("check the network, BOT_API_BASE_URL and BOT_TOKEN"), log
    assert TOKEN.split(":")[1] not in log


async def test_a_postgresql_server_that_does_not_answer_is_one_line_and_exit_3(
    tmp_path: Path,
) -> None:
    """The database is opened before Telegram is asked anything: a PostgreSQL that is not
    running says so, naming the server and never the password; starting later may work."""
    port = closed_port()
    code, log = await run_to_exit(
        f"http://127.0.0.1:{closed_port()}/bot",
        tmp_path,
        DATABASE_URL=f"postgresql://bot:hunter2@127.0.0.1:{port}/durak",
    )
    assert code == 3, log
    [line] = log.splitlines()
    assert line.startswith(
        f"durak-bot: cannot reach the database server of postgresql://bot:***@127.0.0.1:{port}/"
    ), log
    assert "check that PostgreSQL runs there" in line, log
    assert "hunter2" not in log


async def test_at_log_level_debug_the_traceback_comes_with_the_line(tmp_path: Path) -> None:
    code, log = await run_to_exit(
        f"http://127.0.0.1:{closed_port()}/bot", tmp_path, LOG_LEVEL="DEBUG"
    )
    assert code == 3, log
    assert "Traceback" in log and "ConnectError" in log
    assert log.splitlines()[-1].startswith("durak-bot: cannot reach the Bot API at"), log
    assert TOKEN.split(":")[1] not in log


async def test_a_damaged_database_is_refused_before_anything_writes_to_it(
    tmp_path: Path,
) -> None:
    path = database(tmp_path)
    await write_database(path)
    data = bytearray(path.read_bytes())
    pages = len(data) // 4096
    assert pages > 20
    rng = random.Random(3)
    for page in range(pages // 2, pages // 2 + 3):  # garbage pages in the middle
        data[page * 4096 : (page + 1) * 4096] = rng.randbytes(4096)
    path.write_bytes(data)
    # (the Bot API is not reachable either: the database is checked first)
    code, log = await run_to_exit(f"http://127.0.0.1:{closed_port()}/bot", tmp_path)
    assert code == 2, log
    [line] = log.splitlines()
    assert line.startswith(f"durak-bot: database file {path} is damaged ("), log
    assert line.endswith("): restore it from a backup"), log
    assert path.read_bytes() == data  # nothing written: no migration, no journal switch


async def test_a_file_that_is_no_database_is_named_and_left_alone(tmp_path: Path) -> None:
    path = database(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("name,score\nAlice,3\n" * 100)
    before = path.read_bytes()
    code, log = await run_to_exit(f"http://127.0.0.1:{closed_port()}/bot", tmp_path)
    assert code == 2, log
    assert log.splitlines() == [
        f"durak-bot: database file {path} is not an SQLite database: check DATABASE_URL, "
        f"or restore it from a backup"
    ], log
    assert path.read_bytes() == before


async def test_a_database_of_a_newer_release_is_named_and_left_alone(tmp_path: Path) -> None:
    path = database(tmp_path)
    await write_database(path, rows=0)
    with sqlite3.connect(path) as connection:
        connection.execute(
            "INSERT INTO schema_version (version, name, applied_us) VALUES (?, 'future', 0)",
            (LATEST_VERSION + 1,),
        )
    connection.close()
    before = path.read_bytes()
    code, log = await run_to_exit(f"http://127.0.0.1:{closed_port()}/bot", tmp_path)
    assert code == 2, log
    [line] = log.splitlines()
    assert line.startswith(f"durak-bot: database sqlite:///{path} has schema version "), log
    assert "written by a newer release" in line
    assert path.read_bytes() == before


async def test_a_read_only_database_is_named_with_its_cause(tmp_path: Path) -> None:
    """A file the bot may not write opens and reads without complaint; the bot must refuse
    it at start-up, not at the first move it cannot save."""
    path = database(tmp_path)
    await write_database(path, rows=0)
    before = contents(path)
    with read_only(path):
        code, log = await run_to_exit(f"http://127.0.0.1:{closed_port()}/bot", tmp_path)
    assert code == 2, log
    assert log.splitlines() == [
        f"durak-bot: database file {path} is read-only for the bot: let it write the "
        f"file and its folder (check their owner and permissions)"
    ], log
    assert contents(path) == before


async def test_losing_the_network_while_running_is_one_warning_and_one_line_when_back(
    tmp_path: Path,
) -> None:
    """The bot polls; the network goes (every connection dropped) for three polls and comes
    back. The log: one warning, one line per failed poll after it with the wait, one line
    when a poll is answered again; no traceback, no update error, no operator report."""
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")
    club = fake.group(-7101, "Club", admins={alice})
    pub = fake.group(-7102, "Pub", admins={alice})
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path, OPERATOR_CHAT_ID=str(OPERATOR))
        try:
            fake.queue(alice.send(club, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, club))  # it polls
            server.cut()  # the next poll is lost, and the two after it
            await until(server, bot, lambda: server.dropped >= 2)
            server.restore()
            fake.queue(alice.send(pub, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, pub))
        finally:
            log = await stop_bot(bot, tmp_path)
    lines = log.splitlines()
    warnings = [line for line in lines if " WARNING " in line]
    assert len(warnings) == 1, log
    assert "lost the connection to the Bot API (127.0.0.1:" in warnings[0]
    assert warnings[0].endswith("polling again in 1.0 s"), log
    retries = [line for line in lines if "still no connection to the Bot API" in line]
    assert len(retries) >= 1, log
    assert retries[0].endswith("polling again in 1.5 s"), log
    back = [line for line in lines if "the connection to the Bot API" in line and "back" in line]
    assert len(back) == 1, log
    assert f"and {1 + len(retries)} failed polls" in back[0], log
    assert "Traceback" not in log and "error while handling an update" not in log, log
    assert not [c for c in fake.calls if c.params.get("chat_id") == OPERATOR]
