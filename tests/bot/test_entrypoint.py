"""`python -m bot`, the README's start command, as a real process: settings from the
environment, long polling against the fake Bot API on a loopback socket, a clean stop on
SIGTERM, and a restart that carries on with the stored lobby."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sys
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

import bot.__main__ as bot_main
from engine import COMPILED, Card, Game
from storage import Database, NotFound
from tests.bot.conftest import TOKEN
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import Call, FakeGroup, FakeMessage, FakeTelegram, FakeUser

ROOT = Path(__file__).resolve().parents[2]

# Each started bot's log file, so that a wait that runs out can show what the bot was doing.
LOGS: weakref.WeakKeyDictionary[asyncio.subprocess.Process, Path] = weakref.WeakKeyDictionary()


async def start_bot(
    server: LoopbackBotAPI | str, workdir: Path, **settings: str
) -> asyncio.subprocess.Process:
    """`python -m bot` in `workdir` against `server` (or a BOT_API_BASE_URL), its database in
    `workdir`/data, with `settings` on top; stdout and stderr go to `workdir`/bot.log."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(
            ("BOT_", "DATABASE_", "TURN_", "LOBBY_", "LOG_", "DEFAULT_", "WEB_", "WEBHOOK_")
        )
        and "proxy" not in key.lower()  # 127.0.0.1 is reached directly, never through a proxy
    }
    env.update(
        BOT_TOKEN=TOKEN,
        BOT_API_BASE_URL=server if isinstance(server, str) else server.base_url,
        DATABASE_URL=f"sqlite:///{workdir / 'data' / 'durak.sqlite3'}",
        LOG_LEVEL="INFO",
        NO_PROXY="127.0.0.1,localhost",
        # The sources last: a compiled engine on PYTHONPATH (make test) must stay first.
        PYTHONPATH=os.pathsep.join(
            [*filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)), str(ROOT)]
        ),
    )
    # These tests are about processes (start, stop, a kill), at machine pace against a
    # loopback that does not enforce Telegram's limits: the bot's own budgets are raised so
    # that a game takes seconds, not the minutes Telegram's limits would make it.
    env.update(PRIVATE_SENDS="1000", GROUP_SENDS="10000", BOT_SENDS="10000")
    env.update(settings)
    log = (workdir / "bot.log").open("ab")  # a file, so the log survives a hung process
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            cwd=workdir,  # no .env of a developer's checkout is read
            env=env,
            stdout=log,
            stderr=log,
        )
    finally:
        log.close()
    LOGS[process] = workdir / "bot.log"
    return process


async def until(
    server: LoopbackBotAPI, process: asyncio.subprocess.Process, condition: Callable[[], bool]
) -> None:
    """Wait for `condition` (checked after every Bot API call), failing at once if the bot
    exits instead."""
    waiting = asyncio.ensure_future(server.wait_for(condition))
    exited = asyncio.ensure_future(process.wait())
    await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
    if not waiting.done():
        waiting.cancel()
        raise AssertionError(f"the bot exited with {process.returncode} before it got there")
    exited.cancel()
    try:
        waiting.result()
    except TimeoutError:
        path = LOGS.get(process)
        tail = path.read_text().splitlines()[-60:] if path is not None else []
        raise AssertionError(
            "the bot never got there; its log ends:\n"
            + "\n".join(tail)
            + "\nits last Bot API calls:\n"
            + "\n".join(_summary(call) for call in server.fake.calls[-25:])
            + f"\nupdates not yet confirmed: {len(server.fake.webhook_updates())}"
        ) from None


def _summary(call: Call) -> str:
    """One line of a Bot API call, for a failed test's message."""
    params = call.params
    said = params.get("text") or params.get("caption") or ""
    return (
        f"{call.method} chat={params.get('chat_id')} message={params.get('message_id')} "
        f"ok={call.ok} {str(said)[:80]!r}"
    )


async def stop_bot(process: asyncio.subprocess.Process, workdir: Path) -> str:
    """SIGTERM, as `docker stop` sends; the bot must shut down cleanly. Returns its log."""
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    try:
        async with asyncio.timeout(60):
            await process.wait()
    finally:
        if process.returncode is None:  # hung: never leave it running after the test
            process.kill()
            await process.wait()
    log = (workdir / "bot.log").read_text()
    assert process.returncode == 0, log
    return log


def lobby_text(fake: FakeTelegram, group: FakeGroup) -> str:
    messages = [m for m in fake.messages(group.id) if "Join" in m.button_texts]
    return messages[-1].text if messages else ""


async def test_python_m_bot_plays_through_a_loopback_bot_api_and_resumes(tmp_path: Path) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")
    bob = fake.user(2, "Bob")
    group = fake.group(-7001, "Club", admins={alice})
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path)
        try:
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
        finally:
            log = await stop_bot(bot, tmp_path)
        assert TOKEN.split(":")[1] not in log  # the token never reaches a log line
        # the start-up line names the bot, the mode, the database and the engine build, the
        # same as this test run's (make test runs each)
        database = f"sqlite:///{tmp_path / 'data' / 'durak.sqlite3'}"
        engine = "compiled (mypyc)" if COMPILED else "pure Python"
        started = f"@{fake.bot_username} is up: long polling, database {database}, engine: {engine}"
        assert started in log, log
        assert (tmp_path / "data" / "durak.sqlite3").exists()  # the default data directory

        # a new process finds the open lobby in the database and takes Bob's join
        bot = await start_bot(server, tmp_path)
        try:
            fake.queue(bob.start_private())  # so that the bot may write to him
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.queue(bob.tap(lobby, "Join"))
            await until(server, bot, lambda: "Bob" in lobby_text(fake, group))
        finally:
            log = await stop_bot(bot, tmp_path)
        assert "Traceback" not in log


async def test_a_second_stop_signal_does_not_break_off_the_clean_stop(tmp_path: Path) -> None:
    """`make run` under a service manager: the bot gets SIGTERM twice (from the manager and
    from make). The first stop must still run to its end."""
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")
    group = fake.group(-7003, "Club", admins={alice})
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path)
        try:
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            bot.send_signal(signal.SIGTERM)
            bot.send_signal(signal.SIGTERM)
        finally:
            log = await stop_bot(bot, tmp_path)
        assert "pending edits published, the lead handed over, database closed" in log, log
        assert "never awaited" not in log and "Traceback" not in log, log


def test_where_a_loop_takes_no_signal_handlers_the_bot_still_starts() -> None:
    """Windows' event loops have no `add_signal_handler`: the bot must still start (Ctrl-C
    stops it there, as a KeyboardInterrupt)."""

    class NoSignals(asyncio.SelectorEventLoop):
        def add_signal_handler(self, *args: object) -> None:
            raise NotImplementedError

    loop = NoSignals()
    try:
        assert bot_main._stop_on_signals(loop, lambda sig: None) is False
    finally:
        loop.close()


async def test_a_token_telegram_rejects_stops_the_bot_with_one_line_and_never_shows_it(
    tmp_path: Path,
) -> None:
    """python-telegram-bot's InvalidToken names the token in its message and traceback: the
    log and stderr must not, and start-up ends with exit code 2 like any bad setting."""
    fake = FakeTelegram(token=TOKEN)
    fake.fail_next("getMe", 401, description="Unauthorized", times=10)
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path)
        async with asyncio.timeout(60):
            await bot.wait()
    log = (tmp_path / "bot.log").read_text()
    assert bot.returncode == 2, log
    assert TOKEN.split(":")[1] not in log
    [line] = log.splitlines()  # no traceback of PTB's first
    # the base URL is no longer Telegram's: it may be the cause, too
    assert line.startswith("durak-bot: setting BOT_TOKEN was rejected by Telegram"), log


def hand_message(fake: FakeTelegram, user: FakeUser) -> FakeMessage | None:
    """The user's current hand: the bot's latest private message with playing buttons."""
    for message in reversed(fake.messages(user.id)):
        if any(b.callback_data for row in message.buttons for b in row):
            return message
    return None


def cards_shown(message: FakeMessage) -> set[Card]:
    """The cards of a hand keyboard (playable "10♥" and unplayable "·10♥·" alike)."""
    cards = set()
    for text in message.button_texts:
        with contextlib.suppress(ValueError):
            cards.add(Card.parse(text.strip("·")))
    return cards


async def stored_game(path: Path, chat_id: int) -> Game:
    """The chat's running game as the bot committed it (read beside the running bot: WAL)."""
    async with Database.connect(f"sqlite:///{path}") as db, db.transaction(readonly=True) as tx:
        record = await tx.games.active_for_chat(chat_id=chat_id)
    assert record.game is not None
    return record.game


STALE = "This button is out of date"  # locales/en.ftl, error-stale


async def tap_hand(
    server: LoopbackBotAPI,
    bot: asyncio.subprocess.Process,
    fake: FakeTelegram,
    user: FakeUser,
    rng: random.Random,
) -> None:
    """The user taps a random button of their hand and waits for the answer; if it says the
    hand is out of date (after a crash the next leader holds back the private chats of a
    game that moved since its last note of them, one window), for the hand to be shown
    anew, as a person would before tapping again."""
    message = hand_message(fake, user)
    if message is None:
        return
    buttons = [b.callback_data for row in message.buttons for b in row if b.callback_data]
    shown = (message.message_id, message.edits)  # (a live object: edits change it)
    update = user.tap(message, rng.choice(buttons))
    fake.queue(update)
    await until(server, bot, lambda: fake.answer_for(update) is not None)
    answer = fake.answer_for(update)
    if answer is not None and (answer.text or "").startswith(STALE):

        def anew() -> bool:
            current = hand_message(fake, user)
            return current is None or (current.message_id, current.edits) != shown

        await until(server, bot, anew)


def game_over(fake: FakeTelegram, group: FakeGroup) -> bool:
    return any("Game over" in m.text for m in fake.messages(group.id))


async def test_python_m_bot_plays_a_whole_game_through_a_crash(tmp_path: Path) -> None:
    """A 2-player game from /newgame to the result through the real process, SIGKILLed after
    some moves: the restarted process has every acknowledged move, shows every player exactly
    the committed hand, and plays on to the end, where the result is stored."""
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7002, "Club", admins={alice})
    players = [alice, bob]
    database = tmp_path / "data" / "durak.sqlite3"
    rng = random.Random(5)

    async def tap_round(bot: asyncio.subprocess.Process) -> None:
        """Each player taps a random button of their hand and waits for the answer."""
        for user in players:
            await tap_hand(server, bot, fake, user, rng)

    def hands_shown() -> dict[str, set[Card]]:
        shown = {}
        for user in players:
            message = hand_message(fake, user)
            if message is not None and "Back" not in message.button_texts:  # not mid-choice
                shown[str(user.id)] = cards_shown(message)
        return shown

    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path)
        try:
            for user in players:
                fake.queue(user.start_private())
            # Their /start is handled first: an opener the bot may not write to yet gets
            # no seat (the lobby offers the link), and Start would find one player.
            await until(server, bot, lambda: all(fake.messages(u.id) for u in players))
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.queue(bob.tap(lobby, "Join"))
            await until(server, bot, lambda: "Bob" in lobby_text(fake, group))
            fake.queue(alice.tap(lobby, "Start"))
            await until(server, bot, lambda: all(hand_message(fake, u) for u in players))
            for _ in range(12):
                await tap_round(bot)
            # A tap is answered once its move is committed; the hands are edited after that.
            committed = await stored_game(database, group.id)
            while any(
                set(committed.hand(player)) != cards for player, cards in hands_shown().items()
            ):
                calls = len(fake.calls)
                await until(server, bot, lambda: len(fake.calls) > calls)  # noqa: B023
        finally:
            bot.kill()  # no clean shutdown: whatever was acknowledged must be on disk
            await bot.wait()

        game = await stored_game(database, group.id)
        assert game.to_dict() == committed.to_dict()

        bot = await start_bot(server, tmp_path)
        try:
            await until(
                server,
                bot,
                lambda: all(
                    (message := hand_message(fake, u)) is not None
                    and cards_shown(message) == set(game.hand(str(u.id)))
                    for u in players
                ),
            )
            for _ in range(1000):
                if not any(hand_message(fake, u) for u in players):  # no buttons: it is over
                    break
                await tap_round(bot)
            # The result follows the answer to the last tap and the last hand edits.
            await until(server, bot, lambda: game_over(fake, group))
        finally:
            log = await stop_bot(bot, tmp_path)
        assert "Traceback" not in log

    async with Database.connect(f"sqlite:///{database}") as db, db.transaction(readonly=True) as tx:
        assert await tx.results.count(chat_id=group.id) == 1
        with pytest.raises(NotFound):
            await tx.games.active_for_chat(chat_id=group.id)


async def test_a_stop_signal_before_the_start_ends_it_at_once_with_exit_code_0() -> None:
    """A service manager's SIGTERM while the bot still imports and reads its settings (a
    second or so, before the event loop takes signals): exit code 0, as a stop during the
    start, not killed by the signal (143 in Docker; a chaos run's supervisor saw -15). The
    signal comes from main's first step after taking signals (`token_given`)."""
    script = (
        "import os, signal, sys, time\n"
        "import bot.__main__ as entry, bot.sandbox.run as sandbox\n"
        "def term():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(30)\n"
        "sandbox.token_given = term\n"
        "entry.main([entry.SANDBOX_FLAG])\n"
        "sys.exit(5)\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, cwd=ROOT, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(20):
        _, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
