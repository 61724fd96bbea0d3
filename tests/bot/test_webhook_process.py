"""Webhook mode as an operator runs it (#20, #30): `python -m bot` with `WEBHOOK_URL` listens on
its one web port (`WEB_PORT`) for Telegram's posts and the health checks alike, registers
the webhook with its secret, never polls, stores each post (403 without the secret) and, as
the leader, plays it; on SIGTERM it stops taking connections at once (the proxy sends the
next post to another worker), answers the post under way with its 200, hands the update
it brought over to the game before it exits 0. (`/readyz` cannot be seen saying "stopping"
here: the one port stops listening at the signal; tests/bot/test_ops.py sees it in long
polling.)"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson

from bot.telegram.webhook import SECRET_HEADER
from tests.bot.conftest import TOKEN
from tests.bot.test_entrypoint import lobby_text, start_bot, stop_bot, until
from tests.bot.test_ops import get, metrics_of, until_ready, value
from tests.bot.test_startup import closed_port
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram

SECRET = "a-webhook-secret_0123456789"
PUBLIC_URL = "https://durak.example/telegram/hook"
PATH = "/telegram/hook"


async def post(port: int, update: Any, *, secret: str = SECRET) -> httpx.Response:
    """What Telegram sends: the update as JSON, with the secret token."""
    async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
        return await client.post(
            f"http://127.0.0.1:{port}{PATH}",
            content=orjson.dumps(update),
            headers={"Content-Type": "application/json", SECRET_HEADER: secret},
        )


class RawPost:
    """A post sent over a connection of its own, its answer read when the test likes."""

    def __init__(self, port: int, update: Any) -> None:
        self.port = port
        self.body = orjson.dumps(update)
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._status_line: bytes | None = None

    async def send(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = (
            f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"Content-Type: application/json\r\n{SECRET_HEADER}: {SECRET}\r\n"
            f"Content-Length: {len(self.body)}\r\nConnection: close\r\n\r\n"
        )
        writer.write(head.encode() + self.body)
        await writer.drain()
        self._streams = reader, writer

    async def answered(self, within: float) -> bool:
        """Whether the answer came (or comes within `within` s)."""
        assert self._streams is not None
        if self._status_line is None:
            try:
                self._status_line = await asyncio.wait_for(self._streams[0].readline(), within)
            except TimeoutError:
                return False
        return True

    async def status(self) -> int:
        """The answer's status (waiting for it)."""
        assert self._streams is not None
        try:
            assert await self.answered(within=30), "no answer"
        finally:
            self._streams[1].close()
        assert self._status_line is not None
        return int(self._status_line.split()[1])


@contextlib.contextmanager
def write_lock(path: Path) -> Iterator[sqlite3.Connection]:
    """Another connection's write lock on the SQLite database at `path`, held until the
    block ends or the connection rolls back: the bot's writes wait for it."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield connection
    finally:
        connection.close()


async def until_refused(port: int) -> None:
    """Until a new connection to `port` is refused (for at most 30 s)."""
    async with asyncio.timeout(30):
        while True:
            try:
                await get(port, "/healthz")
            except httpx.ConnectError:
                return
            await asyncio.sleep(0.02)


async def test_a_webhook_worker_on_one_port_registers_answers_posts_and_drains_on_sigterm(
    tmp_path: Path,
) -> None:
    fake = FakeTelegram(token=TOKEN)
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-7101, "Club", admins={alice})
    port = closed_port()
    async with LoopbackBotAPI(fake) as server:
        bot = await start_bot(
            server,
            tmp_path,
            WEBHOOK_URL=PUBLIC_URL,
            WEBHOOK_SECRET=SECRET,
            WEB_PORT=str(port),
            # a post waits for the test's write lock rather than answering 503 after 5 s
            DATABASE_URL=f"sqlite:///{tmp_path / 'data' / 'durak.sqlite3'}?busy_timeout=60000",
        )
        try:
            ready = (await until_ready(port, bot)).json()  # /readyz on the webhook's port
            assert ready["checks"] == {"state": "up", "database": "ok"}, ready
            assert ready["role"] == "leader" and ready["leader"] == ready["worker"], ready
            assert "telegram" not in ready  # no long polling to tell of
            assert (await get(port, "/healthz")).status_code == 200
            [registered] = fake.calls_for("setWebhook")
            assert registered.params["url"] == PUBLIC_URL
            assert registered.params["secret_token"] == SECRET
            assert set(registered.params["allowed_updates"]) >= {"message", "callback_query"}
            refused_post = await post(port, alice.send(group, "/newgame"), secret="x")
            assert refused_post.status_code == 403
            for update in (alice.start_private(), bob.start_private()):
                assert (await post(port, update)).status_code == 200
            assert (await post(port, alice.send(group, "/newgame"))).status_code == 200
            await until(server, bot, lambda: "Alice" in lobby_text(fake, group))
            async with asyncio.timeout(30):  # counted once each is marked handled
                while True:
                    played = await metrics_of(port)
                    if value(played, "durak_inbox_updates_total", outcome="handled") == 3:
                        break
                    await asyncio.sleep(0.05)
            assert value(played, "durak_leading") == 1
            assert value(played, "durak_webhook_posts_total", status="200") == 3
            assert value(played, "durak_webhook_posts_total", status="403") == 1
            assert value(played, "durak_inbox_updates_total", outcome="later") == 0

            # Bob's Join is under way (waiting to be stored: another connection holds the
            # database's write lock) when the stop comes: the worker stops listening at
            # once, yet answers it once stored, and the leader plays it before it hands the
            # lead over.
            lobby = next(m for m in fake.messages(group.id) if "Join" in m.button_texts)
            join = bob.tap(lobby, "Join")
            joining = RawPost(port, join)
            with write_lock(tmp_path / "data" / "durak.sqlite3") as lock:
                await joining.send()
                assert (await get(port, "/healthz")).status_code == 200  # the post was read
                bot.send_signal(signal.SIGTERM)
                await until_refused(port)  # no new connection: the proxy moves on
                assert not await joining.answered(within=0.3)  # under way: storing
                assert bot.returncode is None  # still running: the post under way holds it
                lock.rollback()
            assert await joining.status() == 200
        finally:
            log = await stop_bot(bot, tmp_path)
    assert "Bob" in lobby_text(fake, group), log  # the join was stored, played and shown
    assert fake.answer_for(join) is not None
    assert fake.count("getUpdates") == 0  # a webhook worker never polls
    assert f"web server on http://127.0.0.1:{port} ({PATH} for Telegram, /healthz" in log, log
    assert f"is up: webhook {PATH}, database " in log, log
    assert "SIGTERM: stopping" in log, log
    assert SECRET not in log and TOKEN.split(":")[1] not in log
