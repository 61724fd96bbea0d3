"""One mechanism decides what goes out, and when: `Sender`.

Each message the bot keeps (a group's table, a player's hand, a lobby) is a **slot** holding
the latest content wanted there. A slot that changes again before it could be sent is sent
once, with the latest content: latest state wins, nothing is queued twice. A message that
matters once (a result, a notice, a lobby's last words) is a slot of its own that is `kept`:
it is never dropped, however many 429s Telegram answers.

The sender sends within the `Budgets` of each chat and of the whole bot, one call at a time
per chat, and the most urgent slot first (`Priority`): the hand of a player the game waits
for, then the tapping player's own hand, then messages that matter once, then the table,
then the hands of players who cannot act. At the bot's ceiling a part of its calls
(`Limits.tables`) is kept for tables that have waited long (`OVERDUE`), so that no table
falls far behind while the awaited hands alone could take every call. Answers to taps do
not come here: they have no limit and go out at once.

Features never wait for it: `put` returns at once, and what Telegram says comes back
through the slot's callbacks (`on_done`, `on_failed`), which must not block (they may spawn
a task). A 429 (noted by `Outbox`) pauses that chat alone for exactly its `retry_after`; a
timeout or a network error is tried again later, a few seconds first, then longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import logging
import math
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final, Protocol

from telegram.error import RetryAfter, TelegramError

from bot.delivery.budget import Budgets
from bot.delivery.outbox import Blocked, Outbox, Sent, transient
from bot.ops import metrics
from bot.render import Rendered
from bot.telegram.request import NotLeading

logger = logging.getLogger(__name__)

FIRST_RETRY: Final = 1.0  # seconds before a lost call is tried again, doubling each time
LAST_RETRY: Final = 60.0  # and at most this
MAX_FAILURES: Final = 8  # transient failures in a row before a slot's content is given up
NOT_LEADING_RETRY: Final = 0.5
"""Seconds before a call this worker made while it could not tell whether it leads is tried
again: the lead comes back (a renewal on a new lease connection) or the sender is closed."""
AGING: Final = 2.0
"""Seconds of waiting that make a slot one `Priority` more urgent when the bot's ceiling
holds sends back: a table that has waited 4 s goes before a hand that has just changed and
cannot act. The awaited hands go first, always, but within the part of the bot's window
that overdue tables leave them (`OVERDUE`)."""


def _retried(error: BaseException) -> bool:
    """Whether `Sender._failed` tries a failed call again (a lost call, not a refusal)."""
    return isinstance(error, TelegramError) and transient(error)


def _urgency(slot: Slot, now: float) -> float:
    """A slot's place in the queue for the bot's ceiling: its priority, more urgent the
    longer it waited (`AGING`), but never as urgent as a hand the game waits for."""
    if slot.priority <= Priority.AWAITED:
        return float(slot.priority)
    return max(slot.priority - (now - slot.since) / AGING, Priority.AWAITED + 0.5)


class Priority(IntEnum):
    AWAITED = 0  # the hand of a player the game waits for
    OWN = 1  # the tapping player's own hand
    ONCE = 2  # a message that matters once: a result, a notice, a lobby
    TABLE = 3  # the group's table
    PASSIVE = 4  # the hands of players who cannot act now, retired messages


OVERDUE: Final = 5.0
"""Seconds a table's (or a message's that matters once) new content waits before it is
overdue: while any slot is, `Limits.tables` of the bot's calls in any second (5 of 30,
`TABLE_SENDS`) are kept for such slots; they go before every other slot until they have
had that many. At 60 games the awaited hands alone could take the whole ceiling and leave
a table unedited for minutes; with this each group's table is edited about every 12 s (60
tables, 5 a second), and the awaited hands keep the rest, ahead of everything else. A table
that the ceiling holds back only briefly (up to 30 games, say) waits behind the awaited
hands as before and takes no call from them."""
_SHARED: Final = (Priority.ONCE, Priority.TABLE)
BEHIND: Final = 1.0
BUSY_FOR: Final = 5.0
"""The bot counts as at its ceiling (`Sender.at_ceiling`) for `BUSY_FOR` seconds after the
ceiling held back a hand the game had waited for `BEHIND` seconds already: features then
spend no call they can do without (a turn alert costs two: a new message and the old one
deleted). A moment's burst at the ceiling (a hand held back for a few hundred ms) does not
count: at 30 games turns are still announced."""


def _overdue(slot: Slot, now: float) -> bool:
    return slot.priority in _SHARED and now - slot.since >= OVERDUE


class Timing(Protocol):
    """The sender's clock: `now()` in seconds, and a wait that ends early when `wake` is set;
    `epoch()`: the same moment as seconds since the epoch, comparable across processes (the
    calls one process sent, counted by the next: `bot.leader`)."""

    def now(self) -> float: ...

    def epoch(self) -> float: ...

    async def wait(self, wake: asyncio.Event, seconds: float) -> None: ...


class LoopTiming:
    """The event loop's clock (production)."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    def epoch(self) -> float:
        return time.time()

    async def wait(self, wake: asyncio.Event, seconds: float) -> None:
        if math.isinf(seconds):
            await wake.wait()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), max(0.0, seconds))


@dataclass(frozen=True, slots=True)
class Delivered:
    """What Telegram took: the message now showing the slot's content, whether it is new,
    and the message it replaced (a `fresh` send), if any."""

    message_id: int
    new: bool
    previous: int | None = None


Done = Callable[[Delivered, Any], None]
Failed = Callable[[BaseException, Any], None]


@dataclass(eq=False, slots=True)
class Slot:
    key: Hashable
    chat_id: int
    priority: Priority
    message_id: int | None = None  # the message it shows; None: the next send is new
    content: Rendered | None = None  # wanted there and not yet sent
    tag: Any = None  # what the content stands for, handed back to the callbacks
    fresh: bool = False  # the next send is a new message (it notifies), the old one retired first
    retired: Rendered | None = None  # the old message's last words after a fresh send
    delete_old: bool = True  # and it is deleted (where Telegram lets it) rather than edited
    kept: bool = False  # matters once: never dropped for want of budget
    reply_to: int | None = None
    gap: float = 0.0  # at least this long between two sends of this slot
    paced: bool = False  # and spread over the chat's window (`Budgets.spacing`): the table
    on_done: Done | None = None
    on_failed: Failed | None = None
    release: bool = False  # dropped once its content is out
    delete: bool = False  # the content is: delete the message (else edit it to `retired`)
    seq: int = 0  # when it first wanted to go: ties of priority go first come first
    since: float = 0.0  # (on the sender's clock)
    last_sent: float = -math.inf
    not_before: float = -math.inf  # after a lost call
    failures: int = 0
    sending: bool = False
    shown: Rendered | None = None  # what Telegram last took for it
    deferred: bool = False  # its next send waited for the chat's budget


class Sender:
    def __init__(self, out: Outbox, budgets: Budgets, timing: Timing | None = None) -> None:
        self.out = out
        self.budgets = budgets
        self.timing: Timing = timing or LoopTiming()
        self._slots: dict[Hashable, Slot] = {}
        self._chats: dict[int, dict[Hashable, Slot]] = {}  # slots with content, per chat
        self._busy: set[int] = set()  # chats with a call in flight
        self._seq = itertools.count()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._calls: set[asyncio.Task[None]] = set()
        self._closed = False
        self._flushing = False  # shutting down: no slot waits for its interval
        self._shared: deque[float] = deque()  # when the latest calls for `_SHARED` slots began
        self._held_back = -math.inf  # when the bot's ceiling last held back an awaited hand
        self.merged = 0  # contents replaced before they could go (latest state won)
        self.deferred = 0  # sends that waited for a chat's budget

    # ---------------------------------------------------------------- features' side

    def slot(self, key: Hashable) -> Slot | None:
        return self._slots.get(key)

    def put(
        self,
        key: Hashable,
        chat_id: int,
        content: Rendered,
        *,
        priority: Priority,
        message_id: int | None = None,
        tag: Any = None,
        fresh: bool = False,
        retired: Rendered | None = None,
        delete_old: bool = True,
        gap: float = 0.0,
        paced: bool = False,
        kept: bool = False,
        on_done: Done | None = None,
        on_failed: Failed | None = None,
    ) -> Slot:
        """Want `content` shown in the slot `key` (created with `message_id`, the message it
        edits; later the slot knows its message itself). Replaces content not yet sent."""
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = Slot(key, chat_id, priority, message_id=message_id)
        elif slot.content is not None:
            self.merged += 1
            metrics.SENDS_MERGED.inc()
        elif not fresh and not slot.sending and slot.shown == content:
            slot.tag = tag  # it shows that already: Telegram would say "not modified"
            return slot
        if priority < slot.priority and slot.key in self._chats.get(chat_id, ()):
            # More urgent now (a watcher's hand the game now waits for): its turn among the
            # more urgent counts from now, not from when it first waited as the less urgent.
            # Else every such hand, waiting long as a watcher, would go before the hands
            # that were urgent from the start, and those would wait behind all of them.
            slot.seq = next(self._seq)
            slot.since = self.timing.now()
        slot.content = content
        slot.tag = tag
        slot.priority = priority
        slot.fresh = slot.fresh or fresh
        slot.retired = retired or slot.retired
        slot.delete_old = delete_old
        slot.gap = gap
        slot.paced = paced
        slot.kept = kept
        slot.on_done = on_done
        slot.on_failed = on_failed
        slot.failures = 0
        slot.not_before = -math.inf
        self._want(slot)
        return slot

    def once(
        self,
        chat_id: int,
        content: Rendered,
        *,
        message_id: int | None = None,
        reply_to: int | None = None,
        priority: Priority = Priority.ONCE,
        on_done: Done | None = None,
    ) -> Hashable:
        """A message that matters once: sent (or `message_id` edited, sent anew if it is
        gone) when the chat's budget allows, never dropped for a 429. Its slot's key (the
        key its sends go out under, `Outbox.send`)."""
        key = ("once", next(self._seq))
        slot = self._slots[key] = Slot(
            key, chat_id, priority, message_id=message_id, kept=True, release=True
        )
        slot.content = content
        slot.reply_to = reply_to
        slot.on_done = on_done
        self._want(slot)
        return key

    def retire(
        self, chat_id: int, message_id: int, last_words: Rendered | None, *, delete: bool = True
    ) -> None:
        """An old message that a new one replaced: deleted, or where Telegram refuses (or not
        `delete`), edited to `last_words` without buttons (if there are none: left as it
        is)."""
        if last_words is None and not delete:
            return
        key = ("retire", chat_id, message_id)
        slot = self._slots[key] = Slot(
            key, chat_id, Priority.PASSIVE, message_id=message_id, kept=True, release=True
        )
        slot.content = last_words or Rendered("")  # (only the deletion is tried)
        slot.delete = True
        slot.delete_old = delete
        self._want(slot)

    def release(self, key: Hashable) -> None:
        """The slot is no longer needed once what it holds is out (a game ended)."""
        slot = self._slots.get(key)
        if slot is None:
            return
        if slot.content is None and not slot.sending:
            self._drop(slot)
        else:
            slot.release = True

    def drop(self, key: Hashable) -> None:
        """Forget the slot and what it still holds (unless that matters once)."""
        slot = self._slots.get(key)
        if slot is None:
            return
        if slot.kept and slot.content is not None:
            slot.release = True
            return
        slot.content = None
        if slot.sending:
            slot.release = True
            chat = self._chats.get(slot.chat_id)
            if chat is not None:
                chat.pop(slot.key, None)
                if not chat:
                    del self._chats[slot.chat_id]
        else:
            self._drop(slot)

    def discard(self, key: Hashable) -> None:
        """Forget the slot and what it still holds, even if that mattered once (a lobby
        whose message became the table): a call on its way is not tried again."""
        slot = self._slots.pop(key, None)
        if slot is None:
            return
        slot.content = None
        slot.release = True
        chat = self._chats.get(slot.chat_id)
        if chat is not None:
            chat.pop(slot.key, None)
            if not chat:
                del self._chats[slot.chat_id]

    def drop_chat(self, chat_id: int) -> None:
        """Nothing more goes to the chat (it moved: a supergroup migration)."""
        for slot in list(self._slots.values()):
            if slot.chat_id == chat_id:
                slot.kept = False
                self.drop(slot.key)

    def pending(self, chat_id: int) -> bool:
        """Whether something is still to go into the chat."""
        return bool(self._chats.get(chat_id)) or chat_id in self._busy

    def at_ceiling(self) -> bool:
        """Whether, in the last `BUSY_FOR` seconds, the bot's ceiling held back a hand the
        game had waited for `BEHIND` seconds: the bot sends as much as Telegram lets it, and
        every call another feature adds delays the games."""
        return self.timing.now() - self._held_back < BUSY_FOR

    def busy(self) -> bool:
        """Whether anything is wanted or on its way."""
        return not self._idle.is_set()

    async def settled(self) -> None:
        """Until nothing is left to send (tests, shutdown)."""
        await self._idle.wait()

    # ---------------------------------------------------------------- the loop

    def _want(self, slot: Slot) -> None:
        if self._closed:
            return
        chat = self._chats.setdefault(slot.chat_id, {})
        if slot.key not in chat:
            chat[slot.key] = slot
            slot.seq = next(self._seq)
            slot.since = self.timing.now()
        self._idle.clear()
        self._wake.set()
        if self._task is None or self._task.done():
            # In a context of its own: the loop belongs to no update (the log's chat and
            # update ids of the update that first wanted something would stick to it).
            self._task = asyncio.get_running_loop().create_task(
                self._run(), context=contextvars.Context()
            )

    def _drop(self, slot: Slot) -> None:
        self._slots.pop(slot.key, None)
        chat = self._chats.get(slot.chat_id)
        if chat is not None:
            chat.pop(slot.key, None)
            if not chat:
                del self._chats[slot.chat_id]

    def _choose(
        self, chat: dict[Hashable, Slot], chat_id: int, now: float
    ) -> tuple[Slot | None, float]:
        """The chat's most urgent slot that may go now (by `Priority` alone: within one chat
        the hand goes before the practice table, however long that waited), or else the one
        that may go soonest, and when."""
        best: Slot | None = None
        best_at = math.inf
        for slot in list(chat.values()):
            if slot.content is None:  # (nothing wanted: it should not be here)
                del chat[slot.key]
                continue
            budget_at = self.budgets.chat_ready_at(chat_id, now, once=slot.kept)
            gap = 0.0 if self._flushing else slot.gap
            if slot.paced and not self._flushing:
                gap = max(gap, self.budgets.spacing(chat_id, now))
            at = max(slot.not_before, slot.last_sent + gap, budget_at)
            if budget_at > now and not slot.deferred:  # counted once per send held back
                slot.deferred = True
                self.deferred += 1
                metrics.SENDS_DEFERRED.inc()
            if at <= now:
                if (
                    best is None
                    or best_at > now
                    or (slot.priority, slot.seq)
                    < (
                        best.priority,
                        best.seq,
                    )
                ):
                    best, best_at = slot, at
            elif best is None or (best_at > now and at < best_at):
                best, best_at = slot, at
        return best, best_at

    async def _run(self) -> None:
        while not self._closed:
            try:
                await self._round()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug: logged, and the sender goes on
                logger.exception("the sender failed")
                await self.timing.wait(self._wake, FIRST_RETRY)

    async def _round(self) -> None:
        """Start what may go now; then wait until something changes or is due."""
        timing = self.timing
        self._wake.clear()
        now = timing.now()
        ready: list[Slot] = []
        soonest = math.inf
        for chat_id, chat in list(self._chats.items()):
            if chat_id in self._busy:
                continue
            slot, at = self._choose(chat, chat_id, now)
            if not chat:
                del self._chats[chat_id]
            elif slot is not None and at <= now:
                ready.append(slot)
            else:
                soonest = min(soonest, at)
        ready.sort(key=lambda s: (_urgency(s, now), s.seq))
        # The bot's ceiling: first the overdue tables (and messages that matter once), the
        # one that has waited longest first, as long as such have had less than their share
        # of the bot's window (`Limits.tables`); then the most urgent, whatever they are.
        # So awaited hands enough to take the whole ceiling do not starve the tables, and
        # keep the rest.
        # (Counted over the window, not per round: the bot's window frees its calls one at a
        # time, and a share of each round would give the tables nearly every one.)
        budgets = self.budgets
        window = budgets.limits.bot
        shared = self._shared
        while shared and shared[0] <= now - window.seconds:
            shared.popleft()
        quota = budgets.limits.tables - len(shared)
        started: set[Hashable] = set()
        for slot in ready:
            if quota <= 0 or budgets.bot_room(now) <= 0:
                break
            if _overdue(slot, now):
                quota -= 1
                started.add(slot.key)
                self._start(slot, now)
        for i, slot in enumerate(ready):
            if budgets.bot_room(now) <= 0:  # the most urgent went first
                soonest = min(soonest, budgets.bot_ready_at(now))
                if any(
                    s.priority <= Priority.AWAITED and now - s.since >= BEHIND for s in ready[i:]
                ):
                    self._held_back = now
                break
            if slot.key not in started:
                self._start(slot, now)
        if not self._chats and not self._busy:
            self._idle.set()
            await self._wake.wait()
            return
        # until a call returns (the chat may go on), a slot is wanted, or time is up
        await timing.wait(self._wake, soonest - now)

    def _start(self, slot: Slot, now: float) -> None:
        chat = self._chats[slot.chat_id]
        del chat[slot.key]
        if not chat:
            del self._chats[slot.chat_id]
        self._busy.add(slot.chat_id)
        slot.sending = True
        slot.deferred = False
        self.budgets.note(slot.chat_id, now)
        if slot.priority in _SHARED:
            self._shared.append(now)
        task = asyncio.get_running_loop().create_task(self._call(slot, now))
        self._calls.add(task)
        task.add_done_callback(self._calls.discard)

    async def _call(self, slot: Slot, now: float) -> None:
        """Send the slot; its call counts in the chat's window from its answer."""
        try:
            await self._send(slot, now)
        finally:
            self.budgets.answered(slot.chat_id, now, self.timing.now())

    async def _send(self, slot: Slot, now: float) -> None:
        """Make the call."""
        content, tag = slot.content, slot.tag
        slot.content = None
        fresh = slot.fresh
        previous = slot.message_id
        error: BaseException | None = None
        delivered: Delivered | None = None
        try:
            if content is None:
                pass  # dropped meanwhile
            elif slot.delete and previous is not None:
                if (
                    not slot.delete_old
                    or not await self.out.delete(slot.chat_id, previous, budgeted=True)
                ) and content.text:
                    await self.out.close_keyboard(
                        slot.chat_id, previous, content, resend=False, budgeted=not slot.delete_old
                    )
                delivered = Delivered(previous, new=False)
            elif fresh or previous is None:
                retired = previous is not None
                if previous is not None:  # first: never two live keyboards at once, not
                    await self._retire_now(slot, previous)  # even if this worker dies then
                    slot.message_id = None
                mid = await self.out.send(  # (after a retirement, counted as it goes)
                    slot.chat_id,
                    content,
                    reply_to=slot.reply_to,
                    patient=False,
                    budgeted=not retired,
                    key=slot.key,  # (a copy an earlier send of it left is deleted)
                )
                delivered = Delivered(mid, new=True, previous=previous)
            else:
                sent: Sent = await self.out.show(
                    slot.chat_id, previous, content, patient=False, budgeted=True, key=slot.key
                )
                # (new: the message was gone, and this one replaces it)
                delivered = Delivered(sent.message_id, new=sent.new, previous=previous)
        except (Blocked, TelegramError) as exc:
            error = exc
        except Exception as exc:  # a bug: logged, the slot given up
            logger.exception("sending to chat %s failed", slot.chat_id)
            error = exc
        finally:
            slot.sending = False
            self._busy.discard(slot.chat_id)
        if delivered is not None:
            slot.shown = content
            self._delivered(slot, delivered, tag, fresh)
        elif error is not None and content is not None:
            self._failed(slot, content, tag, error)
        if slot.release and slot.content is None and not slot.sending:
            self._drop(slot)
        if not self._closed:
            self._wake.set()

    async def _retire_now(self, slot: Slot, previous: int) -> None:
        """Before a `fresh` send: the message it replaces is deleted (where Telegram lets it,
        and `delete_old`), else edited to the slot's last words without buttons. Its first
        call is the one the sender counted for the slot; any other call (and the send after
        it) is counted when it goes, so that Telegram's windows see each where it lands."""
        budgeted = True
        if slot.delete_old:
            if await self.out.delete(slot.chat_id, previous, budgeted=True):
                return
            budgeted = False
        last = slot.retired
        if last is not None and last.text:
            await self.out.close_keyboard(
                slot.chat_id, previous, last, resend=False, patient=False, budgeted=budgeted
            )

    def _delivered(self, slot: Slot, delivered: Delivered, tag: Any, fresh: bool) -> None:
        slot.message_id = delivered.message_id
        slot.last_sent = self.timing.now()
        slot.failures = 0
        if fresh:
            slot.fresh = False
        if slot.on_done is not None:
            try:
                slot.on_done(delivered, tag)
            except Exception:
                logger.exception("after a message to chat %s was sent", slot.chat_id)

    def _failed(self, slot: Slot, content: Rendered, tag: Any, error: BaseException) -> None:
        if self._slots.get(slot.key) is not slot:  # discarded meanwhile: not tried again
            return
        retry = isinstance(error, RetryAfter) or (
            isinstance(error, TelegramError) and transient(error)
        )
        if retry and slot.content is None:  # nothing newer wanted: this again
            if isinstance(error, NotLeading):  # a pause of the lead: no failure, and soon
                slot.not_before = self.timing.now() + NOT_LEADING_RETRY
            elif not isinstance(error, RetryAfter):  # (a 429 paused the chat: no failure)
                slot.failures += 1
                wait = min(LAST_RETRY, FIRST_RETRY * 2 ** (slot.failures - 1))
                slot.not_before = self.timing.now() + wait
            if slot.failures <= MAX_FAILURES:
                slot.content, slot.tag = content, tag
                self._want(slot)
                return
            logger.warning(
                "chat %s: giving up a message after %s failures", slot.chat_id, MAX_FAILURES
            )
        elif retry:
            return  # newer content is wanted already: it goes instead
        else:
            logger.info("chat %s refused a message: %s", slot.chat_id, error)
        if slot.on_failed is not None:
            try:
                slot.on_failed(error, tag)
            except Exception:
                logger.exception("after a message to chat %s failed", slot.chat_id)

    # ---------------------------------------------------------------- shutdown

    async def close(self, *, within: float = 5.0) -> None:
        """Send what is left for at most `within` seconds (of the sender's clock), then
        stop: messages still waiting then are lost (a restart shows every game anew)."""
        deadline = self.timing.now() + within
        self._flushing = True
        self._wake.set()
        while not self._idle.is_set():
            left = deadline - self.timing.now()
            if left <= 0:
                break
            await self.timing.wait(self._idle, left)
        self._closed = True
        self._wake.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for task in list(self._calls):
            task.cancel()
        left_over = sum(1 for s in self._slots.values() if s.content is not None)
        if left_over:
            logger.info("stopped with %d messages not sent", left_over)
