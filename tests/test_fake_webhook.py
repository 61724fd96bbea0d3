"""The fake's webhook behaves like Telegram's: setWebhook, getWebhookInfo and deleteWebhook as
python-telegram-bot reads them, getUpdates refused while a webhook is set, and the updates
posted to webhook servers on loopback (`tests.fakes.webhook`): the secret header, round-robin
over several servers, an update sent again until it is answered 200, one queue's updates in
order and one at a time."""

from __future__ import annotations

import asyncio
import datetime as dtm
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType

import httpx
import pytest
from aiohttp import web
from telegram import Bot, Update
from telegram.error import BadRequest, Conflict, RetryAfter

from tests.fakes.telegram import FakeTelegram
from tests.fakes.telegram.state import JSON
from tests.fakes.webhook import SECRET_HEADER, Attempt, WebhookDelivery, order_key

PUBLIC_URL = "https://bot.example/telegram"  # what every worker registers, behind a proxy
SECRET = "s3cret-_VALUE"


@dataclass(frozen=True, slots=True)
class Request:
    """A post the receiver was sent: its method, path, headers (names in lower case), body."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class Response:
    """How the receiver answers a post."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


Answer = Callable[[JSON, int], Awaitable[Response]]
"""How a receiver answers an update (and how many times it had it before)."""


class Clock:
    """The fake's clock (whole seconds), moved by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000

    def __call__(self) -> int:
        return self.now


class Receiver:
    """A webhook server on loopback, an aiohttp app with a POST route (as the bot's own
    `bot.web`): it keeps what it is posted and answers as `answer` says (200 by default)."""

    def __init__(self, answer: Answer | None = None) -> None:
        self.requests: list[Request] = []
        self._answer = answer
        app = web.Application()
        app.router.add_post("/hook", self._post)
        # Leaving drops a post whose answer is still held (the test is over), after a moment.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        self._port = 0
        self._arrived = asyncio.Condition()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}/hook"

    @property
    def updates(self) -> list[JSON]:
        return [json.loads(r.body) for r in self.requests]

    @property
    def ids(self) -> list[int]:
        return [u["update_id"] for u in self.updates]

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        async with asyncio.timeout(60), self._arrived:
            await self._arrived.wait_for(condition)

    async def __aenter__(self) -> Receiver:
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = self._runner.addresses[0][1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._runner.cleanup()

    async def _post(self, posted: web.Request) -> web.Response:
        headers = {name.lower(): value for name, value in posted.headers.items()}
        request = Request(posted.method, posted.path, headers, await posted.read())
        update = json.loads(request.body)
        before = self.ids.count(update["update_id"])
        self.requests.append(request)
        async with self._arrived:
            self._arrived.notify_all()
        answer = Response(200, b"") if self._answer is None else await self._answer(update, before)
        return web.Response(
            status=answer.status, body=answer.body, headers={"Content-Type": answer.content_type}
        )


def held(release: asyncio.Event, ids: set[int] | None = None) -> Answer:
    """Answer 200 only once `release` is set (the updates `ids`; the others at once)."""

    async def answer(update: JSON, before: int) -> Response:
        if ids is None or update["update_id"] in ids:
            await release.wait()
        return Response(200, b"")

    return answer


def closed_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake(clock: Clock) -> FakeTelegram:
    return FakeTelegram(clock=clock)


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = fake.bot()
    async with bot:
        yield bot


def private_messages(fake: FakeTelegram, count: int, text: str = "hi") -> list[JSON]:
    """One message each from `count` people, in their private chats (so: `count` queues)."""
    return [fake.user(10 + n, f"User {n}").send_private(text) for n in range(count)]


# --------------------------------------------------------------------------- the methods


async def test_set_webhook_is_shown_by_get_webhook_info_as_ptb_reads_it(
    fake: FakeTelegram, bot: Bot
) -> None:
    fake.queue(*private_messages(fake, 2))
    assert await bot.set_webhook(
        PUBLIC_URL,
        secret_token=SECRET,
        max_connections=5,
        allowed_updates=["message", "callback_query"],
    )
    info = await bot.get_webhook_info()
    assert info.url == PUBLIC_URL
    assert info.has_custom_certificate is False
    assert info.pending_update_count == 2
    assert info.max_connections == 5
    assert info.allowed_updates == ("message", "callback_query")
    assert info.last_error_date is None and info.last_error_message is None
    assert fake.webhook is not None and fake.webhook.secret_token == SECRET

    assert await bot.delete_webhook()
    info = await bot.get_webhook_info()
    assert info.url == "" and info.max_connections is None
    assert info.pending_update_count == 2  # kept for getUpdates


@pytest.mark.parametrize(("given", "kept"), [(None, 40), (0, 1), (500, 100), (7, 7)])
async def test_max_connections_is_clamped_to_telegram_range(
    fake: FakeTelegram, bot: Bot, given: int | None, kept: int
) -> None:
    await bot.set_webhook(PUBLIC_URL, max_connections=given)
    assert (await bot.get_webhook_info()).max_connections == kept


async def test_drop_pending_updates_drops_them_when_setting_or_deleting(
    fake: FakeTelegram, bot: Bot, clock: Clock
) -> None:
    fake.queue(*private_messages(fake, 2))
    await bot.set_webhook(PUBLIC_URL, drop_pending_updates=True)
    assert (await bot.get_webhook_info()).pending_update_count == 0
    fake.queue(*private_messages(fake, 1))
    await bot.delete_webhook(drop_pending_updates=True)
    assert fake.pending_updates == []


async def test_get_updates_is_a_conflict_while_a_webhook_is_set(
    fake: FakeTelegram, bot: Bot
) -> None:
    fake.queue(*private_messages(fake, 1))
    await bot.set_webhook(PUBLIC_URL)
    with pytest.raises(Conflict):
        await bot.get_updates()
    assert fake.calls_for("getUpdates")[-1].description == (
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to "
        "delete the webhook first"
    )
    await bot.delete_webhook()
    assert len(await bot.get_updates()) == 1


async def test_setting_a_webhook_ends_a_waiting_long_poll_with_a_conflict(
    fake: FakeTelegram, bot: Bot
) -> None:
    polling = asyncio.Event()

    async def arrived(method: str, params: JSON) -> None:
        if method == "getUpdates":
            polling.set()  # from here the fake goes on to park the poll, without a pause

    fake.latency = arrived
    poll = asyncio.create_task(bot.get_updates(timeout=30))
    await polling.wait()
    await bot.set_webhook(PUBLIC_URL)
    with pytest.raises(Conflict):
        await poll
    assert fake.calls_for("getUpdates")[-1].description == (
        "Conflict: terminated by setWebhook request"
    )


@pytest.mark.parametrize(
    ("url", "secret", "description"),
    [
        (
            "http://bot.example/telegram",
            None,
            "Bad Request: bad webhook: An HTTPS URL must be provided for webhook",
        ),
        (
            "https://bot.example:8080/telegram",
            None,
            "Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443",
        ),
        ("ftp://bot.example/telegram", None, "Bad Request: invalid webhook URL specified"),
        (PUBLIC_URL, "not allowed!", "Bad Request: secret token contains unallowed characters"),
        (PUBLIC_URL, "x" * 257, "Bad Request: secret token is too long"),
    ],
)
async def test_set_webhook_refuses_what_telegram_refuses(
    fake: FakeTelegram, bot: Bot, url: str, secret: str | None, description: str
) -> None:
    with pytest.raises(BadRequest):
        await bot.set_webhook(url, secret_token=secret)
    call = fake.calls_for("setWebhook")[-1]
    assert (call.error_code, call.description) == (400, description)
    assert (await bot.get_webhook_info()).url == ""


@pytest.mark.parametrize(
    "url",
    ["https://bot.example:8443/telegram", "http://127.0.0.1:54321/hook", "http://localhost:1/x"],
)
async def test_telegram_ports_and_loopback_on_any_port_are_taken(bot: Bot, url: str) -> None:
    # Loopback over http, on any port, is the fake's leniency (Telegram refuses both).
    assert await bot.set_webhook(url, secret_token="A" * 256)
    assert (await bot.get_webhook_info()).url == url


async def test_a_second_setting_within_a_second_is_told_to_retry_after_one(
    fake: FakeTelegram, bot: Bot, clock: Clock
) -> None:
    await bot.set_webhook(PUBLIC_URL, secret_token=SECRET)
    with pytest.raises(RetryAfter) as refused:
        await bot.set_webhook(PUBLIC_URL, secret_token=SECRET)  # a second worker, at once
    assert refused.value.retry_after == dtm.timedelta(seconds=1)
    clock.now += 1
    assert await bot.set_webhook(PUBLIC_URL, secret_token=SECRET)  # already set: fine
    assert await bot.delete_webhook()  # deleting is never too soon


async def test_an_empty_url_deletes_the_webhook(fake: FakeTelegram, bot: Bot) -> None:
    await bot.set_webhook(PUBLIC_URL)
    assert await bot.set_webhook("")
    assert fake.webhook is None and (await bot.get_webhook_info()).url == ""


# --------------------------------------------------------------------------- delivery


async def test_updates_are_posted_with_the_secret_and_acknowledged_on_200(
    fake: FakeTelegram, bot: Bot
) -> None:
    updates = private_messages(fake, 2, "ping")
    fake.queue(*updates)
    async with Receiver() as receiver:
        await bot.set_webhook(receiver.url, secret_token=SECRET)
        async with WebhookDelivery(fake) as delivery:
            await delivery.idle()
    assert sorted(delivery.acknowledged) == [u["update_id"] for u in updates]
    assert delivery.failures == []
    assert sorted(receiver.ids) == sorted(delivery.acknowledged)  # each once
    for request in receiver.requests:
        assert request.headers[SECRET_HEADER.lower()] == SECRET
        assert request.headers["content-type"] == "application/json"
    parsed = [Update.de_json(u, bot) for u in receiver.updates]
    assert [u.effective_message.text for u in parsed if u.effective_message] == ["ping", "ping"]
    assert fake.pending_updates == []
    assert (await bot.get_webhook_info()).pending_update_count == 0


async def test_without_a_secret_no_header_is_sent_and_a_given_one_is(
    fake: FakeTelegram, bot: Bot
) -> None:
    async with Receiver() as receiver:
        await bot.set_webhook(receiver.url)
        fake.queue(*private_messages(fake, 1))
        async with WebhookDelivery(fake) as delivery:
            await delivery.idle()
        fake.queue(*private_messages(fake, 1))
        async with WebhookDelivery(fake, secret="forged") as delivery:
            await delivery.idle()
    first, second = receiver.requests
    assert SECRET_HEADER.lower() not in first.headers
    assert second.headers[SECRET_HEADER.lower()] == "forged"


async def test_updates_go_round_robin_over_the_workers_urls(fake: FakeTelegram, bot: Bot) -> None:
    await bot.set_webhook(PUBLIC_URL, secret_token=SECRET)  # the public URL, as in production
    fake.queue(*private_messages(fake, 4))
    async with (
        Receiver() as one,
        Receiver() as two,
        WebhookDelivery(fake, urls=[one.url, two.url]) as delivery,
    ):
        await delivery.idle()
    assert len(one.requests) == len(two.requests) == 2
    assert all(r.headers[SECRET_HEADER.lower()] == SECRET for r in one.requests + two.requests)
    assert len(delivery.acknowledged) == 4


async def test_an_update_answered_503_is_posted_again_and_acknowledged_once(
    fake: FakeTelegram, bot: Bot, clock: Clock
) -> None:
    async def busy_once(update: JSON, before: int) -> Response:
        return Response(503 if before == 0 else 200, b"")

    (update,) = private_messages(fake, 1)
    fake.queue(update)
    async with Receiver(busy_once) as receiver:
        await bot.set_webhook(receiver.url)
        async with WebhookDelivery(fake) as delivery:
            await delivery.idle()
    uid = update["update_id"]
    assert receiver.ids == [uid, uid]
    assert delivery.acknowledged == [uid]
    error = "Wrong response from the webhook: 503 Service Unavailable"
    assert delivery.failures == [Attempt(uid, receiver.url, 503, error)]
    info = await bot.get_webhook_info()
    assert info.last_error_message == error
    assert info.last_error_date == dtm.datetime.fromtimestamp(clock.now, dtm.UTC)
    assert info.pending_update_count == 0


async def test_a_closed_port_is_skipped_for_the_next_url(fake: FakeTelegram, bot: Bot) -> None:
    await bot.set_webhook(PUBLIC_URL)
    down = f"http://127.0.0.1:{closed_port()}/hook"
    (update,) = private_messages(fake, 1)
    fake.queue(update)
    async with Receiver() as up, WebhookDelivery(fake, urls=[down, up.url]) as delivery:
        await delivery.idle()
    uid = update["update_id"]
    assert delivery.failures == [Attempt(uid, down, None, "Connection refused")]
    assert up.ids == [uid] and delivery.acknowledged == [uid]
    assert (await bot.get_webhook_info()).last_error_message == "Connection refused"


async def test_no_answer_in_time_and_a_dropped_connection_are_failures(
    fake: FakeTelegram, bot: Bot
) -> None:
    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()  # no answer at all

    never = asyncio.Event()
    dropper = await asyncio.start_server(drop, "127.0.0.1", 0)
    dropped = f"http://127.0.0.1:{dropper.sockets[0].getsockname()[1]}/hook"
    await bot.set_webhook(PUBLIC_URL)
    (update,) = private_messages(fake, 1)
    fake.queue(update)
    async with (
        Receiver(held(never)) as silent,
        Receiver() as up,
        WebhookDelivery(fake, urls=[silent.url, dropped, up.url], timeout=0.2) as delivery,
    ):
        await delivery.idle()
    dropper.close()
    uid = update["update_id"]
    assert [(a.url, a.status, a.error) for a in delivery.attempts] == [
        (silent.url, None, "Read timeout expired"),
        (dropped, None, "Webhook connection closed"),
        (up.url, 200, None),
    ]
    assert delivery.acknowledged == [uid]


async def test_one_chat_waits_for_its_earlier_update_while_others_go(
    fake: FakeTelegram, bot: Bot
) -> None:
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    first, second = alice.send_private("first"), alice.send_private("second")
    other = bob.send_private("meanwhile")
    fake.queue(first, second, other)
    release = asyncio.Event()
    async with Receiver(held(release, {first["update_id"]})) as receiver:
        await bot.set_webhook(receiver.url)
        async with WebhookDelivery(fake) as delivery:
            await delivery.wait_until_acknowledged([other["update_id"]])
            assert receiver.ids == [first["update_id"], other["update_id"]]  # not `second`
            release.set()
            await delivery.idle()
    assert delivery.acknowledged == [other["update_id"], first["update_id"], second["update_id"]]
    assert receiver.ids[-1] == second["update_id"]


async def test_taps_queue_by_who_tapped_not_by_chat(fake: FakeTelegram, bot: Bot) -> None:
    alice, bob = fake.user(1, "Alice"), fake.user(2, "Bob")
    group = fake.group(-1001, "Club", members=[alice, bob])
    lobby = await bot.send_message(group.id, "Lobby", reply_markup=None)
    message = fake.message(group.id, lobby.message_id)
    taps = [alice.tap_raw(message, "join"), bob.tap_raw(message, "join")]
    said = alice.send(group, "hello")
    assert order_key(taps[0]) != order_key(taps[1]) != order_key(said)
    fake.queue(*taps, said)
    release = asyncio.Event()
    async with Receiver(held(release)) as receiver:
        await bot.set_webhook(receiver.url)
        async with WebhookDelivery(fake) as delivery:
            await receiver.wait_for(lambda: len(receiver.requests) == 3)  # all at once
            release.set()
            await delivery.idle()
    assert len(delivery.acknowledged) == 3


async def test_at_most_max_connections_posts_are_under_way(fake: FakeTelegram, bot: Bot) -> None:
    fake.queue(*private_messages(fake, 5))
    release = asyncio.Event()
    async with Receiver(held(release)) as one, Receiver(held(release)) as two:
        await bot.set_webhook(PUBLIC_URL, max_connections=2)
        async with WebhookDelivery(fake, urls=[one.url, two.url]) as delivery:
            await one.wait_for(lambda: len(one.requests) == 1)
            await two.wait_for(lambda: len(two.requests) == 1)
            assert delivery.in_flight == 2  # the webhook's limit, over all the workers
            release.set()
            await delivery.idle()
    assert len(delivery.acknowledged) == 5


async def test_a_method_in_the_answer_is_made(fake: FakeTelegram, bot: Bot) -> None:
    async def reply(update: JSON, before: int) -> Response:
        chat_id = update["message"]["chat"]["id"]
        body = json.dumps({"method": "sendMessage", "chat_id": chat_id, "text": "pong"})
        return Response(200, body.encode(), "application/json")

    alice = fake.user(1, "Alice")
    fake.queue(alice.send_private("ping"))
    async with Receiver(reply) as receiver:
        await bot.set_webhook(receiver.url)
        async with WebhookDelivery(fake) as delivery:
            await delivery.idle()
    assert [m.text for m in fake.messages(alice.id)] == ["pong"]


async def test_nothing_is_posted_until_a_webhook_is_set(fake: FakeTelegram, bot: Bot) -> None:
    fake.queue(*private_messages(fake, 1))
    async with Receiver() as receiver, WebhookDelivery(fake) as delivery:
        assert delivery.attempts == [] and fake.webhook is None
        await bot.set_webhook(receiver.url)  # the bot's start, while Telegram has updates
        await delivery.idle()
    assert len(receiver.requests) == 1


async def test_posts_go_to_loopback_only(fake: FakeTelegram, bot: Bot) -> None:
    with pytest.raises(ValueError, match="loopback only"):
        WebhookDelivery(fake, urls=["https://bot.example/telegram"])
    await bot.set_webhook(PUBLIC_URL)
    fake.queue(*private_messages(fake, 1))
    with pytest.raises(ValueError, match="loopback only"):
        async with WebhookDelivery(fake) as delivery:  # the public URL: not from a test
            await delivery.idle()


async def test_without_a_webhook_the_info_has_telegrams_three_fields(fake: FakeTelegram) -> None:
    async with httpx.AsyncClient(transport=fake.transport) as client:
        response = await client.post(f"https://api.telegram.org/bot{fake.token}/getWebhookInfo")
    assert response.json() == {
        "ok": True,
        "result": {"url": "", "has_custom_certificate": False, "pending_update_count": 0},
    }
