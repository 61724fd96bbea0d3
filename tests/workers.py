"""Several bot workers on one PostgreSQL behind a webhook, with workers killed mid-turn: the
proof of issue #20, for `tests/bot/test_workers_proof.py` and for an operator
(`python -m tools.prove_workers`).

`prove` starts N `python -m bot` processes in webhook mode on one database, against the
fake Bot API on loopback (enforcing Telegram's limits) whose `WebhookDelivery` posts every
update to the workers round-robin, as a reverse proxy would, and sends an update again
where a worker did not answer 200. People play G games at once: each taps a playable button
of their hand once it has changed since their last tap (or their last tap was answered
without a change), like a person looking at the phone. One player of the first game never
taps, so its turns run out (three timeouts and that player is out: R18). Meanwhile workers
are SIGKILLed at random moments (after a random number of further Bot API calls, so in the
middle of turns), each replaced by a new process on the same port; then every worker is
stopped in turn with SIGTERM and replaced (a rolling restart).

What is checked afterwards (`Proof.problems`, empty when all holds):

- every game finished, with a stored result;
- no acknowledged update is lost: every update a worker answered 200 is stored as handled
  (a worker answers 200 only after its commit), and every pending update was acknowledged
  in the end;
- the sleepy player was warned at half time exactly three times and removed once, after
  the third timeout (a deadline handled twice would remove them a turn early);
- no call was answered 429 (every chat within its budget, across workers);
- each group saw one table message per game.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import random
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.callbacks import MoveData, decode
from storage import Database, NotFound
from tests.bot.conftest import TOKEN
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeGroup, FakeMessage, FakeTelegram, FakeUser
from tests.fakes.telegram.limits import Limits, Window
from tests.fakes.webhook import WebhookDelivery

ROOT = Path(__file__).resolve().parents[1]
# Telegram's limits ten times as fast (games at machine pace would take minutes under the
# real ones), enforced by the fake and given to the bot as its budgets.
LIMITS = Limits(private=Window(30, 3.0), group=Window(200, 60.0), bot=Window(300, 1.0))
SECRET = "proof-of-workers_0123456789"
PUBLIC_URL = "https://durak.example/telegram/hook"
NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank")
STALE = "This button is out of date"  # locales/en.ftl, error-stale


@dataclass
class Worker:
    """One `python -m bot` process in webhook mode; `port` stays when it is replaced."""

    index: int
    port: int
    workdir: Path
    process: asyncio.subprocess.Process | None = None
    generation: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/telegram/hook"

    @property
    def log(self) -> Path:
        return self.workdir / f"worker-{self.index}-{self.generation}.log"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class Cluster:
    """The workers: started, killed, stopped and replaced."""

    def __init__(
        self, server: LoopbackBotAPI, database_url: str, workdir: Path, count: int, **settings: str
    ) -> None:
        self.server = server
        self.database_url = database_url
        self.settings = settings
        self.workers = [Worker(i, _free_port(), workdir) for i in range(count)]
        self.kills = 0
        self.restarts = 0

    @property
    def urls(self) -> list[str]:
        return [w.url for w in self.workers]

    def _env(self, worker: Worker) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("BOT_", "DATABASE_", "TURN_", "LOBBY_", "LOG_", "WEBHOOK_"))
            and "proxy" not in key.lower()
        }
        env.update(
            BOT_TOKEN=TOKEN,
            BOT_API_BASE_URL=self.server.base_url,
            DATABASE_URL=self.database_url,
            WEBHOOK_URL=PUBLIC_URL,
            WEBHOOK_SECRET=SECRET,
            WEBHOOK_PORT=str(worker.port),
            LOG_LEVEL="INFO",
            NO_PROXY="127.0.0.1,localhost",
            PYTHONPATH=os.pathsep.join(
                [*filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)), str(ROOT)]
            ),
        )
        env.update(self.settings)
        return env

    async def start(self, worker: Worker) -> None:
        worker.generation += 1
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

    async def start_all(self) -> None:
        for worker in self.workers:
            await self.start(worker)

    async def kill(self, worker: Worker) -> None:
        """SIGKILL, as a crash or the OOM killer; then a new process in its place."""
        process = worker.process
        assert process is not None
        if process.returncode is None:
            process.kill()
            await process.wait()
        self.kills += 1
        await self.start(worker)

    async def restart(self, worker: Worker) -> int:
        """SIGTERM (a deploy), wait for the stop, start a new one; the old one's exit code."""
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

    def logs(self) -> str:
        parts = []
        for worker in self.workers:
            for generation in range(1, worker.generation + 1):
                path = worker.workdir / f"worker-{worker.index}-{generation}.log"
                if path.exists():
                    parts.append(f"--- {path.name}\n{path.read_text(errors='replace')}")
        return "\n".join(parts)


def hand_message(fake: FakeTelegram, user: FakeUser) -> FakeMessage | None:
    """The user's current hand: the bot's latest private message with game buttons."""
    for message in reversed(fake.messages(user.id)):
        if any(_is_move(b.callback_data) for row in message.buttons for b in row):
            return message
    return None


def _is_move(data: str | None) -> bool:
    try:
        return isinstance(decode(data), MoveData)
    except ValueError:
        return False


class People:
    """The players, each tapping a playable button once their hand changed (or their last
    tap was answered and changed nothing). Each player's hand is followed through the
    fake's changes (`FakeTelegram.watch`), so that asking who wants to tap, after every
    Bot API call, looks only at the players whose hand or tap's answer may have changed."""

    def __init__(self, fake: FakeTelegram, users: list[FakeUser], rng: random.Random) -> None:
        self.fake = fake
        self.users = {user.id: user for user in users}
        self.rng = rng
        self.sleepy: set[int] = set()
        self.taps = 0
        self._tapped: dict[int, tuple[int, int, str]] = {}  # user -> message, edits, query
        self._hands: dict[int, FakeMessage] = {}  # user -> their latest hand message
        self._look: set[int] = set(self.users)  # users whose hand changed since last looked
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
            and _has_moves(message)
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
            if b.callback_data and _is_move(b.callback_data) and not b.text.startswith("·")
        ]
        return (message, playable) if playable else None

    def _candidates(self) -> set[int]:
        """Players whose hand changed, or whose last tap (on the same hand) may have been
        answered since."""
        return self._look | set(self._tapped)

    def ready(self) -> bool:
        return any(self._wants(uid) is not None for uid in self._candidates())

    def act(self) -> int:
        """Queue a tap for everyone who wants to tap now; how many."""
        count = 0
        for uid in sorted(self._candidates()):
            self._look.discard(uid)
            wanted = self._wants(uid)
            if wanted is None:
                continue
            message, playable = wanted
            update = self.users[uid].tap(message, self.rng.choice(playable))
            self._tapped[uid] = (message.message_id, message.edits, update["callback_query"]["id"])
            self.fake.queue(update)
            count += 1
        self.taps += count
        return count


def _has_moves(message: FakeMessage) -> bool:
    return any(_is_move(b.callback_data) for row in message.buttons for b in row)


@dataclass
class Proof:
    games: int
    workers: int
    kills: int = 0
    restarts: int = 0
    taps: int = 0
    acknowledged: int = 0
    redelivered: int = 0
    problems: list[str] = field(default_factory=list)

    def report(self) -> str:
        lines = [
            f"{self.workers} workers, {self.games} games, {self.kills} workers SIGKILLed, "
            f"{self.restarts} restarted with SIGTERM",
            f"taps: {self.taps}; updates acknowledged: {self.acknowledged}; posts that failed "
            f"and were sent again: {self.redelivered}",
        ]
        lines += [f"PROBLEM: {p}" for p in self.problems] or ["every check holds"]
        return "\n".join(lines)


async def prove(
    database_url: str,
    workdir: Path,
    *,
    workers: int = 3,
    games: int = 3,
    players: int = 3,
    kills: int = 4,
    seed: int = 1,
    turn_timeout: int = 8,
    progress: Callable[[str], None] | None = None,
) -> Proof:
    """Play `games` games on `workers` workers, with `kills` SIGKILLs at random moments and a
    rolling restart; the proof of what held."""
    say = progress or (lambda line: None)
    rng = random.Random(seed)
    fake = FakeTelegram(token=TOKEN)
    fake.enforce(LIMITS)  # Telegram's limits, ten times as fast: a 429 past them
    users = [fake.user(100 + i, NAMES[i % len(NAMES)] + str(i)) for i in range(games * players)]
    groups: list[FakeGroup] = []
    seated: list[list[FakeUser]] = []
    for g in range(games):
        members = users[g * players : (g + 1) * players]
        groups.append(fake.group(-5000 - g, f"Club {g}", admins={members[0]}))
        seated.append(members)
    people = People(fake, users, random.Random(rng.random()))
    sleepy = seated[0][-1]
    proof = Proof(games=games, workers=workers)
    async with LoopbackBotAPI(fake) as server:
        cluster = Cluster(
            server,
            database_url,
            workdir,
            workers,
            TURN_TIMEOUT=str(turn_timeout),
            COMPUTER_DELAY="0",
            TABLE_EDIT_INTERVAL="1",
            # the bot's budgets as the fake's limits: a worker over them meets a 429
            PRIVATE_SENDS=str(LIMITS.private.count),
            PRIVATE_WINDOW=str(LIMITS.private.seconds),
            GROUP_SENDS=str(LIMITS.group.count),
            GROUP_WINDOW=str(LIMITS.group.seconds),
            BOT_SENDS=str(LIMITS.bot.count),
        )
        await cluster.start_all()
        try:
            await server.wait_for(lambda: fake.webhook is not None)  # the first worker is up
            async with WebhookDelivery(fake, urls=cluster.urls) as delivery:
                await open_games(fake, server, delivery, groups, seated)
                say("games started")
                people.sleepy.add(sleepy.id)
                await _play(fake, server, delivery, cluster, people, groups, rng, kills, say)
                await delivery.idle()
                proof.acknowledged = len(delivery.acknowledged)
                proof.redelivered = len(delivery.failures)
                acknowledged = set(delivery.acknowledged)
        finally:
            people.close()
            codes = await cluster.stop_all()
        proof.kills, proof.restarts, proof.taps = cluster.kills, cluster.restarts, people.taps
        if any(code != 0 for code in codes):
            proof.problems.append(f"workers did not stop cleanly on SIGTERM: exit codes {codes}")
    await _check(proof, database_url, fake, groups, sleepy, acknowledged)
    if proof.problems:
        (workdir / "workers.log").write_text(
            cluster.logs() + _what_telegram_saw(fake, groups, sleepy)
        )
    return proof


def _what_telegram_saw(fake: FakeTelegram, groups: list[FakeGroup], sleepy: FakeUser) -> str:
    lines = ["", "--- what the fake Telegram shows"]
    for chat_id in [g.id for g in groups] + [sleepy.id]:
        for m in fake.messages(chat_id):
            text = m.text.replace("\n", " | ")[:160]
            lines.append(f"chat {chat_id} message {m.message_id} ({m.edits} edits): {text}")
    for call in fake.calls:
        if call.error_code == 429:
            lines.append(f"429: {call.method} {call.params.get('chat_id')}: {call.description}")
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
    delivery: WebhookDelivery,
    cluster: Cluster,
    people: People,
    groups: list[FakeGroup],
    rng: random.Random,
    kills: int,
    say: Callable[[str], None],
) -> None:
    def over() -> bool:
        return all(game_over(fake, g) for g in groups)

    async def after_calls(low: int, high: int) -> None:
        """Until a random number of further Bot API calls were answered (mid-turn)."""
        target = len(fake.calls) + rng.randint(low, high)
        await server.wait_for(lambda: len(fake.calls) >= target or over())

    async def chaos() -> None:
        for n in range(kills):
            await after_calls(20, 120)
            if over():
                return
            worker = rng.choice(cluster.workers)
            say(f"SIGKILL worker {worker.index} ({n + 1} of {kills})")
            await cluster.kill(worker)
        for worker in cluster.workers:  # a rolling restart: each in turn
            await after_calls(20, 60)
            if over():
                return
            say(f"SIGTERM worker {worker.index} (rolling restart)")
            await cluster.restart(worker)

    chaos_task = asyncio.create_task(chaos())
    try:
        while not over():
            await _first(server.wait_for(lambda: over() or people.ready()), chaos_task)
            people.act()
        await chaos_task
    finally:
        if not chaos_task.done():
            chaos_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await chaos_task


async def _first(waiting: Awaitable[None], other: asyncio.Task[None]) -> None:
    """Wait for `waiting`; an error of `other` (the chaos) stops the waiting."""
    task = asyncio.ensure_future(waiting)
    await asyncio.wait({task, other}, return_when=asyncio.FIRST_COMPLETED)
    if other.done() and other.exception() is not None:
        task.cancel()
        other.result()
    await task


async def _check(
    proof: Proof,
    database_url: str,
    fake: FakeTelegram,
    groups: list[FakeGroup],
    sleepy: FakeUser,
    acknowledged: set[int],
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
    # (two warnings), a warning sent twice would show four.
    warned = [m for m in fake.messages(sleepy.id) if "left for your move" in m.text]
    removed = [m for m in fake.messages(groups[0].id) if "was removed for not moving" in m.text]
    if len(warned) != 3 or len(removed) != 1:
        problems.append(
            f"the sleepy player: {len(warned)} half-time warnings (want 3), removed "
            f"{len(removed)} times (want once)"
        )
    # (a chat's calls: setWebhook too is refused within a second of the last, as Telegram
    # does, and the workers starting together wait for it: that is no chat's budget)
    limited = [c for c in fake.calls if c.error_code == 429 and "chat_id" in c.params]
    if limited:
        problems.append(f"{len(limited)} calls answered 429, e.g. {limited[0].method}")
    for group in groups:
        tables = [m for m in fake.messages(group.id) if m.text.split("\n", 1)[0] == "Durak"]
        if len(tables) != 1:
            problems.append(f"group {group.id}: {len(tables)} table messages")
