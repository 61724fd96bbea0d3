"""Bot benchmark: many games at once through the whole stack and the fake Bot API.

N groups (default 200) of P players (default 4, 800 distinct users) open their games through the
real python-telegram-bot stack (handlers, the feature rooms of `bot.play`, rendering, `Outbox`,
PTB's HTTPX request talking to `tests.fakes.telegram.FakeTelegram`, no rate limiter) and SQLite
on disk.
Then every game is played to the end by its own asyncio task, all at once, so updates of
different chats interleave: a player the game waits for taps a button of their current hand
message, until the game is over.

Who taps what: with probability `--mistakes` (default 0.1) any button of the keyboard, as the
tests' `tap_random` does (mostly cards that cannot be played now, answered with why not), else a
button a person would tap: a card shown as playable (not between dots) or an action button
(take, pass, ...). `--mistakes 1` gives the tests' all-random taps (much longer games).

When: `--rate R` (default 500, the target): taps arrive at R per second on average (Poisson),
whichever game they fall to; each goes to a game whose player has their new keyboard (the
previous tap of that game handled), the one waiting longest. When the bot is slower than R,
arrivals pile up and every game taps as soon as it can: fewer updates per second and longer
latencies show it. `--rate 0`: no schedule, every game taps as soon as it can (capacity; latency
is then mostly the wait behind the other games' updates).

Settings as in production where it matters: a group's table message is edited at most every
`table_edit_interval` = 3.0 s (coalesced); turn deadlines are set and scheduled with the wall
clock but are an hour long, so none fires. Pending table edits are flushed at the end and counted.

Printed, for the play phase (first tap to the last flushed table edit):
- updates (button taps) handled per second: over the whole play phase, and over its steady part
  (until the first game ends, while every game is still tapping); with a schedule, also the
  rate at which taps were offered (a Poisson process's rate over a run is not exactly `--rate`);
- CPU time of the process per update, split into the fake Bot API's own work and the rest (the
  bot, and the simulated users' few lines);
- p50/p99 latency of one update: from when it was sent (its arrival, or when its game's previous
  tap had been handled if that is later) until its handler returned, i.e. after the last Bot API
  call made for it; this includes waiting for the event loop behind other chats' updates and
  PTB's parsing of the update (coalesced table edits run later, in their own task). Also the
  time in `process_update` alone;
- Bot API calls per player action: every call of the play phase (answers to taps and flushed
  table edits included) divided by the taps; the split per method; and per kind of tap (each
  call is counted for the tap that caused it, a delayed table edit too);
- peak memory: the process's max RSS (bot, fake Bot API and simulated users together) and, with
  `--tracemalloc`, the traced Python heap peak of the play phase (makes everything ~4x slower).
Then it checks that every game ended, every tap was answered and each game stored a result.

Targets (issue): >= 500 updates/s, p99 < 50 ms, <= 4 Bot API calls per player action on average
in 4-player games.

Run: `python bench/bot.py [--games N] [--players P] [--seed S] [--rate R] [--mistakes M]`.
`--database postgresql` runs it on a PostgreSQL server of its own (Debian's binaries, with
PostgreSQL's durable defaults), `--database postgresql://...` on an empty database of yours;
one bot process either way (several workers: `--workers N`, bench/workers.py).
`python bench/bot.py --human ...` is another benchmark: players at human pace under Telegram's
flood limits, latencies a person notices (see bench/human.py).
The defaults make about 37,000 taps (~185 per 4-player game): at 500 updates/s the play phase
takes about 75 s; a slower bot takes proportionally longer (`--games 50` for a quick look).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import resource
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# This file is named like the package it measures: keep its folder off the import path, and put
# the repository root last (the fake Bot API and the test harness live in `tests`; a compiled
# engine on PYTHONPATH must come before the sources).
_HERE = Path(__file__).parent.resolve()
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.append(str(_HERE.parent))
os.environ.setdefault("PTB_TIMEDELTA", "true")

from bot.app import build_application, start_services  # noqa: E402
from bot.play import Rooms  # noqa: E402
from storage import utcnow  # noqa: E402
from tests.bot.conftest import TOKEN, BotHarness, ManualClock, make_settings  # noqa: E402
from tests.fakes.telegram import FakeGroup, FakeMessage, FakeTelegram, FakeUser  # noqa: E402

NAMES = ("Alice", "Bob", "Carol", "Dan", "Eve", "Finn")
MAX_TAPS = 20_000  # per game: a game that needs more does not end
WAIT_FOR_HAND = 60.0  # seconds a player told "out of date" waits for the new hand at most
MOVE, NO_MOVE = "a move", "no move"

# The Bot API calls made on behalf of the tap being handled. The handler runs in the task that
# delivers the update, and a coalesced table edit runs in a task created (context copied) while
# handling the tap that asked for it: each call is counted for the tap that caused it.
_TALLY: ContextVar[list[int] | None] = ContextVar("tally", default=None)
# CPU time of other tasks while a call of the fake waits out its round trip (`--api-latency`),
# which is not the fake's own: per call, so kept in the context of the task making it.
_AWAY: ContextVar[list[float] | None] = ContextVar("away", default=None)


class CountingTelegram(FakeTelegram):
    """The fake Bot API, counting calls per method and for the tap that caused each one (see
    `_TALLY`). It keeps no record of calls and no edit history (the tests inspect those; here
    they would only add hundreds of megabytes of the fake's own to the peak memory)."""

    def __init__(self, *, round_trip: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.methods: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.seconds = 0.0  # CPU time of the fake's own work
        self.round_trip = round_trip
        if round_trip > 0:
            self.latency = self._network

    async def _network(self, method: str, params: Any) -> None:
        """Telegram's round trip: the call waits, the bot goes on with other work."""
        away = _AWAY.get()
        paused = time.thread_time()
        await asyncio.sleep(self.round_trip)
        if away is not None:
            away[0] += time.thread_time() - paused

    async def _handle(self, request: Any) -> Any:
        tally = _TALLY.get()
        if tally is not None:
            tally[0] += 1
        away = [0.0]
        token = _AWAY.set(away)
        started = time.thread_time()
        try:
            return await super()._handle(request)
        finally:
            self.seconds += time.thread_time() - started - away[0]
            _AWAY.reset(token)
            for call in self.calls:
                if call.ok is not None:
                    self.methods[call.method] += 1
                    if not call.ok:
                        self.failures[f"{call.method}: {call.description}"] += 1
            self.calls[:] = [call for call in self.calls if call.ok is None]

    def _apply_edit(self, msg: FakeMessage, *args: Any) -> Any:
        result = super()._apply_edit(msg, *args)
        msg.history.clear()
        return result


class WallClockHarness(BotHarness):
    """The tests' harness with the wall clock (deadlines as in production)."""

    async def start(self) -> None:
        self.app = build_application(
            self.settings,
            request=self.fake.request(),
            get_updates_request=self.fake.updates_request(),
            clock=utcnow,
            seeds=self._next_seed,
        )
        await self.app.initialize()
        await start_services(self.app)


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)  # tap sent -> handler returned
    handling: list[float] = field(default_factory=list)  # process_update called -> returned
    unanswered: int = 0
    stale: int = 0  # taps answered "out of date" (the player then waits for the new hand)
    taps_per_game: list[int] = field(default_factory=list)
    # when the first game ended (perf_counter), and how many taps had been handled by then: the
    # steady phase, in which every game is still tapping
    first_end: float | None = None
    taps_by_first_end: int = 0
    offered: int = 0  # arrival times the feeder made (with a schedule)
    # per tap, by whether it made a move: the number of Bot API calls it caused
    tallies: dict[str, list[list[int]]] = field(default_factory=lambda: {MOVE: [], NO_MOVE: []})


async def play_game(
    h: BotHarness,
    group: FakeGroup,
    users: dict[str, FakeUser],
    rng: random.Random,
    args: argparse.Namespace,
    arrivals: asyncio.Queue[float] | None,
    stats: Stats,
    changed: dict[int, asyncio.Event],
) -> None:
    """Tap hand buttons of players the game waits for until the game is over. A player told
    that their keyboard is out of date waits until their hand changes (`changed`: an event
    per player, set by one watcher of the fake), as a person would, instead of tapping it
    again and again while its edit is on its way.

    Each tap takes an arrival time from `arrivals` (or, without a schedule, goes right away) and
    is sent then, or as soon as the previous tap of this game has been handled if that is later.
    """
    stale = h.rooms.kit.t("en", "error-stale")
    for user in users.values():
        changed[user.id] = asyncio.Event()
    await _play(h, group, users, rng, args, arrivals, stats, stale, changed)


async def _play(
    h: BotHarness,
    group: FakeGroup,
    users: dict[str, FakeUser],
    rng: random.Random,
    args: argparse.Namespace,
    arrivals: asyncio.Queue[float] | None,
    stats: Stats,
    stale: str,
    changed: dict[int, asyncio.Event],
) -> None:
    rooms: Rooms = h.rooms
    fake, app = h.fake, h.app
    clock = time.perf_counter
    ready = clock()  # when the previous tap's handler returned
    taps = 0
    while True:
        record = rooms.store.live(group.id)
        if record is None or record.status != "running" or record.game is None:
            break
        move = record.game.move_number
        actor = rng.choice(sorted(record.game.to_act))
        user = users[actor]
        message = fake.message(user.id, record.hand_messages[actor])
        changed[user.id].clear()
        buttons = [b for row in message.buttons for b in row if b.callback_data]
        sensible = [b for b in buttons if not b.text.startswith("·")]
        pool = buttons if rng.random() < args.mistakes or not sensible else sensible
        if not pool:
            raise AssertionError(f"game in chat {group.id}: {actor} must act but has no buttons")
        update = user.tap_raw(message, rng.choice(pool).callback_data or "")
        if arrivals is None:
            # Through the event loop, so that all games take turns even when the bot handles an
            # update without ever suspending (updates from the network would interleave).
            await asyncio.sleep(0)
            sent = ready
        else:
            sent = max(await arrivals.get(), ready)
        tally = [0]
        token = _TALLY.set(tally)
        start = clock()
        try:
            await fake.deliver(app, update)
        finally:
            ready = clock()
            _TALLY.reset(token)
        stats.latencies.append(ready - sent)
        stats.handling.append(ready - start)
        # Answered? Then forget the query (the fake would keep every one until the end).
        answer = fake._callbacks.pop(update["callback_query"]["id"])
        if answer is None:
            stats.unanswered += 1
        elif answer.text == stale:
            stats.stale += 1
            await asyncio.wait_for(changed[user.id].wait(), WAIT_FOR_HAND)
        moved = rooms.store.live(group.id) is not record or record.game.move_number != move
        stats.tallies[MOVE if moved else NO_MOVE].append(tally)
        taps += 1
        if taps >= MAX_TAPS:
            raise AssertionError(f"game in chat {group.id} did not end after {taps} taps")
    stats.taps_per_game.append(taps)
    if stats.first_end is None:
        stats.first_end = clock()
        stats.taps_by_first_end = len(stats.latencies)


async def feed(
    arrivals: asyncio.Queue[float] | None, rate: float, rng: random.Random, stats: Stats
) -> None:
    """Put the arrival times of a Poisson process of `rate` per second into `arrivals`."""
    if arrivals is None:
        return
    clock = time.perf_counter
    due = clock()
    while True:
        while due <= clock():
            arrivals.put_nowait(due)
            stats.offered += 1
            due += rng.expovariate(rate)
        await asyncio.sleep(due - clock())


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def max_rss_mib() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


RESULTS_SQL = "SELECT COUNT(*) FROM finished_games"
STATUS_SQL = "SELECT status, COUNT(*) FROM games GROUP BY status"


async def stored_counts(url: str, db_path: Path) -> tuple[int, dict[str, int]]:
    if url.startswith("postgresql"):
        import asyncpg

        conn = await asyncpg.connect(url)
        try:
            results = await conn.fetchval(RESULTS_SQL)
            rows = [tuple(row) for row in await conn.fetch(STATUS_SQL)]
        finally:
            await conn.close()
    else:
        with sqlite3.connect(db_path) as sqlite:
            results = sqlite.execute(RESULTS_SQL).fetchone()[0]
            rows = sqlite.execute(STATUS_SQL).fetchall()
        sqlite.close()
    return int(results), {str(status): int(n) for status, n in rows}


async def run(args: argparse.Namespace, db_path: Path, url: str | None = None) -> bool:
    """On SQLite at `db_path`, or on the PostgreSQL at `url` (an empty database)."""
    settings = make_settings(
        db_path,
        database_url=url
        or f"sqlite:///{db_path}" + ("?executor=inline" if args.executor == "inline" else ""),
        table_edit_interval=args.table_edit_interval,
        turn_timeout=3600,
        lobby_timeout=3600,
        # A capacity benchmark: the players tap as fast as the bot answers, so Telegram's
        # per-chat limits (which the bot keeps itself) are raised out of the way, as for an
        # operator with higher limits; `bench/bot.py --human` measures under the real ones.
        private_sends=1_000_000,
        group_sends=1_000_000,
        bot_sends=1_000_000,
    )
    fake = CountingTelegram(token=TOKEN, round_trip=args.api_latency / 1000)
    h = WallClockHarness(  # its `clock` field is unused: the bot gets the wall clock
        fake=fake, db_path=db_path, clock=ManualClock(), settings=settings, seed=args.seed
    )
    await h.start()
    try:
        return await bench(h, args)
    finally:
        # Let the deadline scheduler go back to sleep before it is cancelled: on Python 3.11,
        # a cancel that arrives while it is being woken (a save just set its event) is
        # swallowed by `asyncio.wait_for`, and the shutdown would wait forever.
        await asyncio.sleep(0.05)
        await h.stop()


async def bench(h: BotHarness, args: argparse.Namespace) -> bool:
    fake = h.fake
    assert isinstance(fake, CountingTelegram)
    rss_start = rss_mib()
    rng = random.Random(args.seed)
    groups: list[tuple[FakeGroup, dict[str, FakeUser]]] = []
    for g in range(args.games):
        players = [
            h.user(1000 + g * args.players + i, NAMES[i % len(NAMES)]) for i in range(args.players)
        ]
        group = fake.group(-100_000 - g, f"Club {g}", admins={players[0]})
        groups.append((group, {str(p.id): p for p in players}))

    started = time.perf_counter()
    await asyncio.gather(*(h.open_game(group, list(users.values())) for group, users in groups))
    running = sum(
        1 for group, _ in groups if (r := h.rooms.store.live(group.id)) and r.status == "running"
    )
    print(
        f"setup: {args.games} lobbies opened, joined and started in "
        f"{time.perf_counter() - started:.2f} s ({fake.methods.total()} Bot API calls); "
        f"{running} games running"
    )

    gc.collect()
    if args.tracemalloc:
        tracemalloc.start()
    stats = Stats()
    fake.methods.clear()
    fake.failures.clear()
    fake.seconds = 0.0
    load_before = os.getloadavg()[0]
    cpu_before = cpu_seconds()
    loop_cpu_before = time.thread_time()
    started = time.perf_counter()
    seeds = [rng.randrange(2**32) for _ in groups]
    arrivals: asyncio.Queue[float] | None = asyncio.Queue() if args.rate > 0 else None
    changed: dict[int, asyncio.Event] = {}  # player -> their hand changed (see play_game)

    def seen(message: FakeMessage, change: object) -> None:
        event = changed.get(message.chat_id)  # type: ignore[arg-type]
        if event is not None:
            event.set()

    unwatch = fake.watch(seen)
    feeder = asyncio.create_task(feed(arrivals, args.rate, random.Random(rng.random()), stats))
    try:
        await asyncio.gather(
            *(
                play_game(h, group, users, random.Random(seed), args, arrivals, stats, changed)
                for (group, users), seed in zip(groups, seeds, strict=True)
            )
        )
    finally:
        feeder.cancel()
        unwatch()
    played = time.perf_counter() - started
    await h.rooms.sender.settled()  # table edits still waiting for their interval
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds() - cpu_before
    loop_cpu = time.thread_time() - loop_cpu_before
    traced_peak = tracemalloc.get_traced_memory()[1] if args.tracemalloc else None
    tracemalloc.stop()

    taps = len(stats.latencies)
    calls = fake.methods.total()
    caused = {kind: sum(t[0] for t in tallies) for kind, tallies in stats.tallies.items()}
    unanswered = stats.unanswered + len(fake.unanswered_callbacks())
    offered = f"{args.rate:g}/s offered" if args.rate > 0 else "as fast as handled"
    print(f"games: {args.games} x {args.players} players, seed {args.seed}")
    print(f"database: {h.settings.database_url.split(':')[0]}, SQLite executor: {args.executor}")
    print(f"taps: {offered}, {args.mistakes:.0%} on any button, the rest on playable ones")
    print(f"Bot API round trip: {args.api_latency:g} ms")
    print(f"player actions (button taps): {taps}, {taps / args.games:.1f} per game")
    print(f"play phase: {played:.2f} s, {elapsed:.2f} s with the final table flush")
    print(f"load average (1 min) before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f}")
    print(f"updates handled per second: {taps / played:.0f}")
    if stats.first_end is not None and stats.taps_by_first_end:
        steady = stats.first_end - started
        print(
            f"  while all {args.games} games were running (the first {steady:.1f} s, "
            f"{stats.taps_by_first_end} taps): {stats.taps_by_first_end / steady:.0f} per second"
        )
    if args.rate > 0:
        print(
            f"  taps offered: {stats.offered / played:.0f} per second (a Poisson process at "
            f"{args.rate:g}/s); {max(0, stats.offered - taps)} of them left unused when play ended"
        )
    print(f"CPU time per update: {cpu / taps * 1000:.2f} ms")
    bot_cpu = (cpu - fake.seconds) / taps
    print(
        f"  of which the fake Bot API: {fake.seconds / taps * 1000:.2f} ms; the rest (bot, "
        f"users) {bot_cpu * 1000:.2f} ms, i.e. {1 / bot_cpu:.0f} updates/s per core"
    )
    print(
        f"  the event loop's thread: {loop_cpu / taps * 1000:.2f} ms per update, "
        f"busy {loop_cpu / elapsed:.0%} of the time"
    )
    print(f"latency p50: {percentile(stats.latencies, 50) * 1000:.2f} ms")
    print(f"latency p99: {percentile(stats.latencies, 99) * 1000:.2f} ms")
    print(
        f"handling time alone (process_update) p50/p99/max: "
        f"{percentile(stats.handling, 50) * 1000:.2f}/"
        f"{percentile(stats.handling, 99) * 1000:.2f}/{max(stats.handling) * 1000:.2f} ms"
    )
    print(f"Bot API calls: {calls}")
    print(f"Bot API calls per player action: {calls / taps:.2f}")
    for method, n in fake.methods.most_common():
        print(f"  {method}: {n} ({n / taps:.3f} per action)")
    for kind, tallies in stats.tallies.items():
        mean = caused[kind] / len(tallies) if tallies else 0.0
        print(f"  taps that made {kind}: {len(tallies)}, {mean:.2f} calls each")
    print(f"  calls of no tap (final table flush): {calls - sum(caused.values())}")
    for what, n in fake.failures.most_common():
        print(f"  failed: {n} x {what}")
    print(f"peak memory (max RSS of the process): {max_rss_mib():.1f} MiB")
    print(f"  RSS after start-up, before the games: {rss_start:.1f} MiB; now {rss_mib():.1f} MiB")
    if traced_peak is not None:
        print(f"peak memory (tracemalloc, play phase): {traced_peak / 2**20:.1f} MiB")

    results, statuses = await stored_counts(h.settings.database_url, h.db_path)
    live = sum(1 for group, _ in groups if h.rooms.store.live(group.id) is not None)
    print(f"results stored: {results} of {args.games} games; games by status: {statuses}")
    print(f"unanswered taps: {unanswered}; games still running: {live}")
    print(f"taps answered out of date (the player then waited for the new hand): {stats.stale}")
    ok = results == args.games and live == 0 and unanswered == 0
    if not ok:
        print("FAILED: not every game ended with a stored result and every tap answered")
    return ok


def main() -> None:
    if "--human" in sys.argv[1:]:  # at human pace, under Telegram's limits: bench/human.py
        from bench.human import main as human

        human([arg for arg in sys.argv[1:] if arg != "--human"])
        return
    if any(arg.startswith("--workers") for arg in sys.argv[1:]):  # processes: bench/workers.py
        from bench.workers import main as workers

        workers(sys.argv[1:])
        return
    parser = argparse.ArgumentParser(description="Whole-bot benchmark against the fake Bot API.")
    parser.add_argument("--games", type=int, default=200, help="games played at once")
    parser.add_argument("--players", type=int, default=4, help="players per game (2-6)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the deals and the taps")
    parser.add_argument(
        "--rate",
        type=float,
        default=500,
        help="taps per second offered over all games; 0: each game taps as soon as it can",
    )
    parser.add_argument(
        "--mistakes",
        type=float,
        default=0.1,
        help="share of taps on any button (1: all random, like the tests' tap_random)",
    )
    parser.add_argument(
        "--table-edit-interval",
        type=float,
        default=3.0,
        help="seconds between table edits of one group (production default 3.0)",
    )
    parser.add_argument(
        "--executor",
        choices=("aiosqlite", "inline"),
        default="aiosqlite",
        help="SQLite executor (DATABASE_URL's ?executor=; the default is production's)",
    )
    parser.add_argument(
        "--api-latency",
        type=float,
        default=0.0,
        help="milliseconds each Bot API call takes to be answered (Telegram's round trip; "
        "default 0: answered at once)",
    )
    parser.add_argument("--tracemalloc", action="store_true", help="also trace the Python heap")
    parser.add_argument(
        "--database",
        default="sqlite",
        help="sqlite (default: a file in a temporary folder); postgresql: a PostgreSQL server "
        "of its own for the run (Debian's binaries, durable settings); or a postgresql:// URL "
        "of an empty database",
    )
    args = parser.parse_args()
    if not 2 <= args.players <= len(NAMES):
        parser.error(f"--players must be 2..{len(NAMES)}")
    with tempfile.TemporaryDirectory(prefix="durak-bench-") as tmp:
        db_path = Path(tmp) / "durak.sqlite3"
        if args.database == "sqlite":
            ok = asyncio.run(run(args, db_path))
        elif args.database == "postgresql":
            from tests import postgres

            server = postgres.PostgresServer.start(durable=True)
            try:
                print(f"database: a PostgreSQL server of its own on port {server.port}")
                ok = asyncio.run(run(args, db_path, server.url("postgres")))
            finally:
                server.stop()
        else:
            print(f"database: {args.database.split('@')[-1]}")  # (no password)
            ok = asyncio.run(run(args, db_path, args.database))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
