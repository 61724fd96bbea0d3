"""Telegram's side of a webhook: the fake's pending updates posted to the bot's server.

With a webhook set (`setWebhook` on the fake), Telegram stops answering getUpdates and posts
each update instead, as JSON, to the webhook's URL, with the secret token in the header
``X-Telegram-Bot-Api-Secret-Token``; an answer 2xx acknowledges it, anything else (another
status, a refused or dropped connection, no answer in time) is a failure: the update is sent
again later, and ``getWebhookInfo`` shows the last error. `WebhookDelivery` does that for a
test, over real HTTP on loopback::

    fake.queue(alice.send(group, "/newgame"))            # pending, as for getUpdates
    async with WebhookDelivery(fake, urls=[worker_1, worker_2]) as delivery:
        await delivery.idle()                            # every update answered 200
    assert delivery.acknowledged == [...]                # ids, in the order answered

It sends what is pending while the fake has a webhook (`setWebhook`: the bot's own start, or
the test's), of its ``allowed_updates``, and waits while there is none. `urls` are where the
posts go, round-robin; without them, the webhook's own URL. Several URLs stand for the
workers behind the one public URL every worker registers (a reverse proxy spreading
Telegram's connections): they share the webhook's ``max_connections``, and an update that
failed on one is sent to the next after `backoff` seconds (Telegram waits longer, doubling
each time, and drops an update once it expires: a message after a day, a tap after 150 s;
this never drops one).

What Telegram's server (tdlib/telegram-bot-api, `WebhookActor`) keeps to, this keeps to:
the updates of one queue go one at a time, in order: the next is not sent before the one
before it was acknowledged. A queue is not simply a chat: messages (and their edits) queue
by chat, taps (callback queries) by the user who tapped, the bot's own membership changes
by chat, other members' changes and join requests by that member; any other update is its
own. So a tap and a message in the same group, or two people's taps, may be handled at the
same time, and in either order. A 2xx answer may carry a method call (JSON with "method"),
which Telegram then makes (not get*, setWebhook, deleteWebhook, close, logOut).

Tests wait with `idle`, `wait_until_acknowledged` or `wait_for`, woken by every answered
post (no sleeping); they fail after `WAIT` seconds instead of hanging, saying what is
still pending. `attempts` is every post with its outcome, `failures` the failed ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Final
from urllib.parse import urlsplit

import httpx
import orjson

from bot.sandbox.telegram.methods import LOOPBACK_HOSTS
from bot.sandbox.telegram.state import JSON
from tests.fakes.telegram import FakeTelegram

WAIT: Final = 60.0
SECRET_HEADER: Final = "X-Telegram-Bot-Api-Secret-Token"
_NOT_IN_RESPONSE: Final = frozenset({"setwebhook", "deletewebhook", "close", "logout"})


class _From(enum.Enum):
    WEBHOOK = enum.auto()


FROM_WEBHOOK: Final = _From.WEBHOOK
"""The secret the webhook was set with (`setWebhook`'s secret_token), read at each post."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One post of an update: where, and how it went (`status` None: no answer)."""

    update_id: int
    url: str
    status: int | None
    error: str | None  # None: acknowledged; else what getWebhookInfo's last_error_message says
    seconds: float = field(default=0.0, compare=False)  # the post, to its answer or failure
    at: float = field(default_factory=time.time, compare=False)  # when it ended (wall clock)

    @property
    def ok(self) -> bool:
        return self.error is None


def order_key(update: JSON) -> tuple[str, int]:
    """The queue an update waits in (Telegram's webhook_queue_id): its updates go one at a
    time, in order."""
    for kind in ("message", "edited_message", "channel_post", "edited_channel_post"):
        if kind in update:
            return "chat", int(update[kind]["chat"]["id"])
    if "callback_query" in update:
        return "tap", int(update["callback_query"]["from"]["id"])
    if "my_chat_member" in update:
        return "bot member", int(update["my_chat_member"]["chat"]["id"])
    if "chat_member" in update:
        return "member", int(update["chat_member"]["old_chat_member"]["user"]["id"])
    if "chat_join_request" in update:
        return "member", int(update["chat_join_request"]["from"]["id"])
    return "update", int(update["update_id"])


class WebhookDelivery:
    """Posts the fake's pending updates to the webhook while the context is open."""

    def __init__(
        self,
        fake: FakeTelegram,
        *,
        urls: Sequence[str] | None = None,
        secret: str | _From | None = FROM_WEBHOOK,
        timeout: float = 10.0,
        backoff: float = 0.05,
    ) -> None:
        """`urls`: where to post (round-robin), else the webhook's URL; all on loopback.
        `secret`: the header's value, None for no header (default: the webhook's).
        `timeout`: seconds for an answer; `backoff`: before an update is sent again."""
        for url in urls or ():
            _check_loopback(url)
        self.fake = fake
        self.urls = list(urls) if urls else None
        self.secret = secret
        self.timeout = timeout
        self.backoff = backoff
        self.acknowledged: list[int] = []  # update ids, in the order answered 2xx
        self.attempts: list[Attempt] = []
        self._client: httpx.AsyncClient | None = None
        self._runner: asyncio.Task[None] | None = None
        self._posts: dict[int, asyncio.Task[None]] = {}  # update id -> its post under way
        self._retry_at: dict[int, float] = {}  # update id -> when it may go again
        self._failed_on: dict[int, int] = {}  # update id -> the index of the URL it failed on
        self._turn = itertools.count()
        self._wake = asyncio.Event()
        self._progress = asyncio.Condition()
        self._error: BaseException | None = None
        self._unwatch: Callable[[], None] | None = None

    @property
    def failures(self) -> list[Attempt]:
        return [a for a in self.attempts if not a.ok]

    @property
    def in_flight(self) -> int:
        """Posts sent and not yet answered."""
        return len(self._posts)

    async def __aenter__(self) -> WebhookDelivery:
        self._client = httpx.AsyncClient(
            timeout=self.timeout,
            trust_env=False,  # loopback only: no proxy from the environment
            verify=False,  # plain http on loopback: no CA bundle to load (40 ms each time)
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
        )
        self._unwatch = self.fake.watch_updates(self._changed)
        self._runner = asyncio.create_task(self._run(), name="webhook delivery")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._unwatch is not None:
            self._unwatch()
        tasks = [t for t in (self._runner, *self._posts.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
        if self._error is not None and exc is None:
            raise self._error

    # -- waiting

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        """Return once `condition()` holds, checked after every answered post and every
        change of the pending updates; fail after `WAIT` seconds, saying what is pending."""

        def done() -> bool:
            if self._error is not None:
                raise self._error
            return condition()

        try:
            async with asyncio.timeout(WAIT), self._progress:
                await self._progress.wait_for(done)
        except TimeoutError:
            raise AssertionError(f"webhook delivery: not there after {WAIT} s; {self}") from None

    async def wait_until_acknowledged(self, update_ids: Iterable[int]) -> None:
        wanted = set(update_ids)
        await self.wait_for(lambda: wanted <= set(self.acknowledged))

    async def idle(self) -> None:
        """Return once nothing is pending for the webhook and no post is under way (an
        update that keeps failing keeps this waiting: the test fails after `WAIT`)."""
        await self.wait_for(lambda: not self._posts and not self.fake.webhook_updates())

    def __repr__(self) -> str:
        pending = [u["update_id"] for u in self.fake.webhook_updates()]
        failures = [(a.update_id, a.url, a.status, a.error) for a in self.failures[-5:]]
        webhook = self.fake.webhook.url if self.fake.webhook is not None else None
        return (
            f"WebhookDelivery(webhook={webhook!r}, pending={pending}, "
            f"in flight={sorted(self._posts)}, acknowledged={self.acknowledged}, "
            f"last failures={failures})"
        )

    # -- sending

    def _changed(self) -> None:
        self._wake.set()

    async def _notify(self) -> None:
        async with self._progress:
            self._progress.notify_all()

    async def _run(self) -> None:
        try:
            while True:
                self._wake.clear()
                delay = self._dispatch()
                await self._notify()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await self._wake.wait()
        except Exception as exc:  # a test's mistake (a URL off loopback): said by the waits
            self._error = exc
            await self._notify()

    def _dispatch(self) -> float | None:
        """Start the posts that may go now; the seconds until a backed-off one may, if any."""
        webhook = self.fake.webhook
        if webhook is None:
            return None  # Telegram posts nothing without a webhook
        urls = self.urls or [webhook.url]
        for url in urls:
            _check_loopback(url)
        loop = asyncio.get_running_loop()
        now = loop.time()
        heads: set[tuple[str, int]] = set()
        wake_at: float | None = None
        for update in self.fake.webhook_updates():
            key = order_key(update)
            if key in heads:
                continue  # its queue's earlier update is not acknowledged yet
            heads.add(key)
            update_id = int(update["update_id"])
            if update_id in self._posts:
                continue
            retry_at = self._retry_at.get(update_id, now)
            if retry_at > now:
                wake_at = retry_at if wake_at is None else min(wake_at, retry_at)
                continue
            if len(self._posts) >= webhook.max_connections:
                break
            index = self._next_url(update_id, len(urls))
            self._posts[update_id] = asyncio.create_task(self._post(urls[index], index, update))
        return None if wake_at is None else max(0.0, wake_at - now)

    def _next_url(self, update_id: int, count: int) -> int:
        failed_on = self._failed_on.get(update_id)
        if failed_on is not None:
            return (failed_on + 1) % count
        return next(self._turn) % count

    async def _post(self, url: str, index: int, update: JSON) -> None:
        update_id = int(update["update_id"])
        secret = self.fake.webhook.secret_token if self.fake.webhook is not None else None
        if not isinstance(self.secret, _From):
            secret = self.secret
        headers = {"Content-Type": "application/json"}
        if secret is not None:
            headers[SECRET_HEADER] = secret
        assert self._client is not None
        status: int | None = None
        error: str | None = None
        started = time.perf_counter()
        try:
            response = await self._client.post(url, content=orjson.dumps(update), headers=headers)
        except httpx.ConnectTimeout:
            error = "Connection timed out"
        except httpx.TimeoutException:
            error = "Read timeout expired"
        except httpx.ConnectError:
            error = "Connection refused"
        except httpx.TransportError:  # closed or reset without an answer
            error = "Webhook connection closed"
        else:
            status = response.status_code
            if 200 <= status <= 299:
                await self._answer_method(response)
            else:
                error = f"Wrong response from the webhook: {status} {response.reason_phrase}"
        self.attempts.append(Attempt(update_id, url, status, error, time.perf_counter() - started))
        if error is None:
            self.fake.delivered(update_id)
            self.acknowledged.append(update_id)
            self._retry_at.pop(update_id, None)
            self._failed_on.pop(update_id, None)
        else:
            self.fake.webhook_failed(error)
            self._retry_at[update_id] = asyncio.get_running_loop().time() + self.backoff
            self._failed_on[update_id] = index
        del self._posts[update_id]
        self._wake.set()
        await self._notify()

    async def _answer_method(self, response: httpx.Response) -> None:
        """A method call in a 2xx answer, made as Telegram makes it (its result unseen)."""
        if not response.headers.get("content-type", "").startswith("application/json"):
            return
        try:
            body = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            return
        method = body.get("method") if isinstance(body, dict) else None
        if not isinstance(method, str) or not method:
            return
        if method.lower() in _NOT_IN_RESPONSE or method.lower().startswith("get"):
            return
        params = {k: v for k, v in body.items() if k != "method"}
        request = httpx.Request(
            "POST", f"https://api.telegram.org/bot{self.fake.token}/{method}", json=params
        )
        await self.fake._handle(request)


def _check_loopback(url: str) -> None:
    host = urlsplit(url).hostname
    if host is None or host.lower() not in LOOPBACK_HOSTS:
        raise ValueError(f"WebhookDelivery posts on loopback only (no network in tests): {url}")
