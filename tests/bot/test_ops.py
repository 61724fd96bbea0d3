"""What an operator watches (docs/operating.md): `/healthz`, `/readyz` and `/metrics` of a real
`python -m bot` process on its one web port (`WEB_PORT`) over a loopback socket, the counters
moving with a played game, the leader naming itself, the JSON log lines with their ids, long
polling's state reported (not a readiness check) while the network is cut, and readiness
going away when the bot stops; the web server alone for the database's checks and the
roles."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import signal
import socket
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
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
from bot.ops import probe as bot_probe
from bot.ops.health import Health
from bot.ops.logs import JsonLines
from bot.telegram.polling import PollingWatch
from bot.web import WebServer
from storage import Database, Lease
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


async def until_readyz(
    port: int,
    process: asyncio.subprocess.Process,
    condition: Callable[[httpx.Response], bool],
) -> httpx.Response:
    """Ask `/readyz` as a readiness probe does, until its answer meets `condition` (the bot
    may not even listen yet at first); fail if the bot exits first, or after `READY_WAIT` s."""
    async with asyncio.timeout(READY_WAIT):
        while True:
            assert process.returncode is None, "the bot exited"
            try:
                response = await get(port, "/readyz")
            except httpx.TransportError:
                response = None
            if response is not None and condition(response):
                return response
            await asyncio.sleep(0.05)


async def until_ready(
    port: int, process: asyncio.subprocess.Process, status: int = 200
) -> httpx.Response:
    """`until_readyz` until `/readyz` answers `status`."""
    return await until_readyz(port, process, lambda response: response.status_code == status)


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


async def probe(port: int, path: str, host: str = "") -> tuple[int, str]:
    """`python -m bot.ops.probe PATH` with `WEB_PORT` (and `WEB_HOST`) as the bot has them,
    the image's HEALTHCHECK: exit code and stderr."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(WEB_PORT=str(port), WEB_HOST=host, PYTHONPATH=str(ROOT))
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


async def test_a_running_bot_is_ready_leads_counts_a_played_game_and_is_not_ready_when_stopping(
    tmp_path: Path,
) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7101, "Club", admins={alice})
    port = closed_port()
    rng = random.Random(3)
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path, WEB_PORT=str(port), LOG_FORMAT="json")
        try:
            ready = await until_ready(port, bot)
            worker = ready.json()["worker"]
            assert isinstance(worker, str) and worker.startswith("durak-"), ready.json()
            assert ready.json() == {  # on SQLite the one process leads
                "ready": True,
                "checks": {"state": "up", "database": "ok"},
                "worker": worker,
                "role": "leader",
                "leader": worker,
                "telegram": "ok",
            }
            assert (await get(port, "/healthz")).status_code == 200
            assert await probe(port, "/readyz") == (0, "")
            assert await probe(port, "/healthz", host="0.0.0.0") == (0, "")  # asks loopback
            before = await metrics_of(port)
            assert value(before, "durak_games_running") == 0
            assert value(before, "durak_leading") == 1
            assert value(before, "durak_lead_taken_total") >= 1

            # A game: the lobby's first send meets a 429, two players, some taps, Bob gives up.
            fake.fail_next("sendMessage", 429, retry_after=1, chat_id=group.id)
            for user in (alice, bob):
                fake.queue(user.start_private())
            # (their /start first: an opener the bot may not write to yet gets no seat)
            await until(server, bot, lambda: all(fake.messages(u.id) for u in (alice, bob)))
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

            assert value(after, "durak_leading") == 1
            assert moved("durak_lead_taken_total") == 0  # led throughout

            # The network goes: /readyz says so, and stays 200 (this worker still takes
            # updates as soon as Telegram answers; long polling's state is informational).
            server.cut()
            lost = await until_readyz(
                port, bot, lambda r: r.json().get("telegram", "").startswith("lost the Bot API")
            )
            assert lost.status_code == 200, lost.json()
            assert lost.json()["checks"] == {"state": "up", "database": "ok"}
            assert lost.json()["role"] == "leader"
            server.restore()
            back = await until_readyz(port, bot, lambda r: r.json().get("telegram") == "ok")
            assert back.status_code == 200

            # SIGTERM: not ready from then on, while the stop runs (held at its last poll).
            server.hold(is_last_poll)
            bot.send_signal(signal.SIGTERM)
            await until(server, bot, lambda: any(is_last_poll(r) for r in server.held))
            stopping = await get(port, "/readyz")
            assert stopping.status_code == 503
            assert stopping.json()["checks"]["state"] == "stopping"
            assert (stopping.json()["worker"], stopping.json()["role"]) == (worker, "leader")
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
async def test_a_web_port_in_use_stops_start_up_with_one_line_and_exit_2(
    tmp_path: Path, form: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, log = await run_to_exit(
            f"http://127.0.0.1:{closed_port()}/bot",
            tmp_path,
            WEB_PORT=str(port),
            LOG_FORMAT=form,
        )
    assert code == 2, log
    [line] = log.splitlines()
    if form == "json":  # every line is JSON, this one too
        parsed = json.loads(line)
        assert parsed["level"] == "CRITICAL"
        line = parsed["message"]
    assert line.startswith(f"durak-bot: the web server cannot listen on 127.0.0.1:{port} ("), log
    assert line.endswith("check WEB_HOST and WEB_PORT"), log


async def test_without_web_port_nothing_listens_and_the_probe_says_why(tmp_path: Path) -> None:
    """A polling bot without `WEB_PORT` serves no web server (nothing to probe, no port
    taken); the probe, run where `WEB_PORT` is not set, says so and fails."""
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")
    group = fake.group(-7102, "Club", admins={alice})
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(server, tmp_path, WEB_PORT="", LOG_FORMAT="json")
        try:
            fake.queue(alice.send(group, "/newgame"))
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            listening = listening_ports(bot.pid)
        finally:
            log = await stop_bot(bot, tmp_path)
    assert listening in (set(), None), listening  # None: no /proc here to tell
    assert not any("web server on" in line["message"] for line in log_lines(tmp_path)), log

    env = {k: v for k, v in os.environ.items() if k not in ("WEB_PORT", "WEB_HOST")}
    env["PYTHONPATH"] = str(ROOT)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.ops.probe", env=env, stderr=asyncio.subprocess.PIPE
    )
    _, err = await process.communicate()
    assert process.returncode == 1
    assert err.decode().startswith("probe: WEB_PORT is not set: "), err


@pytest.mark.parametrize(
    ("env", "asked"),
    [
        ({"WEB_PORT": "8123"}, ("127.0.0.1", 8123)),
        ({"WEB_PORT": "8123", "WEB_HOST": "::"}, ("::1", 8123)),
        ({"WEB_PORT": "8123", "WEB_HOST": "10.0.0.5"}, ("10.0.0.5", 8123)),
        # webhook mode: the bot's web server is on 8080 where WEB_PORT is not set
        ({"WEBHOOK_URL": "https://bot.example/hook"}, ("127.0.0.1", 8080)),
        ({"WEBHOOK_URL": "https://bot.example/hook", "WEB_PORT": ""}, ("127.0.0.1", 8080)),
    ],
)
def test_the_probe_asks_where_the_bot_listens(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    asked: tuple[str, int],
) -> None:
    seen: list[tuple[str, int]] = []

    class Refused:
        def __init__(self, host: str, port: int, timeout: float) -> None:
            seen.append((host, port))

        def request(self, method: str, path: str) -> None:
            raise ConnectionRefusedError("refused")

        def close(self) -> None:
            pass

    for name in ("WEB_PORT", "WEB_HOST", "WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, setting in env.items():
        monkeypatch.setenv(name, setting)
    monkeypatch.setattr(bot_probe.http.client, "HTTPConnection", Refused)
    assert bot_probe.probe("/readyz") == 1
    assert seen == [asked]
    assert capsys.readouterr().err.startswith(f"probe: no answer from {asked[0]}:{asked[1]}/readyz")


def listening_ports(pid: int) -> set[int] | None:
    """The TCP ports process `pid` listens on (None without Linux's /proc to tell)."""
    fds = Path(f"/proc/{pid}/fd")
    if not fds.exists():
        return None
    inodes = set()
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for row in path.read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rpartition(":")[2], 16))
    return ports


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class SeenLease(Lease):
    """A lease as a worker sees it, set by the test: whether it holds it, and who leads."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.leading = False
        self.leader: str | None = None

    def held(self) -> bool:
        return self.leading

    def holder(self) -> str | None:
        return self.name if self.leading else self.leader


async def test_readiness_names_what_is_wrong_database_starting_or_the_stop_and_who_leads(
    tmp_path: Path,
) -> None:
    """The web server alone, on a real database, a lease and the polling watch, over
    loopback: ready means this worker takes updates (started, not stopping, the database
    answers), a standby included; the role fields say who leads; long polling's state is
    told (by the leader, which polls) but is no check."""
    clock = Clock()
    watch = PollingWatch("api.example", clock=clock)
    db: Database | None = await Database.open(f"sqlite:///{tmp_path / 'durak.sqlite3'}")
    lease: Lease | None = None
    health = Health(database=lambda: db, lease=lambda: lease, watch=watch, clock=clock)
    server = WebServer(health, "127.0.0.1", 0)
    await server.start()
    port = server.port
    seen = SeenLease("durak-here-1-abc")

    async def ready() -> tuple[int, dict[str, Any]]:
        response = await get(port, "/readyz")
        assert response.headers["content-type"] == "application/json"
        return response.status_code, response.json()

    try:
        assert await ready() == (  # no lease yet: the worker is starting
            503,
            {
                "ready": False,
                "checks": {"state": "starting", "database": "ok"},
                "worker": None,
                "role": "starting",
                "leader": None,
            },
        )
        lease = seen
        seen.leader = "durak-there-2-def"  # another worker leads: this one stands by
        health.up()
        assert await ready() == (
            200,
            {
                "ready": True,
                "checks": {"state": "up", "database": "ok"},
                "worker": "durak-here-1-abc",
                "role": "standby",
                "leader": "durak-there-2-def",
            },
        )
        seen.leader = None  # the leader is gone, none has taken over yet: still ready
        status, body = await ready()
        assert (status, body["role"], body["leader"]) == (200, "standby", None)

        seen.leading = True  # this worker took the lead: it polls, and says how that goes
        status, body = await ready()
        assert (status, body["role"], body["leader"]) == (200, "leader", "durak-here-1-abc")
        assert body["telegram"] == "ok"
        watch.failed(NetworkError("httpx.ConnectError: refused"))  # a poll failed
        clock.now += 12
        status, body = await ready()
        assert (status, body["checks"]) == (200, {"state": "up", "database": "ok"})
        assert body["telegram"] == "lost the Bot API 12 s ago"
        watch.answered()
        assert (await ready())[1]["telegram"] == "ok"
        clock.now += 61  # polls neither fail nor come back
        status, body = await ready()
        assert (status, body["telegram"]) == (200, "no answer to long polling for 61 s")
        watch.answered()
        assert (await ready())[1]["telegram"] == "ok"
        seen.leading = False  # fenced: a standby polls not, and tells nothing of it
        assert "telegram" not in (await ready())[1]
        seen.leading = True

        assert db is not None
        await db.close()  # closed under the bot's feet
        status, body = await ready()
        assert status == 503 and body["checks"]["database"].startswith("failed: ")
        assert body["ready"] is False and body["role"] == "leader"
        db = None  # the bot after its stop: no database any more
        assert (await ready())[1]["checks"]["database"] == "not open"

        health.stopping()
        assert (await ready())[1]["checks"]["state"] == "stopping"
        assert (await get(port, "/healthz")).status_code == 200
        assert (await get(port, "/metrics")).status_code == 200
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

    opened = await Database.open(f"sqlite:///{tmp_path / 'durak.sqlite3'}")  # a stop alone
    health = Health(database=lambda: opened, lease=lambda: seen)
    health.up()
    server = WebServer(health, "127.0.0.1", 0)
    await server.start()
    try:
        assert (await get(server.port, "/readyz")).status_code == 200
        health.stopping()
        stopping = await get(server.port, "/readyz")
        assert stopping.status_code == 503
        assert stopping.json()["checks"] == {"state": "stopping", "database": "ok"}
    finally:
        await server.close()
        await opened.close()


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
