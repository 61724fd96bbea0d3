"""One bot through Telegram's faults and kills: the "done when" run of issue #34, for
`tests/bot/test_chaos.py` (small) and for an operator (`python -m tests.chaos --faults 1000
--kills 20`, the full run).

`run` starts ONE `python -m bot` on SQLite in polling mode (the default, what `make run`
runs) against the fake Bot API on loopback, with Telegram's limits enforced (ten times as
fast, `tests.workers.LIMITS`, given to the bot as its budgets). People open G games at once
(/newgame, Join, Start, each done again by the person when nothing shows within a few
seconds, as a person would) and play them: each taps a playable button of their latest hand
once it changed, after a moment's thought (`tests.workers.People`); now and then (`late`) a
player taps the keyboard their new hand just replaced, as a finger on its way does. Meanwhile:

- the fake injects transient faults at random (`FakeTelegram.chaos`): answers 500 and 502,
  timeouts before a call is applied and after (its answer lost), into sendMessage,
  editMessageText, answerCallbackQuery, getUpdates and deleteMessage; never a 429;
- the bot is SIGKILLed `kills` times and started again each time, in turn: at a random
  moment, right after it answered a tap (the move committed, the hands not yet sent),
  inside a sendMessage (the fake holds the call, the process is killed, then the message
  lands: the bot never heard its answer), and right after a game's last move (its result
  on its way).

When every game of a round is over and faults or kills are left, the groups play another
round. At the end the faults stop, the bot is given time to answer what is left, and it is
stopped with SIGTERM. What is checked (`Run.problems`, empty when all holds):

- every game finished, with its result stored, and its result shown once in its group;
- no duplicate left live: no lobby with a Join button, no private hand with live buttons,
  no more tables than games;
- every tap (hand and lobby) got an answer;
- no call was answered 429 (faults are never 429s: every one is the bot's);
- the bot's log has no ERROR line and no traceback;
- no late tap dropped in silence: a tap on a replaced keyboard answered with no text must
  have been applied (the tapper's hand drawn anew at a later move, or asking which move the
  card means, before anyone else of that game tapped again; or the card tapped gone from
  the hand drawn next; or its action in the stored game's history, made by the tapper at
  the move shown next or later, as often as their quiet taps of it from then on; or Back,
  which shows the hand anew) or be a true double tap (a button the player pressed before,
  that press answered quietly), else it must say why in words;
- nobody's time ran out (a hand that never came leaves its player waiting), and the bot
  stopped on SIGTERM with exit code 0 within `STOP_GRACE` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bot.callbacks import CardTap, LobbyData, MoveData, Refresh, decode
from storage import Database, GameRecord, NotFound
from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import start_bot
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeGroup, FakeMessage, FakeTelegram, FakeUser
from tests.workers import LIMITS, NAMES, RAN_OUT, LateTap, People, _has_moves, _markup, _moves

RESULT = "Game over"  # locales/en.ftl, result-title
TABLE = "Durak · "  # locales/en.ftl, table-title and the trump
KILLS = ("random", "after-answer", "inside-send", "after-last-move")
PATIENCE = 6.0  # seconds a person waits for a lobby or a hand before doing it again
STALL = 90.0  # seconds without any message changing after which a round is given up
SETTLE = 30.0  # seconds the bot is given at the end to answer what is left
AROUND_A_KILL = 5.0  # seconds before a kill in which a tap may have been taken by the process
STOP_GRACE = 10.0  # seconds a service manager waits after SIGTERM (Docker's default)


@dataclass
class Run:
    games: int
    rounds: int = 0
    faults: Counter[tuple[str, str]] = field(default_factory=Counter)
    kills: list[str] = field(default_factory=list)
    killed_at: list[float] = field(default_factory=list)  # time.time() of each kill
    taps: int = 0
    late_taps: int = 0
    seconds: float = 0.0
    stop_seconds: float | None = None
    answer_seconds: list[float] = field(default_factory=list)  # each answered hand tap's wait
    problems: list[str] = field(default_factory=list)

    def report(self) -> str:
        by_method = Counter[str]()
        by_kind = Counter[str]()
        for (method, kind), n in self.faults.items():
            by_method[method] += n
            by_kind[kind] += n
        stop = "never" if self.stop_seconds is None else f"{self.stop_seconds:.1f} s"
        lines = [
            f"{self.games} games a round, {self.rounds} rounds, {self.seconds:.0f} s; "
            f"taps: {self.taps} (late: {self.late_taps}); SIGTERM took {stop}",
            f"faults injected: {self.faults.total()} by method {dict(by_method)}, "
            f"by kind {dict(by_kind)}",
            f"kills: {len(self.kills)} {dict(Counter(self.kills))}; a tap's answer after "
            f"{_spread(self.answer_seconds)}",
        ]
        lines += [f"PROBLEM: {p}" for p in self.problems] or ["every check holds"]
        return "\n".join(lines)


class Bot:
    """The one `python -m bot` process, killed and started again."""

    def __init__(self, server: LoopbackBotAPI, workdir: Path, settings: dict[str, str]) -> None:
        self.server = server
        self.workdir = workdir
        self.settings = settings
        self.process: asyncio.subprocess.Process | None = None
        self.exits: list[int] = []  # exit codes of processes that ended by themselves
        self.lock = asyncio.Lock()  # a kill and its start again, or a start by `supervise`

    @property
    def log(self) -> Path:
        return self.workdir / "bot.log"

    async def start(self) -> None:
        self.process = await start_bot(self.server, self.workdir, **self.settings)

    async def kill(self, then: Callable[[], None]) -> None:
        """SIGKILL, `then()`, and start again."""
        async with self.lock:
            process = self.process
            assert process is not None
            if process.returncode is None:
                process.kill()
                await process.wait()
            then()
            await self.start()

    async def supervise(self) -> None:
        """Start it again if it ended by itself (as a service manager would)."""
        async with self.lock:
            if self.process is not None and self.process.returncode is not None:
                self.exits.append(self.process.returncode)
                await self.start()

    async def stop(self) -> tuple[int | None, float | None]:
        """SIGTERM; its exit code and how long it took (None: it had to be killed)."""
        process = self.process
        assert process is not None
        if process.returncode is not None:
            return process.returncode, 0.0
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(60):
                code = await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()
            return None, None
        return code, time.monotonic() - started


class Chaos:
    """The run: people, faults and kills (see the module's docstring)."""

    def __init__(
        self,
        workdir: Path,
        *,
        games: int,
        players: int,
        faults: int,
        rate: float,
        kills: int,
        seed: int,
        think: tuple[float, float],
        late: float,
        turn_timeout: int,
        max_rounds: int,
        say: Callable[[str], None],
    ) -> None:
        self.workdir = workdir
        self.rng = random.Random(seed)
        self.fake = FakeTelegram(token=TOKEN)
        self.fake.enforce(LIMITS)  # Telegram's limits, ten times as fast: a 429 past them
        self.faults, self.rate, self.kills, self.seed = faults, rate, kills, seed
        self.max_rounds = max_rounds
        self.turn_timeout = turn_timeout
        self.say = say
        self.users = [
            self.fake.user(100 + i, NAMES[i % len(NAMES)] + str(i)) for i in range(games * players)
        ]
        self.groups: list[FakeGroup] = []
        self.seated: list[list[FakeUser]] = []
        for g in range(games):
            members = self.users[g * players : (g + 1) * players]
            self.groups.append(self.fake.group(-6000 - g, f"Club {g}", admins={members[0]}))
            self.seated.append(members)
        self.game_of = {u.id: g for g, members in enumerate(self.seated) for u in members}
        self.stored: dict[int, GameRecord] = {}  # the games late taps were made in, at the end
        self.people = People(self.fake, self.users, random.Random(self.rng.random()), think, late)
        self.lobby_queries: list[str] = []
        self.result = Run(games=games)
        self.changed_at = time.monotonic()
        self.fake.watch(self._changed)

    def _changed(self, message: FakeMessage, change: str) -> None:
        self.changed_at = time.monotonic()

    # -- waiting

    async def within(self, seconds: float, condition: Callable[[], bool]) -> bool:
        """Whether `condition` holds within `seconds` (checked after every Bot API call)."""
        if condition():
            return True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.server.wait_for(condition)
        return condition()

    # -- the run

    async def run(self) -> Run:
        started = time.monotonic()
        settings = {
            "TURN_TIMEOUT": str(self.turn_timeout),
            "COMPUTER_DELAY": "0",
            "TABLE_EDIT_INTERVAL": "1",
            "LOBBY_EDIT_INTERVAL": "0.5",
            "PRIVATE_SENDS": str(LIMITS.private.count),
            "PRIVATE_WINDOW": str(LIMITS.private.seconds),
            "GROUP_SENDS": str(LIMITS.group.count),
            "GROUP_WINDOW": str(LIMITS.group.seconds),
            "BOT_SENDS": str(LIMITS.bot.count),
        }
        async with LoopbackBotAPI(self.fake) as server:
            self.server = server
            self.bot = Bot(server, self.workdir, settings)
            await self.bot.start()
            try:
                await self.within(60, lambda: any(c.method == "getMe" for c in self.fake.calls))
                self.fake.queue(*(u.start_private() for u in self.users))
                self.fake.chaos(self.rate, seed=self.seed, limit=self.faults)
                killing = asyncio.ensure_future(self._kill_all())
                try:
                    await self._rounds(killing)
                finally:
                    if not killing.done():
                        killing.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await killing  # (its error, if any, is the run's)
                self.fake.chaos(0, seed=0)
                self.result.faults = Counter(self.fake.faults)
                await self._settle()
            finally:
                self.people.close()
                code, took = await self.bot.stop()
            self.result.stop_seconds = took
            if code != 0 or took is None or took > STOP_GRACE:
                self.result.problems.append(
                    f"SIGTERM: exit code {code} after {took if took is None else round(took, 1)}"
                    f" s (a service manager waits {STOP_GRACE:.0f} s)"
                )
        self.result.taps = self.people.taps + len(self.lobby_queries)
        self.result.late_taps = len(self.people.late_taps)
        self.result.seconds = time.monotonic() - started
        await self._check()
        if self.result.problems:
            (self.workdir / "telegram.log").write_text(self._what_telegram_saw())
        return self.result

    def _spent(self) -> bool:
        return len(self.result.kills) >= self.kills and self.fake.faults.total() >= self.faults

    async def _rounds(self, killing: asyncio.Future[None]) -> None:
        while True:
            self.result.rounds += 1
            self.say(f"round {self.result.rounds}")
            marks = [self._last_id(g) for g in self.groups]
            # (the people of a game play as soon as it is dealt, while others still open)
            opening = asyncio.gather(
                *(
                    self._open(g, members, mark)
                    for g, members, mark in zip(self.groups, self.seated, marks, strict=True)
                )
            )
            try:
                played = await self._play(marks)
            finally:
                if not opening.done():
                    opening.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await opening
            if not played:
                return
            if killing.done() and killing.exception() is not None:
                return
            if self._spent() or self.result.rounds >= self.max_rounds:
                return

    def _last_id(self, group: FakeGroup) -> int:
        return max((m.message_id for m in self.fake.messages(group.id)), default=0)

    def _lobby(self, group: FakeGroup, mark: int) -> FakeMessage | None:
        lobbies = [
            m
            for m in self.fake.messages(group.id)
            if m.message_id > mark and "Join" in m.button_texts
        ]
        return lobbies[-1] if lobbies else None

    def _over(self, group: FakeGroup, mark: int) -> bool:
        """Whether the group's game of the round that began at message `mark` is over: a
        result after it that is not an earlier game's (posted again by a start after a kill
        right after that game's last move, its copy deleted)."""
        messages = self.fake.messages(group.id, include_deleted=True)
        earlier = {m.text for m in messages if m.message_id <= mark and RESULT in m.text}
        return any(
            m.message_id > mark and RESULT in m.text and m.text not in earlier for m in messages
        )

    def _tap(self, user: FakeUser, message: FakeMessage, button: str) -> None:
        update = user.tap(message, button)
        self.lobby_queries.append(update["callback_query"]["id"])
        self.fake.queue(update)

    async def _open(self, group: FakeGroup, members: list[FakeUser], mark: int) -> None:
        """/newgame, Join, Start, each done again when nothing shows (as a person would)."""
        admin, others = members[0], members[1:]

        def lobby_names(who: list[FakeUser]) -> Callable[[], bool]:
            def shown() -> bool:
                lobby = self._lobby(group, mark)
                return lobby is not None and all(m.first_name in lobby.text for m in who)

            return shown

        for _ in range(10):
            self.fake.queue(admin.send(group, "/newgame"))
            if await self.within(PATIENCE, lobby_names([admin])):
                break
        for member in others:
            for _ in range(10):
                lobby = self._lobby(group, mark)
                if lobby is None or lobby_names([member])():
                    break
                self._tap(member, lobby, "Join")
                if await self.within(PATIENCE, lobby_names([member])):
                    break

        def dealt() -> bool:
            return self._over(group, mark) or all(
                any(
                    m.message_id > mark and _has_moves(m.reply_markup)
                    for m in self.fake.messages(u.id)
                )
                for u in members
            )

        for _ in range(10):
            lobby = self._lobby(group, mark)
            if dealt() or lobby is None or "Start" not in lobby.button_texts:
                break
            self._tap(admin, lobby, "Start")
            if await self.within(PATIENCE, dealt):
                break

    async def _play(self, marks: list[int]) -> bool:
        """Until every game of the round is over (False: it stalled)."""

        def over() -> bool:
            return all(self._over(g, mark) for g, mark in zip(self.groups, marks, strict=True))

        people = self.people
        while not over():
            if time.monotonic() - self.changed_at > STALL:
                waiting = [
                    g.id for g, m in zip(self.groups, marks, strict=True) if not self._over(g, m)
                ]
                self.result.problems.append(
                    f"round {self.result.rounds}: nothing changed for {STALL:.0f} s; games of "
                    f"groups {waiting} not over"
                )
                return False
            await self.bot.supervise()
            people.act()
            at = people.next_at()
            wait = 1.0 if at is None else min(1.0, max(0.0, at - time.monotonic()))
            if wait > 0:
                seen = len(self.fake.calls)
                await self.within(wait, lambda: over() or len(self.fake.calls) > seen)  # noqa: B023
        return True

    # -- kills

    async def _kill_all(self) -> None:
        for n in range(self.kills):
            kind = KILLS[n % len(KILLS)]
            target = len(self.fake.calls) + self.rng.randint(40, 200)
            while len(self.fake.calls) < target:
                await self.within(5, lambda: len(self.fake.calls) >= target)  # noqa: B023
            await self._kill(kind)

    async def _kill(self, kind: str) -> None:
        hold: Callable[[httpx.Request], bool] | None = None
        if kind == "after-answer":
            hold = _method("answerCallbackQuery")
        elif kind == "inside-send":
            hold = _method("sendMessage")
        elif kind == "after-last-move":
            send = _method("sendMessage")
            hold = lambda request: send(request) and RESULT.encode() in request.content  # noqa: E731
        if hold is not None:
            self.server.held.clear()
            self.server.hold(hold)
            while not self.server.held:  # (no wait_for: it gives up after a minute)
                await self.within(5, lambda: bool(self.server.held))
        self.say(f"SIGKILL ({kind}; {len(self.result.kills) + 1} of {self.kills})")
        # the held call lands once the process is gone: the bot never hears its answer
        self.result.killed_at.append(time.time())
        await self.bot.kill(then=self.server.release)
        self.result.kills.append(kind)

    # -- the end

    async def _settle(self) -> None:
        """Give the bot time to answer every tap and draw every hand at the end."""

        def quiet() -> bool:
            return (
                all(
                    self.fake.answer_for(q) is not None
                    for q in [*self.people.queries, *self.lobby_queries]
                )
                and not self._live_hands()
            )

        deadline = time.monotonic() + SETTLE
        while not quiet() and time.monotonic() < deadline:
            await self.bot.supervise()
            await self.within(1.0, quiet)

    def _live_hands(self) -> list[FakeMessage]:
        return [
            m
            for u in self.users
            for m in self.fake.messages(u.id)
            if _has_moves(m.reply_markup) and not m.deleted
        ]

    async def _check(self) -> None:
        problems = self.result.problems
        rounds = self.result.rounds
        database = self.workdir / "data" / "durak.sqlite3"
        async with (
            Database.connect(f"sqlite:///{database}") as db,
            db.transaction(readonly=True) as tx,
        ):
            for group in self.groups:
                stored = await tx.results.count(chat_id=group.id)
                try:
                    record = await tx.games.latest_for_chat(chat_id=group.id)
                    status: str = record.status
                except NotFound:
                    status = "none"
                if stored != rounds or status != "finished":
                    problems.append(
                        f"group {group.id}: {stored} results stored of {rounds} games, the "
                        f"last game {status}"
                    )
            for tap in self.people.late_taps:  # (their games as stored: what was applied)
                data = _move_data(tap.data)
                if data is not None and data.game_id not in self.stored:
                    with contextlib.suppress(NotFound):
                        self.stored[data.game_id] = await tx.games.get(game_id=data.game_id)
        for group in self.groups:
            messages = self.fake.messages(group.id)
            results = [m for m in messages if RESULT in m.text]
            tables = [m for m in messages if m.text.startswith(TABLE)]
            lobbies = [m for m in messages if "Join" in m.button_texts]
            stale = [m for m in messages if _game_buttons(m) and m not in lobbies]
            if len(results) != rounds:
                lost = sum(
                    1
                    for c in self.fake.calls
                    if c.method == "sendMessage"
                    and c.chat_id == group.id
                    and c.timed_out
                    and c.ok
                    and RESULT in str(c.params.get("text", ""))
                )
                problems.append(
                    f"group {group.id}: {len(results)} result messages for {rounds} games "
                    f"({lost} result sends landed with their answer lost to a timeout)"
                )
            if len(tables) > rounds:
                problems.append(f"group {group.id}: {len(tables)} tables for {rounds} games")
            if lobbies:
                problems.append(
                    f"group {group.id}: {len(lobbies)} lobbies left live with a Join button"
                )
            if stale:
                problems.append(
                    f"group {group.id}: {len(stale)} messages left with a game's buttons, e.g. "
                    f"{stale[0].text[:60]!r}"
                )
        live = self._live_hands()
        if live:
            latest = {max(_moves(m.reply_markup)) for m in live}
            older = [
                m
                for m in live
                if any(
                    n.message_id > m.message_id
                    and any(_moves(markup) for _, markup in [*n.history, (n.html, n.reply_markup)])
                    for n in self.fake.messages(m.chat_id, include_deleted=True)
                )
            ]
            problems.append(
                f"{len(live)} hand messages left with live buttons after the games ended "
                f"({len(older)} of them followed by another hand message of their player; "
                f"their keyboards' moves {sorted(latest)[:8]})"
            )
        self._check_answers()
        self._answer_times()
        limited = [c for c in self.fake.calls if c.error_code == 429]
        if limited:
            methods = Counter(c.method for c in limited)
            problems.append(f"{len(limited)} calls answered 429: {dict(methods)}")
        self._check_late_taps()
        self._check_log()
        ran_out = [
            u.first_name
            for u in self.users
            if any(RAN_OUT in m.text for m in self.fake.messages(u.id, include_deleted=True))
        ]
        if ran_out:
            problems.append(f"time ran out for {len(ran_out)} players: {ran_out[:5]}")
        if self.bot.exits:
            problems.append(
                f"the bot ended by itself {len(self.bot.exits)} times: {self.bot.exits}"
            )

    def _check_answers(self) -> None:
        """Every tap answered; those that were not, told apart by whether the bot was killed
        within `AROUND_A_KILL` seconds after the tap, and whether a fault met their answer."""
        queries = [*self.people.queries, *self.lobby_queries]
        unanswered = {q for q in queries if self.fake.answer_for(q) is None}
        if not unanswered:
            return
        made = dict(zip(self.people.queries, self.people.tap_times, strict=True))
        near_kill = [
            q
            for q in unanswered
            if q in made
            and any(0 <= k - made[q][1] <= AROUND_A_KILL for k in self.result.killed_at)
        ]
        failed = {
            str(c.params.get("callback_query_id"))
            for c in self.fake.calls
            if c.method == "answerCallbackQuery" and not c.ok
        }
        met_fault = [q for q in unanswered if q in failed]
        lobby = [q for q in unanswered if q not in made]
        self.result.problems.append(
            f"{len(unanswered)} of {len(queries)} taps never answered: {len(met_fault)} whose "
            f"answer met a fault and was not tried again, {len(near_kill)} made within "
            f"{AROUND_A_KILL:.0f} s before a kill, {len(lobby)} on a lobby"
        )

    def _answer_times(self) -> None:
        """How long each answered hand tap waited for its answer (the first that landed)."""
        answered: dict[str, float] = {}
        for c in self.fake.calls:
            if c.method == "answerCallbackQuery" and c.ok:
                answered.setdefault(str(c.params.get("callback_query_id")), c.at)
        self.result.answer_seconds = [
            answered[q] - at
            for q, (_, at) in zip(self.people.queries, self.people.tap_times, strict=True)
            if q in answered
        ]

    def _check_late_taps(self) -> None:
        silent: list[LateTap] = []
        for tap in self.people.late_taps:
            answer = self.fake.answer_for(tap.query)
            if answer is None or answer.text:
                continue  # unanswered: counted above; in words: as it should be
            if tap.again or self._pressed_before(tap):
                continue  # the same button as the player's own tap before: a double tap
            if not (self._applied(tap) or self._in_history(tap)):
                silent.append(tap)
        if silent:
            example = silent[0]
            self.result.problems.append(
                f"{len(silent)} of {len(self.people.late_taps)} late taps answered with no text "
                f"and not applied (e.g. a tap on the keyboard of move {example.tapped} after the "
                f"one of move {example.current} was shown)"
            )

    def _applied(self, tap: LateTap) -> bool:
        """Whether the tapper's hand was drawn at a move later than the one shown when they
        tapped, before anyone else of their game tapped again after its answer (so that the
        tap itself made that move); or, for a card, whether their hand drawn next after the
        answer no longer holds it (played)."""
        game = self.game_of[tap.user]
        answered = next(
            (
                c.at
                for c in self.fake.calls
                if c.method == "answerCallbackQuery"
                and c.ok
                and str(c.params.get("callback_query_id")) == tap.query
            ),
            None,
        )
        if answered is None:
            return False
        if self._card_played(tap, answered):
            return True
        members = {u.id for u in self.seated[game]} - {tap.user}
        later = [at for user, at in self.people.tap_times if user in members and at > answered]
        until = min(later, default=float("inf"))
        return any(
            c.ok
            and c.chat_id == tap.user
            and c.method in ("sendMessage", "editMessageText")
            and tap.at <= c.at <= until
            and (
                max(_moves(_markup(c.params)), default=-1) > tap.current
                or _choice(_markup(c.params))  # (a card that fits in several ways asks)
            )
            for c in self.fake.calls
        )

    def _pressed_before(self, tap: LateTap) -> bool:
        """Whether the player pressed the same button before (the same game, move and
        intent) and that press was answered quietly (applied): this one is its double tap,
        whatever they pressed in between."""
        people = self.people
        for query, (user, at) in zip(people.queries, people.tap_times, strict=True):
            if at >= tap.at:
                break
            if user == tap.user and people.data.get(query) == tap.data:
                answer = self.fake.answer_for(query)
                if answer is not None and not answer.text:
                    return True
        return False

    def _in_history(self, tap: LateTap) -> bool:
        """Whether the stored game shows the tap applied: Back (it asks for the current
        hand, which it shows anew); or its action made by the player at the move of the
        keyboard that replaced the tapped one or later, as often at least as the player's
        taps of that action from this one on were answered quietly (each of them applied,
        this one too)."""
        data = _move_data(tap.data)
        if data is None:
            return False
        if isinstance(data.intent, Refresh):
            return True
        record = self.stored.get(data.game_id)
        if isinstance(data.intent, CardTap) or record is None or record.game is None:
            return False
        pid = next((s.player_id for s in record.lobby.seats if s.user_id == tap.user), None)
        made = sum(
            1
            for move, (player, action) in enumerate(record.game.history)
            if move >= tap.current and player == pid and action == data.intent
        )
        people, quiet = self.people, 0
        for query, (user, at) in zip(people.queries, people.tap_times, strict=True):
            if user != tap.user or at < tap.at:
                continue
            later = _move_data(people.data.get(query, ""))
            answer = self.fake.answer_for(query)
            if (
                later is not None
                and (later.game_id, later.intent) == (data.game_id, data.intent)
                and answer is not None
                and not answer.text
            ):
                quiet += 1
        return made >= max(quiet, 1)

    def _card_played(self, tap: LateTap, answered: float) -> bool:
        """Whether the card a late tap tapped is gone from the tapper's hand as drawn next
        after the tap's answer (a hand's keyboard shows every card of it)."""
        with contextlib.suppress(ValueError):
            data = decode(tap.data)
            if isinstance(data, MoveData) and isinstance(data.intent, CardTap):
                card = data.intent.card
                for c in self.fake.calls:
                    if not (
                        c.ok
                        and c.chat_id == tap.user
                        and c.method in ("sendMessage", "editMessageText")
                        and c.at >= answered
                    ):
                        continue
                    cards = _cards(_markup(c.params))
                    if cards:
                        return card not in cards
        return False

    def _check_log(self) -> None:
        lines = self.bot.log.read_text(errors="replace").splitlines()
        errors = [n for n, line in enumerate(lines) if " ERROR " in line or "ERROR:" in line]
        tracebacks = sum("Traceback" in line for line in lines)
        if errors or tracebacks:
            kinds = Counter(_gist(lines, n) for n in errors)
            self.result.problems.append(
                f"the log has {len(errors)} ERROR lines and {tracebacks} tracebacks: "
                f"{kinds.most_common(6)}"
            )

    def _what_telegram_saw(self) -> str:
        lines = []
        for chat in [*(g.id for g in self.groups), *(u.id for u in self.users)]:
            for m in self.fake.messages(chat, include_deleted=True):
                text = m.text.replace("\n", " | ")[:120]
                state = "deleted" if m.deleted else f"{m.edits} edits"
                lines.append(f"chat {chat} message {m.message_id} ({state}): {text}")
        for call in self.fake.calls:
            if call.error_code is not None or call.timed_out:
                outcome = "timed out" if call.timed_out else call.error_code
                lines.append(
                    f"{call.at:.3f} {call.method} {call.params.get('chat_id')}: {outcome} "
                    f"{'(injected)' if call.injected else call.description}"
                )
        return "\n".join(lines) + "\n"


def _move_data(data: str) -> MoveData | None:
    """A hand button's callback data, decoded (None: another kind, or unreadable)."""
    with contextlib.suppress(ValueError):
        decoded = decode(data)
        if isinstance(decoded, MoveData):
            return decoded
    return None


def _spread(seconds: list[float]) -> str:
    """p50 and p99 of a list of seconds."""
    if not seconds:
        return "none"
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):.2f} s, p99 {p99:.2f} s"


def _game_buttons(message: FakeMessage) -> bool:
    """Whether a live message has buttons of a game or its lobby (a hand, a table, a lobby;
    not Play again, which stays under a result)."""
    if message.deleted:
        return False
    for row in message.buttons:
        for button in row:
            with contextlib.suppress(ValueError):
                if isinstance(decode(button.callback_data), MoveData | LobbyData):
                    return True
    return False


def _choice(markup: object) -> bool:
    """Whether a hand's keyboard asks which of several moves a card means (it has Back)."""
    rows = (markup or {}).get("inline_keyboard") or [] if isinstance(markup, dict) else []
    for row in rows:
        for button in row:
            with contextlib.suppress(ValueError):
                data = decode(button.get("callback_data", ""))
                if isinstance(data, MoveData) and isinstance(data.intent, Refresh):
                    return True
    return False


def _cards(markup: object) -> set[object]:
    """The cards on a hand's keyboard."""
    rows = (markup or {}).get("inline_keyboard") or [] if isinstance(markup, dict) else []
    cards: set[object] = set()
    for row in rows:
        for button in row:
            with contextlib.suppress(ValueError):
                data = decode(button.get("callback_data", ""))
                if isinstance(data, MoveData) and isinstance(data.intent, CardTap):
                    cards.add(data.intent.card)
    return cards


def _method(name: str) -> Callable[[httpx.Request], bool]:
    return lambda request: request.url.path.endswith(f"/{name}")


def _gist(lines: list[str], n: int) -> str:
    """The ERROR line `n` without its time stamp, short, and the exception of the traceback
    after it (its last line not indented)."""
    line = lines[n]
    at = line.find("ERROR")
    gist = line[at + 6 : at + 100]
    if n + 1 < len(lines) and lines[n + 1].startswith("Traceback"):
        end = n + 2
        while end < len(lines) and lines[end].startswith((" ", "\t")):
            end += 1
        if end < len(lines):
            gist += " <- " + lines[end][:120]
    return gist


async def run(
    workdir: Path,
    *,
    games: int = 3,
    players: int = 3,
    faults: int = 100,
    rate: float = 0.08,
    kills: int = 4,
    seed: int = 1,
    think: tuple[float, float] = (0.3, 1.0),
    late: float = 0.15,
    turn_timeout: int = 20,
    max_rounds: int = 10,
    progress: Callable[[str], None] | None = None,
) -> Run:
    """Play `games` games at once (more rounds while faults or kills are left) through
    `faults` injected Telegram faults (each call failing with probability `rate`) and `kills`
    SIGKILLs; what held (see the module's docstring)."""
    chaos = Chaos(
        workdir,
        games=games,
        players=players,
        faults=faults,
        rate=rate,
        kills=kills,
        seed=seed,
        think=think,
        late=late,
        turn_timeout=turn_timeout,
        max_rounds=max_rounds,
        say=progress or (lambda line: None),
    )
    return await chaos.run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.chaos", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--games", type=int, default=6, help="games at once (default 6)")
    parser.add_argument("--players", type=int, default=3, help="players a game (default 3)")
    parser.add_argument("--faults", type=int, default=1000, help="Telegram faults (1000)")
    parser.add_argument("--rate", type=float, default=0.1, help="a call's chance to fail (0.1)")
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs (default 20)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, help="where the database and bot.log go")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="durak-chaos-"))
    workdir.mkdir(parents=True, exist_ok=True)
    result = asyncio.run(
        run(
            workdir,
            games=args.games,
            players=args.players,
            faults=args.faults,
            rate=args.rate,
            kills=args.kills,
            seed=args.seed,
            max_rounds=100,
            progress=lambda line: print(line, flush=True),
        )
    )
    print(result.report())
    print(f"(the bot's log: {workdir / 'bot.log'}; what Telegram saw: {workdir / 'telegram.log'})")
    return 1 if result.problems else 0


if __name__ == "__main__":
    sys.exit(main())
