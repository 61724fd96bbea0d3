"""Bot benchmark at human pace, under Telegram's flood limits (issue #18).

    python bench/bot.py --human [--games 10,30,60,100,300] [--seconds 60] [--bot-limit 30,1000]
        [--onlookers N]
    (the same as `python bench/human.py ...`)

G groups of P players (default 3) play at once through the whole stack, as in `bench/bot.py`
(the real bot in this process, python-telegram-bot's HTTP stack, the fake Bot API, SQLite on
disk), but every player is a person. They look at their own hand message and see it change
when the fake applies a call (`FakeTelegram.watch`). While the game waits for them, they tap
a sensible button (a card not shown between dots, or take, pass...; with probability
`--mistakes` any button) 1.0-2.5 s (uniform, seeded) after their keyboard last changed, or
after their own last tap if that is later (a tap that changed nothing, on a card that cannot
be played). A player whose hand does not show the latest move yet waits for it: nobody taps
what they cannot see. The fake enforces Telegram's limits (`tests/fakes/telegram/limits.py`:
3 calls in 3 s into a private chat, 20 in 60 s into a group, `--bot-limit` a second in all,
default 30; sends, edits and deletions count, answers to taps do not) and answers a call over
them 429 with retry_after. Each call takes `--api-latency` ms (default 50, a round trip to
Telegram) before the fake applies and answers it.

The settings are production's defaults (a group's table edited at most every 3 s, turn
alerts, 90 s a turn), the bot's send budgets included if `bot.config.Settings` has them
(fields named `send_*`, `*_budget(s)`, `*_sends`): they are printed, `--bot-limit` also
raises those of them whose names say `bot`, `global` or `total`, and `--set NAME=VALUE` sets
any setting. The games are opened, joined and started first, with no limits (as many lobbies
at once would meet them before play begins); with `--lobby-pace`, at human pace within the
limits instead: the players join one after another, each 1.0-2.5 s after the one before, and
the opener taps Start as long after the last join (a game's first minute of play then has the
lobby's and the start's calls in its group's window, as in a real chat). Play then runs for
`--seconds`; its first `--warmup` seconds are not measured (every game's first tap comes in the
same second and a half). Then nobody taps any more, and the bot has up to `--drain` seconds
to show what is on its way: what it has not shown by then counts as never shown (an infinite
latency in the percentiles, printed as "never").

`--onlookers N`: N people per game watch it in the Mini App from the start of play, each
holding its event stream (`bench/onlookers.py`); printed: the states they got and the lag
from a state being built at a save to its arrival in their client.

Measured over the taps of the measured part, each from its arrival (when the simulated player
sends it):
- handover: a tap that made a move (the game's move number went up) hands over to the players
  the game awaits after it whose hand must show something new (the bot's own
  `Screens.hand_state` of them differs before and after the tap; the tapper too, if still
  awaited). For each: from the tap's arrival until their hand message (the one they look at:
  the latest with game buttons in their chat, a turn alert's new one included) first shows a
  keyboard of that move or a later one (game buttons carry the move number they were drawn
  at, `bot.callbacks`). One sample per move and awaited player; p50, p95, and the p95 of the
  last third of the measured part (a growing queue shows there);
- watchers' hands: the same, for players whose hand changes but who are not awaited (the
  tapper's hand, a card shorter, say);
- answer: from a tap's arrival until its answerCallbackQuery reached the fake (applied, after
  its round trip); every tap, moves or not;
- table lag: from a move's tap until the group's table message is edited to show that move or a
  later one; and its p95 over a game's first minute of play (`FIRST_MINUTE` s from the first
  tap, the warm-up included: the lobby's and the start's calls are still in the group's window
  then). A table carries no move number: an edit counts as showing the move number the
  game had when the edit's request reached the fake (the bot renders and sends a table under
  the chat's lock, so no move comes in between);
- sends per action: the counted calls (sendMessage, editMessageText, deleteMessage) that
  Telegram took during the measured part, per tap in it; and the 429s in it (goal 0), into
  private chats and into groups;
- notifying messages per player-turn: new messages that made a phone announce them (sent
  without disable_notification: turn alerts in private chats; results and notices in a group)
  per player-turn, a player-turn being each time the game starts waiting for a player (a player
  in `to_act` after a move who was not before it).

Targets (issues #18 and #31), with the bot's default budgets:
- "targets": handover p95 < 1 s, answer p95 < 300 ms, table lag p95 < 15 s and no 429 (at 30
  and 60 games, the bot-wide 30 a second);
- "graceful": answer p95 < 300 ms, the awaited player's hand p95 < 2 s and table lag p95 <
  30 s, over the measured part and over its last third (not growing), no 429; watchers'
  hands may lag (at 100 games);
- with the bot-wide ceiling raised (`--bot-limit 1000`: the per-chat budgets alone): "targets"
  at 100 games.
The last lines say, for each ceiling, the largest game count run up to which each holds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import platform
import random
import re
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Named like no package, but next to `bot.py`, which is: keep this folder off the import path
# and put the repository root last (see bench/bot.py).
_HERE = Path(__file__).parent.resolve()
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.append(str(_HERE.parent))
os.environ.setdefault("PTB_TIMEDELTA", "true")

from bench.bot import NAMES, CountingTelegram, WallClockHarness, percentile  # noqa: E402
from bot.callbacks import BadCallback, MoveData, Refresh, decode  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.play import Rooms  # noqa: E402
from bot.sandbox.telegram.limits import COUNTED  # noqa: E402
from bot.telegram.handlers import ROOMS_KEY  # noqa: E402
from engine import COMPILED  # noqa: E402
from storage import GameRecord  # noqa: E402
from tests.bot.conftest import TOKEN, ManualClock  # noqa: E402
from tests.fakes.telegram import Button, FakeGroup, FakeMessage, FakeUser, Limits, Window  # noqa: E402

THINK = (1.0, 2.5)  # seconds a player looks at a changed keyboard before tapping
HANDOVER_TARGET, GRACEFUL_HAND, ANSWER_TARGET = 1.0, 2.0, 0.3  # seconds (p95)
FIRST_MINUTE = 60.0  # seconds of play from the first tap: the table lag of a game's first minute
TABLE_TARGET, GRACEFUL_TABLE = 15.0, 30.0  # seconds (p95)
_BUDGET = re.compile(r"^send_|^sends_|_sends$|_budgets?$")
_BOT_WIDE = re.compile(r"bot|global|total")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


# ------------------------------------------------------------------------- the bot's budgets


def budget_settings() -> dict[str, Any]:
    """The bot's send budgets, if it has settings for them: name -> default."""
    return {
        name: info.default for name, info in Settings.model_fields.items() if _BUDGET.search(name)
    }


def raised_budgets(ceiling: int) -> dict[str, Any]:
    """The bot-wide budgets set to `ceiling` a second (a number, or the first number of a
    text such as "30/1")."""
    raised: dict[str, Any] = {}
    for name, default in budget_settings().items():
        if not _BOT_WIDE.search(name):
            continue
        if isinstance(default, bool):
            continue
        if isinstance(default, int | float):
            raised[name] = type(default)(ceiling)
        elif isinstance(default, str) and _NUMBER.search(default):
            raised[name] = _NUMBER.sub(str(ceiling), default, count=1)
    return raised


# ------------------------------------------------------------------------- what is measured


@dataclass
class Sample:
    """A change the bot must show: from `at` (a tap's arrival) until a message shows move
    `move` or a later one (`done`; None: not yet)."""

    at: float
    move: int
    measured: bool
    done: float | None = None

    @property
    def latency(self) -> float:
        return math.inf if self.done is None else self.done - self.at


def resolve(pending: list[Sample], shown: deque[tuple[float, int]]) -> None:
    """Mark done what `shown` (times and move numbers a message showed) has shown."""
    for sample in pending:
        sample.done = next((t for t, move in shown if t >= sample.at and move >= sample.move), None)
    pending[:] = [s for s in pending if s.done is None]


@dataclass(eq=False)
class Player:
    user: FakeUser
    pid: str
    chat: int  # the group of their game
    rng: random.Random
    hand: int | None = None  # the message id of the hand they look at
    keyboard: Any = None  # its keyboard, as they last saw it
    changed: float = 0.0  # when their keyboard last changed
    last_tap: float = 0.0
    shown: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=16))
    pending: list[Sample] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(eq=False)
class Table:
    shown: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=16))
    pending: list[Sample] = field(default_factory=list)


def keyboard_move(message: FakeMessage) -> int | None:
    """The move number a hand's game buttons were drawn at (None: no game buttons)."""
    for row in message.buttons:
        for button in row:
            with contextlib.suppress(BadCallback):
                data = decode(button.callback_data)
                if isinstance(data, MoveData):
                    return data.move
    return None


def sensible(button: Button) -> bool:
    """A button a person means to tap: a card that can be played now, or an action."""
    if not button.callback_data or button.text.startswith("·"):
        return False
    try:
        data = decode(button.callback_data)
    except BadCallback:
        return False
    return isinstance(data, MoveData) and not isinstance(data.intent, Refresh)


class HumanTelegram(CountingTelegram):
    """The counting fake (bench/bot.py), also noting when each tap's answer arrived."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answered: dict[str, float] = {}

    def _api_answerCallbackQuery(self, params: Any) -> bool:
        result = super()._api_answerCallbackQuery(params)
        self.answered[str(params.get("callback_query_id", ""))] = time.monotonic()
        return result

    def counted(self) -> int:
        """Calls that counted against Telegram's limits (answered, and not refused with 429)."""
        return sum(self.methods[m] for m in COUNTED) - len(self.flooded)

    def over(self) -> Counter[str]:
        """429s so far, by the limit they met (a call over two counts for both)."""
        return Counter(self.flood.over) if self.flood is not None else Counter()


class Warnings(logging.Handler):
    """Counts what the bot logs (warnings and worse) by its message, instead of printing it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        self.seen[record.getMessage()] += 1


@dataclass
class Result:
    games: int
    ceiling: int
    taps: int
    moves: int
    ended: int
    handover: list[float]
    handover_late: list[float]  # of the last third of the measured part
    watchers: list[float]
    answers: list[float]
    tables: list[float]
    tables_late: list[float]
    tables_first: list[float]  # of the first minute of play, the warm-up included
    sends: int
    refused: int
    over: Counter[str]  # the refusals by the limit they met
    refused_all: int  # the whole run, set-up and warm-up included
    warnings: Counter[str]
    notified: tuple[int, int]  # private chats, groups
    turns: int
    measured: float  # seconds
    calls: Counter[str]  # the measured counted calls by method and chat kind

    @property
    def targets(self) -> bool:
        return (
            p(self.handover, 95) < HANDOVER_TARGET
            and p(self.answers, 95) < ANSWER_TARGET
            and p(self.tables, 95) < TABLE_TARGET
            and not self.refused
        )

    @property
    def graceful(self) -> bool:
        return (
            p(self.answers, 95) < ANSWER_TARGET
            and max(p(self.handover, 95), p(self.handover_late, 95)) < GRACEFUL_HAND
            and max(p(self.tables, 95), p(self.tables_late, 95)) < GRACEFUL_TABLE
            and not self.refused
        )


def p(values: list[float], q: float) -> float:
    return percentile(values, q) if values else math.nan


def secs(value: float) -> str:
    if math.isnan(value):
        return "-"
    return "never" if math.isinf(value) else f"{value:.2f} s"


def never(values: list[float]) -> str:
    missing = sum(1 for v in values if math.isinf(v))
    return f"; not shown: {missing} of {len(values)}" if missing else f" ({len(values)} samples)"


# ------------------------------------------------------------------------- the players


class Bench:
    def __init__(self, h: WallClockHarness, args: argparse.Namespace) -> None:
        self.h = h
        fake = h.fake
        assert isinstance(fake, HumanTelegram)
        self.fake = fake
        self.args = args
        self.round_trip = args.api_latency / 1000
        self.players: dict[int, Player] = {}  # user id -> player
        self.tables: dict[int, Table] = {}  # group id -> its table
        self.requested: dict[int, int] = {}  # group id -> move number when its edit arrived
        self.window = (math.inf, math.inf)  # the measured part: (start, end)
        self.start = math.inf  # when play began
        self.stopping = False
        self.taps: list[tuple[float, str]] = []  # measured taps: arrival, callback query id
        self.moves = 0
        self.turns = 0
        self.notified = [0, 0]
        self.samples: dict[str, list[Sample]] = {"awaited": [], "watcher": [], "table": []}
        self.ended: set[int] = set()
        self.shown = asyncio.Event()  # set whenever a message changes
        self.calls: Counter[str] = Counter()  # measured counted calls: "method to chat kind"

    @property
    def rooms(self) -> Rooms:
        return self.h.rooms

    def live(self, chat_id: int) -> GameRecord | None:
        """The game in a group as the leader holds it; None also once the bot stopped (the
        fake still sees its last calls then)."""
        rooms: Rooms | None = self.h.app.bot_data.get(ROOMS_KEY)
        return rooms.store.live(chat_id) if rooms is not None else None

    def measuring(self, at: float) -> bool:
        return self.window[0] <= at < self.window[1]

    # -- what the fake shows (its hooks)

    async def on_request(self, method: str, params: Any) -> None:
        """The fake's latency hook: a call on its way; a table edit notes the game's move."""
        chat = params.get("chat_id")
        if method in COUNTED and isinstance(chat, int) and self.measuring(time.monotonic()):
            self.calls[f"{method} to {'a group' if chat < 0 else 'a private chat'}"] += 1
        if method == "editMessageText" and isinstance(chat, int) and chat < 0:
            record = self.live(chat)
            if record is not None and record.game is not None:
                self.requested[chat] = record.game.move_number
        if self.round_trip > 0:
            await asyncio.sleep(self.round_trip)

    def on_change(self, message: FakeMessage, change: str) -> None:
        if not message.from_bot:
            return
        now = time.monotonic()
        self.shown.set()
        if change == "new" and message.notified and self.measuring(now):
            self.notified[message.chat_id < 0] += 1
        if message.chat_id < 0:
            self._table_changed(message, change, now)
            return
        player = self.players.get(message.chat_id)
        if player is None:
            return
        move = None if change == "deleted" else keyboard_move(message)
        if move is None:
            if message.message_id == player.hand:  # gone, or its buttons are
                player.hand = None
                player.wake.set()
            return
        player.hand = message.message_id
        if message.reply_markup != player.keyboard:
            player.keyboard = message.reply_markup
            player.changed = now
        player.shown.append((now, move))
        resolve(player.pending, player.shown)
        player.wake.set()

    def _table_changed(self, message: FakeMessage, change: str, now: float) -> None:
        table = self.tables.get(message.chat_id)
        record = self.live(message.chat_id)
        if table is None or change != "edited" or record is None or record.game is None:
            return
        if message.message_id != record.table_message_id:
            return
        move = self.requested.pop(message.chat_id, record.game.move_number)
        table.shown.append((now, move))
        resolve(table.pending, table.shown)

    # -- a player

    async def play(self, player: Player) -> None:
        store = self.rooms.store
        since, think = -1.0, 0.0
        while not self.stopping:
            record = store.live(player.chat)
            if record is None or record.status != "running" or record.game is None:
                self.ended.add(player.chat)
                return
            if player.pid not in record.game.to_act or player.pending or player.hand is None:
                await self._wait(player, 1.0)  # until their hand changes (or a second)
                continue
            if max(player.changed, player.last_tap) != since:
                since = max(player.changed, player.last_tap)
                think = player.rng.uniform(*THINK)
            if (wait := since + think - time.monotonic()) > 0:
                await self._wait(player, wait)
                continue
            message = self.fake.message(player.user.id, player.hand)
            buttons = [b for row in message.buttons for b in row if b.callback_data]
            good = [b for b in buttons if sensible(b)]
            pool = buttons if player.rng.random() < self.args.mistakes or not good else good
            if not pool:
                await self._wait(player, 1.0)
                continue
            await self.tap(player, message, player.rng.choice(pool))

    @staticmethod
    async def _wait(player: Player, seconds: float) -> None:
        player.wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(player.wake.wait(), seconds)

    async def tap(self, player: Player, message: FakeMessage, button: Button) -> None:
        store, screens = self.rooms.store, self.rooms.screens
        record = store.live(player.chat)
        assert record is not None and record.game is not None
        game = record.game
        before = {pid: screens.hand_state(record, pid) for pid in game.players}
        awaited_before, move = game.to_act, game.move_number
        update = player.user.tap_raw(message, button.callback_data or "")
        at = player.last_tap = time.monotonic()
        measured = self.measuring(at)
        await self.fake.deliver(self.h.app, update)
        if measured:
            self.taps.append((at, update["callback_query"]["id"]))
        record = store.live(player.chat)
        if record is None or record.status != "running" or record.game is None:
            return  # the game ended: nothing more to show in a hand
        game = record.game
        if game.move_number == move:
            return
        after = game.move_number
        awaited = game.to_act
        if measured:
            self.moves += 1
            self.turns += len(awaited - awaited_before)
        for pid, state in before.items():
            other = self.players.get(int(pid))
            if other is None or screens.hand_state(record, pid) == state:
                continue
            sample = Sample(at, after, measured)
            self.samples["awaited" if pid in awaited else "watcher"].append(sample)
            other.pending.append(sample)
            resolve(other.pending, other.shown)
        table = self.tables[player.chat]
        sample = Sample(at, after, measured)
        self.samples["table"].append(sample)
        table.pending.append(sample)
        resolve(table.pending, table.shown)

    def pending(self) -> int:
        """Changes the bot has yet to show: in hands and on tables."""
        hands = sum(len(player.pending) for player in self.players.values())
        return hands + sum(len(table.pending) for table in self.tables.values())


# ------------------------------------------------------------------------- one run


def settings_for(db_path: Path, args: argparse.Namespace, ceiling: int) -> Settings:
    values: dict[str, Any] = {
        "bot_token": TOKEN,
        "database_url": f"sqlite:///{db_path}",
        "lobby_timeout": 3600,
    }
    if ceiling != Limits().bot.count:
        values.update(raised_budgets(ceiling))
    for item in args.set:
        name, _, value = item.partition("=")
        values[name] = value
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


async def run_one(args: argparse.Namespace, games: int, ceiling: int, db_path: Path) -> Result:
    settings = settings_for(db_path, args, ceiling)
    fake = HumanTelegram(token=TOKEN)
    h = WallClockHarness(  # its `clock` field is unused: the bot gets the wall clock
        fake=fake, db_path=db_path, clock=ManualClock(), settings=settings, seed=args.seed
    )
    await h.start()
    try:
        bench = Bench(h, args)
        fake.latency = bench.on_request
        stop_watching = fake.watch(bench.on_change)
        try:
            return await measure(bench, games, ceiling)
        finally:
            stop_watching()
    finally:
        await asyncio.sleep(0.05)  # see bench/bot.py: let the deadline scheduler settle
        await h.stop()


async def open_at_pace(
    bench: Bench, group: FakeGroup, users: list[FakeUser], rng: random.Random
) -> None:
    """`--lobby-pace`: /newgame by the first player, the others tap Join one after another,
    each `THINK` after the one before, then the opener taps Start as long after the last
    join; until every player's hand came (at most 30 s)."""
    h, fake = bench.h, bench.fake
    for user in users:
        await fake.deliver(h.app, user.start_private())
    await fake.deliver(h.app, users[0].send(group, "/newgame"))
    lobby = h.lobby_message(group)
    for user in [*users[1:], users[0]]:
        await asyncio.sleep(rng.uniform(*THINK))
        label = "Start" if user is users[0] else "Join"
        await fake.deliver(h.app, user.tap(lobby, label))
    until = time.monotonic() + 30
    players = [bench.players[user.id] for user in users]
    while (waiting := [p for p in players if p.hand is None]) and time.monotonic() < until:
        await bench._wait(waiting[0], 1.0)  # until their hand comes (or a second)


async def measure(bench: Bench, games: int, ceiling: int) -> Result:
    h, fake, args = bench.h, bench.fake, bench.args
    rng = random.Random(args.seed)
    groups: list[tuple[FakeGroup, list[FakeUser]]] = []
    for g in range(games):
        users = [
            h.user(1000 + g * args.players + i, NAMES[i % len(NAMES)]) for i in range(args.players)
        ]
        group = fake.group(-100_000 - g, f"Club {g}", admins={users[0]})
        groups.append((group, users))
        bench.tables[group.id] = Table()
        for user in users:
            player = Player(user, str(user.id), group.id, random.Random(rng.random()))
            bench.players[user.id] = player
    started = time.monotonic()
    if args.lobby_pace:  # at human pace, Telegram's limits kept from the first call
        fake.enforce(Limits(bot=Window(ceiling, 1.0)), time.monotonic)
        await asyncio.gather(
            *(
                open_at_pace(bench, group, users, random.Random(rng.random()))
                for group, users in groups
            )
        )
    else:
        await asyncio.gather(*(h.open_game(group, users) for group, users in groups))
    missing = [p.pid for p in bench.players.values() if p.hand is None]
    print(
        f"  set-up: {games} games opened, joined and started in "
        f"{time.monotonic() - started:.1f} s, "
        + ("at human pace, within the limits" if args.lobby_pace else "no limits")
        + (f"; no hand for {len(missing)} players!" if missing else "")
    )

    onlookers = None
    if args.onlookers:  # the Mini App's streams, N per game (bench/onlookers.py)
        from bench.onlookers import Onlookers

        onlookers = await Onlookers.start(h, [g.id for g, _ in groups], args.onlookers)
    fake.enforce(Limits(bot=Window(ceiling, 1.0)), time.monotonic)
    start = bench.start = time.monotonic()
    bench.window = (start + args.warmup, start + args.seconds)
    tasks = [asyncio.create_task(bench.play(player)) for player in bench.players.values()]
    await asyncio.sleep(args.warmup)
    sends_before, refused_before, over_before = fake.counted(), len(fake.flooded), fake.over()
    await asyncio.sleep(max(0.0, bench.window[1] - time.monotonic()))
    sends, refused = fake.counted() - sends_before, len(fake.flooded) - refused_before
    over = fake.over() - over_before
    bench.stopping = True
    for player in bench.players.values():
        player.wake.set()
    await asyncio.gather(*tasks)
    drain_until = time.monotonic() + args.drain
    while bench.pending() and (left := drain_until - time.monotonic()) > 0:
        bench.shown.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(bench.shown.wait(), left)
    if onlookers is not None:
        await onlookers.stop()
        print(onlookers.line())

    first, end = bench.window
    start = bench.start
    late = first + (end - first) * 2 / 3
    samples = {kind: [s for s in found if s.measured] for kind, found in bench.samples.items()}
    return Result(
        games=games,
        ceiling=ceiling,
        taps=len(bench.taps),
        moves=bench.moves,
        ended=len(bench.ended),
        handover=[s.latency for s in samples["awaited"]],
        handover_late=[s.latency for s in samples["awaited"] if s.at >= late],
        watchers=[s.latency for s in samples["watcher"]],
        answers=[fake.answered.get(qid, math.inf) - at for at, qid in bench.taps],
        tables=[s.latency for s in samples["table"]],
        tables_late=[s.latency for s in samples["table"] if s.at >= late],
        tables_first=[s.latency for s in bench.samples["table"] if s.at < start + FIRST_MINUTE],
        sends=sends,
        refused=refused,
        over=over,
        refused_all=len(fake.flooded),
        warnings=Counter(),
        notified=(bench.notified[0], bench.notified[1]),
        turns=bench.turns,
        measured=end - first,
        calls=bench.calls,
    )


def report(r: Result) -> None:
    taps = max(r.taps, 1)
    print(
        f"  taps: {r.taps} ({r.taps / r.measured:.1f}/s), {r.moves} of them moves; "
        f"games that ended: {r.ended}"
    )
    print(
        f"  handover, tap -> awaited player's hand: p50 {secs(p(r.handover, 50))}, "
        f"p95 {secs(p(r.handover, 95))}, last third p95 {secs(p(r.handover_late, 95))}"
        + never(r.handover)
    )
    print(
        f"  watchers' hands: p50 {secs(p(r.watchers, 50))}, p95 {secs(p(r.watchers, 95))}"
        + never(r.watchers)
    )
    print(
        f"  answer, tap -> answerCallbackQuery: p50 {p(r.answers, 50) * 1000:.0f} ms, "
        f"p95 {p(r.answers, 95) * 1000:.0f} ms" + never(r.answers)
    )
    print(
        f"  table lag, move -> table edit: p50 {secs(p(r.tables, 50))}, "
        f"p95 {secs(p(r.tables, 95))}, last third p95 {secs(p(r.tables_late, 95))}"
        + never(r.tables)
    )
    print(
        f"  table lag in the first minute of play (warm-up included): p50 "
        f"{secs(p(r.tables_first, 50))}, p95 {secs(p(r.tables_first, 95))}" + never(r.tables_first)
    )
    print(
        f"  sends per action: {r.sends / taps:.2f} taken by Telegram ({r.sends} counted calls), "
        f"{(r.sends + r.refused) / taps:.2f} tried (429s included)"
    )
    print(
        "  calls by kind, per action: "
        + ", ".join(f"{kind} {n / taps:.2f}" for kind, n in r.calls.most_common())
    )
    print(
        f"  429s: {r.refused} (over a private chat's limit {r.over['private']}, a group's "
        f"{r.over['group']}, the bot-wide one {r.over['bot']}); {r.refused_all} in the whole run"
    )
    turns = max(r.turns, 1)
    print(
        f"  notifying messages per player-turn: {(r.notified[0] + r.notified[1]) / turns:.3f} "
        f"(private {r.notified[0]}, groups {r.notified[1]}, {r.turns} player-turns)"
    )
    print(
        f"  targets (handover p95 < 1 s, answer p95 < 300 ms, table lag p95 < 15 s, no 429): "
        f"{'hold' if r.targets else 'missed'}; graceful (answer p95 < 300 ms, awaited hand "
        f"p95 < 2 s and table lag p95 < 30 s also in the last third, no 429): "
        f"{'holds' if r.graceful else 'missed'}"
    )
    if r.warnings:
        print(f"  the bot logged {r.warnings.total()} warnings:")
        for text, n in r.warnings.most_common(4):
            print(f"    {n} x {text}")


def summary(results: Sequence[Result]) -> None:
    print()
    print(
        "| bot-wide | games | taps/s | handover p50 / p95 | answer p95 | table lag p95 "
        "| first minute p95 | watchers p95 | sends/action | 429s | notifying/turn | targets "
        "| graceful |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        notifying = (r.notified[0] + r.notified[1]) / max(r.turns, 1)
        print(
            f"| {r.ceiling}/s | {r.games} | {r.taps / r.measured:.1f} | "
            f"{secs(p(r.handover, 50))} / {secs(p(r.handover, 95))} | "
            f"{p(r.answers, 95) * 1000:.0f} ms | "
            f"{secs(p(r.tables, 95))} | {secs(p(r.tables_first, 95))} | "
            f"{secs(p(r.watchers, 95))} | "
            f"{r.sends / max(r.taps, 1):.2f} | {r.refused} | {notifying:.3f} | "
            f"{'hold' if r.targets else 'missed'} | {'yes' if r.graceful else 'no'} |"
        )
    print()
    for ceiling in dict.fromkeys(r.ceiling for r in results):
        runs = sorted((r for r in results if r.ceiling == ceiling), key=lambda r: r.games)
        print(
            f"bot-wide ceiling {ceiling}/s: targets hold up to {upto(runs, lambda r: r.targets)}; "
            f"graceful up to {upto(runs, lambda r: r.graceful)}"
        )


def upto(runs: Sequence[Result], holds: Callable[[Result], bool]) -> str:
    """The largest game count run up to which (every smaller count run too) `holds`."""
    best = None
    for r in runs:
        if not holds(r):
            break
        best = r.games
    counts = ", ".join(str(r.games) for r in runs)
    return f"{best} games" if best is not None else f"none of the game counts run ({counts})"


def numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Whole-bot benchmark at human pace, under Telegram's flood limits."
    )
    parser.add_argument("--games", type=numbers, default=[10, 30, 60, 100, 300])
    parser.add_argument("--players", type=int, default=3, help="players per game (2-6)")
    parser.add_argument("--seconds", type=float, default=60.0, help="play per game count")
    parser.add_argument("--warmup", type=float, default=10.0, help="first seconds not measured")
    parser.add_argument("--drain", type=float, default=15.0, help="seconds to show the rest")
    parser.add_argument(
        "--bot-limit",
        type=numbers,
        default=[Limits().bot.count],
        help="the fake's bot-wide ceiling, calls a second; a list runs each (e.g. 30,1000)",
    )
    parser.add_argument(
        "--lobby-pace",
        action="store_true",
        help="open, join and start the games at human pace, within the limits (their calls "
        "are then in each group's window as play begins)",
    )
    parser.add_argument("--api-latency", type=float, default=50.0, help="ms per Bot API call")
    parser.add_argument("--mistakes", type=float, default=0.1, help="share of taps on any button")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--onlookers", type=int, default=0, help="Mini App event streams per game (#32)"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="a bot setting"
    )
    args = parser.parse_args(argv)
    if not 2 <= args.players <= len(NAMES):
        parser.error(f"--players must be 2..{len(NAMES)}")
    if not 0 <= args.warmup < args.seconds:
        parser.error("--warmup must be shorter than --seconds")
    budgets = budget_settings()
    print(
        f"engine: {'compiled (mypyc)' if COMPILED else 'pure Python'}; Python "
        f"{platform.python_version()}; {os.cpu_count()} CPUs"
    )
    print(
        f"players: {args.players} a game, tapping {THINK[0]}-{THINK[1]} s after their keyboard "
        f"changed, {args.mistakes:.0%} on any button; seed {args.seed}"
    )
    defaults = Settings.model_fields
    print(
        f"Bot API: {args.api_latency:g} ms a call; limits: {Limits().private.count} per "
        f"{Limits().private.seconds:g} s a private chat, {Limits().group.count} per "
        f"{Limits().group.seconds:g} s a group, --bot-limit a second in all"
    )
    print(
        f"settings: table edits every {defaults['table_edit_interval'].default} s, turn alerts "
        f"after {defaults['turn_alert_after'].default} s, {defaults['turn_timeout'].default} s "
        f"a turn; the bot's send budgets: "
        + (", ".join(f"{k}={v}" for k, v in budgets.items()) if budgets else "none (no setting)")
        + (f"; set: {', '.join(args.set)}" if args.set else "")
    )
    print(
        f"play: {args.seconds:g} s per game count, the first {args.warmup:g} s not measured, "
        f"then up to {args.drain:g} s for the bot to show the rest"
    )
    results = []
    for ceiling in args.bot_limit:
        raised = raised_budgets(ceiling) if ceiling != Limits().bot.count else {}
        if ceiling != Limits().bot.count and budgets and not raised:
            print(f"no bot-wide budget among the bot's settings: --set one to {ceiling}")
        for games in args.games:
            print()
            print(
                f"{games} games ({games * args.players} players), bot-wide ceiling {ceiling}/s"
                + (f"; the bot's budgets raised: {raised}" if raised else "")
            )
            warnings = Warnings()
            logging.getLogger().addHandler(warnings)
            try:
                with tempfile.TemporaryDirectory(prefix="durak-bench-") as tmp:
                    db_path = Path(tmp) / "durak.sqlite3"
                    result = asyncio.run(run_one(args, games, ceiling, db_path))
            finally:
                logging.getLogger().removeHandler(warnings)
            result.warnings = warnings.seen
            report(result)
            results.append(result)
    summary(results)


if __name__ == "__main__":
    main()
