"""Several workers on one PostgreSQL, their leader failing in every way it can: the proof of
issue #30, for `tests/bot/test_workers_proof.py` and for an operator (`python -m
tools.prove_workers`).

`prove` starts a PostgreSQL of its own (it is stopped and started again on the way), N
`python -m bot` workers in webhook mode, each with a base URL of its own at the fake Bot
API on loopback (so the fake knows which worker made each call), and posts every update to
the workers round-robin (`WebhookDelivery`, as a reverse proxy would; a worker the chaos
took down is left out while it is down, as the proxy's health checks would; an update not
answered 200 is posted again). People play G games at once: each taps a playable button of
their hand once it has changed since their last tap (or their last tap was answered
without a change), after a moment's thought. One player of the first game never taps, so
its turns run out (three timeouts and that player is out: R18).

The chaos, one step after another while the games go on:

1. the leader is SIGKILLed `kills` times, every other time at the moment it answers a tap
   (the move is committed, the hands it changed not yet sent), each time replaced by a new
   worker (a standby);
2. the leader is SIGSTOPped for `hang` seconds, then continued;
3. PostgreSQL is stopped for `outage` seconds, then started again;
4. every worker is stopped with SIGTERM in turn and replaced (a rolling restart).

After each loss of the leader (1, 2), a probe person sends /help in private: the failover
time is from the kill or stop until that update is answered.

What is checked afterwards (`Proof.problems`, empty when all holds):

- every game finished, with a stored result, and one result message in its group;
- no acknowledged update is lost: every update a worker answered 200 is stored as handled;
- each deadline once: the sleepy player was warned at half time exactly three times and
  removed once (a deadline handled twice would remove them a turn early);
- no duplicate message: one lobby, one table and one result per group;
- no hand left behind: nobody but the sleepy player ever ran out of time (a hand the game
  waits for and nobody sent would leave its player waiting until their time ran out);
- no stale edit left over a newer one: each hand message's last keyboard is of the latest
  move it ever showed, and at the end no hand has live buttons and no table still waits for
  anyone;
- no call was answered 429 (every chat within its budget, across leaders);
- no tap or command was answered "nothing happened" (nothing is ever refused for good
  while the update is kept to be handled again);
- the worker that hung sent nothing after it was continued, but what it had on its way
  when it was stopped (counted; the leader shows every game again over it);
- no post answered other than 200 while the database could store (none refused while the
  lead changed hands), and none answered 500 ever; each worker's log says once per outage
  that the database could not store updates, and has no traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import random
import signal
import statistics
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.callbacks import MoveData, decode
from bot.sandbox.telegram.limits import COUNTED, Limits, Window
from storage import Database, NotFound
from tests import postgres
from tests.bot.conftest import TOKEN
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeGroup, FakeMessage, FakeTelegram, FakeUser
from tests.fakes.webhook import WebhookDelivery

ROOT = Path(__file__).resolve().parents[1]
# Telegram's limits ten times as fast (games at machine pace would take minutes under the
# real ones), enforced by the fake and given to the bot as its budgets.
LIMITS = Limits(private=Window(30, 3.0), group=Window(200, 60.0), bot=Window(300, 1.0))
SECRET = "proof-of-workers_0123456789"
PUBLIC_URL = "https://durak.example/telegram/hook"
NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank")
STALE = "This button is out of date"  # locales/en.ftl, error-stale
NOTHING_HAPPENED = "nothing happened"  # locales/en.ftl, error-storage and error-unavailable
RAN_OUT = "Your time ran out"  # locales/en.ftl, hand-timed-out
WAITING = "Waiting for"  # locales/en.ftl, table-waiting
STUCK = 60.0  # seconds without a Bot API call after which the play stops (and fails)
ON_ITS_WAY = 0.5  # seconds after it woke in which a hung worker's call on its way lands


@dataclass
class Worker:
    """One `python -m bot` process in webhook mode; `port` stays when it is replaced."""

    index: int
    port: int
    workdir: Path
    process: asyncio.subprocess.Process | None = None
    generation: int = 0
    stopped: bool = False  # SIGSTOPped
    started_at: int = 0  # how many Bot API calls the fake had when it was started

    @property
    def label(self) -> str:
        """What the fake knows its calls by (a new process: a new label)."""
        return f"w{self.index}g{self.generation}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/telegram/hook"

    @property
    def log(self) -> Path:
        return self.workdir / f"worker-{self.index}-{self.generation}.log"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class Cluster:
    """The workers: started, killed, stopped, continued and replaced."""

    def __init__(
        self, server: LoopbackBotAPI, database_url: str, workdir: Path, count: int, **settings: str
    ) -> None:
        self.server = server
        self.database_url = database_url
        self.settings = settings
        self.workers = [Worker(i, _free_port(), workdir) for i in range(count)]
        self.kills = 0
        self.hangs = 0
        self.restarts = 0
        self.delivery: WebhookDelivery | None = None  # told which workers are up

    @property
    def urls(self) -> list[str]:
        return [w.url for w in self.workers]

    def _env(self, worker: Worker) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(
                ("BOT_", "DATABASE_", "TURN_", "LOBBY_", "LOG_", "WEBHOOK_", "WEB_")
            )
            and "proxy" not in key.lower()
        }
        env.update(
            BOT_TOKEN=TOKEN,
            BOT_API_BASE_URL=self.server.url_for(worker.label),
            DATABASE_URL=self.database_url,
            WEBHOOK_URL=PUBLIC_URL,
            WEBHOOK_SECRET=SECRET,
            WEB_PORT=str(worker.port),
            LOG_LEVEL="INFO",
            NO_PROXY="127.0.0.1,localhost",
            PYTHONPATH=os.pathsep.join(
                [*filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)), str(ROOT)]
            ),
        )
        env.update(self.settings)
        return env

    def _up(self, worker: Worker, up: bool) -> None:
        """Tell the delivery (the proxy) whether the worker takes posts."""
        if self.delivery is None or self.delivery.urls is None:
            return
        urls = self.delivery.urls
        if up and worker.url not in urls:
            urls.append(worker.url)
        elif not up and worker.url in urls and len(urls) > 1:
            urls.remove(worker.url)

    async def start(self, worker: Worker) -> None:
        worker.generation += 1
        worker.stopped = False
        worker.started_at = len(self.server.fake.calls)
        worker.workdir.mkdir(parents=True, exist_ok=True)
        log = worker.log.open("wb")
        worker.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            cwd=worker.workdir,
            env=self._env(worker),
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
        )
        log.close()
        self._up(worker, True)

    async def start_all(self) -> None:
        for worker in self.workers:
            await self.start(worker)

    async def up(self, worker: Worker) -> None:
        """Until the worker has called the Bot API (`getMe`, once its database is open and
        it takes signals), or its process ended."""
        calls = self.server.fake.calls

        def there() -> bool:
            return not worker.alive or any(
                c.via == worker.label for c in calls[worker.started_at :]
            )

        await self.server.wait_for(there)

    async def supervise(self) -> None:
        """Start again every worker whose process ended by itself (as a service manager
        does: one that started while the database was down exits with code 3)."""
        for worker in self.workers:
            if worker.process is not None and not worker.alive and not worker.stopped:
                await self.start(worker)

    async def kill(self, worker: Worker) -> None:
        """SIGKILL, as a crash or the OOM killer."""
        self._up(worker, False)
        process = worker.process
        assert process is not None
        if process.returncode is None:
            process.kill()
            await process.wait()
        self.kills += 1

    def stop(self, worker: Worker) -> None:
        """SIGSTOP: the process hangs (its connections stay open)."""
        self._up(worker, False)
        assert worker.process is not None
        worker.process.send_signal(signal.SIGSTOP)
        worker.stopped = True
        self.hangs += 1

    def cont(self, worker: Worker) -> None:
        assert worker.process is not None
        worker.process.send_signal(signal.SIGCONT)
        worker.stopped = False
        self._up(worker, True)

    async def restart(self, worker: Worker) -> int:
        """SIGTERM (a deploy), wait for the stop, start a new one; the old one's exit code."""
        await self.up(worker)  # (a deploy waits for the worker before it, up and healthy)
        for _ in range(3):  # one that exited by itself (it started while the database was
            if worker.alive:  # down: exit code 3) is started again, as a supervisor does
                break
            await self.start(worker)
            await self.up(worker)
        self._up(worker, False)
        process = worker.process
        assert process is not None
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(60):
            code = await process.wait()
        self.restarts += 1
        await self.start(worker)
        return code

    async def stop_all(self) -> list[int | None]:
        codes: list[int | None] = []
        for worker in self.workers:
            process = worker.process
            if process is None:
                continue
            if worker.stopped:
                self.cont(worker)
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(60):
                    codes.append(await process.wait())
            except TimeoutError:
                process.kill()
                await process.wait()
                codes.append(None)
        return codes

    def leader(self, fake: FakeTelegram) -> Worker | None:
        """The worker that leads, as the fake saw it: every term begins by asking Telegram
        for the webhook's state, so the last to ask leads (if it is still up)."""
        for call in reversed(fake.calls):
            if call.method == "getWebhookInfo" and call.via is not None:
                found = next((w for w in self.workers if w.label == call.via), None)
                return found if found is not None and found.alive and not found.stopped else None
        return None

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')}" for path in self.log_files()
        )

    def log_files(self) -> list[Path]:
        return [
            w.workdir / f"worker-{w.index}-{generation}.log"
            for w in self.workers
            for generation in range(1, w.generation + 1)
            if (w.workdir / f"worker-{w.index}-{generation}.log").exists()
        ]


def hand_message(fake: FakeTelegram, user: FakeUser) -> FakeMessage | None:
    """The user's current hand: the bot's latest private message with game buttons."""
    for message in reversed(fake.messages(user.id)):
        if _has_moves(message.reply_markup):
            return message
    return None


def _move_of(data: str | None) -> int | None:
    try:
        decoded = decode(data)
    except ValueError:
        return None
    return decoded.move if isinstance(decoded, MoveData) else None


def _moves(markup: Any) -> list[int]:
    rows = (markup or {}).get("inline_keyboard") or []
    found = [_move_of(button.get("callback_data")) for row in rows for button in row]
    return [move for move in found if move is not None]


def _markup(params: dict[str, Any]) -> Any:
    """A call's reply markup, as the fake was given it (JSON text, or read already)."""
    markup = params.get("reply_markup")
    if isinstance(markup, str):
        with contextlib.suppress(ValueError):
            return json.loads(markup)
    return markup


def _has_moves(markup: Any) -> bool:
    return bool(_moves(markup))


class People:
    """The players, each tapping a playable button once their hand changed (or their last
    tap was answered and changed nothing), after a moment's thought (`think`: seconds, at
    random). Each player's hand is followed through the fake's changes
    (`FakeTelegram.watch`), so that asking who wants to tap, after every Bot API call,
    looks only at the players whose hand or tap's answer may have changed. With `late`
    (a chance), a player whose hand was just redrawn at a later move taps a playable button
    of the keyboard it replaced, as a person does whose finger was on its way (`late_taps`)."""

    def __init__(
        self,
        fake: FakeTelegram,
        users: list[FakeUser],
        rng: random.Random,
        think: tuple[float, float] = (0.0, 0.0),
        late: float = 0.0,
    ) -> None:
        self.fake = fake
        self.users = {user.id: user for user in users}
        self.rng = rng
        self.think = think
        self.late = late
        self.late_taps: list[LateTap] = []
        self.tap_times: list[tuple[int, float]] = []  # (user, time.time()) of every tap
        self.sleepy: set[int] = set()
        self.taps = 0
        self.queries: list[str] = []  # every tap's callback query id
        self.tapped: dict[int, str] = {}  # every tap's update id -> its callback query id
        self.data: dict[str, str] = {}  # every tap's callback query id -> its button's data
        self._tapped: dict[int, tuple[int, int, str]] = {}  # user -> message, edits, query
        self._pressed: dict[int, str] = {}  # user -> the callback data of their last tap
        self._hands: dict[int, FakeMessage] = {}  # user -> their latest hand message
        self._look: set[int] = set(self.users)  # users whose hand changed since last looked
        self._ready_at: dict[int, float] = {}  # user -> when they are done thinking
        self._unwatch = fake.watch(self._changed)

    def close(self) -> None:
        self._unwatch()

    def _changed(self, message: FakeMessage, change: str) -> None:
        chat_id = message.chat_id
        if not isinstance(chat_id, int) or chat_id not in self.users:
            return
        self._look.add(chat_id)
        current = self._hands.get(chat_id)
        if change == "deleted" and current is message:
            del self._hands[chat_id]
            found = hand_message(self.fake, self.users[chat_id])  # the one before it
            if found is not None:
                self._hands[chat_id] = found
        elif (
            change != "deleted"
            and _has_moves(message.reply_markup)
            and (current is None or message.message_id >= current.message_id)
        ):
            self._hands[chat_id] = message

    def _wants(self, user_id: int) -> tuple[FakeMessage, list[str]] | None:
        if user_id in self.sleepy:
            return None
        message = self._hands.get(user_id)
        if message is None:
            return None
        last = self._tapped.get(user_id)
        if last is not None and last[:2] == (message.message_id, message.edits):
            # The keyboard of the last tap: tap it again only once that tap was answered
            # and changed nothing (not this player's turn, a card that cannot go); not when
            # it was out of date (the new hand is on its way: a person waits for it).
            answer = self.fake.answer_for(last[2])
            if answer is None or (answer.text or "").startswith(STALE):
                return None
        playable = [
            b.callback_data
            for row in message.buttons
            for b in row
            if b.callback_data
            and _move_of(b.callback_data) is not None
            and not b.text.startswith("·")
        ]
        return (message, playable) if playable else None

    def _late_tap(self, uid: int, message: FakeMessage) -> dict[str, Any] | None:
        """Maybe (`late`) a tap of the keyboard the current one replaced, if that was of an
        earlier move and had a playable button."""
        if not message.history or self.rng.random() >= self.late:
            return None
        markup = message.history[-1][1]
        current = max(_moves(message.reply_markup))
        tapped = max(_moves(markup), default=current)
        rows = (markup or {}).get("inline_keyboard") or []
        playable = [
            b["callback_data"]
            for row in rows
            for b in row
            if _move_of(b.get("callback_data")) is not None
            and not str(b.get("text", "")).startswith("·")
        ]
        if tapped >= current or not playable:
            return None
        data = self.rng.choice(playable)
        update = self.users[uid].tap_raw(message, data)
        query = update["callback_query"]["id"]
        again = self._pressed.get(uid) == data
        self.late_taps.append(LateTap(query, uid, tapped, current, time.time(), again, data))
        return update

    def _candidates(self) -> set[int]:
        """Players whose hand changed, or whose last tap (on the same hand) may have been
        answered since."""
        return self._look | set(self._tapped)

    def next_at(self) -> float | None:
        """When someone who wants to tap is done thinking (None: nobody wants to)."""
        now = time.monotonic()
        times = []
        for uid in self._candidates():
            if self._wants(uid) is None:
                self._ready_at.pop(uid, None)
                continue
            if uid not in self._ready_at:
                self._ready_at[uid] = now + self.rng.uniform(*self.think)
            times.append(self._ready_at[uid])
        return min(times, default=None)

    def ready(self) -> bool:
        """Whether someone wants to tap and is done thinking."""
        at = self.next_at()
        return at is not None and at <= time.monotonic()

    def act(self) -> int:
        """Queue a tap for everyone who wants to tap and is done thinking; how many."""
        count = 0
        now = time.monotonic()
        for uid in sorted(self._candidates()):
            wanted = self._wants(uid)
            if wanted is None or self._ready_at.get(uid, now) > now:
                continue
            self._look.discard(uid)
            self._ready_at.pop(uid, None)
            message, playable = wanted
            update = self._late_tap(uid, message) if self.late else None
            if update is None:
                update = self.users[uid].tap(message, self.rng.choice(playable))
            query = update["callback_query"]["id"]
            self._pressed[uid] = update["callback_query"]["data"]
            self.tap_times.append((uid, time.time()))
            self._tapped[uid] = (message.message_id, message.edits, query)
            self.queries.append(query)
            self.tapped[update["update_id"]] = query
            self.data[query] = update["callback_query"]["data"]
            self.fake.queue(update)
            count += 1
        self.taps += count
        return count


@dataclass(frozen=True)
class LateTap:
    """A tap on the keyboard a newer one (of a later move) had just replaced."""

    query: str  # its callback query id
    user: int
    tapped: int  # the move the tapped keyboard was drawn at
    current: int  # the move of the keyboard that replaced it
    at: float  # when it was made (time.time(), as `Call.at`)
    again: bool = False  # the same button as the player's own tap before: a double tap
    data: str = ""  # the button's callback data


@dataclass
class Proof:
    games: int
    workers: int
    kills: int = 0
    hangs: int = 0
    restarts: int = 0
    outages: int = 0
    taps: int = 0
    acknowledged: int = 0
    redelivered: int = 0
    failover_kill: list[float] = field(default_factory=list)  # seconds
    failover_hang: list[float] = field(default_factory=list)
    handover: list[float] = field(default_factory=list)
    refused: int = 0  # posts a running worker answered other than 200 (the database up)
    refused_outage: int = 0  # posts answered 503 while the database was down
    on_its_way: int = 0  # calls the hung worker had on their way when it was stopped
    problems: list[str] = field(default_factory=list)

    def report(self) -> str:
        lines = [
            f"{self.workers} workers, {self.games} games; the leader SIGKILLed {self.kills} "
            f"times, SIGSTOPped {self.hangs} times; PostgreSQL stopped {self.outages} times; "
            f"{self.restarts} workers restarted with SIGTERM",
            f"taps: {self.taps}; updates acknowledged: {self.acknowledged}; posts sent again "
            f"(a worker down, or the database): {self.redelivered}",
            f"failover after a kill: {_spread(self.failover_kill)}; after a hang: "
            f"{_spread(self.failover_hang)}; handover on SIGTERM: {_spread(self.handover)}",
            f"posts refused while the lead changed hands: {self.refused}; answered 503 while "
            f"the database was down: {self.refused_outage}; calls the hung worker had on "
            f"their way, landed as it woke: {self.on_its_way}",
        ]
        lines += [f"PROBLEM: {p}" for p in self.problems] or ["every check holds"]
        return "\n".join(lines)


def _spread(seconds: list[float]) -> str:
    """p50 and p95 (and how many) of a list of seconds."""
    if not seconds:
        return "none"
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):.2f} s, p95 {p95:.2f} s (n={len(ordered)})"


async def prove(
    workdir: Path,
    *,
    database_url: str | None = None,
    workers: int = 3,
    games: int = 3,
    players: int = 3,
    kills: int = 4,
    hang: float = 30.0,
    outage: float = 3.0,
    seed: int = 1,
    turn_timeout: int = 8,
    think: tuple[float, float] = (0.1, 0.6),
    progress: Callable[[str], None] | None = None,
) -> Proof:
    """Play `games` games on `workers` workers through the chaos (see the module's
    docstring); the proof of what held. `database_url`: an empty PostgreSQL database,
    else one of its own (then the database's outage is part of the chaos)."""
    say = progress or (lambda line: None)
    server = (
        None if database_url is not None else await asyncio.to_thread(postgres.PostgresServer.start)
    )
    url = database_url or (server.url("postgres") if server is not None else "")
    try:
        return await _prove(
            workdir,
            url,
            server,
            workers=workers,
            games=games,
            players=players,
            kills=kills,
            hang=hang,
            outage=outage,
            seed=seed,
            turn_timeout=turn_timeout,
            think=think,
            say=say,
        )
    finally:
        if server is not None:
            await asyncio.to_thread(server.stop)


async def _prove(
    workdir: Path,
    database_url: str,
    database: postgres.PostgresServer | None,
    *,
    workers: int,
    games: int,
    players: int,
    kills: int,
    hang: float,
    outage: float,
    seed: int,
    turn_timeout: int,
    think: tuple[float, float],
    say: Callable[[str], None],
) -> Proof:
    rng = random.Random(seed)
    fake = FakeTelegram(token=TOKEN)
    fake.enforce(LIMITS)  # Telegram's limits, ten times as fast: a 429 past them
    users = [fake.user(100 + i, NAMES[i % len(NAMES)] + str(i)) for i in range(games * players)]
    probe = fake.user(99, "Probe")
    groups: list[FakeGroup] = []
    seated: list[list[FakeUser]] = []
    for g in range(games):
        members = users[g * players : (g + 1) * players]
        groups.append(fake.group(-5000 - g, f"Club {g}", admins={members[0]}))
        seated.append(members)
    people = People(fake, users, random.Random(rng.random()), think)
    sleepy = seated[0][-1]
    proof = Proof(games=games, workers=workers)
    chaos = Chaos(proof, fake, rng, database, say)
    async with LoopbackBotAPI(fake) as server:
        cluster = Cluster(
            server,
            database_url,
            workdir,
            workers,
            TURN_TIMEOUT=str(turn_timeout),
            COMPUTER_DELAY="0",
            TABLE_EDIT_INTERVAL="1",
            # A lobby edited at most every 0.5 s (5 s by default, for Telegram's group
            # limit; ten times as fast here, as the limits are). The games are opened one
            # after another before anyone plays: at 5 s a lobby, the first game's first
            # turn (TURN_TIMEOUT) would run out while the others open.
            LOBBY_EDIT_INTERVAL="0.5",
            # the bot's budgets as the fake's limits: a worker over them meets a 429
            PRIVATE_SENDS=str(LIMITS.private.count),
            PRIVATE_WINDOW=str(LIMITS.private.seconds),
            GROUP_SENDS=str(LIMITS.group.count),
            GROUP_WINDOW=str(LIMITS.group.seconds),
            BOT_SENDS=str(LIMITS.bot.count),
        )
        chaos.cluster, chaos.server, chaos.probe = cluster, server, probe
        await cluster.start_all()
        try:
            await server.wait_for(lambda: fake.webhook is not None)  # the leader is up
            async with WebhookDelivery(fake, urls=cluster.urls) as delivery:
                cluster.delivery = chaos.delivery = delivery
                await open_games(fake, server, delivery, groups, seated)
                say("games started")
                people.sleepy.add(sleepy.id)
                await _play(fake, server, people, groups, chaos.run(kills, hang, outage))
                await delivery.idle()
                proof.acknowledged = len(delivery.acknowledged)
                proof.redelivered = len(delivery.failures)
                acknowledged = set(delivery.acknowledged)
                chaos.count_answers(delivery)
        finally:
            people.close()
            codes = await cluster.stop_all()
        proof.kills, proof.hangs, proof.restarts = cluster.kills, cluster.hangs, cluster.restarts
        proof.taps = people.taps
        if any(code != 0 for code in codes):
            proof.problems.append(f"workers did not stop cleanly on SIGTERM: exit codes {codes}")
    await _check(proof, database_url, fake, groups, seated, sleepy, acknowledged, people)
    chaos.check_zombie()
    _check_logs(proof, cluster.log_files())
    if proof.problems:
        (workdir / "workers.log").write_text(cluster.logs() + _what_telegram_saw(fake, groups))
    return proof


class Chaos:
    """The leader lost in every way, one step after another (see the module's docstring)."""

    def __init__(
        self,
        proof: Proof,
        fake: FakeTelegram,
        rng: random.Random,
        database: postgres.PostgresServer | None,
        say: Callable[[str], None],
    ) -> None:
        self.proof = proof
        self.fake = fake
        self.rng = rng
        self.database = database
        self.say = say
        self.cluster: Cluster
        self.server: LoopbackBotAPI
        self.probe: FakeUser
        self.delivery: WebhookDelivery
        self.down: list[tuple[float, float]] = []  # the database's outages (time.time())
        self.zombie: tuple[str, float] | None = None  # the hung worker's label, when continued

    async def _after_calls(self, low: int, high: int, over: Callable[[], bool]) -> None:
        """Until a random number of further Bot API calls were answered (mid-turn)."""
        target = len(self.fake.calls) + self.rng.randint(low, high)
        await self.server.wait_for(lambda: len(self.fake.calls) >= target or over())

    async def _leader(self) -> Worker:
        found: list[Worker] = []

        def there() -> bool:
            leader = self.cluster.leader(self.fake)
            if leader is not None:
                found.append(leader)
            return leader is not None

        await self.server.wait_for(there)
        return found[-1]

    async def _failover(self, lost: Worker) -> float:
        """From now until the probe's /help, posted now, is answered by another worker."""
        started = time.monotonic()
        before = len(self.fake.messages(self.probe.id))
        self.fake.queue(self.probe.send_private("/help"))

        await self.server.wait_for(lambda: len(self.fake.messages(self.probe.id)) > before)
        del lost  # (it is down: the answer came from another worker)
        return time.monotonic() - started

    def run(
        self, kills: int, hang: float, outage: float
    ) -> Callable[[Callable[[], bool]], Awaitable[None]]:
        async def chaos(over: Callable[[], bool]) -> None:
            for n in range(kills):
                await self._after_calls(40, 160, over)
                if over():
                    return
                await self._kill(n, kills, after_commit=n % 2 == 1, over=over)
            if outage > 0 and self.database is not None:
                await self._after_calls(20, 60, over)
                if over():
                    return
                await self._outage(outage)
            for worker in list(self.cluster.workers):  # a rolling restart: each in turn
                await self._after_calls(20, 60, over)
                if over():
                    return
                await self._restart(worker)
            if hang > 0:
                await self._after_calls(40, 120, over)
                if over():
                    return
                await self._hang(hang)

        return chaos

    async def _restart(self, worker: Worker) -> None:
        self.say(f"SIGTERM worker {worker.index} (rolling restart)")
        was_leader = self.cluster.leader(self.fake) is worker
        started = time.monotonic()
        code = await self.cluster.restart(worker)
        if code != 0:
            self.proof.problems.append(f"worker {worker.index} exited {code} on SIGTERM")
        if was_leader:
            await self._leader()
            self.proof.handover.append(time.monotonic() - started)

    async def _kill(self, n: int, of: int, *, after_commit: bool, over: Callable[[], bool]) -> None:
        leader = await self._leader()
        held = False
        if after_commit:  # the moment it answers a tap: the move is committed
            label = leader.label
            self.server.hold(
                lambda request: (
                    request.url.path.endswith("/answerCallbackQuery")
                    and request.headers.get("x-fake-via") == label
                )
            )
            await self.server.wait_for(lambda: bool(self.server.held) or over())
            held = bool(self.server.held)
        self.say(
            f"SIGKILL the leader, worker {leader.index} ({n + 1} of {of}"
            f"{', right after a commit' if held else ''})"
        )
        killing = asyncio.ensure_future(self.cluster.kill(leader))
        await asyncio.sleep(0)  # (the signal goes before the held answer is let through)
        if after_commit:
            self.server.release()
        await killing
        self.proof.failover_kill.append(await self._failover(leader))
        await self.cluster.start(leader)

    async def _hang(self, seconds: float) -> None:
        leader = await self._leader()
        self.say(f"SIGSTOP the leader, worker {leader.index}, for {seconds:.0f} s")
        started = time.monotonic()
        self.cluster.stop(leader)
        self.proof.failover_hang.append(await self._failover(leader))
        await asyncio.sleep(max(0.0, started + seconds - time.monotonic()))  # the hang itself
        self.zombie = (leader.label, time.time())
        self.cluster.cont(leader)
        self.say(f"SIGCONT worker {leader.index}")

    async def _outage(self, seconds: float) -> None:
        assert self.database is not None
        self.say(f"PostgreSQL stopped for {seconds:.0f} s")
        began = time.time()
        await asyncio.to_thread(self.database.halt)
        await asyncio.sleep(seconds)  # the outage itself
        await asyncio.to_thread(self.database.resume)
        self.down.append((began, time.time()))
        self.proof.outages += 1
        self.say("PostgreSQL is back")
        await self.cluster.supervise()

    def count_answers(self, delivery: WebhookDelivery) -> None:
        """Posts a running worker answered other than 200: while the database was down (503
        is right then; a moment after it is back, the pools reconnect), and otherwise (none
        should be). A 500 is never right."""
        for attempt in delivery.attempts:
            status = attempt.status
            if status is None or 200 <= status <= 299:
                continue
            if status == 500:
                self.proof.problems.append(f"update {attempt.update_id} was answered 500")
            if any(began <= attempt.at <= ended + 2.0 for began, ended in self.down):
                self.proof.refused_outage += 1
            else:
                self.proof.refused += 1
        if self.proof.refused:
            self.proof.problems.append(
                f"{self.proof.refused} posts refused while the database could store"
            )

    def check_zombie(self) -> None:
        """The worker that hung sent nothing once it woke, but what it had on its way when
        it was stopped (a call past its last check of the lease, landing within
        `ON_ITS_WAY` of waking; the leader then shows every game again over it)."""
        if self.zombie is None:
            return
        label, woke = self.zombie
        calls = [c for c in self.fake.calls if c.via == label and c.at >= woke]
        late = [c for c in calls if c.at > woke + ON_ITS_WAY]
        self.proof.on_its_way = len(calls) - len(late)
        if late:
            self.proof.problems.append(
                f"the worker that hung made {len(late)} calls after it woke, e.g. "
                f"{late[0].method} {late[0].at - woke:.2f} s after"
            )


def _what_telegram_saw(fake: FakeTelegram, groups: list[FakeGroup]) -> str:
    lines = ["", "--- what the fake Telegram shows"]
    for group in groups:
        for m in fake.messages(group.id):
            text = m.text.replace("\n", " | ")[:160]
            lines.append(f"chat {group.id} message {m.message_id} ({m.edits} edits): {text}")
    for call in fake.calls:
        if call.error_code is not None:
            lines.append(
                f"{call.error_code} at {call.at:.3f} via {call.via}: {call.method} "
                f"{call.params.get('chat_id')}: {call.description}"
            )
    refusals = [c for c in fake.calls if c.error_code == 429]
    if refusals and fake.flood is not None:
        lines.append(f"--- the limits the 429s met: {dict(fake.flood.over)}")
    for refused in refusals:
        chat = refused.params.get("chat_id")
        counted = [c for c in fake.calls if c.method in COUNTED and c.error_code != 429]
        second = Counter(
            f"{c.via} {c.params.get('chat_id')}"
            for c in counted
            if refused.at - 1 <= c.at <= refused.at
        )
        lines.append(f"--- calls in the second before the 429 at {refused.at:.3f}: {dict(second)}")
        lines.append(f"--- calls into chat {chat} in the 5 s before the 429 at {refused.at:.3f}")
        for call in fake.calls:
            if call.params.get("chat_id") == chat and refused.at - 5 <= call.at <= refused.at:
                lines.append(
                    f"{call.at:.3f} via {call.via}: {call.method} -> {call.error_code or 'ok'}"
                )
    return "\n".join(lines) + "\n"


async def open_games(
    fake: FakeTelegram,
    server: LoopbackBotAPI,
    delivery: WebhookDelivery,
    groups: list[FakeGroup],
    seated: list[list[FakeUser]],
) -> None:
    async def posted(*updates: dict[str, Any]) -> None:
        fake.queue(*updates)
        await delivery.wait_until_acknowledged(u["update_id"] for u in updates)

    await posted(*(u.start_private() for members in seated for u in members))
    opens = [
        members[0].send(group, "/newgame") for group, members in zip(groups, seated, strict=True)
    ]
    await posted(*opens)
    for group, members in zip(groups, seated, strict=True):
        await server.wait_for(functools.partial(_lobby_names, fake, group, members[:1]))
        await posted(*(m.tap(_the_lobby(fake, group), "Join") for m in members[1:]))
        await server.wait_for(functools.partial(_lobby_names, fake, group, members))
        await posted(members[0].tap(_the_lobby(fake, group), "Start"))


def _lobby_names(fake: FakeTelegram, group: FakeGroup, members: list[FakeUser]) -> bool:
    lobby = _lobby(fake, group)
    return lobby is not None and all(m.first_name in lobby.text for m in members)


def _the_lobby(fake: FakeTelegram, group: FakeGroup) -> FakeMessage:
    lobby = _lobby(fake, group)
    assert lobby is not None
    return lobby


def _lobby(fake: FakeTelegram, group: FakeGroup) -> FakeMessage | None:
    lobbies = [m for m in fake.messages(group.id) if "Join" in m.button_texts]
    return lobbies[-1] if lobbies else None


def game_over(fake: FakeTelegram, group: FakeGroup) -> bool:
    return any("Game over" in m.text for m in fake.messages(group.id))


async def _play(
    fake: FakeTelegram,
    server: LoopbackBotAPI,
    people: People,
    groups: list[FakeGroup],
    chaos: Callable[[Callable[[], bool]], Awaitable[None]],
) -> None:
    def over() -> bool:
        return all(game_over(fake, g) for g in groups)

    chaos_task = asyncio.ensure_future(chaos(over))
    try:
        while not over():
            if chaos_task.done() and time.monotonic() - fake.calls[-1].at > STUCK:
                return  # nothing moves: the checks say what is missing
            people.act()
            at = people.next_at()  # someone done thinking then; else wait for a change
            wait = None if at is None else max(0.0, at - time.monotonic())
            if wait == 0.0:
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    changed = functools.partial(_changed, fake, over, len(fake.calls))
                    await _first(server.wait_for(changed), chaos_task)
        await chaos_task
    finally:
        if not chaos_task.done():
            chaos_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await chaos_task


def _changed(fake: FakeTelegram, over: Callable[[], bool], seen: int) -> bool:
    """The games are over, or a call was answered since `seen` calls."""
    return over() or len(fake.calls) > seen


async def _first(waiting: Awaitable[None], other: asyncio.Future[None]) -> None:
    """Wait for `waiting`; an error of `other` (the chaos) stops the waiting."""
    if other.done():
        other.result()  # (its error, if any)
        await waiting
        return
    task = asyncio.ensure_future(waiting)
    try:
        await asyncio.wait({task, other}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await task
    if other.done() and other.exception() is not None:
        other.result()
    if task.done() and not task.cancelled():
        task.result()


async def _check(
    proof: Proof,
    database_url: str,
    fake: FakeTelegram,
    groups: list[FakeGroup],
    seated: list[list[FakeUser]],
    sleepy: FakeUser,
    acknowledged: set[int],
    people: People,
) -> None:
    problems = proof.problems
    db = await Database.open(database_url)
    try:
        async with db.transaction(readonly=True) as tx:
            for group in groups:
                try:
                    record = await tx.games.latest_for_chat(chat_id=group.id)
                except NotFound:
                    problems.append(f"group {group.id}: no game stored")
                    continue
                if record.status != "finished":
                    problems.append(f"group {group.id}: game {record.id} is {record.status}")
            lost = [u for u in sorted(acknowledged) if not await tx.inbox.handled(update_id=u)]
        if lost:
            problems.append(f"acknowledged but not stored as handled: {lost[:10]}")
    finally:
        await db.close()
    if fake.webhook_updates():
        problems.append(f"updates never acknowledged: {len(fake.webhook_updates())}")
    # Each of the sleepy player's three turns: one half-time warning, then the timeout; the
    # third removes them (R18). A deadline handled twice would remove them a turn early
    # (two warnings), a warning sent twice would show four. (Counted deleted or not: a
    # warning is deleted once the game moves on.)
    sent = fake.messages(sleepy.id, include_deleted=True)
    warned = [m for m in sent if "Half your time is gone" in m.text]
    removed = [m for m in fake.messages(groups[0].id) if "was removed for not moving" in m.text]
    if len(warned) != 3 or len(removed) != 1:
        problems.append(
            f"the sleepy player: {len(warned)} half-time warnings (want 3), removed "
            f"{len(removed)} times (want once)"
        )
    limited = [c for c in fake.calls if c.error_code == 429 and "chat_id" in c.params]
    if limited:
        problems.append(f"{len(limited)} calls answered 429, e.g. {limited[0].method}")
    for group in groups:
        messages = fake.messages(group.id)
        tables = [m for m in messages if m.text.startswith("Durak · ")]  # table-title, trump
        lobbies = [m for m in messages if "Join" in m.button_texts or m.text.startswith("New game")]
        results = [m for m in messages if "Game over" in m.text]
        if len(tables) != 1 or len(results) != 1:
            problems.append(
                f"group {group.id}: {len(tables)} table messages, {len(results)} results"
            )
        del lobbies  # (a lobby's text changes as it closes: counted by its Join button)
        if tables and WAITING in tables[0].text:
            problems.append(f"group {group.id}: its table still waits: {tables[0].text[:120]!r}")
    for members in seated:
        for user in members:
            _check_hands(problems, fake, user, sleepy=user.id == sleepy.id)
    answers = [fake.answer_for(q) for q in people.queries]
    refused = [a.text for a in answers if a is not None and NOTHING_HAPPENED in (a.text or "")]
    said = [
        m.text
        for chat in [*(g.id for g in groups), *(u.id for m in seated for u in m)]
        for m in fake.messages(chat)
        if NOTHING_HAPPENED in m.text
    ]
    if refused or said:
        problems.append(f"answered 'nothing happened': {(refused + said)[:3]}")


def _check_hands(problems: list[str], fake: FakeTelegram, user: FakeUser, *, sleepy: bool) -> None:
    for message in fake.messages(user.id):
        versions = [*message.history, (message.html, message.reply_markup)]
        if not sleepy and any(RAN_OUT in html for html, _ in versions):
            when = [
                (c.via, round(c.at, 2))
                for c in fake.calls
                if c.chat_id == user.id and RAN_OUT in str(c.params.get("text", ""))
            ]
            problems.append(f"{user.first_name}'s time ran out (told by, at: {when[:2]})")
            return
        shown = [max(_moves(markup)) for _, markup in versions if _has_moves(markup)]
        # (the last keyboard is the latest: an older one that landed, from a worker that
        # hung with it on its way, was shown over again)
        if shown and shown[-1] != max(shown):
            calls = [
                (c.via, round(c.at, 2), max(_moves(_markup(c.params)), default=None))
                for c in fake.calls
                if c.method == "editMessageText"
                and c.chat_id == user.id
                and c.params.get("message_id") == message.message_id
                and c.ok
            ]
            problems.append(
                f"{user.first_name}'s hand was left at an older move: {shown[-5:]}; "
                f"its last edits (by, at, move): {calls[-4:]}"
            )
            return
        if _has_moves(message.reply_markup) and not message.deleted:
            into = [
                (c.method, c.via, round(c.at, 2), c.ok)
                for c in fake.calls
                if c.chat_id == user.id
                and c.params.get("message_id") in (message.message_id, None)
                and c.method in ("sendMessage", "editMessageText", "deleteMessage")
            ]
            problems.append(
                f"{user.first_name} kept live buttons on message {message.message_id} "
                f"({message.text[:60]!r}); the last calls into that chat: {into[-6:]}"
            )
            return


def _check_logs(proof: Proof, logs: list[Path]) -> None:
    for path in logs:
        text = path.read_text(errors="replace")
        if "Traceback" in text:
            line = next(line for line in text.splitlines() if "Traceback" in line)
            proof.problems.append(f"{path.name}: a traceback ({line[:100]})")
        told = text.count("the database cannot store updates")
        if told > max(1, proof.outages):
            proof.problems.append(f"{path.name}: said {told} times the database cannot store")
