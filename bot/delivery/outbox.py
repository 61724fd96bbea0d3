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
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from telegram import Bot
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError

from bot.delivery.budget import Budgets, Limits
from bot.ops import metrics
from bot.render import Rendered
from bot.telegram.polling import UPDATE_WORK
from bot.telegram.request import NotLeading, call

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Hashable, Iterable

    from bot.delivery.sender import Timing

logger = logging.getLogger(__name__)

NOT_MODIFIED: Final = "message is not modified"
NOT_FOUND: Final = ("message to edit not found", "message_id_invalid", "message can't be edited")

_ENCODER: Final = json.JSONEncoder(separators=(",", ":"))

ANSWERED_KEPT: Final = 4096  # callback queries remembered as answered (only recent ones matter)
KNOWN_KEPT: Final = 16  # message ids of its own the bot remembers per chat (the latest)
CHATS_KEPT: Final = 4096  # chats whose own messages it remembers (the latest used)
PENDING_KEPT: Final = 8  # lost sends per chat whose copies wait to be looked for
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


def maybe_landed(error: TelegramError) -> bool:
    """Whether a call that failed so may have taken effect all the same: its answer was
    lost (a timeout, a network error, a 5xx), not refused (a 400, 403, 429) nor held back
    (`NotLeading`: never sent)."""
    return transient(error) and not isinstance(error, (RetryAfter, NotLeading))


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
    id) the button was on, where Telegram says (None for an inline message); `carried`:
    whether that message (as Telegram has it now) carries a button with the tap's data
    (False: forged, or a keyboard since replaced; None: not known)."""

    id: str
    chat_id: int | None = None
    message_id: int | None = None
    at: float | None = None
    """When it arrived (on the outbox's clock; None: when it is first answered)."""
    carried: bool | None = None


@dataclass(slots=True)
class Orphans:
    """New messages whose sends lost their answers: each may have landed, a copy nobody
    knows the id of, sent again since. They lie after `floor` (the chat's latest message
    the bot knew before the first of them, `Outbox.floor`) and before the message sent at
    last (`until`); `base`: the chat's lost sends when the bot learnt of the floor."""

    floor: int
    base: int
    count: int = 1
    until: int = 0
    chat: _Chat | None = None  # what the outbox knew of the chat then (forgotten: no sweep)
    dead: bool = False
    """Copies that processes before this one may have left (`may_have_landed`): how many
    is not known (each start killed in a row may have sent one), so every id after the
    floor that the bot does not know is looked at, not `count` of them."""
    spare: Callable[[], Iterable[int]] | None = None  # the chat's messages stored as others'


@dataclass(slots=True)
class _Chat:
    """What the outbox knows of its own messages in one chat: the latest ids, the sends
    that lost their answers, and the latest message with that count when it was learnt."""

    ids: deque[int] = field(default_factory=lambda: deque(maxlen=KNOWN_KEPT))
    lost: int = 0
    floor: tuple[int, int] | None = None
    pending: dict[Hashable, Orphans] = field(default_factory=dict)  # lost sends, by key


SWEEP_TRIES: Final = 3
"""Times a search for copies is made, where Telegram's faults break it off (waiting
`MIN_RETRY_WAIT` s, then doubling)."""

MAX_ORPHAN_PROBES: Final = 4
"""Message ids a sweep tries at most (each costs a call in the chat's budget): where ids
count per chat (a supergroup), the copies are the first unknown ids after the floor, but
for the messages people wrote meanwhile."""
MAX_DEAD_PROBES: Final = 8
"""The same for copies that processes before this one left (`Orphans.dead`): a start
killed in a row after another may have left one each."""


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
        # Per chat: the bot's own messages it knows, and its sends that lost their answers
        # (see `Orphans`); for the chats used last.
        self._chats: OrderedDict[int, _Chat] = OrderedDict()
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
        # Tap answers being tried again (by callback query id): each one's parameters and
        # when its tap arrived; kept for the next process (`keep_answers`) before a poll
        # confirms their updates to Telegram (`keep_retrying`).
        self._retrying: dict[str, tuple[dict[str, Any], float]] = {}
        self.keep_answers: Callable[[list[dict[str, Any]]], Awaitable[None]] | None = None

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

    async def _again(
        self,
        method: str,
        chat_id: object,
        error: TelegramError,
        wait: float,
        since: float,
        within: float,
    ) -> bool:
        """Before `method` is tried again after Telegram's fault `error`: wait `wait` s (a
        429: its `retry_after`). False, and the reply counted as lost, where that would pass
        `within` s after `since`, or a stop gave up the retries meanwhile."""
        pause = retry_after_seconds(error) if isinstance(error, RetryAfter) else wait
        if self.timing.now() + pause > since + within or not await self._pause(pause):
            self._lost(method, chat_id, self.timing.now() - since)
            return False
        return True

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
        key: Hashable | None = None,
        after: int | None = None,
    ) -> int:
        """Send a message; its id. Raises `Blocked` on 403, and other Telegram errors.

        ``patient`` (a reply to a command, say): a 429, a timeout or a network error is
        tried again, waiting `MIN_RETRY_WAIT` s and doubling (a 429: its `retry_after`), for
        up to `REPLY_WITHIN` s; then the last error is raised. ``patient=False``: raised at
        once (the `Sender` tries again itself).

        A send that lost its answer may have landed all the same: the copy it may have left
        is deleted once a later send of the same `key` (by default: the same text and
        buttons, replying to the same message: a retry, here or the caller's) lands
        (`sweep`). `after`: the message that asked for this one (/newgame), where the copy
        would lie if the bot knows none of its own in the chat yet."""
        data = _message(chat_id, rendered)
        if chat_id < 0 and not rendered.notify:  # a quiet group: see `Rendered.notify`
            data["disable_notification"] = True
        if reply_to is not None:
            data["reply_parameters"] = _ENCODER.encode(
                {"message_id": reply_to, "allow_sending_without_reply": True}
            )
        copy = key if key is not None else (rendered.text, data["reply_markup"], reply_to)
        floor = self.floor(chat_id, after)
        started = self.timing.now()
        wait = MIN_RETRY_WAIT
        while True:
            try:
                result = await self._call("sendMessage", data, patient=patient, budgeted=budgeted)
                break
            except Forbidden as exc:
                raise Blocked(str(exc)) from exc
            except TelegramError as exc:
                if maybe_landed(exc):
                    self._lost_send(chat_id, copy, floor)
                if not patient or not telegram_fault(exc):
                    raise
                if not await self._again("sendMessage", chat_id, exc, wait, started, REPLY_WITHIN):
                    raise
            wait *= 2
            budgeted = False  # (the next try is counted as it goes)
        message_id = int(result["message_id"])
        self.note(chat_id, message_id)
        await self._sweep_after(chat_id, copy, message_id, Rendered(rendered.text))
        return message_id

    def _chat(self, chat_id: int) -> _Chat:
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = self._chats[chat_id] = _Chat()
            if len(self._chats) > CHATS_KEPT:
                self._chats.popitem(last=False)  # (its copies, if any, are not looked for)
        else:
            self._chats.move_to_end(chat_id)
        return chat

    def _lost_send(self, chat_id: int, copy: Hashable, floor: Orphans | None) -> None:
        """A send into the chat lost its answer: counted, and remembered under `copy` (with
        where its copy would lie) until a send of the same lands."""
        chat = self._chat(chat_id)
        chat.lost += 1
        orphans = chat.pending.get(copy)
        if orphans is not None:
            orphans.count += 1
        elif floor is not None:
            chat.pending[copy] = floor
            if len(chat.pending) > PENDING_KEPT:
                del chat.pending[next(iter(chat.pending))]
        else:  # (just after a start, in a chat it has not written to)
            logger.info("chat %s: a lost send with no message known before it", chat_id)

    def may_have_landed(
        self,
        chat_id: int,
        key: Hashable,
        after: int,
        *,
        spare: Callable[[], Iterable[int]] | None = None,
    ) -> None:
        """A send of `key`, about to be made, may have landed before already, after message
        `after` (a dead process made it and never stored its id: a game's result after the
        table): remembered as a lost send, so that a copy right after `after` is deleted once
        the send lands (`sweep`). With `spare` (what gives the ids stored there as other
        messages, asked when the sweep begins): each start killed in a row may have sent
        one, so every message after `after` that this process does not know, but those, is
        taken for a copy (`Orphans.dead`). Not one of this process's lost sends into the
        chat (`lost`): another game's hand sent again there is looked for all the same."""
        chat = self._chat(chat_id)
        orphans = chat.pending.get(key)
        if orphans is not None:  # (this process lost a send of it already: one more)
            orphans.count += 1
            orphans.base -= 1
        else:
            orphans = chat.pending[key] = Orphans(after, chat.lost - 1, chat=chat)
            if len(chat.pending) > PENDING_KEPT:
                del chat.pending[next(iter(chat.pending))]
        if spare is not None:
            orphans.dead, orphans.spare = True, spare

    async def _sweep_after(
        self, chat_id: int, copy: Hashable, message_id: int, last_words: Rendered
    ) -> None:
        """A send landed: the copies that earlier sends of the same left are deleted."""
        chat = self._chats.get(chat_id)
        orphans = chat.pending.pop(copy, None) if chat is not None else None
        if orphans is None:
            return
        orphans.until = message_id
        await self._search(chat_id, orphans, last_words)

    async def _search(self, chat_id: int, orphans: Orphans, last_words: Rendered) -> bool:
        """`sweep`, made again where one of Telegram's faults broke it off; whether it
        looked at every id it was to look at."""
        wait = MIN_RETRY_WAIT
        for attempt in range(SWEEP_TRIES):
            try:
                return await self.sweep(chat_id, orphans, last_words)
            except TelegramError as exc:
                if (
                    attempt + 1 == SWEEP_TRIES
                    or not telegram_fault(exc)
                    or not await self._pause(
                        retry_after_seconds(exc) if isinstance(exc, RetryAfter) else wait
                    )
                ):
                    logger.info("chat %s: could not look for a copy: %s", chat_id, exc)
                    return False
            wait *= 2
        return False

    async def look_between(
        self,
        chat_id: int,
        after: int,
        until: int,
        last_words: Rendered,
        *,
        spare: Callable[[], Iterable[int]] | None = None,
    ) -> bool:
        """Copies that processes before this one left between message `after` and message
        `until` (a stored one this process shows: a hand whose copy the process that sent
        it could not tell from another lost send's), found and deleted as `sweep` does,
        but those in `spare`; whether every id between them was looked at."""
        chat = self._chat(chat_id)
        orphans = Orphans(after, chat.lost - 1, until=until, chat=chat, dead=True, spare=spare)
        return await self._search(chat_id, orphans, last_words)

    def found(self, chat_id: int, message_id: int, key: Hashable) -> None:
        """Message `message_id`, sent with `key` while its answer was lost, is known now
        (a tap on it): it is no copy, and nothing is looked for."""
        self.note(chat_id, message_id)
        chat = self._chats.get(chat_id)
        if chat is not None:
            chat.pending.pop(key, None)

    def note(self, chat_id: int, message_id: int) -> None:
        """Message `message_id` of the chat is the bot's, and known."""
        chat = self._chat(chat_id)
        if message_id not in chat.ids:
            chat.ids.append(message_id)
        if chat.floor is None or message_id > chat.floor[0]:
            chat.floor = (message_id, chat.lost)

    def seen(self, chat_id: int, message_id: int) -> None:
        """Message `message_id` is in the chat (a tapped one): a send from now on lands after
        it, where its copy would be looked for (`floor`), though the bot may not know it as
        one of its own (a copy is not taken for the real one)."""
        chat = self._chat(chat_id)
        if chat.floor is None or message_id > chat.floor[0]:
            chat.floor = (message_id, chat.lost)

    def floors(self, chats: Iterable[int]) -> dict[str, int]:
        """The latest message the bot knows in each of `chats` that it knows one in, for
        the next process (`carry_floors`)."""
        found = {}
        for chat_id in chats:
            chat = self._chats.get(chat_id)
            if chat is not None and chat.floor is not None:
                found[str(chat_id)] = chat.floor[0]
        return found

    def carry_floors(self, floors: dict[int, int]) -> None:
        """What the process before this one knew last in each chat (`floors`): a copy of a
        send from now on lies after it, so that a lost send's copy is looked for in a chat
        this process has not written to yet (a hand dealt just after a restart)."""
        for chat_id, message_id in floors.items():
            self.seen(chat_id, message_id)

    def known(self, chat_id: int, message_id: int) -> bool:
        """Whether the bot knows message `message_id` of the chat as one of its own."""
        chat = self._chats.get(chat_id)
        return chat is not None and message_id in chat.ids

    def floor(self, chat_id: int, after: int | None = None) -> Orphans | None:
        """Where the copy of a send about to be made would lie, should its answer be lost:
        after the latest message of its own the bot knows in the chat, or after message
        `after` (one that asked for it) if that is later. None: neither is known."""
        chat = self._chat(chat_id)
        if chat.floor is None:
            return None if after is None else Orphans(after, 0, chat=chat)
        floor, base = chat.floor
        return Orphans(max(floor, after or 0), base, chat=chat)

    def lost(self, chat_id: int) -> int:
        """How many sends into the chat lost their answer (each may have landed)."""
        chat = self._chats.get(chat_id)
        return chat.lost if chat is not None else 0

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
        self.note(chat_id, message_id)

    async def show(
        self,
        chat_id: int,
        message_id: int | None,
        rendered: Rendered,
        *,
        patient: bool = True,
        budgeted: bool = False,
        key: Hashable | None = None,
    ) -> Sent:
        """Make message `message_id` show `rendered`: edit it, or send it anew if it is gone
        (`key`: see `send`).

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
            await self.send(chat_id, rendered, patient=patient, budgeted=budgeted, key=key),
            new=True,
        )

    async def sweep(
        self, chat_id: int, orphans: Orphans, last_words: Rendered, *, budgeted: bool = False
    ) -> bool:
        """Find the copies lost sends left (`orphans`) and delete them: each id after the
        floor that the bot does not know is edited to `last_words` first, which only the
        bot's own messages take (someone else's "can't be edited"); an id the chat does not
        have (deleted, a copy a process before this one found; or, where ids count per
        account, another chat's message) is passed over, counted among the
        `MAX_ORPHAN_PROBES`. Only where every send into the chat that lost
        its answer since is one of `orphans`: any other would be a message of the bot's
        that it could not tell from a copy. Raises what may pass (a timeout: the copies not
        found yet stay). Whether it looked at every id after the floor."""
        chat = self._chats.get(chat_id)
        if chat is None or chat is not orphans.chat:
            return False  # (forgotten meanwhile: what it knew is not known)
        if chat.lost - orphans.base != orphans.count:
            logger.info("chat %s: other sends lost their answers too: no sweep", chat_id)
            return False
        probes, most = 0, MAX_DEAD_PROBES if orphans.dead else MAX_ORPHAN_PROBES
        spare = frozenset(orphans.spare()) if orphans.spare is not None else frozenset()
        for mid in range(orphans.floor + 1, orphans.until):
            if (orphans.count <= 0 and not orphans.dead) or probes >= most:
                return False
            if self.known(chat_id, mid) or mid in spare:
                continue
            probes += 1
            try:
                await self._edit(chat_id, mid, last_words, patient=False, budgeted=budgeted)
            except BadRequest as exc:
                orphans.floor = mid
                text = exc.message.lower()
                if any(reason in text for reason in NOT_FOUND[:2]):
                    continue  # (deleted; or, where ids count per account, another chat's)
                if NOT_MODIFIED not in text:
                    continue  # someone else's
            finally:
                budgeted = False  # (a fault: the floor stays, that id is looked at again)
            orphans.floor = mid
            orphans.count -= 1
            orphans.base += 1
            metrics.DUPLICATES_DELETED.inc()
            logger.info("chat %s: message %s was a copy: deleted", chat_id, mid)
            await self.delete(chat_id, mid)
        return True

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
        if query.chat_id is not None and query.chat_id > 0 and query.message_id is not None:
            self.seen(query.chat_id, query.message_id)
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
            task = self.spawn(work)
        else:
            task = asyncio.get_running_loop().create_task(work)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        left = UPDATE_WORK.get()
        if left is not None and isinstance(task, asyncio.Future):
            left(task)  # (the update is handled once its answer is out too)

    async def _answer_later(
        self, data: dict[str, Any], arrived: float, chat: int | None, error: TelegramError
    ) -> None:
        """A tap's answer that met a fault, tried again until `ANSWER_WITHIN` s after the tap
        arrived."""
        query = str(data["callback_query_id"])
        self._retrying[query] = (data, arrived)
        try:
            wait = FIRST_ANSWER_RETRY
            while True:
                if not await self._again(
                    "answerCallbackQuery", chat, error, wait, arrived, ANSWER_WITHIN
                ):
                    return
                wait *= 2
                try:
                    await self._call("answerCallbackQuery", data, patient=False, about=chat)
                    return
                except TelegramError as exc:
                    if not telegram_fault(exc):  # answered after all (its answer was lost),
                        logger.info("could not answer callback query: %s", exc)  # or too old
                        return
                    error = exc
        finally:
            self._retrying.pop(query, None)

    async def keep_retrying(self) -> None:
        """Long polling is about to confirm updates whose taps' answers are still being tried
        again (`bot.telegram.polling.Unconfirmed`): those answers are kept for the next
        process first (`keep_answers`), which tries them on while Telegram takes them
        (`answer_kept`), should this one die before they go out."""
        keep = self.keep_answers
        if keep is None or not self._retrying:
            return
        now, epoch = self.timing.now(), self.timing.epoch()
        await keep(
            [
                {"answer": {k: v for k, v in data.items() if v is not None}, "at": epoch - now + at}
                for data, at in self._retrying.values()
            ]
        )

    def answer_kept(self, kept: list[dict[str, Any]]) -> int:
        """The answers a process before this one was still trying again when it died
        (`keep_retrying`): each tried on, beside the caller, while Telegram still takes it
        (`ANSWER_WITHIN` s after its tap arrived); how many."""
        now, epoch = self.timing.now(), self.timing.epoch()
        count = 0
        for item in kept:
            data, at = dict(item["answer"]), float(item["at"])
            arrived = now - (epoch - at)
            if now - arrived >= ANSWER_WITHIN or str(data["callback_query_id"]) in self._answered:
                continue
            self._answered[str(data["callback_query_id"])] = None
            self._beside(self._answer_kept(data, arrived))
            count += 1
        return count

    async def _answer_kept(self, data: dict[str, Any], arrived: float) -> None:
        try:
            await self._call("answerCallbackQuery", data, patient=False)
        except TelegramError as exc:
            if not telegram_fault(exc):  # answered after all, or too old
                logger.info("could not answer callback query: %s", exc)
                return
            await self._answer_later(data, arrived, None, exc)

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
