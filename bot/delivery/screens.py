"""What each game's messages show: the group's table and every player's hand.

`Screens` renders a record and brings its messages up to date, sending only what changed:

- a **hand** is edited only when what that player can decide changes (`hand_state`), and
  all hands of a move go out at once (each is a private chat of its own);
- the **table** is edited through a per-group `Coalescer`: at most one edit every
  `TABLE_EDIT_INTERVAL` seconds, always with the latest state, and never an edit that
  would show what the message shows already;
- what Telegram refused for a while (429, a timeout) is shown again later, without holding
  the chat's lock meanwhile (`Coalescer.retry_later`).

It remembers what each message shows (`forget` drops a game's memory once it is no longer
live); a new message id is stored with the record (`GameStore.save_quietly`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, Final

from telegram.error import RetryAfter, TelegramError

from bot import render
from bot.delivery.coalescer import Coalescer
from bot.delivery.outbox import (
    MIN_RETRY_WAIT,
    Blocked,
    Sent,
    retry_after_seconds,
    transient,
)
from bot.kit import MAX_TIMEOUTS, Kit, computers
from bot.store import GameStore
from engine import Action
from engine.advice import is_active, must_decide
from storage import GameRecord, Seat

logger = logging.getLogger(__name__)

HAND_RETRY_SECONDS: Final = 3.0  # a hand Telegram refused (429) or lost (timeout), again

LEFT_KEYS: Final = {
    "resigned": "result-resigned",
    "timed_out": "result-timed-out",
    "kicked": "result-kicked",
    "left": "result-left",
}
"""How a player left a running game (`meta.left`), in the words of the result."""


class Screens:
    def __init__(self, kit: Kit, store: GameStore) -> None:
        self.kit = kit
        self.store = store
        self.out = kit.out
        self.tables = Coalescer(
            self.publish_table,
            kit.settings.table_edit_interval,
            publish_later=self._publish_table_locked,
        )
        # Hands that Telegram refused for now (429) or that timed out are shown again later.
        self.hand_retries = Coalescer(self._republish_hands, HAND_RETRY_SECONDS)
        self._sent_hands: dict[tuple[int, str], Any] = {}  # what each hand message shows
        # game id -> what its table message shows: (chat, message id, text, keyboard)
        self._shown_tables: dict[int, tuple[int, int, str, str | None]] = {}
        # the move number of the keyboard each player has now: a tap from an older one is stale
        self._shown_move: dict[tuple[int, str], int] = {}
        # Turn alerts: when each player last tapped their hand or got it as a new message, and
        # whether the game waited for their decision when their hand was last looked at.
        self._heard: dict[tuple[int, str], datetime] = {}
        self._deciding: dict[tuple[int, str], bool] = {}
        # The bot was removed from the group (a 403 on its table): wired by `bot.play`.
        self.bot_gone: Callable[[GameRecord], Awaitable[None]] | None = None

    # ---------------------------------------------------------------- memory

    def shown_move(self, record: GameRecord, player: str) -> int | None:
        """The move number of the keyboard `player` has now (None: not known)."""
        return self._shown_move.get((record.id or 0, player))

    def is_current(self, record: GameRecord, player: str) -> bool:
        """Whether the player's hand message shows the game as it is now (its cards, options
        and keyboard of this move): a tap from an older keyboard needs no new edit."""
        game = record.game
        key = (record.id or 0, player)
        return (
            game is not None
            and self._shown_move.get(key) == game.move_number
            and self._sent_hands.get(key) == self.hand_state(record, player)
        )

    def has_hand(self, record: GameRecord, player: str) -> bool:
        """Whether the player's hand message shows plain cards (not a choice of covers)."""
        return self._sent_hands.get((record.id or 0, player)) is not None

    def tapped(self, record: GameRecord, player: str) -> None:
        """The player tapped their hand just now: they are looking (no turn alert)."""
        self._heard[(record.id or 0, player)] = self.kit.clock()

    def drop_hand(self, record: GameRecord, player: str) -> None:
        """Forget what the player's hand shows: the next pass sends it whatever it was."""
        self._sent_hands.pop((record.id or 0, player), None)

    def forget(self, record: GameRecord) -> None:
        """The record is no longer live: nothing more is shown of it later."""
        self.forget_chat(record.chat_id)
        self._shown_tables.pop(record.id or 0, None)
        for seat in record.lobby.seats:
            key = (record.id or 0, seat.player_id)
            self._sent_hands.pop(key, None)
            self._shown_move.pop(key, None)
            self._heard.pop(key, None)
            self._deciding.pop(key, None)

    def forget_chat(self, chat_id: int) -> None:
        """Drop what is scheduled for the chat (its game moved or ended)."""
        self.tables.forget(chat_id)
        self.hand_retries.forget(chat_id)

    # ---------------------------------------------------------------- a move's new state

    async def show_state(self, record: GameRecord) -> None:
        """Show the new state: hands whose options changed, the table, the result."""
        finished = record.status == "finished"
        # The last state of a game cannot be shown by a retry later (it is no longer live):
        # wait out a short 429 in place.
        await self.hands(record, patient=finished)
        if finished:
            await self.tables.flush_key(record.chat_id)
            await self.table(record, patient=True)
            await self._send_result(record)
        else:
            await self.tables.request(record.chat_id)

    async def _send_result(self, record: GameRecord) -> None:
        assert record.game is not None and record.game.outcome is not None
        assert record.id is not None
        outcome = record.game.outcome
        reason = None
        if outcome.durak is not None:
            reason = LEFT_KEYS.get(record.meta.left.get(outcome.durak, ""))
        rendered = render.result(
            self.kit.tr,
            record.language,
            outcome,
            game_id=record.id,
            names=self.kit.names(record),
            reason=reason,
        )
        await self.post(record.chat_id, rendered)

    async def post(
        self, chat_id: int, rendered: render.Rendered, *, message_id: int | None = None
    ) -> int | None:
        """A message that matters once (a result, a lobby's last words, a notice), sent or
        (`message_id`) edited: at once if Telegram takes it; after a 429 or a lost call, by a
        task of its own, not holding the chat's lock, until it is delivered
        (`Outbox.deliver`). Its id if it went out at once."""
        try:
            if message_id is None:
                return await self.out.send(chat_id, rendered, patient=False)
            return (await self.out.show(chat_id, message_id, rendered, patient=False)).message_id
        except RetryAfter as exc:
            wait = retry_after_seconds(exc)
        except (Blocked, TelegramError) as exc:
            if isinstance(exc, Blocked) or not transient(exc):
                logger.warning("could not post a message in chat %s: %s", chat_id, exc)
                return None
            wait = MIN_RETRY_WAIT
        deliver = self.out.deliver(chat_id, rendered, message_id=message_id, first_wait=wait)
        self.store.background.spawn(deliver)
        return None

    # ---------------------------------------------------------------- the table

    async def publish_table(self, chat_id: int) -> None:
        """The table edit that is due at once (the caller holds the chat's lock)."""
        record = self.store.live(chat_id)
        if record is not None and record.status == "running":
            await self.table(record, from_coalescer=True)

    async def _publish_table_locked(self, chat_id: int) -> None:
        """A merged table edit, run later by the coalescer: it takes the chat's lock."""
        async with self.store.locks[chat_id]:
            await self.publish_table(chat_id)

    async def table(
        self,
        record: GameRecord,
        *,
        from_coalescer: bool = False,
        closed: str | None = None,
        patient: bool = False,
    ) -> None:
        """Bring the table message up to date now (callers hold the chat's lock)."""
        assert record.game is not None
        kit = self.kit
        rendered = render.table(
            kit.tr,
            record.language,
            record.game.view(None),
            names=kit.names(record),
            computers=computers(record),
            log=record.meta.log,
            seconds_left=kit.seconds_left(record) if record.status == "running" else None,
            # The way to the hand; not in a practice game, whose table is in that same chat.
            bot_username=kit.bot_username
            if record.status == "running" and not record.meta.practice
            else None,
            closed=closed,
        )
        keyboard = rendered.keyboard.json if rendered.keyboard is not None else None
        game_id = record.id or 0
        showing = (record.chat_id, record.table_message_id, rendered.text, keyboard)
        if self._shown_tables.get(game_id) == showing:
            # Nothing new to show (a merged edit that an earlier one already covered, say):
            # Telegram would only answer "message is not modified", and the call would take
            # one of the group's twenty a minute. (A failed edit leaves the entry as it was:
            # the message still shows that.)
            self.tables.reset(record.chat_id)
            return
        try:
            # Not patient: a 429 goes to the coalescer, which retries without holding the lock.
            sent = await self.out.show(
                record.chat_id, record.table_message_id, rendered, patient=patient
            )
        except Blocked:
            if self.bot_gone is not None:
                await self.bot_gone(record)
            return
        except TelegramError as exc:
            if from_coalescer and transient(exc):
                raise  # the coalescer publishes again later
            # 429 or a timeout: again later; otherwise the next change or a restart shows it
            logger.warning("could not update the table of chat %s: %s", record.chat_id, exc)
            self.tables.retry_later(record.chat_id, exc)
            return
        self.tables.reset(record.chat_id)
        if record.status == "running" and self.store.live(record.chat_id) is record:
            # (not for a game that ended or was forgotten: nothing would drop the entry)
            self._shown_tables[game_id] = (record.chat_id, sent.message_id, rendered.text, keyboard)
        if sent.new:
            record.table_message_id = sent.message_id
            await self.store.save_quietly(record)

    # ---------------------------------------------------------------- hands

    async def _republish_hands(self, chat_id: int) -> None:
        """The hands of a running game that failed to show, again (see `hand_retries`)."""
        async with self.store.locks[chat_id]:
            record = self.store.live(chat_id)
            if record is not None and record.status == "running" and record.game is not None:
                await self.hands(record, retrying=True)

    def hand_state(self, record: GameRecord, pid: str) -> Any:
        """What a hand message depends on. A player who can act sees the table, so their
        message follows every change; a passive player's message shows no table and changes
        only with their cards, the roles or the stock (see `render.hand`); a player who is
        out sees only that (and the end)."""
        game = record.game
        assert game is not None
        if pid not in game.active_players:
            return ("out", game.is_over)
        timeouts = record.timeouts.get(pid, 0)  # shown until the player moves again
        legal = tuple(game.legal_actions(pid))
        # The trump card shown changes with an exchange (R19), not with any move of this player.
        shown = (game.trump_card, game.stock_size, game.discard_size)
        if is_active(legal) or pid in game.to_act:
            table = tuple(game.table)
            return (game.hand(pid), legal, table, game.attacker, game.defender, shown, timeouts)
        return (game.hand(pid), game.attacker, game.defender, shown, game.is_over, timeouts)

    async def hands(
        self,
        record: GameRecord,
        *,
        only: set[str] | None = None,
        force: bool = False,
        choice: Sequence[Action] | None = None,
        transfer_to: str | None = None,
        patient: bool = False,
        retrying: bool = False,
    ) -> None:
        """Edit each hand message whose cards or options changed (or all, with `force`).
        `choice`, `transfer_to`: a tap's options to choose from (see `render.hand`).

        A hand that fails for a while (429, a timeout) is shown again by `hand_retries`:
        scheduled once per pass, or (`retrying`, a pass of `hand_retries` itself) raised for
        it to count. `patient`: wait out a short 429 in place (the end of a game)."""
        shows = self._hands_to_show(record, only, force, choice, transfer_to)
        # Each hand is its own private chat: all go out at once, so a move's hands take one
        # round trip to Telegram, not one each (the chat's lock is held meanwhile).
        if len(shows) == 1:
            outcomes: list[Any] = [await self._show_hand(record, *shows[0], patient=patient)]
        else:
            outcomes = await asyncio.gather(
                *(self._show_hand(record, *show, patient=patient) for show in shows),
                return_exceptions=True,
            )
        errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        if errors:  # none of them expects these: raised once all are done, the first one
            for error in errors[1:]:
                logger.error("showing a hand failed", exc_info=error)
            raise errors[0]
        changed_ids = any(changed for changed, _ in outcomes)
        failed = next((error for _, error in outcomes if error is not None), None)
        if changed_ids:
            await self.store.save_quietly(record)
        if failed is None:
            self.hand_retries.reset(record.chat_id)
        elif retrying:
            raise failed  # hand_retries counts it and tries again later, or gives up
        else:
            self.hand_retries.retry_later(record.chat_id, failed)

    def _hands_to_show(
        self,
        record: GameRecord,
        only: set[str] | None,
        force: bool,
        choice: Sequence[Action] | None,
        transfer_to: str | None,
    ) -> list[tuple[Seat, Any, render.Rendered, bool]]:
        """The hands of `hands` that need showing: seat, state, message, and whether it comes
        as a turn alert (see `_turn_alert`)."""
        game = record.game
        assert game is not None and record.id is not None
        kit = self.kit
        blocked = record.meta.blocked
        shows: list[tuple[Seat, Any, render.Rendered, bool]] = []
        for seat in record.lobby.seats:
            pid = seat.player_id
            if seat.is_computer or seat.user_id is None or (only is not None and pid not in only):
                continue
            if pid in blocked and not force:
                continue
            deciding = must_decide(game, pid)
            alert = choice is None and self._turn_alert(record, pid, deciding)
            self._deciding[(record.id, pid)] = deciding
            state = self.hand_state(record, pid)
            if not force and self._sent_hands.get((record.id, pid)) == state:
                continue
            lang = kit.lang_of(record, pid)
            rendered = render.hand(
                kit.tr,
                lang,
                game.view(pid),
                game_id=record.id,
                names=kit.names(record, lang),
                chat_title=record.meta.title,
                practice=record.meta.practice,
                seconds_left=kit.seconds_left(record),
                choice=choice,
                transfer_to=transfer_to,
                timeouts=record.timeouts.get(pid, 0),
                max_timeouts=MAX_TIMEOUTS,
            )
            if game.is_over:
                rendered = render.Rendered(rendered.text)
            shows.append((seat, None if choice else state, rendered, alert))
        return shows

    def _turn_alert(self, record: GameRecord, pid: str, deciding: bool) -> bool:
        """Whether the player's hand comes as a new, notifying message (Telegram notifies on
        new messages only, never on an edit): the game now waits for their decision and did
        not before, they have neither tapped nor got a new hand message for
        `TURN_ALERT_AFTER` seconds, and they did not switch alerts off. A player who taps
        quickly gets edits."""
        key = (record.id or 0, pid)
        if not deciding or self._deciding.get(key) is not False or pid in record.meta.quiet:
            return False  # (unknown before, after a restart: their hand is simply shown)
        if record.hand_messages.get(pid) is None:
            return False  # a new message anyway
        last = self._heard.get(key)
        after = self.kit.settings.turn_alert_after
        return last is None or (self.kit.clock() - last).total_seconds() >= after

    async def _show_hand(
        self,
        record: GameRecord,
        seat: Seat,
        state: Any,
        rendered: render.Rendered,
        alert: bool,
        *,
        patient: bool,
    ) -> tuple[bool, TelegramError | None]:
        """Show one hand (for `hands`): whether its message id or the blocked list changed,
        and the error worth another try, if it failed with one. An `alert` sends the hand as
        a new message and retires the old one."""
        game = record.game
        assert game is not None and record.id is not None and seat.user_id is not None
        pid = seat.player_id
        key = (record.id, pid)
        old = record.hand_messages.get(pid)
        try:
            if alert and old is not None:
                sent = Sent(await self.out.send(seat.user_id, rendered, patient=patient), True)
            else:  # a 429: `hand_retries`, without holding the lock
                sent = await self.out.show(seat.user_id, old, rendered, patient=patient)
        except Blocked:
            self._sent_hands.pop(key, None)
            blocked = record.meta.blocked
            if pid in blocked:
                return False, None
            blocked.append(pid)
            await self._announce_blocked(record, seat)
            return True, None
        except TelegramError as exc:
            logger.warning("could not update the hand of %s: %s", pid, exc)
            self._sent_hands.pop(key, None)
            return False, exc if transient(exc) else None
        self._sent_hands[key] = state
        self._shown_move[key] = game.move_number
        if sent.new:
            record.hand_messages[pid] = sent.message_id
            self._heard[key] = self.kit.clock()  # a new message: their phone announced it
            if alert and old is not None:
                await self._retire(record, seat, old)
            return True, None
        return False, None

    async def _retire(self, record: GameRecord, seat: Seat, message_id: int) -> None:
        """An older hand message, once a new one replaced it: deleted, or where Telegram
        refuses, a line that points below, without buttons (one live hand per game)."""
        assert seat.user_id is not None
        if await self.out.delete(seat.user_id, message_id):
            return
        lang = self.kit.lang_of(record, seat.player_id)
        text = render.Rendered(self.kit.t(lang, "hand-replaced"))
        await self.out.close_keyboard(seat.user_id, message_id, text, patient=False, resend=False)

    async def _announce_blocked(self, record: GameRecord, seat: Seat) -> None:
        kit = self.kit
        # with no time limit, nothing times out: the game waits
        key = "group-blocked" if kit.turn_timeout(record) else "group-blocked-no-limit"
        text = kit.t(
            record.language,
            key,
            player=render.esc(kit.seat_name(record.language, seat)),
            link=kit.deep_link(),
        )
        await self.post(record.chat_id, render.Rendered(text))
        with contextlib.suppress(Exception):
            async with kit.db.transaction() as tx:
                if seat.user_id is not None:
                    await tx.players.set_can_message(user_id=seat.user_id, value=False)

    async def close_hands(self, record: GameRecord, key: str) -> None:
        """Every hand message's last words (`key`), without buttons."""
        for seat in record.lobby.seats:
            mid = record.hand_messages.get(seat.player_id)
            if seat.user_id is None or mid is None:
                continue
            lang = self.kit.lang_of(record, seat.player_id)
            text = render.Rendered(self.kit.t(lang, key))
            await self.out.close_keyboard(seat.user_id, mid, text)

    # ---------------------------------------------------------------- shutdown

    async def flush(self) -> None:
        """Publish the pending table edits now."""
        await self.tables.flush()

    async def close(self) -> None:
        """Shutdown: hands waiting to be shown again are dropped (a restart shows every
        hand); pending table edits are published; then nothing more is scheduled."""
        self.hand_retries.close()
        try:
            await self.tables.flush()
        except Exception:
            logger.exception("publishing the pending tables at shutdown failed")
        self.tables.close()  # a flush that hit a 429 leaves no retry behind
