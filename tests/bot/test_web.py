"""The web server's defences (#30, `bot.web`): it faces the internet, so no client may take
it down or hold it up. Each test runs an attack on a whole bot in webhook mode (the `hooked`
fixture: the real `WebServer` on loopback) and, while the attack is going on, posts a real
update with the right secret, which is answered 200 and handled (the person gets the bot's
reply), and gets 200 from `/healthz` (`still_served`):

- malformed requests (garbage, TLS on the plain port, a broken HTTP version, a header line
  without a colon, a bad Content-Length, a bad chunk) get a 4xx or are closed, never a 500
  nor an error of the server's own in the log; a GET on the webhook 405, an unknown path
  404, and the connection serves on;
- a body over `BODY_LIMIT` (10 MB, with a Content-Length or chunked) is answered 413 when
  2 MiB of it are in: the server does not take in the rest; a body at the limit is read;
- a body that breaks off (garbage in its chunks, its client leaving) is refused, and no
  error is logged;
- a request line or a header over `HEADER_LIMIT`, more than `MAX_HEADERS` headers: 4xx;
- a client that sends nothing, or its request head a byte at a time, is closed when its
  `idle_seconds` are up; a body that trickles in is answered 408 after the webhook's
  `READ_SECONDS`, and not stored;
- 500 idle connections held open at once take nothing from the others;
- over `max_connections`, more connections (also a flood, all at once) are answered 503
  and closed, and once one leaves a new one is served;
- a post with a wrong secret, or none, is answered 403 (without its body being waited
  for) and nothing is stored;
- `drain` (a stop) answers the post being stored and refuses new connections; a post whose
  body is still coming is answered 408 (aiohttp reads no more once it shuts down).

Attacks are made with raw sockets (`Raw`), so that they are exactly what they say; the
real posts with httpx. No test waits by sleeping (only the slow attackers pace themselves):
each waits for an answer, for the server closing a connection or for what it expects,
under an overall timeout (`WAIT`) as a safety net.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import resource
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
import pytest
from aiohttp.http_exceptions import HttpProcessingError

from bot.leader import DATABASE_KEY
from bot.ops import metrics
from bot.telegram import webhook
from bot.telegram.webhook import SECRET_HEADER
from bot.web import BODY_LIMIT, HEADER_LIMIT, MAX_HEADERS
from tests.bot.conftest import WEBHOOK_SECRET, Hooked

WAIT = 10.0
"""The most any test waits for what it expects (a safety net: it comes far sooner)."""

TEN_MB = 10 * 1000 * 1000
CHUNK = 64 * 1024
_people = itertools.count(1)


# --------------------------------------------------------------------------- raw requests


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class Raw:
    """One connection to the web server, sent exactly the bytes a test gives."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    sent: int = field(default=0)  # bytes sent so far

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()
        self.sent += len(data)

    async def answer(self) -> Answer | None:
        """The next response, or None if the server closed the connection without one."""
        try:
            async with asyncio.timeout(WAIT):
                line = await self.reader.readline()
                if not line:
                    return None
                _, status, *_ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (line := await self.reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await self.reader.readexactly(length)
        except (ConnectionResetError, asyncio.IncompleteReadError):
            return None
        return Answer(int(status), headers, body)

    async def closed(self) -> bytes:
        """Wait until the server closes the connection; what it sent before that."""
        got = b""
        async with asyncio.timeout(WAIT):
            with contextlib.suppress(ConnectionResetError):
                while chunk := await self.reader.read(CHUNK):
                    got += chunk
        return got


@contextlib.asynccontextmanager
async def connect(port: int) -> AsyncIterator[Raw]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        yield Raw(reader, writer)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


def head(
    method: str, path: str, *headers: tuple[str, str | int], version: str = "HTTP/1.1"
) -> bytes:
    """A request head: its line, a Host and `headers`."""
    lines = [f"{method} {path} {version}", "Host: 127.0.0.1", *(f"{n}: {v}" for n, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def post_head(length: int | None, *headers: tuple[str, str | int]) -> bytes:
    """The head of a post to the webhook with the right secret (chunked without `length`)."""
    size = ("Content-Length", length) if length is not None else ("Transfer-Encoding", "chunked")
    return head(
        "POST", "/hook", (SECRET_HEADER, WEBHOOK_SECRET), ("Content-Type", "application/json"),
        size, *headers,
    )  # fmt: skip


async def ask(raw: Raw, request: bytes) -> Answer | None:
    """Send `request`, read its answer (None: closed without one)."""
    with contextlib.suppress(ConnectionError):
        await raw.send(request)
    return await raw.answer()


def chunked(body: bytes) -> bytes:
    return f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"


# --------------------------------------------------------------------------- what must hold


def help_update(hooked: Hooked) -> dict[str, Any]:
    """A private "/help" from someone new: the bot answers it with a message."""
    person = next(_people)
    return hooked.h.user(person, f"Person {person}").send_private("/help")


async def handled(hooked: Hooked, update: dict[str, Any]) -> bool:
    async with hooked.h.rooms.kit.db.transaction(readonly=True) as tx:
        return await tx.inbox.handled(update_id=update["update_id"])


async def stored(hooked: Hooked, update: dict[str, Any]) -> bool:
    """Whether the update is in the inbox at all (handled or waiting)."""
    async with hooked.h.rooms.kit.db.transaction(readonly=True) as tx:
        uid = update["update_id"]
        return await tx.inbox.handled(update_id=uid) or bool(
            await tx.inbox.waiting(limit=10, ids=[uid])
        )


async def still_served(hooked: Hooked) -> None:
    """A real update is answered 200 and handled (its reply is sent), and /healthz is 200.
    On connections of their own (a pooled one might just have been closed as idle)."""
    update = help_update(hooked)
    async with httpx.AsyncClient(base_url=hooked.base, trust_env=False) as client:
        posted = await client.post(
            "/hook",
            content=orjson.dumps(update),
            headers={SECRET_HEADER: WEBHOOK_SECRET, "Content-Type": "application/json"},
        )
        health = await client.get("/healthz")
    assert posted.status_code == 200
    assert health.status_code == 200 and health.text == "ok\n"
    await hooked.settle()
    assert await handled(hooked, update)
    assert hooked.h.fake.messages(update["message"]["chat"]["id"])  # the bot's reply


class Answered:
    """The statuses the webhook answers from now on (through its metric), to wait for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.statuses: list[int] = []
        self._changed = asyncio.Event()
        count = metrics.webhook_answered

        def answered(status: int) -> None:
            count(status)
            self.statuses.append(int(status))
            self._changed.set()

        monkeypatch.setattr(metrics, "webhook_answered", answered)

    async def wait_for(self, status: int) -> None:
        async with asyncio.timeout(WAIT):
            while status not in self.statuses:
                self._changed.clear()
                await self._changed.wait()


def no_server_error(caplog: pytest.LogCaptureFixture) -> None:
    """No error in the log, and no traceback: a request aiohttp refuses as unreadable (an
    `HttpProcessingError`, answered 400) is the client's fault, one line at INFO
    (`bot.web`); an error would be something that escaped a handler (answered 500)."""
    for record in caplog.records:
        assert record.levelno < logging.ERROR, record.getMessage()
        assert record.exc_info is None or not isinstance(record.exc_info[1], HttpProcessingError), (
            record.getMessage()
        )


# --------------------------------------------------------------------------- malformed


MALFORMED = {
    "tls on the plain port": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(64)),
    "garbage": b"\x00\xff\xfe garbage \x7f\r\n\r\n",
    "broken version": head("GET", "/healthz", version="HTTP/9.Z"),
    "header without colon": b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n",
    "bad content-length": head("POST", "/hook", ("Content-Length", "ten")),
    "negative content-length": head("POST", "/hook", ("Content-Length", -5)),
    "length and chunked": head(
        "POST", "/hook", ("Content-Length", 4), ("Transfer-Encoding", "chunked")
    ),
    "bad chunk size": post_head(None) + b"zz\r\n{}\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("request_bytes", MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_malformed_request_gets_a_4xx_or_is_closed(
    hooked: Hooked, caplog: pytest.LogCaptureFixture, request_bytes: bytes
) -> None:
    async def attack() -> Answer | None:
        async with connect(hooked.web.port) as raw:
            await raw.send(request_bytes)
            return await raw.answer()

    answer, _ = await asyncio.gather(attack(), still_served(hooked))
    assert answer is None or 400 <= answer.status < 500, answer
    no_server_error(caplog)
    await still_served(hooked)


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/hook", 405), ("PUT", "/hook", 405), ("GET", "/nowhere", 404), ("POST", "/", 404)],
)
async def test_a_wrong_method_or_path_gets_405_or_404(
    hooked: Hooked, method: str, path: str, status: int
) -> None:
    async with connect(hooked.web.port) as raw:
        await raw.send(head(method, path, (SECRET_HEADER, WEBHOOK_SECRET)))
        answer = await raw.answer()
        assert answer is not None and answer.status == status
        await still_served(hooked)
        await raw.send(head("GET", "/healthz"))  # the same connection serves on
        answer = await raw.answer()
        assert answer is not None and answer.status == 200


@pytest.mark.parametrize(
    "attack",
    [
        head("GET", "/healthz", ("X-Long", "a" * (HEADER_LIMIT + 1))),
        head("POST", "/hook", (SECRET_HEADER, "s" * (2 * HEADER_LIMIT))),
        head("GET", "/" + "p" * (HEADER_LIMIT + 1)),
        head("GET", "/healthz", *((f"X-Header-{n}", n) for n in range(MAX_HEADERS + 1))),
    ],
    ids=["one long header", "a long secret", "a long request line", "too many headers"],
)
async def test_a_head_over_the_limits_gets_a_4xx(
    hooked: Hooked, caplog: pytest.LogCaptureFixture, attack: bytes
) -> None:
    async with connect(hooked.web.port) as raw:
        await raw.send(attack)
        answer = await raw.answer()
        await still_served(hooked)
    assert answer is not None and 400 <= answer.status < 500, answer
    no_server_error(caplog)


# --------------------------------------------------------------------------- big bodies


async def test_a_10_mb_body_is_refused_413_before_it_is_all_sent(hooked: Hooked) -> None:
    """Answered once a little more than the limit came in: the rest is never needed."""
    async with connect(hooked.web.port) as raw:
        raw.writer.write(post_head(TEN_MB) + b"x" * (2 * BODY_LIMIT))  # of 10 MB
        answer = await raw.answer()
        assert answer is not None and answer.status == 413
        await still_served(hooked)  # while 8 MB are still to come


async def test_a_10_mb_chunked_body_is_refused_413(hooked: Hooked) -> None:
    chunk = f"{CHUNK:x}\r\n".encode() + b"x" * CHUNK + b"\r\n"
    async with connect(hooked.web.port) as raw:
        await raw.send(post_head(None))
        while raw.sent < 2 * BODY_LIMIT:
            await raw.send(chunk)
        answer = await raw.answer()
        assert answer is not None and answer.status == 413
        await still_served(hooked)
        with contextlib.suppress(ConnectionError):  # the rest, up to 10 MB
            while raw.sent < TEN_MB:
                await raw.send(chunk)
            await raw.send(b"0\r\n\r\n")
    await still_served(hooked)


async def test_a_body_just_at_the_limit_is_read(hooked: Hooked) -> None:
    """The limit refuses what is over it, not an update padded up to it."""
    update = help_update(hooked)
    body = orjson.dumps(update)
    body += b" " * (BODY_LIMIT - len(body))
    assert await hooked.post(body) == 200
    assert await handled(hooked, update)


async def test_a_chunked_body_that_turns_to_garbage_gets_a_4xx(
    hooked: Hooked, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(aiohttp's parser does not tell the webhook that the body broke: it waits for the
    rest, and answers 408 after `READ_SECONDS`.)"""
    monkeypatch.setattr(webhook, "READ_SECONDS", 0.5)
    async with connect(hooked.web.port) as raw:
        await raw.send(post_head(None, ("Expect", "100-continue")))
        answer = await raw.answer()
        assert answer is not None and answer.status == 100  # the webhook reads the body
        await raw.send(chunked(b'{"update_id": 1')[: -len(b"0\r\n\r\n")] + b"zz\r\n")
        await still_served(hooked)
        answer = await raw.answer()
    assert answer is None or 400 <= answer.status < 500, answer
    no_server_error(caplog)


@pytest.mark.parametrize("leave", ["close", "end its side"])
async def test_a_client_that_leaves_in_the_middle_of_its_body_is_no_error(
    hooked: Hooked, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, leave: str
) -> None:
    """Telegram giving up on a slow post, say: a post that is no update (400, to no one),
    not an error in the log (it was one: `ConnectionResetError` escaped the webhook)."""
    answered = Answered(monkeypatch)
    async with connect(hooked.web.port) as raw:
        await raw.send(post_head(100, ("Expect", "100-continue")))
        answer = await raw.answer()
        assert answer is not None and answer.status == 100  # the webhook reads the body
        await raw.send(b'{"update_id": 1')
        if leave == "end its side":
            raw.writer.write_eof()
            assert await raw.answer() is None  # aiohttp takes it for a client gone
    await answered.wait_for(400)
    no_server_error(caplog)
    await still_served(hooked)


# --------------------------------------------------------------------------- slow clients


async def test_a_client_that_sends_nothing_or_a_byte_at_a_time_is_closed(
    hooked: Hooked,
) -> None:
    await hooked.serve(idle_seconds=0.5)
    request = post_head(200)

    async def dribble(raw: Raw) -> None:
        with contextlib.suppress(ConnectionError):
            for byte in request:
                await raw.send(bytes([byte]))
                await asyncio.sleep(0.05)  # the attacker's pace (the whole head: ~10 s)

    async with connect(hooked.web.port) as silent, connect(hooked.web.port) as slow:
        dribbling = asyncio.create_task(dribble(slow))
        await still_served(hooked)
        assert await silent.closed() == b""
        assert await slow.closed() == b""
        assert slow.sent < len(request)  # cut off in its head
        dribbling.cancel()
        await still_served(hooked)


async def test_a_body_that_trickles_in_is_answered_408(
    hooked: Hooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhook, "READ_SECONDS", 0.5)
    update = help_update(hooked)
    body = orjson.dumps(update)

    async def trickle(raw: Raw) -> None:
        with contextlib.suppress(ConnectionError):
            for byte in body:
                await raw.send(bytes([byte]))
                await asyncio.sleep(0.05)  # the attacker's pace (the whole body: many s)

    async with connect(hooked.web.port) as raw:
        await raw.send(post_head(len(body)))
        trickling = asyncio.create_task(trickle(raw))
        await still_served(hooked)
        answer = await raw.answer()
        assert answer is not None and answer.status == 408
        assert not trickling.done()  # before the body was all there
        trickling.cancel()
    await still_served(hooked)
    assert not await stored(hooked, update)


# --------------------------------------------------------------------------- many connections


def allow_files(count: int) -> None:
    """At least `count` open files for this process (each connection is two here)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < count:
        if hard != resource.RLIM_INFINITY and hard < count:
            pytest.skip(f"{count} open files are needed, {hard} allowed")
        resource.setrlimit(resource.RLIMIT_NOFILE, (count, hard))


async def test_500_idle_connections_take_nothing_from_the_others(hooked: Hooked) -> None:
    allow_files(2 * 500 + 500)
    await hooked.serve(idle_seconds=60)  # held throughout, however slow the machine
    async with contextlib.AsyncExitStack() as stack:
        idle = [await stack.enter_async_context(connect(hooked.web.port)) for _ in range(500)]
        await still_served(hooked)
        for raw in (idle[0], idle[-1]):  # they were held open all along, and serve too
            await raw.send(head("GET", "/healthz"))
            answer = await raw.answer()
            assert answer is not None and answer.status == 200


async def test_connections_over_the_bound_are_answered_503(hooked: Hooked) -> None:
    """Also when they come all at once (as a flood does); once one leaves, a new connection
    is served again."""
    bound = 3
    port = (await hooked.serve(max_connections=bound)).port
    async with contextlib.AsyncExitStack() as stack:
        opening = [stack.enter_async_context(connect(port)) for _ in range(4 * bound)]
        flood = await asyncio.gather(*opening)  # the server accepts them together
        answers = await asyncio.gather(*(ask(raw, head("GET", "/healthz")) for raw in flood))
        statuses = [answer.status if answer else None for answer in answers]
        assert statuses.count(200) == bound, statuses
        assert set(statuses) <= {200, 503, None}  # None: closed as it was sent more
        held = [raw for raw, status in zip(flood, statuses, strict=True) if status == 200]
        async with connect(port) as over:
            answer = await over.answer()
            assert answer is not None and answer.status == 503
            assert await over.closed() == b""
        held[0].writer.close()  # one leaves: a new connection is served again
        update = help_update(hooked)
        body = orjson.dumps(update)
        async with asyncio.timeout(WAIT):
            while True:  # until the server has seen it leave
                async with connect(port) as raw:
                    answer = await ask(raw, post_head(len(body)) + body)
                if answer is not None and answer.status != 503:
                    break
        assert answer.status == 200
        await hooked.settle()
        assert await handled(hooked, update)
        assert hooked.h.fake.messages(update["message"]["chat"]["id"])


# --------------------------------------------------------------------------- the secret


@pytest.mark.parametrize("secret", [None, "", "wrong", WEBHOOK_SECRET.upper()])
async def test_a_post_with_a_wrong_secret_is_refused_403_and_not_stored(
    hooked: Hooked, secret: str | None
) -> None:
    update = help_update(hooked)
    async with connect(hooked.web.port) as raw:
        given = [] if secret is None else [(SECRET_HEADER, secret)]
        # A body of 10 MB is announced and never sent: the answer does not wait for it.
        await raw.send(head("POST", "/hook", ("Content-Length", TEN_MB), *given))
        answer = await raw.answer()
        assert answer is not None and answer.status == 403
        await still_served(hooked)
    assert await hooked.post(update, secret=secret) == 403
    assert not await stored(hooked, update)
    assert hooked.h.fake.messages(update["message"]["chat"]["id"]) == []


# --------------------------------------------------------------------------- a stop


async def test_drain_answers_the_post_under_way_and_refuses_new_connections(
    hooked: Hooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A post being stored when the stop begins is stored and answered 200."""
    db = hooked.h.app.bot_data[DATABASE_KEY]
    storing, store = asyncio.Event(), asyncio.Event()
    accept = db.accept_update

    async def held(**kwargs: Any) -> bool:
        storing.set()
        await store.wait()
        return bool(await accept(**kwargs))

    monkeypatch.setattr(db, "accept_update", held)
    update = help_update(hooked)
    body = orjson.dumps(update)
    port = hooked.web.port
    async with connect(port) as raw:
        await raw.send(post_head(len(body)) + body)
        async with asyncio.timeout(WAIT):
            await storing.wait()
        draining = asyncio.create_task(hooked.web.drain())
        await no_longer_listening(port)
        assert not draining.done()
        store.set()
        answer = await raw.answer()
        assert answer is not None and answer.status == 200
        async with asyncio.timeout(WAIT):
            await draining
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", port)
    await hooked.settle()
    assert await handled(hooked, update)
    assert hooked.h.fake.messages(update["message"]["chat"]["id"])


async def test_a_post_whose_body_is_still_coming_when_the_stop_begins_gets_408(
    hooked: Hooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    """aiohttp reads nothing more of a connection once its server shuts down (aiohttp
    #2298), so such a post cannot be finished: it is answered 408 after `READ_SECONDS`, and
    Telegram sends it again (to a worker that runs). The stop waits no longer than that."""
    monkeypatch.setattr(webhook, "READ_SECONDS", 0.5)
    update = help_update(hooked)
    body = orjson.dumps(update)
    port = hooked.web.port
    async with connect(port) as raw:
        await raw.send(post_head(len(body), ("Expect", "100-continue")))
        answer = await raw.answer()
        assert answer is not None and answer.status == 100  # the webhook reads the body
        await raw.send(body[:10])
        draining = asyncio.create_task(hooked.web.drain())
        await no_longer_listening(port)
        with contextlib.suppress(ConnectionError):
            await raw.send(body[10:])
        answer = await raw.answer()
        assert answer is not None and answer.status == 408
        async with asyncio.timeout(WAIT):
            await draining
    assert not await stored(hooked, update)


async def no_longer_listening(port: int) -> None:
    """Wait until a connection to `port` is refused."""
    async with asyncio.timeout(WAIT):
        while True:
            try:
                async with connect(port):
                    pass
            except (ConnectionRefusedError, ConnectionResetError):
                return  # (reset: it was waiting to be taken when listening stopped)
