"""A whole bot against the fake Bot API: real python-telegram-bot HTTP stack, real SQLite.

`BotHarness` starts the application the way `run_polling` would (initialize, then
`start_services`, which is the `post_init` hook), with a manual clock for deadlines and a
virtual one for the sender (`tests.fakes.timing`), so tests never sleep. The fake enforces
Telegram's flood limits (429 with retry_after) on that virtual clock, as Telegram would.

`send` delivers updates and then waits until the bot has sent everything they caused
(`settle`); a test that calls a room directly calls `settle` itself.
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from bot.app import build_application, start_services, stop_services
from bot.config import Settings
from bot.leader import ALLOWED_UPDATES, DATABASE_KEY, UPDATES_KEY, inbox_reader
from bot.ops.health import Health
from bot.play import Rooms
from bot.telegram.handlers import ROOMS_KEY
from bot.telegram.inbox import InboxReader
from bot.telegram.webhook import SECRET_HEADER, Webhook
from bot.web import WebServer
from tests.fakes.telegram import FakeGroup, FakeMessage, FakeTelegram, FakeUser
from tests.fakes.timing import VirtualTiming

TOKEN = "123456:TEST-TOKEN-abcdef"
WEBHOOK_SECRET = "s3cret_-token"
WEBHOOK_URL = "https://bot.example/hook"


class ManualClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class BotHarness:
    fake: FakeTelegram
    db_path: Path
    clock: ManualClock
    settings: Settings
    app: Any = None
    seed: int = 1000
    timing: VirtualTiming = field(default_factory=VirtualTiming)
    users: dict[int, FakeUser] = field(default_factory=dict)
    known_hands: dict[int, int] = field(default_factory=dict)
    # Called with the application before its services start (a test's webhook, say).
    prepare: Callable[[Any], None] | None = None
    lease_clock: Callable[[], float] = time.monotonic  # by which the worker reckons its lease

    @property
    def rooms(self) -> Rooms:
        rooms: Rooms = self.app.bot_data[ROOMS_KEY]
        return rooms

    async def start(self) -> None:
        self.app = build_application(
            self.settings,
            request=self.fake.request(),
            get_updates_request=self.fake.updates_request(),
            clock=self.clock,
            timing=self.timing,
            seeds=self._next_seed,
            lease_clock=self.lease_clock,
        )
        if self.prepare is not None:
            self.prepare(self.app)
        await self.app.initialize()
        await start_services(self.app)

    def _next_seed(self) -> int:
        self.seed += 1
        return self.seed

    async def stop(self) -> None:
        if self.app is not None:
            await stop_services(self.app)
            await self.app.shutdown()
            self.app = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def send(self, *updates: dict[str, Any]) -> None:
        """Deliver updates, then wait until what they caused went out."""
        await self.deliver(*updates)
        await self.settle()

    async def deliver(self, *updates: dict[str, Any]) -> None:
        """Handle updates, not waiting for what they send (the sender's clock stands still
        while they are handled)."""
        with self.timing.update():
            await self.fake.deliver(self.app, *updates)

    async def run_due(self) -> int:
        """The deadlines that are due on the manual clock, run, and what they sent out."""
        count = await self.rooms.deadlines.run_due()
        await self.settle()
        return count

    async def settle(self) -> None:
        """Until the bot has nothing left to send and no background work (new message ids
        being stored, say): the sender's waits for its budgets pass on the virtual clock."""
        rooms = self.rooms
        while True:
            await rooms.sender.settled()
            if not rooms.store.background.busy():
                if not rooms.sender.busy():
                    return
                continue
            await rooms.store.background.settle()

    def user(self, user_id: int, name: str, lang: str = "en") -> FakeUser:
        user = self.fake.user(user_id, name, language_code=lang)
        self.users[user_id] = user
        return user

    def lobby_message(self, group: FakeGroup) -> FakeMessage:
        for message in reversed(self.fake.messages(group.id)):
            if "Join" in message.button_texts or any(
                b.callback_data and b.callback_data.startswith("l")
                for row in message.buttons
                for b in row
            ):
                return message
        raise AssertionError("no lobby message in the group")

    def hand_message(self, user: FakeUser) -> FakeMessage:
        for record in self.rooms.store.live_records():
            mid = record.hand_messages.get(str(user.id))
            if mid is not None:
                self.known_hands[user.id] = mid
                return self.fake.message(user.id, mid)
        if user.id in self.known_hands:  # the game has ended: its last hand message
            return self.fake.message(user.id, self.known_hands[user.id])
        raise AssertionError(f"no hand message for {user.id}")

    def read(self, message: FakeMessage) -> str:
        """A message's text as a client shows it now (on the virtual clock): each relative
        date_time entity (`<tg-time format="r">`) drawn as "in N s", counting down."""
        text = message.text.encode("utf-16-le")
        for entity in sorted(message.entities, key=lambda e: -int(e["offset"])):
            if entity["type"] != "date_time" or entity.get("date_time_format") != "r":
                continue
            left = round(int(entity["unix_time"]) - self.clock().timestamp())
            start, end = 2 * int(entity["offset"]), 2 * (entity["offset"] + entity["length"])
            text = text[:start] + f"in {left} s".encode("utf-16-le") + text[end:]
        return text.decode("utf-16-le")

    async def table_of(self, group: FakeGroup) -> FakeMessage:
        """The table message of the group's latest game (running or over), as stored."""
        async with self.rooms.kit.db.transaction(readonly=True) as tx:
            record = await tx.games.latest_for_chat(chat_id=group.id)
        return self.fake.message(group.id, record.table_message_id or 0)

    async def open_game(self, group: FakeGroup, players: list[FakeUser]) -> None:
        """/newgame by the first player, everyone starts the bot and joins, then Start."""
        for p in players:
            await self.send(p.start_private())
        await self.send(players[0].send(group, "/newgame"))
        lobby = self.lobby_message(group)
        for p in players[1:]:
            await self.send(p.tap(lobby, "Join"))
        await self.send(players[0].tap(lobby, "Start"))

    async def set_position(self, group: FakeGroup, game: Any) -> None:
        """Replace the running game of `group` with a hand-built position (same players)."""
        record = self.rooms.store.live(group.id)
        assert record is not None, "no game in the group"
        record.game = game
        await self.rooms.store.save(record)
        await self.rooms.screens.hands(record, force=True)
        await self.settle()

    async def tap_random(self, user: FakeUser, rng: random.Random) -> bool:
        """Tap a random button of the user's hand keyboard; False if it has none."""
        message = self.hand_message(user)
        buttons = [b for row in message.buttons for b in row if b.callback_data]
        if not buttons:
            return False
        choice = rng.choice(buttons)
        await self.send(user.tap(message, choice.callback_data or ""))
        return True


def make_settings(db_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "bot_token": TOKEN,
        "database_url": f"sqlite:///{db_path}",
        "table_edit_interval": 0,
        "lobby_edit_interval": 0,
        "turn_timeout": 60,
        "lobby_timeout": 600,
        "computer_delay": 0,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[BotHarness]:
    fake = FakeTelegram(token=TOKEN)
    db_path = tmp_path / "durak.sqlite3"
    h = BotHarness(fake=fake, db_path=db_path, clock=ManualClock(), settings=make_settings(db_path))
    fake.enforce(clock=h.timing.now)  # Telegram's limits (tests.fakes.telegram.limits)
    await h.start()
    try:
        yield h
    finally:
        await h.stop()


@dataclass
class Hooked:
    """The harness in webhook mode, its web server (the real one, on loopback, the webhook
    on `/hook`) and an HTTP client for posting."""

    h: BotHarness
    hook: Webhook
    web: WebServer
    client: httpx.AsyncClient

    @property
    def reader(self) -> InboxReader:
        reader = inbox_reader(self.h.app)
        assert reader is not None
        return reader

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.web.port}"

    async def post(self, update: Any, *, secret: str | None = WEBHOOK_SECRET) -> int:
        """Post as Telegram does, then wait until the update was handled and what it
        caused went out; the status."""
        body = update if isinstance(update, bytes) else orjson.dumps(update)
        headers = {"content-type": "application/json"}
        if secret is not None:
            headers[SECRET_HEADER] = secret
        response = await self.client.post(f"{self.base}/hook", content=body, headers=headers)
        await self.settle()
        return response.status_code

    async def settle(self) -> None:
        while self.reader.busy() or self.h.rooms.store.background.busy():
            await self.reader.settled()
            await self.h.settle()
        await self.h.settle()

    async def serve(self, **options: Any) -> WebServer:
        """Replace the web server by one with other limits (`WebServer`'s keywords)."""
        old = self.web
        self.web = WebServer(old.health, old.host, 0, posts={"/hook": self.hook.post}, **options)
        await old.close()
        await self.web.start()
        return self.web


async def start_hooked(h: BotHarness) -> tuple[Webhook, WebServer]:
    """Start the harness's bot in webhook mode (`WEBHOOK_URL`, `WEBHOOK_SECRET`) with its
    web server on a free loopback port; its webhook and web server."""
    hooks: list[Webhook] = []

    def prepare(app: Any) -> None:
        hook = Webhook(
            app,
            url=WEBHOOK_URL,
            secret=WEBHOOK_SECRET,
            database=lambda: app.bot_data.get(DATABASE_KEY),
            reader=lambda: inbox_reader(app),
            allowed_updates=ALLOWED_UPDATES,
            max_connections=40,
            clock=h.clock,
        )
        app.bot_data[UPDATES_KEY] = hook
        hooks.append(hook)

    h.prepare = prepare
    await h.start()
    web = WebServer(
        Health(database=lambda: h.app.bot_data.get(DATABASE_KEY)),
        "127.0.0.1",
        0,
        posts={"/hook": hooks[-1].post},
    )
    await web.start()
    return hooks[-1], web


@pytest.fixture
async def hooked(tmp_path: Path) -> AsyncIterator[Hooked]:
    """A whole bot in webhook mode (`tests/bot/test_webhook.py`, `tests/bot/test_web.py`)."""
    fake = FakeTelegram(token=TOKEN)
    db_path = tmp_path / "durak.sqlite3"
    h = BotHarness(fake=fake, db_path=db_path, clock=ManualClock(), settings=make_settings(db_path))
    fake.enforce(clock=h.timing.now)
    hook, web = await start_hooked(h)
    async with httpx.AsyncClient(trust_env=False) as client:
        hooked = Hooked(h, hook, web, client)
        try:
            yield hooked
        finally:
            await hooked.web.close()
            await h.stop()
