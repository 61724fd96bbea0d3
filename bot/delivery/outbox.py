"""Every Bot API call the bot makes goes through `Outbox`: messages, edits, answers to taps,
membership look-ups, the command menus, reports to the operator.

Telegram's answers are folded into a few outcomes the game logic understands:
"message is not modified" is success, a message that vanished is sent anew, a
user who blocked the bot (or a group that removed it) is reported as `Blocked`, and a 429
pauses that chat alone (`Budgets.pause`) for exactly its `retry_after`.

Every call that counts against a chat's limits is counted in `Budgets`; one that the
`Sender` did not already fit into the budget (a reply to a command, say) waits here until
the chat's budget allows it.

Telegram's faults (a 429, a timeout, a network error or a 5xx answer) are one WARNING line
each, naming the method and the kind of chat, and counted (`durak_telegram_faults_total`).
A reply (`send`, unless ``patient=False``) is tried again through them for up to
`REPLY_WITHIN` s, as the `Sender` tries its messages again; a tap's answer is tried again
in the background until `ANSWER_WITHIN` s after the tap arrived. One given up is one more
WARNING line (`durak_replies_lost_total`).

Only the leader calls Telegram (`bot.leader`): `fence` is asked before every call, and a
worker that no longer leads sends nothing (`NotLeading`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from telegram import Bot
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError

from bot.delivery.budget import Budgets, Limits
from bot.ops import metrics
from bot.render import Rendered
from bot.telegram.request import NotLeading, call

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from bot.delivery.sender import Timing

logger = logging.getLogger(__name__)

NOT_MODIFIED: Final = "message is not modified"
NOT_FOUND: Final = ("message to edit not found", "message_id_invalid", "message can't be edited")

_ENCODER: Final = json.JSONEncoder(separators=(",", ":"))

ANSWERED_KEPT: Final = 4096  # callback queries remembered as answered (only recent ones matter)
INLINE_RETRIES: Final = 1  # a 429 waited out in place, once (see Outbox._call)
MAX_INLINE_WAIT: Final = 30.0  # seconds; a longer retry_after is raised to the caller
MIN_RETRY_WAIT: Final = 1.0  # seconds before trying a lost message again (then doubling)
REPLY_WITHIN: Final = 12.0
"""Seconds a reply (`Outbox.send`, patient) is tried again through Telegram's faults: long
enough for a 502 or two and a timeout, short enough that the chat's lock its caller holds
is not held for long."""
ANSWER_WITHIN: Final = 10.0
"""Seconds after a tap arrived that its answer is still tried (Telegram takes one for about
15 s, then says "query is too old")."""
FIRST_ANSWER_RETRY: Final = 0.5  # seconds before a tap's answer is tried again (then doubling)
UNWRITTEN: Final = 1  # calls into a group that may go before the budgets are kept (`keep`)
COUNTED: Final = frozenset({"sendMessage", "editMessageText", "deleteMessage"})
"""The calls that count against a chat's limits (answers to taps do not)."""


def retry_after_seconds(error: RetryAfter) -> float:
    after = error.retry_after  # an int, or a timedelta in newer python-telegram-bot
    return float(after.total_seconds() if hasattr(after, "total_seconds") else after)


def transient(error: TelegramError) -> bool:
    """Whether trying again later may succeed: a 429, a timeout or a network error; not a
    400 (python-telegram-bot makes BadRequest a NetworkError) and not a 403."""
    if isinstance(error, RetryAfter):
        return True
    return isinstance(error, NetworkError) and not isinstance(error, BadRequest)


def telegram_fault(error: TelegramError) -> bool:
    """Whether the error is one of Telegram's faults (what `transient` says, but not this
    worker's own `NotLeading`)."""
    return transient(error) and not isinstance(error, NotLeading)


def _chat_kind(chat_id: object) -> str:
    if not isinstance(chat_id, int):
        return "no chat"
    return "a private chat" if chat_id > 0 else "a group"


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


@dataclass(frozen=True, slots=True)
class Tap:
    """A button press, to be answered: the callback query's id, and the message (chat and
    id) the button was on, where Telegram says (None for an inline message)."""

    id: str
    chat_id: int | None = None
    message_id: int | None = None
    at: float | None = None
    """When it arrived (on the outbox's clock; None: when it is first answered)."""


@dataclass(frozen=True, slots=True)
class Membership:
    """A user's membership of a chat, as `getChatMember` tells it."""

    status: str  # "creator", "administrator", "member", "restricted", "left", "kicked"
    is_member: bool = True  # a restricted user may have left

    @property
    def belongs(self) -> bool:
        return self.status not in ("left", "kicked") and self.is_member

    @property
    def is_admin(self) -> bool:
        return self.status in ("creator", "administrator")


class Blocked(Exception):
    """The user blocked the bot, never started it, or the bot left the group (403)."""


class Stopping(NotLeading):
    """This worker stops: a call that would wait for its chat's budget past the stop's
    bound (`Outbox.stop_by`) is not made (a restart shows every game again)."""

    def __init__(self) -> None:
        NetworkError.__init__(self, "this worker stops: not sent within the stop's bound")


@dataclass(frozen=True, slots=True)
class Sent:
    message_id: int
    new: bool
    """True when a new message was sent (the old one was gone or there was none)."""


class Outbox:
    def __init__(
        self, bot: Bot, budgets: Budgets | None = None, timing: Timing | None = None
    ) -> None:
        from bot.delivery.sender import LoopTiming  # (the sender builds on this module)

        self.bot = bot
        self.budgets = budgets or Budgets(Limits())
        self.timing: Timing = timing or LoopTiming()
        self._answered: OrderedDict[str, None] = OrderedDict()  # recent callback query ids
        # Whether this worker leads (may call Telegram) now; None: it always does.
        self.fence: Callable[[], bool] | None = None
        # Runs work beside the caller (a tap's answer tried again); None: a task of its own.
        self.spawn: Callable[[Coroutine[Any, Any, None]], object] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        # Keeps the budgets for the next process (`bot.leader`); awaited before a call into
        # a group with more than `UNWRITTEN` calls not kept yet, unless the sender paced it
        # (its calls into a group are seconds apart): a kill loses few of them.
        self.keep: Callable[[int], Awaitable[None]] | None = None
        self._stop_at = math.inf  # (the timing's clock) no call waits past it: `stop_by`
        self._stopping = asyncio.Event()

    def stop_by(self, deadline: float) -> None:
        """A stop began: from now on no call waits for a chat's budget (or a 429) past
        `deadline` (of the timing's clock); one that would, waiting already or not, raises
        `Stopping`. What fits before it goes out."""
        self._stop_at = min(self._stop_at, deadline)
        self._stopping.set()

    async def sleep(self, seconds: float) -> None:
        await self.timing.wait(asyncio.Event(), seconds)

    def stop_retrying(self) -> None:
        """The lead ends (a stop): replies and tap answers waiting to be tried again through
        Telegram's faults are given up now, so that they do not hold the stop up."""
        self._stopping.set()

    async def _pause(self, seconds: float) -> bool:
        """Wait `seconds` before trying again; False if retries stopped meanwhile."""
        if not self._stopping.is_set():
            await self.timing.wait(self._stopping, seconds)
        return not self._stopping.is_set()

    async def _admit(self, chat_id: int) -> float:
        """Wait until the chat's budget (and the bot's) allows one more call, then count it;
        when it was counted."""
        budgets, timing = self.budgets, self.timing
        while True:
            now = timing.now()
            at = budgets.ready_at(chat_id, now, once=True)
            if at <= now:
                budgets.note(chat_id, now)
                return now
            if at > self._stop_at:
                raise Stopping
            stopping = self._stopping  # (wakes a wait past a stop's bound; set: one that fits)
            await timing.wait(asyncio.Event() if stopping.is_set() else stopping, at - now)

    async def _keep_ahead(self, chat_id: int) -> None:
        """A burst of replies into a group: what the next process must count is kept
        before the second of them goes (`keep`)."""
        keep = self.keep
        if keep is not None and chat_id < 0 and self.budgets.unwritten(chat_id) > UNWRITTEN:
            await keep(chat_id)

    def answered(self, query: Tap) -> bool:
        """Whether this tap got its answer already (Telegram takes only the first)."""
        return query.id in self._answered

    async def _call(
        self,
        method: str,
        data: dict[str, Any],
        *,
        patient: bool = True,
        budgeted: bool = False,
        about: int | None = None,
    ) -> Any:
        """One Bot API call; its raw JSON result (None values are left out).

        Through `bot.request.call`: python-telegram-bot's request object (its timeouts, its
        error mapping to `BadRequest`, `Forbidden`, `RetryAfter`) and the bot's rate limiter
        when one is set, but without building a `Message` from every answer: the bot reads
        nothing of it but a new message's id, and that parsing was a fifth of the bot's time
        per move.

        A 429 is waited out here, once and for at most `MAX_INLINE_WAIT` s, for this call
        alone (python-telegram-bot's rate limiter would hold back every call of every chat);
        ``patient=False`` raises it at once, for callers that retry later themselves.
        Either way the chat is paused for that long (`Budgets.pause`). ``budgeted``: the
        sender counted this call in the chat's budget already; ``about``: the chat a call
        without one concerns, for the log (a tap's answer: its message's). Raises
        `NotLeading` where this worker no longer leads.
        """
        chat_id = data.get("chat_id") if method in COUNTED else None
        for attempt in range(INLINE_RETRIES + 1):
            if self.fence is not None and not self.fence():
                raise NotLeading
            noted = None
            if isinstance(chat_id, int) and (attempt or not budgeted):
                noted = await self._admit(chat_id)
            if isinstance(chat_id, int) and not budgeted:
                await self._keep_ahead(chat_id)
            try:
                return await call(self.bot, method, data)
            except RetryAfter as exc:
                wait = retry_after_seconds(exc)
                self._faulted(method, about or data.get("chat_id"), exc)
                if isinstance(chat_id, int):
                    self.budgets.pause(chat_id, self.timing.now(), wait)
                if not patient or attempt == INLINE_RETRIES or wait > MAX_INLINE_WAIT:
                    raise
            except TelegramError as exc:
                if telegram_fault(exc):
                    self._faulted(method, about or data.get("chat_id"), exc)
                raise
            finally:
                if noted is not None and isinstance(chat_id, int):  # counted from its answer
                    self.budgets.answered(chat_id, noted, self.timing.now())
        raise AssertionError("unreachable")

    def _faulted(self, method: str, chat_id: object, error: TelegramError) -> None:
        """One line, and the metric, for one of Telegram's faults (no text of the message:
        Telegram's short description, or the kind of network error, with no token)."""
        kind = metrics.telegram_fault(method, error)
        what = str(error).replace(self.bot.token, "<token>")[:120]
        if isinstance(error, RetryAfter):
            what = f"retry after {retry_after_seconds(error):g} s"
        logger.warning("Telegram fault: %s to %s: %s (%s)", method, _chat_kind(chat_id), kind, what)

    def _lost(self, method: str, chat_id: object, seconds: float) -> None:
        metrics.reply_lost(method)
        logger.warning(
            "gave up %s to %s after %.0f s of Telegram's faults",
            "a tap's answer" if method == "answerCallbackQuery" else "a reply",
            _chat_kind(chat_id),
            seconds,
        )

    async def send(
        self,
        chat_id: int,
        rendered: Rendered,
        *,
        reply_to: int | None = None,
        patient: bool = True,
        budgeted: bool = False,
    ) -> int:
        """Send a message; its id. Raises `Blocked` on 403, and other Telegram errors.

        ``patient`` (a reply to a command, say): a 429, a timeout or a network error is
        tried again, waiting `MIN_RETRY_WAIT` s and doubling (a 429: its `retry_after`), for
        up to `REPLY_WITHIN` s; then the last error is raised. A send whose answer was lost
        may have landed: trying again may show it twice, which for a reply is better than
        not at all. ``patient=False``: raised at once (the `Sender` tries again itself)."""
        data = _message(chat_id, rendered)
        if chat_id < 0 and not rendered.notify:  # a quiet group: see `Rendered.notify`
            data["disable_notification"] = True
        if reply_to is not None:
            data["reply_parameters"] = _ENCODER.encode(
                {"message_id": reply_to, "allow_sending_without_reply": True}
            )
        started = self.timing.now()
        wait = MIN_RETRY_WAIT
        while True:
            try:
                result = await self._call("sendMessage", data, patient=patient, budgeted=budgeted)
                return int(result["message_id"])
            except Forbidden as exc:
                raise Blocked(str(exc)) from exc
            except TelegramError as exc:
                if not patient or not telegram_fault(exc):
                    raise
                pause = retry_after_seconds(exc) if isinstance(exc, RetryAfter) else wait
                spent = self.timing.now() - started
                if spent + pause > REPLY_WITHIN or not await self._pause(pause):
                    self._lost("sendMessage", chat_id, self.timing.now() - started)
                    raise
            wait *= 2
            budgeted = False  # (the next try is counted as it goes)

    async def _edit(
        self,
        chat_id: int,
        message_id: int,
        rendered: Rendered,
        *,
        patient: bool,
        budgeted: bool = False,
    ) -> None:
        data = {**_message(chat_id, rendered), "message_id": message_id}
        await self._call("editMessageText", data, patient=patient, budgeted=budgeted)

    async def show(
        self,
        chat_id: int,
        message_id: int | None,
        rendered: Rendered,
        *,
        patient: bool = True,
        budgeted: bool = False,
    ) -> Sent:
        """Make message `message_id` show `rendered`: edit it, or send it anew if it is gone.

        Raises `Blocked` on 403.
        """
        if message_id is not None:
            try:
                await self._edit(chat_id, message_id, rendered, patient=patient, budgeted=budgeted)
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
                budgeted = False  # (the edit used what the sender counted)
        return Sent(
            await self.send(chat_id, rendered, patient=patient, budgeted=budgeted), new=True
        )

    async def close_keyboard(
        self,
        chat_id: int,
        message_id: int,
        rendered: Rendered,
        *,
        patient: bool = True,
        resend: bool = True,
        budgeted: bool = False,
    ) -> None:
        """Final text of a message whose buttons are no longer valid; errors are logged only.

        ``resend=False``: only edit; a message that is gone stays gone. ``patient=False``: a
        429 is not waited out (for callers holding a chat's lock)."""
        try:
            if resend:
                await self.show(chat_id, message_id, rendered, patient=patient, budgeted=budgeted)
            else:
                await self._edit(chat_id, message_id, rendered, patient=patient, budgeted=budgeted)
        except (Blocked, TelegramError) as exc:
            logger.info("could not close message %s in %s: %s", message_id, chat_id, exc)

    async def answer(
        self,
        query: Tap | None,
        text: str | None = None,
        *,
        alert: bool = False,
        url: str | None = None,
    ) -> None:
        """Answer a button tap (every tap is answered, or the client shows a spinner).

        A 429, a timeout or a network error: tried again beside the caller (who may hold a
        chat's lock), waiting `FIRST_ANSWER_RETRY` s and doubling, while Telegram still
        takes an answer (`ANSWER_WITHIN` s after the tap arrived)."""
        if query is None:
            return
        self._answered[query.id] = None
        if len(self._answered) > ANSWERED_KEPT:
            self._answered.popitem(last=False)
        data = {
            "callback_query_id": query.id,
            "text": text[:200] if text else None,
            "show_alert": True if alert else None,
            "url": url,
        }
        arrived = self.timing.now() if query.at is None else query.at
        chat = query.chat_id
        try:
            await self._call("answerCallbackQuery", data, patient=False, about=chat)
        except TelegramError as exc:
            if not telegram_fault(exc):  # too old, say: nothing to undo
                logger.info("could not answer callback query: %s", exc)
                return
            self._beside(self._answer_later(data, arrived, chat, exc))

    def _beside(self, work: Coroutine[Any, Any, None]) -> None:
        if self.spawn is not None:
            self.spawn(work)
            return
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer_later(
        self, data: dict[str, Any], arrived: float, chat: int | None, error: TelegramError
    ) -> None:
        """A tap's answer that met a fault, tried again until `ANSWER_WITHIN` s after the tap
        arrived."""
        wait = FIRST_ANSWER_RETRY
        while True:
            pause = retry_after_seconds(error) if isinstance(error, RetryAfter) else wait
            if self.timing.now() + pause > arrived + ANSWER_WITHIN or not await self._pause(pause):
                self._lost("answerCallbackQuery", chat, self.timing.now() - arrived)
                return
            wait *= 2
            try:
                await self._call("answerCallbackQuery", data, patient=False, about=chat)
                return
            except TelegramError as exc:
                if not telegram_fault(exc):  # answered after all (its answer was lost), or too old
                    logger.info("could not answer callback query: %s", exc)
                    return
                error = exc

    async def delete(self, chat_id: int, message_id: int, *, budgeted: bool = False) -> bool:
        """Delete one of the bot's messages; False where Telegram refuses (too old, gone,
        no right) or fails: the caller then makes it harmless another way."""
        try:
            await self._call(
                "deleteMessage",
                {"chat_id": chat_id, "message_id": message_id},
                patient=False,
                budgeted=budgeted,
            )
        except TelegramError as exc:
            logger.info("could not delete message %s in %s: %s", message_id, chat_id, exc)
            return False
        return True

    async def member(self, chat_id: int, user_id: int) -> Membership | None:
        """The user's membership of the chat; None when Telegram cannot say (an error)."""
        try:
            result = await self._call("getChatMember", {"chat_id": chat_id, "user_id": user_id})
        except TelegramError as exc:
            logger.info("could not look up %s in chat %s: %s", user_id, chat_id, exc)
            return None
        if not isinstance(result, dict) or not isinstance(result.get("status"), str):
            logger.info("an unreadable membership of %s in chat %s", user_id, chat_id)
            return None
        return Membership(result["status"], result.get("is_member") is not False)

    async def set_commands(
        self, commands: list[tuple[str, str]], *, scope: str, language: str | None
    ) -> None:
        """The command menu of `scope` ("all_group_chats", "all_private_chats") in
        `language` (None: for every language without its own). Raises Telegram's errors."""
        await self._call(
            "setMyCommands",
            {
                "commands": _ENCODER.encode(
                    [{"command": name, "description": text} for name, text in commands]
                ),
                "scope": _ENCODER.encode({"type": scope}),
                "language_code": language,
            },
        )

    async def webhook_info(self) -> dict[str, Any]:
        """What Telegram has of the webhook (`getWebhookInfo`). Raises Telegram's errors."""
        result = await self._call("getWebhookInfo", {})
        return result if isinstance(result, dict) else {}

    async def set_webhook(
        self, *, url: str, secret_token: str, allowed_updates: list[str], max_connections: int
    ) -> None:
        """Point Telegram at the webhook (pending updates kept). Raises Telegram's errors."""
        await self._call(
            "setWebhook",
            {
                "url": url,
                "secret_token": secret_token,
                "allowed_updates": _ENCODER.encode(allowed_updates),
                "max_connections": max_connections,
                "drop_pending_updates": False,
            },
        )
