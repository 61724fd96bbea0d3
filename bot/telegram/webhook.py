"""Webhook mode (`WEBHOOK_URL`): Telegram posts each update to a worker, which stores it in
the inbox and answers 200 once that is committed; the leader handles it from there
(`bot.telegram.inbox`).

Every worker takes posts, leading or not, so none is refused while the lead changes hands
and a reverse proxy may send to any worker that is ready. One post, in order:

1. the secret: `X-Telegram-Bot-Api-Secret-Token` must be `WEBHOOK_SECRET` (compared in
   constant time), else 403 and nothing is read;
2. the body (at most `bot.web.BODY_LIMIT` bytes, read within `READ_SECONDS`: else 413 or
   408) must be one JSON update with an integer `update_id`, else 400 (Telegram would only
   send it again; also when the client left before its whole body came);
3. it is stored in the inbox unless it is there already (a redelivery: a worker died before
   its answer); a post that comes while the worker starts waits for its database to open;
   while the database cannot store, 503, and Telegram sends it again later (the log says
   so once per outage, and when it is over; a post that went through within `FLAP` of
   refused ones does not end the outage's warning);
4. 200; a worker that leads hands a new update straight to its reader.

`register` points Telegram at `WEBHOOK_URL` when a worker takes the lead, and only if what
Telegram has differs (`getWebhookInfo`, and a digest of the secret and the settings kept in
the database: Telegram does not tell the secret). Stopping drains the web server: no new
connection, the posts under way are answered (`bot.web`).

Why not python-telegram-bot's `run_webhook`: it answers before the update is stored, and
runs a server of its own (tornado) beside the bot's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from http import HTTPStatus
from typing import Final

import orjson
from aiohttp import web
from telegram import Update
from telegram.error import BadRequest, RetryAfter
from telegram.ext import Application

from bot.delivery import Outbox
from bot.delivery.outbox import retry_after_seconds
from bot.ops import metrics
from bot.telegram.inbox import InboxReader
from storage import Database, StorageError, utcnow

logger = logging.getLogger(__name__)

SECRET_HEADER: Final = "X-Telegram-Bot-Api-Secret-Token"
READ_SECONDS: Final = 10.0
"""How long a post may take to send its body (a slow client holds nothing longer)."""
KEEP_HANDLED: Final = timedelta(hours=48)
"""How long a handled update is kept: Telegram gives up on an update it could not deliver
after 24 hours, so an update older than this is never posted again."""
PRUNE_EVERY: Final = 3600.0
REGISTER_ATTEMPTS: Final = 10
STATE_KEY: Final = "webhook"
FLAP: Final = timedelta(seconds=5)
"""A post refused this soon after the database stored again belongs to the same outage (a
database going down cuts its connections one by one: one may still store a post)."""


class Webhook:
    """The post route for Telegram's updates, and the webhook's registration."""

    def __init__(
        self,
        application: Application,  # type: ignore[type-arg]
        *,
        url: str,
        secret: str,
        database: Callable[[], Database | None],
        reader: Callable[[], InboxReader | None],
        allowed_updates: Sequence[str],
        max_connections: int,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.application = application
        self.url = url
        self._secret = secret.encode()
        self._database = database
        self._reader = reader
        self.allowed_updates = list(allowed_updates)
        self.max_connections = max_connections
        self._clock = clock
        self._down_since: datetime | None = None  # the database could not store posts since
        self._refused = 0  # posts answered 503 in the last outage
        self._back: tuple[datetime, datetime] | None = None  # the last outage: (began, ended)
        self._opened = asyncio.Event()  # the database was opened (`opened`)

    # ---------------------------------------------------------------- the post route

    async def post(self, request: web.Request) -> web.Response:
        """Handle one post of Telegram's (see the module's docstring)."""
        status = await self._post(request)
        metrics.webhook_answered(status)
        return web.Response(status=status, text=f"{HTTPStatus(status).phrase}\n")

    async def _post(self, request: web.Request) -> int:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            logger.warning("webhook: a post without the secret token was refused (403)")
            return HTTPStatus.FORBIDDEN
        try:
            async with asyncio.timeout(READ_SECONDS):
                body = await request.read()
        except TimeoutError:
            logger.info("webhook: a post whose body did not come in time (408)")
            return HTTPStatus.REQUEST_TIMEOUT
        except web.HTTPRequestEntityTooLarge:
            logger.warning("webhook: a post too large for an update was refused (413)")
            return HTTPStatus.REQUEST_ENTITY_TOO_LARGE
        except ConnectionError:  # the client left before its whole body came
            logger.info("webhook: a post whose client left before its body was in (400)")
            return HTTPStatus.BAD_REQUEST
        update = self._parse(body)
        if update is None:
            logger.warning("webhook: a post that is no update was refused (400)")
            return HTTPStatus.BAD_REQUEST
        db = self._database()
        if db is None and not self._opened.is_set():  # starting: the database opens soon
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(READ_SECONDS):
                    await self._opened.wait()
            db = self._database()
        if db is None:  # stopped (or the start failed): Telegram tries again
            return HTTPStatus.SERVICE_UNAVAILABLE
        try:
            new = await db.accept_update(
                update_id=update.update_id, body=body.decode(), at=self._clock()
            )
        except StorageError as exc:
            self._outage(exc)
            return HTTPStatus.SERVICE_UNAVAILABLE
        self._stored()
        reader = self._reader()
        if new and reader is not None:
            reader.take(update)
        elif not new:
            logger.info("webhook: update %s was posted again; it is stored", update.update_id)
        return HTTPStatus.OK

    def opened(self) -> None:
        """The database is open: posts that came during the start go on."""
        self._opened.set()

    def stopping(self) -> None:
        """The worker stops: a post waiting for the database to open waits no more (503)."""
        self._opened.set()

    def _parse(self, body: bytes) -> Update | None:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(data, dict) or type(data.get("update_id")) is not int:
            return None
        try:
            return Update.de_json(data, self.application.bot)
        except Exception:  # a shape PTB cannot read
            logger.debug("webhook: unreadable update", exc_info=True)
            return None

    def _outage(self, error: StorageError) -> None:
        if self._down_since is not None:
            self._refused += 1
            logger.debug("webhook: still answering 503: %s", error)
            return
        now, back = self._clock(), self._back
        if back is not None and now - back[1] < FLAP:  # the same outage, after a post that
            self._down_since = back[0]  # went through on a connection not yet cut
            self._refused += 1
            logger.debug("webhook: answering 503 again: %s", error)
            return
        self._down_since, self._refused = now, 1
        logger.warning(
            "webhook: the database cannot store updates (%s): answering 503 until it can "
            "(Telegram sends them again)",
            error,
        )

    def _stored(self) -> None:
        if self._down_since is None:
            return
        now = self._clock()
        logger.info(
            "webhook: the database stores updates again after %.0f s (%d posts answered 503)",
            (now - self._down_since).total_seconds(),
            self._refused,
        )
        self._back = (self._down_since, now)
        self._down_since = None

    # ---------------------------------------------------------------- Telegram's side

    def _digest(self) -> str:
        """What was registered, the secret included, as a digest that tells nothing of it."""
        allowed = ",".join(sorted(self.allowed_updates))
        what = "\n".join([self.url, self._secret.decode(), allowed, str(self.max_connections)])
        return hashlib.sha256(what.encode()).hexdigest()

    async def register(self, out: Outbox, db: Database) -> bool:
        """Point Telegram at the webhook, with the secret and the updates the bot reads,
        unless Telegram has all that already; True if it was set now. Pending updates are
        kept. Raises `WebhookUnavailable` if Telegram refuses the URL."""
        digest = self._digest()
        async with db.transaction(readonly=True) as tx:
            stored = await tx.state.get(key=STATE_KEY)
        info = await out.webhook_info()
        if (
            stored == digest
            and info.get("url") == self.url
            and sorted(info.get("allowed_updates") or []) == sorted(self.allowed_updates)
            and info.get("max_connections", self.max_connections) == self.max_connections
        ):
            logger.info("the webhook is registered as it should be")
            return False
        for attempt in range(REGISTER_ATTEMPTS):
            try:
                await out.set_webhook(
                    url=self.url,
                    secret_token=self._secret.decode(),
                    allowed_updates=self.allowed_updates,
                    max_connections=self.max_connections,
                )
                break
            except BadRequest as exc:  # "bad webhook: ...": the URL, its port, its certificate
                raise WebhookUnavailable(
                    f"setting WEBHOOK_URL was refused by Telegram: {exc.message}"
                ) from None
            except RetryAfter as exc:  # one setWebhook a second
                if attempt + 1 == REGISTER_ATTEMPTS:
                    raise
                wait = retry_after_seconds(exc)
                logger.info("setWebhook: Telegram asks to wait %.0f s; then again", wait)
                await asyncio.sleep(wait)
        async with db.transaction() as tx:
            await tx.state.put(key=STATE_KEY, value=digest)
        logger.info("the webhook is registered: %s", self.url)
        return True

    # ---------------------------------------------------------------- upkeep

    async def prune(self, db: Database) -> int:
        """Forget handled updates older than `KEEP_HANDLED`; how many."""
        async with db.transaction() as tx:
            return await tx.inbox.prune(before=self._clock() - KEEP_HANDLED)

    async def run_pruning(self, db: Database) -> None:
        """Prune now and every `PRUNE_EVERY` seconds (the leader). Runs until cancelled."""
        while True:
            try:
                pruned = await self.prune(db)
                if pruned:
                    logger.info("webhook: forgot %d handled updates", pruned)
            except StorageError as exc:
                logger.warning("webhook: could not forget old updates: %s", exc)
            await asyncio.sleep(PRUNE_EVERY)


class WebhookUnavailable(Exception):
    """Telegram refused `WEBHOOK_URL` (one line for the operator)."""
