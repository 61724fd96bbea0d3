"""Webhook mode (`WEBHOOK_URL`): Telegram posts each update to the bot, which answers 200
only once the update's changes are committed.

python-telegram-bot's documented way for a custom server: the application is built without
an `Updater` and each posted update goes to `Application.process_update`, awaited, so the
answer waits for the handlers (their units of work commit before they return). The server
is the bot's own small one (`bot.ops.http`, docs/libraries.md says why), not PTB's
`run_webhook` (tornado): that one answers 200 as soon as the update is queued, before it is
handled, so a worker that dies mid-move would lose an update Telegram counts as delivered.

One post, in order:

1. the secret: `X-Telegram-Bot-Api-Secret-Token` must be `WEBHOOK_SECRET` (compared in
   constant time), else 403 and nothing is read;
2. the body must be one JSON update with an integer `update_id`, else 400 (Telegram would
   only send it again);
3. an update already handled (its id is in `handled_updates`: a redelivery after a worker
   died between its commit and its answer, or a second worker given the same update) is
   answered 200 and not applied again;
4. the update is handled (`bot.handling`: the store writes its id in the transaction of
   the update's first save, so a change and its update id are committed together);
5. the database could not store (an outage: `bot.handling.failed`): 503, and Telegram
   delivers the update again later; otherwise an update that stored nothing has its id
   noted now, and the answer is 200.

A handler's own error (a bug) is logged and reported by the error handler and the update is
answered 200: delivering it again would fail the same way, and hold up the chat's later
updates at Telegram.

`register` points Telegram at `WEBHOOK_URL` at start-up; several workers behind one URL
each register the same values, which is harmless (Telegram keeps the last). Stopping drains
the server: no new connection, the posts under way are answered (docs/operating.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from http import HTTPStatus
from typing import Final

import orjson
from telegram import Update
from telegram.error import BadRequest, RetryAfter
from telegram.ext import Application

from bot import handling
from bot.ops import metrics
from bot.ops.http import Request, Response, Server, plain
from storage import Database, StorageError, utcnow

logger = logging.getLogger(__name__)

SECRET_HEADER: Final = "x-telegram-bot-api-secret-token"
KEEP_HANDLED: Final = timedelta(hours=48)
"""How long a handled update's id is kept: Telegram gives up on an update it could not
deliver after 24 hours, so an id older than this is never delivered again."""
PRUNE_EVERY: Final = 3600.0
REGISTER_ATTEMPTS: Final = 10
DRAIN_SECONDS: Final = 25.0
"""How long a stop waits for the posts under way (Docker's stop grace is 10 s by default, a
Kubernetes pod's 30 s: set it to more than this)."""


class Webhook:
    """The post route for Telegram's updates, and the webhook's registration."""

    def __init__(
        self,
        application: Application,  # type: ignore[type-arg]
        *,
        url: str,
        secret: str,
        database: Callable[[], Database | None],
        allowed_updates: Sequence[str],
        max_connections: int,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.application = application
        self.url = url
        self._secret = secret.encode()
        self._database = database
        self.allowed_updates = list(allowed_updates)
        self.max_connections = max_connections
        self._clock = clock

    # ---------------------------------------------------------------- the post route

    async def post(self, request: Request) -> Response:
        """Handle one post of Telegram's (see the module's docstring)."""
        response = await self._post(request)
        metrics.webhook_answered(response.status)
        return response

    async def _post(self, request: Request) -> Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            logger.warning("webhook: a post without the secret token was refused (403)")
            return plain(HTTPStatus.FORBIDDEN)
        update = self._parse(request.body)
        if update is None:
            logger.warning("webhook: a post that is no update was refused (400)")
            return plain(HTTPStatus.BAD_REQUEST)
        db = self._database()
        if db is None:  # starting or stopped: Telegram tries again
            return plain(HTTPStatus.SERVICE_UNAVAILABLE)
        try:
            async with db.transaction(readonly=True) as tx:
                if await tx.updates.handled(update_id=update.update_id):
                    logger.info("webhook: update %s was handled already", update.update_id)
                    return _ok()
        except StorageError as exc:
            logger.warning("webhook: update %s: the database: %s (503)", update.update_id, exc)
            return plain(HTTPStatus.SERVICE_UNAVAILABLE)
        with handling.handling(update.update_id) as state:
            await self.application.process_update(update)
        if state.outage is not None:
            logger.info(
                "webhook: update %s not stored (%s): Telegram delivers it again",
                update.update_id,
                state.outage,
            )
            return plain(HTTPStatus.SERVICE_UNAVAILABLE)
        if not state.recorded:  # it stored nothing (a /help, a refused tap): noted now
            try:
                async with db.transaction() as tx:
                    await tx.updates.note(update_id=update.update_id, at=self._clock())
            except StorageError as exc:  # it stored nothing: delivered again, it is answered again
                logger.warning("webhook: update %s: could not note it: %s", update.update_id, exc)
                return plain(HTTPStatus.SERVICE_UNAVAILABLE)
        return _ok()

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

    # ---------------------------------------------------------------- Telegram's side

    async def register(self) -> None:
        """Point Telegram at the webhook, with the secret and the updates the bot reads. Every
        start does so (a changed secret must reach Telegram, and getWebhookInfo does not tell
        it); pending updates are kept."""
        for attempt in range(REGISTER_ATTEMPTS):
            try:
                await self.application.bot.set_webhook(
                    url=self.url,
                    secret_token=self._secret.decode(),
                    allowed_updates=self.allowed_updates,
                    max_connections=self.max_connections,
                    drop_pending_updates=False,
                )
                return
            except BadRequest as exc:  # "bad webhook: ...": the URL, its port, its certificate
                raise WebhookUnavailable(
                    f"setting WEBHOOK_URL was refused by Telegram: {exc.message}"
                ) from None
            except RetryAfter as exc:  # Telegram takes one setWebhook a second: workers
                if attempt + 1 == REGISTER_ATTEMPTS:  # starting together wait their turn
                    raise
                wait = exc.retry_after
                seconds = wait.total_seconds() if isinstance(wait, timedelta) else float(wait)
                logger.info("setWebhook: Telegram asks to wait %.0f s; then again", seconds)
                await asyncio.sleep(seconds)

    # ---------------------------------------------------------------- upkeep

    async def prune(self) -> int:
        """Forget handled update ids older than `KEEP_HANDLED`; how many."""
        db = self._database()
        if db is None:
            return 0
        async with db.transaction() as tx:
            return await tx.updates.prune(before=self._clock() - KEEP_HANDLED)

    async def run_pruning(self) -> None:
        """Prune now and every `PRUNE_EVERY` seconds. Runs until cancelled."""
        while True:
            try:
                pruned = await self.prune()
                if pruned:
                    logger.info("webhook: forgot %d handled update ids", pruned)
            except StorageError as exc:
                logger.warning("webhook: could not forget old update ids: %s", exc)
            await asyncio.sleep(PRUNE_EVERY)


def _ok() -> Response:
    return Response(HTTPStatus.OK, b"")


class WebhookUnavailable(Exception):
    """The webhook server cannot listen where the settings say (one line for the operator)."""


class WebhookServer:
    """The webhook's route on `host`:`port`, at the path of `WEBHOOK_URL`."""

    def __init__(self, webhook: Webhook, path: str, host: str, port: int) -> None:
        self.webhook = webhook
        self.server = Server({}, host, port, posts={path: webhook.post})
        self._pruning: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self.server.port

    async def start(self) -> None:
        """Listen (`WebhookUnavailable` where it cannot), and keep the handled ids pruned."""
        try:
            await self.server.start()
        except OSError as error:
            raise WebhookUnavailable(
                f"the webhook server cannot listen on {self.server.host}:{self.server.port} "
                f"({error.strerror or error}): check WEBHOOK_LISTEN and WEBHOOK_PORT"
            ) from None
        self._pruning = asyncio.create_task(self.webhook.run_pruning())

    async def drain(self, seconds: float = DRAIN_SECONDS) -> None:
        """Take no new post; answer the ones under way (for at most `seconds`)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.server.drain()

    async def close(self) -> None:
        """Stop at once: drop what is under way. Idempotent."""
        pruning, self._pruning = self._pruning, None
        if pruning is not None:
            pruning.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pruning
        await self.server.close()
