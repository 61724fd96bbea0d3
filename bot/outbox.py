"""Everything the bot sends to Telegram goes through here.

Telegram's answers are folded into a few outcomes the game logic understands:
"message is not modified" is success, a message that vanished is sent anew, a
user who blocked the bot is reported as `Blocked`, and a group edit is coalesced
so that a group never gets more than one table edit per `interval` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from telegram import Bot, CallbackQuery
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError

from bot.render import Rendered
from bot.request import call

logger = logging.getLogger(__name__)

NOT_MODIFIED: Final = "message is not modified"
NOT_FOUND: Final = ("message to edit not found", "message_id_invalid", "message can't be edited")

_ENCODER: Final = json.JSONEncoder(separators=(",", ":"))

ANSWERED_KEPT: Final = 4096  # callback queries remembered as answered (only recent ones matter)
INLINE_RETRIES: Final = 1  # a 429 waited out in place, once (see Outbox._call)
MAX_INLINE_WAIT: Final = 30.0  # seconds; a longer retry_after is raised to the caller
MAX_RETRIES: Final = 5  # a table or hands that failed to show, tried again at most this often
MIN_RETRY_WAIT: Final = 1.0  # seconds before the first retry (then doubling)


def _seconds(error: RetryAfter) -> float:
    after = error.retry_after  # an int, or a timedelta in newer python-telegram-bot
    return float(after.total_seconds() if hasattr(after, "total_seconds") else after)


def transient(error: TelegramError) -> bool:
    """Whether trying again later may succeed: a 429, a timeout or a network error; not a
    400 (python-telegram-bot makes BadRequest a NetworkError) and not a 403."""
    if isinstance(error, RetryAfter):
        return True
    return isinstance(error, NetworkError) and not isinstance(error, BadRequest)


_NO_PREVIEW: Final = _ENCODER.encode({"is_disabled": True})


def _message(chat_id: int, rendered: Rendered) -> dict[str, Any]:
    """The parameters of `sendMessage` and `editMessageText` that show `rendered`."""
    return {
        "chat_id": chat_id,
        "text": rendered.text,
        "parse_mode": "HTML",
        "link_preview_options": _NO_PREVIEW,
        "reply_markup": rendered.keyboard.json if rendered.keyboard else None,
    }


class Blocked(Exception):
    """The user blocked the bot, never started it, or the bot left the group (403)."""


@dataclass(frozen=True, slots=True)
class Sent:
    message_id: int
    new: bool
    """True when a new message was sent (the old one was gone or there was none)."""


class Outbox:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self._answered: OrderedDict[str, None] = OrderedDict()  # recent callback query ids
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # tests: no waiting

    def answered(self, query: CallbackQuery) -> bool:
        """Whether this tap got its answer already (Telegram takes only the first)."""
        return query.id in self._answered

    async def _call(self, method: str, data: dict[str, Any], *, patient: bool = True) -> Any:
        """One Bot API call; its raw JSON result (None values are left out).

        Through `bot.request.call`: python-telegram-bot's request object (its timeouts, its
        error mapping to `BadRequest`, `Forbidden`, `RetryAfter`) and the bot's rate limiter
        when one is set, but without building a `Message` from every answer: the bot reads
        nothing of it but a new message's id, and that parsing was a fifth of the bot's time
        per move.

        A 429 is waited out here, once and for at most `MAX_INLINE_WAIT` s, for this call
        alone (python-telegram-bot's rate limiter would hold back every call of every chat);
        ``patient=False`` raises it at once, for callers that retry later themselves.
        """
        for attempt in range(INLINE_RETRIES + 1):
            try:
                return await call(self.bot, method, data)
            except RetryAfter as exc:
                wait = _seconds(exc)
                if not patient or attempt == INLINE_RETRIES or wait > MAX_INLINE_WAIT:
                    raise
                logger.info("%s: rate limited, trying again in %s s", method, wait)
                await self.sleep(wait)
        raise AssertionError("unreachable")

    async def send(
        self,
        chat_id: int,
        rendered: Rendered,
        *,
        reply_to: int | None = None,
        patient: bool = True,
    ) -> int:
        """Send a message; its id. Raises `Blocked` on 403; other Telegram errors propagate
        (a 429 after waiting once, see `_call`)."""
        data = _message(chat_id, rendered)
        if reply_to is not None:
            data["reply_parameters"] = _ENCODER.encode(
                {"message_id": reply_to, "allow_sending_without_reply": True}
            )
        try:
            result = await self._call("sendMessage", data, patient=patient)
        except Forbidden as exc:
            raise Blocked(str(exc)) from exc
        return int(result["message_id"])

    async def _edit(
        self, chat_id: int, message_id: int, rendered: Rendered, *, patient: bool
    ) -> None:
        data = {**_message(chat_id, rendered), "message_id": message_id}
        await self._call("editMessageText", data, patient=patient)

    async def show(
        self, chat_id: int, message_id: int | None, rendered: Rendered, *, patient: bool = True
    ) -> Sent:
        """Make message `message_id` show `rendered`: edit it, or send it anew if it is gone.

        Raises `Blocked` on 403.
        """
        if message_id is not None:
            try:
                await self._edit(chat_id, message_id, rendered, patient=patient)
                return Sent(message_id, new=False)
            except Forbidden as exc:
                raise Blocked(str(exc)) from exc
            except BadRequest as exc:
                text = exc.message.lower()
                if NOT_MODIFIED in text:
                    return Sent(message_id, new=False)
                if not any(reason in text for reason in NOT_FOUND):
                    raise
                logger.info("message %s in chat %s is gone; sending a new one", message_id, chat_id)
        return Sent(await self.send(chat_id, rendered, patient=patient), new=True)

    async def close_keyboard(
        self,
        chat_id: int,
        message_id: int,
        rendered: Rendered,
        *,
        patient: bool = True,
        resend: bool = True,
    ) -> None:
        """Final text of a message whose buttons are no longer valid; errors are logged only.

        ``resend=False``: only edit; a message that is gone stays gone. ``patient=False``: a
        429 is not waited out (for callers holding a chat's lock)."""
        try:
            if resend:
                await self.show(chat_id, message_id, rendered, patient=patient)
            else:
                await self._edit(chat_id, message_id, rendered, patient=patient)
        except (Blocked, TelegramError) as exc:
            logger.info("could not close message %s in %s: %s", message_id, chat_id, exc)

    async def answer(
        self,
        query: CallbackQuery | None,
        text: str | None = None,
        *,
        alert: bool = False,
        url: str | None = None,
    ) -> None:
        """Answer a button tap (every tap is answered, or the client shows a spinner)."""
        if query is None:
            return
        self._answered[query.id] = None
        if len(self._answered) > ANSWERED_KEPT:
            self._answered.popitem(last=False)
        try:
            await self._call(
                "answerCallbackQuery",
                {
                    "callback_query_id": query.id,
                    "text": text[:200] if text else None,
                    "show_alert": True if alert else None,
                    "url": url,
                },
            )
        except TelegramError as exc:  # too old, or a network error: nothing to undo
            logger.info("could not answer callback query: %s", exc)


class Coalescer:
    """Runs `publish(key)` at most once per `interval` seconds per key, always with the
    latest state: requests that arrive in between are merged into one later run.

    A request that is due at once runs `publish` in the caller's context (which may hold
    a lock); a merged one runs later, in a task of its own, through `publish_later`
    (which takes what it needs itself; by default the same `publish`)."""

    def __init__(
        self,
        publish: Callable[[int], Awaitable[None]],
        interval: float,
        *,
        clock: Callable[[], float] | None = None,
        publish_later: Callable[[int], Awaitable[None]] | None = None,
    ) -> None:
        self._publish = publish
        self._publish_later = publish_later or publish
        self.interval = interval
        self._clock = clock or (lambda: asyncio.get_running_loop().time())
        self._last: dict[int, float] = {}
        self._pending: dict[int, asyncio.Task[None]] = {}
        self._failures: dict[int, int] = {}  # retries in a row, per key
        self._closed = False

    async def request(self, key: int) -> None:
        if key in self._pending:
            return  # a run is already scheduled and will publish the latest state
        now = self._clock()
        wait = self._last.get(key, -1e18) + self.interval - now
        if wait <= 0:
            await self._run(key)
            return
        self._pending[key] = asyncio.create_task(self._later(key, wait))

    async def _later(self, key: int, wait: float) -> None:
        me = asyncio.current_task()
        try:
            await asyncio.sleep(wait)
        finally:
            if self._pending.get(key) is me:
                del self._pending[key]
        await self._run(key, self._publish_later)

    async def _run(self, key: int, publish: Callable[[int], Awaitable[None]] | None = None) -> None:
        self._last[key] = self._clock()
        try:
            await (publish or self._publish)(key)
        except TelegramError as exc:
            if not transient(exc):
                logger.warning("publishing chat %s failed: %s", key, exc)
                return
            logger.warning("publishing chat %s failed, retried later: %s", key, exc)
            self.retry_later(key, exc)
        except Exception:
            logger.exception("publishing chat %s failed", key)
        else:
            self._failures.pop(key, None)

    def retry_later(self, key: int, error: TelegramError) -> None:
        """Publish again once Telegram allows (429: after retry_after; a timeout or network
        error: after the interval, longer after each failure in a row, at most
        `MAX_RETRIES` times): the state that failed to show may be the last one for a while,
        as nobody moves while a player thinks. Errors that would only repeat (a 400, say)
        are not retried."""
        if self._closed or not transient(error):
            return
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        if failures > MAX_RETRIES:
            logger.warning("chat %s: giving up after %s failures in a row", key, MAX_RETRIES)
            self._failures.pop(key, None)
            return
        wait = max(self.interval, MIN_RETRY_WAIT) * 2 ** (failures - 1)
        if isinstance(error, RetryAfter):
            seconds = _seconds(error)
            self._last[key] = self._clock() + seconds
            wait = max(wait, seconds)
        if key not in self._pending:
            self._pending[key] = asyncio.create_task(self._later(key, wait))

    async def flush(self) -> None:
        """Publish everything pending now (shutdown, tests)."""
        pending = list(self._pending.items())
        self._pending.clear()
        for key, task in pending:
            task.cancel()
            await self._run(key, self._publish_later)

    async def flush_key(self, key: int) -> None:
        """Drop a scheduled run for `key` (the caller publishes right away instead)."""
        task = self._pending.pop(key, None)
        if task:
            task.cancel()

    def pending(self) -> frozenset[int]:
        return frozenset(self._pending)

    def reset(self, key: int) -> None:
        """`key` was published: failures before no longer count towards `MAX_RETRIES`."""
        self._failures.pop(key, None)

    def close(self) -> None:
        """Cancel what is scheduled and schedule nothing more (shutdown)."""
        self._closed = True
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()

    def forget(self, key: int) -> None:
        task = self._pending.pop(key, None)
        if task:
            task.cancel()
        self._last.pop(key, None)
        self._failures.pop(key, None)
