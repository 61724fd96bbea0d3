"""What an operator watches (docs/operating.md): `/healthz`, `/readyz` and `/metrics` of a real
`python -m bot` process over a loopback socket, the counters moving with a played game, the
JSON log lines with their ids, and readiness going away while the network is cut and when the
bot stops; the health server alone for the database's checks."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import signal
import socket
import sys
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs

import httpx
import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)

from bot.ops import logs, metrics
from bot.ops.health import Health, HealthServer
from bot.ops.logs import JsonLines
from bot.telegram.polling import PollingWatch
from storage import Database
from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import ROOT, hand_message, lobby_text, start_bot, stop_bot, until
from tests.bot.test_startup import closed_port, run_to_exit
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
READY_WAIT = 60.0


async def get(port: int, path: str) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as client:
        return await client.get(f"http://127.0.0.1:{port}{path}")


async def until_ready(
    port: int, process: asyncio.subprocess.Process, status: int = 200
) -> httpx.Response:
    """Ask `/readyz` as a readiness probe does, until it answers `status` (the bot may not
    even listen yet at first); fail if the bot exits first, or after `READY_WAIT` s."""
    async with asyncio.timeout(READY_WAIT):
        while True:
            assert process.returncode is None, "the bot exited"
            try:
                response = await get(port, "/readyz")
            except httpx.TransportError:
                response = None
            if response is not None and response.status_code == status:
                return response
            await asyncio.sleep(0.05)


def samples(text: str) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return out


def value(metrics: Samples, name: str, **labels: str) -> float:
    return metrics.get((name, tuple(sorted(labels.items()))), 0.0)


async def metrics_of(port: int) -> Samples:
    response = await get(port, "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    return samples(response.text)


async def probe(port: int, path: str) -> tuple[int, str]:
    """`python -m bot.ops.probe PATH`, the image's HEALTHCHECK: exit code and stderr."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(HEALTH_PORT=str(port), PYTHONPATH=str(ROOT))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.ops.probe", path, env=env, stderr=asyncio.subprocess.PIPE
    )
    _, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, err.decode()


def is_last_poll(request: httpx.Request) -> bool:
    """The `getUpdates` python-telegram-bot sends when polling stops (no long poll: it only
    confirms the updates fetched)."""
    if not request.url.path.endswith("/getUpdates"):
        return False
    return parse_qs(request.content.decode()).get("timeout") == ["0"]


def log_lines(workdir: Path) -> list[dict[str, object]]:
    """Every line the bot logged, each a JSON object (json.loads fails the test if not)."""
    return [json.loads(line) for line in (workdir / "bot.log").read_text().splitlines()]


async def test_a_running_bot_is_ready_counts_a_played_game_and_is_not_ready_when_stopping(
    tmp_path: Path,
) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7101, "Club", admins={alice})
    port = closed_port()
    rng = random.Random(3)
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path, HEALTH_PORT=str(port), LOG_FORMAT="json")
        try:
            ready = await until_ready(port, bot)
            assert ready.json() == {
                "ready": True,
                "checks": {"state": "up", "database": "ok", "telegram": "ok"},
            }
            assert (await get(port, "/healthz")).status_code == 200
            assert await probe(port, "/readyz") == (0, "")
            before = await metrics_of(port)
            assert value(before, "durak_games_running") == 0

            # A game: the lobby's first send meets a 429, two players, some taps, Bob gives up.
            fake.fail_next("sendMessage", 429, retry_after=1, chat_id=group.id)
            for user in (alice, bob):
                fake.queue(user.start_private())
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            fake.queue(bob.tap(lobby, "Join"))
            await until(server, bot, lambda: "Bob" in lobby_text(fake, group))
            start = alice.tap(lobby, "Start")
            fake.queue(start)
            await until(server, bot, lambda: all(hand_message(fake, u) for u in (alice, bob)))
            taps = 0
            for _ in range(3):
                for user in (alice, bob):
                    message = hand_message(fake, user)
                    assert message is not None
                    buttons = [b.callback_data for row in message.buttons for b in row]
                    tap = user.tap(message, rng.choice([b for b in buttons if b]))
                    fake.queue(tap)
                    await until(server, bot, lambda: fake.answer_for(tap) is not None)  # noqa: B023
                    taps += 1
            playing = await metrics_of(port)
            assert value(playing, "durak_games_running") == 1
            assert value(playing, "durak_lobbies_open") == 0
            fake.queue(bob.send(group, "/leave"))
            await until(server, bot, lambda: "give up" in fake.last_message(group.id).text)
            confirm = fake.last_message(group.id)
            fake.queue(bob.tap(confirm, confirm.buttons[0][0].text))
            await until(
                server,
                bot,
                lambda: "Bob gave up." in fake.message(group.id, confirm.message_id).text,
            )

            after = await metrics_of(port)

            def moved(name: str, **labels: str) -> float:
                return value(after, name, **labels) - value(before, name, **labels)

            assert moved("durak_updates_total", kind="command") == 4  # 2 x /start, /newgame, /leave
            assert moved("durak_updates_total", kind="callback") == 3 + taps  # Join, Start, confirm
            assert moved("durak_update_handling_seconds_count", kind="callback") == 3 + taps
            assert moved("durak_games_started_total", mode="group") == 1
            assert moved("durak_games_finished_total", mode="group", result="durak") == 1
            assert value(after, "durak_games_running") == 0
            assert moved("durak_bot_api_calls_total", method="sendMessage", outcome="429") == 1
            assert moved("durak_retry_after_seconds_count") == 1
            assert moved("durak_retry_after_seconds_sum") == 1.0
            assert moved("durak_bot_api_calls_total", method="sendMessage", outcome="ok") >= 3
            answered = moved(
                "durak_bot_api_calls_total", method="answerCallbackQuery", outcome="ok"
            )
            assert answered == 3 + taps
            assert (
                moved("durak_db_transaction_seconds_count", kind="write") >= 2
            )  # the lobby, the end
            assert moved("durak_db_transaction_seconds_count", kind="save") >= 1  # a move
            assert ("durak_event_loop_lag_seconds_count", ()) in after
            assert ("durak_sends_deferred_total", ()) in after
            assert ("durak_sends_merged_total", ()) in after
            # no label names a chat
            assert not any(str(group.id) in label for _, labels in after for _, label in labels)

            # The network goes: not ready until long polling is answered again.
            server.cut()
            lost = await until_ready(port, bot, 503)
            assert lost.json()["checks"]["telegram"].startswith("lost the Bot API")
            server.restore()
            await until_ready(port, bot)

            # SIGTERM: not ready from then on, while the stop runs (held at its last poll).
            server.hold(is_last_poll)
            bot.send_signal(signal.SIGTERM)
            await until(server, bot, lambda: any(is_last_poll(r) for r in server.held))
            stopping = await get(port, "/readyz")
            assert stopping.status_code == 503
            assert stopping.json()["checks"]["state"] == "stopping"
            assert (await get(port, "/healthz")).status_code == 200  # alive: not to be killed
            code, err = await probe(port, "/readyz")
            assert code == 1 and "503" in err and "stopping" in err
            server.release()
        finally:
            server.release()
            await stop_bot(bot, tmp_path)
        lines = log_lines(tmp_path)  # every line is one JSON object
    text = (tmp_path / "bot.log").read_text()
    assert TOKEN.split(":")[1] not in text
    assert not any(suit in text for suit in "♠♥♦♣")  # never a card, let alone a hand
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    [begun] = [line for line in lines if line.get("event") == "game_started"]
    [ended] = [line for line in lines if line.get("event") == "game_ended"]
    game_id = begun["game_id"]
    assert isinstance(game_id, int)
    assert (
        begun["message"] == f"game {game_id} started: 2 players (0 computers), rules classic, group"
    )
    assert begun["chat_id"] == group.id and begun["update_id"] == start["update_id"]
    assert (begun["players"], begun["preset"], begun["mode"]) == (2, "classic", "group")
    assert ended["game_id"] == game_id and ended["chat_id"] == group.id
    assert ended["result"] == "durak" and isinstance(ended["update_id"], int)


@pytest.mark.parametrize("form", ["text", "json"])
async def test_a_health_port_in_use_stops_start_up_with_one_line_and_exit_2(
    tmp_path: Path, form: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, log = await run_to_exit(
            f"http://127.0.0.1:{closed_port()}/bot",
            tmp_path,
            HEALTH_PORT=str(port),
            LOG_FORMAT=form,
        )
    assert code == 2, log
    [line] = log.splitlines()
    if form == "json":  # every line is JSON, this one too
        parsed = json.loads(line)
        assert parsed["level"] == "CRITICAL"
        line = parsed["message"]
    assert line.startswith(f"durak-bot: the health server cannot listen on 127.0.0.1:{port} ("), log
    assert line.endswith("check HEALTH_HOST and HEALTH_PORT"), log


async def test_without_health_port_nothing_listens_and_the_probe_says_why(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HEALTH_PORT"}
    env["PYTHONPATH"] = str(ROOT)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.ops.probe", env=env, stderr=asyncio.subprocess.PIPE
    )
    _, err = await process.communicate()
    assert process.returncode == 1
    assert "HEALTH_PORT is not set" in err.decode()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_readiness_names_what_is_wrong_database_telegram_or_the_stop(
    tmp_path: Path,
) -> None:
    """The health server alone, on a real database and the polling watch, over loopback."""
    clock = Clock()
    watch = PollingWatch("api.example", clock=clock)
    db: Database | None = await Database.open(f"sqlite:///{tmp_path / 'durak.sqlite3'}")
    health = Health(database=lambda: db, watch=watch, clock=clock)
    server = HealthServer(health, "127.0.0.1", 0)
    await server.start()
    port = server.port

    async def ready() -> tuple[int, dict[str, str]]:
        response = await get(port, "/readyz")
        return response.status_code, response.json()["checks"]

    try:
        assert await ready() == (
            503,
            {"state": "starting", "database": "ok", "telegram": "not polling yet"},
        )
        health.up()
        assert await ready() == (200, {"state": "up", "database": "ok", "telegram": "ok"})

        watch.failed(NetworkError("httpx.ConnectError: refused"))  # a poll failed
        clock.now += 12
        assert await ready() == (
            503,
            {"state": "up", "database": "ok", "telegram": "lost the Bot API 12 s ago"},
        )
        watch.answered()
        assert (await ready())[0] == 200
        clock.now += 61  # polls neither fail nor come back
        assert (await ready())[1]["telegram"] == "no answer to long polling for 61 s"
        watch.answered()
        assert (await ready())[0] == 200

        assert db is not None
        await db.close()  # closed under the bot's feet
        status, checks = await ready()
        assert status == 503 and checks["database"].startswith("failed: ")
        db = None  # the bot after its stop: no database any more
        assert (await ready())[1]["database"] == "not open"

        health.stopping()
        assert (await ready())[1]["state"] == "stopping"
        assert (await get(port, "/healthz")).status_code == 200
        assert (await get(port, "/nothing")).status_code == 404
        async with httpx.AsyncClient(trust_env=False) as client:
            posted = await client.post(f"http://127.0.0.1:{port}/readyz")
            head = await client.head(f"http://127.0.0.1:{port}/healthz")
        assert posted.status_code == 405
        assert head.status_code == 200 and head.content == b""
    finally:
        await server.close()
        if db is not None:
            await db.close()


def test_bot_api_outcomes_are_a_few_fixed_labels() -> None:
    cases: list[tuple[BaseException | None, str]] = [
        (None, "ok"),
        (BadRequest("Bad Request: message is not modified"), "400"),
        (ChatMigrated(42), "other"),
        (Forbidden("Forbidden: bot was blocked by the user"), "403"),
        (RetryAfter(timedelta(seconds=3)), "429"),
        (TimedOut(), "timeout"),
        (NetworkError("httpx.ConnectError"), "network"),
        (InvalidToken(), "other"),
    ]
    for error, outcome in cases:
        assert metrics.outcome_of(error) == outcome, error


def test_a_429_records_the_wait_telegram_asked_for() -> None:
    def count(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    calls = count("durak_bot_api_calls_total", method="sendMessage", outcome="429")
    waits = count("durak_retry_after_seconds_count")
    waited = count("durak_retry_after_seconds_sum")
    metrics.api_call("sendMessage", RetryAfter(timedelta(seconds=7)), 0.01)
    assert count("durak_bot_api_calls_total", method="sendMessage", outcome="429") == calls + 1
    assert count("durak_retry_after_seconds_count") == waits + 1
    assert count("durak_retry_after_seconds_sum") == waited + 7


def test_json_log_lines_carry_the_ids_and_never_the_token() -> None:
    formatter = JsonLines(TOKEN)

    def line(message: str, *args: object, exc: bool = False) -> dict[str, object]:
        record = logging.LogRecord("bot.x", logging.WARNING, __file__, 1, message, args, None)
        if exc:
            try:
                raise ValueError(f"bad token {TOKEN}")
            except ValueError:
                record.exc_info = sys.exc_info()
        parsed: dict[str, object] = json.loads(formatter.format(record))
        return parsed

    plain = line("calling %s", f"https://api.telegram.org/bot{TOKEN}/getMe")
    assert plain["message"] == "calling https://api.telegram.org/bot<token>/getMe"
    assert (plain["level"], plain["logger"]) == ("WARNING", "bot.x")
    assert "chat_id" not in plain and "game_id" not in plain and "update_id" not in plain
    update = logs.UPDATE_ID.set(77)
    try:
        with logs.ids(chat_id=-5, game_id=9):
            inside = line("a move")
        outside = line("after")
    finally:
        logs.UPDATE_ID.reset(update)
    assert (inside["chat_id"], inside["game_id"], inside["update_id"]) == (-5, 9, 77)
    assert "chat_id" not in outside and outside["update_id"] == 77
    failed = line("failed", exc=True)
    assert "ValueError: bad token <token>" in str(failed["exception"])
    assert TOKEN not in json.dumps(failed)
