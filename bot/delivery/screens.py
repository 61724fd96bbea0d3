"""What each game's messages show: the group's table and every player's hand.

`Screens` renders a record and hands what its messages should show to the `Sender`, which
sends within Telegram's limits, latest state first; nothing here waits for Telegram, so a
chat's lock is never held while a message goes out:

- a **hand** is wanted anew only when what it shows changes (`hand_state`: the player's
  cards and options, the bout on the table, the roles, the deadline of one the game waits
  for); the hand of a player the game waits for goes first, then the tapping player's
  own, and the hands of players who cannot act last;
- the **table** is one slot per game, edited at most every `TABLE_EDIT_INTERVAL` seconds
  with the latest state, and never with what the message shows already;
- a **turn alert**: when the game starts waiting for a player who has not tapped for a while,
  their hand comes as a new message (Telegram notifies on new messages only) and the old one
  is retired;
- messages that matter once (the result, a notice, a lobby's last words) are never dropped.

It remembers what each player's message shows once Telegram took it (`is_current`, the
keyboard a tap comes from), each player's last applied tap (`double_tap`) and when a stale
tap last showed their hand anew (`reshow`); new message ids are stored with the record
afterwards, under the chat's lock (`GameStore.save_quietly`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Final

from bot import render
from bot.delivery.outbox import MAX_DEAD_PROBES, Blocked
from bot.delivery.sender import Delivered, Priority, Sender
from bot.kit import MAX_TIMEOUTS, Kit, computers
from bot.ops import metrics
from bot.store import GameStore
from engine import Action
from engine.advice import is_active, must_decide
from storage import FinishedGame, GameRecord, Seat, StorageError

logger = logging.getLogger(__name__)

LEFT_KEYS: Final = {
    "resigned": "result-resigned",
    "timed_out": "result-timed-out",
    "kicked": "result-kicked",
    "left": "result-left",
}
"""How a player left a running game (`meta.left`), in the words of the result."""

DOUBLE_TAP_WITHIN: Final = 2.0
"""A tap on the very button a player's last applied tap came from, this many seconds after
it, is the same press again (delivered twice, or tapped twice): answered quietly."""
RESHOW_EVERY: Final = 3.0
"""A stale tap shows a player's hand anew at most this often (a storm of taps on old
keyboards must not keep the hand's own edit from going out)."""
AT_CEILING: Final = 3
"""While the bot is at Telegram's bot-wide ceiling, a turn is announced (a new message: two
calls) only to a player quiet for this many times `TURN_ALERT_AFTER`, one who likely put
the phone down; the others see their turn by an edit (one call)."""

EVENING_GAP: Final = timedelta(hours=2)
"""The evening a result tallies (docs/messages.md): the group's games with the same players
in a row, each begun at most this long after the one before ended..."""
EVENING_LONGEST: Final = timedelta(hours=12)
"""...and none ended more than this before the last one."""


def table_key(game_id: int) -> tuple[str, int]:
    return ("table", game_id)


def hand_key(game_id: int, player: str) -> tuple[str, int, str]:
    return ("hand", game_id, player)


def lobby_key(game_id: int) -> tuple[str, int]:
    return ("lobby", game_id)


class Screens:
    def __init__(self, kit: Kit, store: GameStore, sender: Sender) -> None:
        self.kit = kit
        self.store = store
        self.out = kit.out
        self.sender = sender
        # What each hand message shows once Telegram took it, and the move of its keyboard.
        self._sent_hands: dict[tuple[int, str], Any] = {}
        self._shown_move: dict[tuple[int, str], int] = {}
        self._wanted_hands: dict[tuple[int, str], Any] = {}  # what was last handed over
        # Turn alerts: when each player last tapped their hand or got it as a new message, and
        # whether the game waited for their decision when their hand was last looked at.
        self._heard: dict[tuple[int, str], datetime] = {}
        self._deciding: dict[tuple[int, str], bool] = {}
        # Taps: the button of each player's last applied tap (its move and intent) and when,
        # and when a stale tap last showed their hand anew.
        self._applied: dict[tuple[int, str], tuple[int, Any, datetime]] = {}
        self._reshown: dict[tuple[int, str], datetime] = {}
        self._orphans: dict[tuple[int, str], set[int]] = {}  # second hand messages retired
        # Hands whose first message this process sends knowing where a dead one's lies.
        self._floored: set[tuple[int, str]] = set()
        # The bot was removed from the group (a 403 on its table): wired by `bot.play`.
        self.bot_gone: Callable[[GameRecord], Awaitable[None]] | None = None

    # ---------------------------------------------------------------- memory

    def shown_move(self, record: GameRecord, player: str) -> int | None:
        """The move number of the keyboard `player` has now (None: not known)."""
        return self._shown_move.get((record.id or 0, player))

    def sees_current(self, record: GameRecord, player: str) -> bool:
        """Whether what the player's hand message shows is what they can decide now (their
        cards, options and table), whatever move its keyboard was made at."""
        game = record.game
        key = (record.id or 0, player)
        return game is not None and self._sent_hands.get(key) == self.hand_state(record, player)

    def is_current(self, record: GameRecord, player: str) -> bool:
        """Whether the player's hand message shows the game as it is now (its cards, options
        and keyboard of this move): a tap from an older keyboard needs no new edit."""
        game = record.game
        return (
            game is not None
            and self._shown_move.get((record.id or 0, player)) == game.move_number
            and self.sees_current(record, player)
        )

    def hand_wanted(self, record: GameRecord, player: str) -> bool:
        """Whether the player's hand message shows what they can decide now, or that is
        handed to the sender already (on its way): a stale tap needs no new edit."""
        key = (record.id or 0, player)
        return (
            record.game is not None
            and self.sender.slot(hand_key(*key)) is not None
            and self._wanted_hands.get(key) == self.hand_state(record, player)
        )

    def applied(self, record: GameRecord, player: str, move: int, intent: Any) -> None:
        """The player's tap on the button of `move` and `intent` was applied just now."""
        self._applied[(record.id or 0, player)] = (move, intent, self.kit.clock())

    def double_tap(self, record: GameRecord, player: str, move: int, intent: Any) -> bool:
        """Whether a tap on that button is the player's last applied tap again (the same
        press delivered twice, or a second press within `DOUBLE_TAP_WITHIN` s)."""
        last = self._applied.get((record.id or 0, player))
        if last is None or last[:2] != (move, intent):
            return False
        return (self.kit.clock() - last[2]).total_seconds() <= DOUBLE_TAP_WITHIN

    async def reshow(self, record: GameRecord, player: str) -> None:
        """After a stale tap: the player's hand shown anew, unless what it should show is on
        its way already, or it was shown anew less than `RESHOW_EVERY` s ago."""
        key = (record.id or 0, player)
        now = self.kit.clock()
        last = self._reshown.get(key)
        if self.hand_wanted(record, player) or (
            last is not None and (now - last).total_seconds() < RESHOW_EVERY
        ):
            return
        self._reshown[key] = now
        await self.hands(record, only={player}, force=True, actor=player)

    def orphan(self, record: GameRecord, player: str, message_id: int | None) -> bool:
        """Whether `message_id` (a tapped hand's) is not the player's hand message: a second
        one, left live by a send whose answer was lost (or by a crash)."""
        key = (record.id or 0, player)
        slot = self.sender.slot(hand_key(*key))
        known = {record.hand_messages.get(player)}
        if slot is not None:
            if slot.sending:  # a new message may be on its way: not known yet
                return False
            known.add(slot.message_id)
        known.discard(None)
        return message_id is not None and bool(known) and message_id not in known

    def retire_orphan(self, record: GameRecord, player: str, chat_id: int, message_id: int) -> None:
        """A second hand message of the player loses its buttons: deleted, or where Telegram
        refuses, edited to the line that points to the hand (within the chat's budget; once,
        however often it is tapped meanwhile)."""
        retired = self._orphans.setdefault((record.id or 0, player), set())
        if message_id in retired:
            return
        retired.add(message_id)
        lang = self.kit.lang_of(record, player)
        self.sender.retire(chat_id, message_id, render.Rendered(self.kit.t(lang, "hand-replaced")))

    def has_hand(self, record: GameRecord, player: str) -> bool:
        """Whether the player's hand message shows plain cards (not a choice of covers)."""
        return self._sent_hands.get((record.id or 0, player)) is not None

    def tapped(self, record: GameRecord, player: str) -> None:
        """The player tapped their hand just now: they are looking (no turn alert)."""
        self._heard[(record.id or 0, player)] = self.kit.clock()

    def drop_hand(self, record: GameRecord, player: str) -> None:
        """Forget what the player's hand shows: the next pass sends it whatever it was."""
        key = (record.id or 0, player)
        self._sent_hands.pop(key, None)
        self._wanted_hands.pop(key, None)

    def forget(self, record: GameRecord) -> None:
        """The record is no longer live: its messages get what is still wanted there (the
        last table, the last hands), then nothing more."""
        game_id = record.id or 0
        self.sender.release(table_key(game_id))
        self.sender.release(lobby_key(game_id))
        for seat in record.lobby.seats:
            key = (game_id, seat.player_id)
            self.sender.release(hand_key(*key))
            self._sent_hands.pop(key, None)
            self._wanted_hands.pop(key, None)
            self._shown_move.pop(key, None)
            self._heard.pop(key, None)
            self._deciding.pop(key, None)
            self._applied.pop(key, None)
            self._reshown.pop(key, None)
            self._orphans.pop(key, None)
            self._floored.discard(key)

    def forget_chat(self, chat_id: int) -> None:
        """The group moved (a supergroup migration): nothing more goes to the old chat."""
        self.sender.drop_chat(chat_id)

    # ---------------------------------------------------------------- a move's new state

    async def show_state(
        self, record: GameRecord, *, actor: str | None = None, again: bool = False
    ) -> None:
        """Show the new state: hands whose options changed, the table, the result
        (`again`: a result the process before may have posted, see `_send_result`)."""
        await self.hands(record, actor=actor)
        self.table(record)
        if record.status == "finished":
            self._send_result(record, await self.evening(record), again=again)

    async def evening(self, record: GameRecord) -> list[FinishedGame]:
        """The games of the evening a finished game ends (for the result's tally): the
        chat's games with the same players, back to a gap of `EVENING_GAP` (none if they
        cannot be read now: the result goes out without its tally)."""
        assert record.id is not None
        try:
            async with self.kit.db.transaction(readonly=True) as tx:
                return await tx.results.evening(
                    game_id=record.id, gap=EVENING_GAP, within=EVENING_LONGEST
                )
        except StorageError as exc:
            logger.info("the evening of game %s cannot be read: %s", record.id, exc)
            return []

    def _result(
        self, record: GameRecord, evening: Sequence[FinishedGame], *, closed: bool = False
    ) -> render.Rendered:
        assert record.game is not None and record.game.outcome is not None
        assert record.id is not None
        outcome = record.game.outcome
        reason = None
        if outcome.durak is not None:
            reason = LEFT_KEYS.get(record.meta.left.get(outcome.durak, ""))
        return render.result(
            self.kit.tr,
            record.language,
            outcome,
            game_id=record.id,
            names=self.kit.names(record),
            reason=reason,
            evening=evening,
            closed=closed,
        )

    async def close_result(self, record: GameRecord) -> None:
        """A newer game began: the result of `record` loses its Play again button (the
        same text, the evening's tally as it was)."""
        if record.result_message_id is None or record.game is None:
            return
        rendered = self._result(record, await self.evening(record), closed=True)
        self.post(record.chat_id, rendered, message_id=record.result_message_id)

    def _send_result(
        self, record: GameRecord, evening: Sequence[FinishedGame] = (), *, again: bool = False
    ) -> None:
        """Post the result. `again`: processes before this one may have posted it and died
        before storing its id (each start killed in a row, one copy); such copies lie after
        the latest message the bot knew in the chat when the game ended (`result_floor`; a
        game stored without it: the table message), and are deleted once this post lands
        (`Outbox.may_have_landed`)."""
        assert record.id is not None
        # one of the few group messages that notify
        rendered = replace(self._result(record, evening), notify=True)
        game_id = record.id

        def posted(delivered: Delivered, _: Any) -> None:  # (a leader that takes over posts
            record.result_message_id = delivered.message_id  # the results not posted)
            self.store.background.spawn(self._result_posted(game_id, delivered.message_id))

        key = self.sender.once(record.chat_id, rendered, on_done=posted)
        floor = record.meta.result_floor
        if again and floor is not None:
            chat, table = record.chat_id, record.table_message_id or 0
            self.out.may_have_landed(
                chat, key, after=floor, spare=lambda: self._stored(chat) | {table}
            )
        elif again and record.table_message_id is not None:
            self.out.may_have_landed(record.chat_id, key, after=record.table_message_id)

    async def _result_posted(self, game_id: int, message_id: int) -> None:
        try:
            async with self.kit.db.transaction() as tx:
                await tx.games.result_posted(game_id=game_id, message_id=message_id)
        except StorageError as exc:  # posted again by the next leader, at worst
            logger.info("could not store that game %s's result is posted: %s", game_id, exc)

    def post(
        self,
        chat_id: int,
        rendered: render.Rendered,
        *,
        message_id: int | None = None,
        reply_to: int | None = None,
    ) -> None:
        """A message that matters once (a result, a lobby's last words, a notice), sent or
        (`message_id`) edited when the chat's budget allows, however many 429s come."""
        self.sender.once(chat_id, rendered, message_id=message_id, reply_to=reply_to)

    # ---------------------------------------------------------------- the lobby

    def lobby(self, record: GameRecord, rendered: render.Rendered, *, paced: bool = False) -> None:
        """The lobby message shows `rendered` (its latest state wins; never dropped);
        `paced`: at most one edit every `LOBBY_EDIT_INTERVAL` s."""
        assert record.id is not None
        game_id, chat_id = record.id, record.chat_id

        def done(delivered: Delivered, _: Any) -> None:
            if delivered.new:
                self._store(chat_id, game_id, lambda r: self._new_lobby(r, delivered))

        self.sender.put(
            lobby_key(game_id),
            chat_id,
            rendered,
            priority=Priority.ONCE,
            message_id=record.lobby.message_id,
            # Joins in a row are shown together: the group's budget is left for the table.
            gap=self.kit.settings.lobby_edit_interval if paced else 0.0,
            kept=True,
            on_done=done,
        )

    def adopt_lobby(self, record: GameRecord) -> None:
        """The lobby's message id was learnt from a tap on it (its send's answer was lost):
        what the lobby still waits to show edits that message, not a new one."""
        assert record.id is not None
        key, message_id = lobby_key(record.id), record.lobby.message_id
        if message_id is None:
            return
        self.out.found(record.chat_id, message_id, key)  # (no copy: the lobby)
        slot = self.sender.slot(key)
        if slot is not None and slot.message_id is None and not slot.sending:
            slot.message_id = message_id

    def _new_lobby(self, record: GameRecord, delivered: Delivered) -> bool:
        """A lobby message was sent anew: it is the lobby's from now on, and the one the
        record knew, if it is still there, is retired (a lobby message adopted from a tap
        while this one was on its way). One sent after the game began is retired itself."""
        mid, known = delivered.message_id, record.lobby.message_id
        if record.status != "lobby":
            if mid != record.table_message_id:
                closed = render.Rendered(self.kit.t(record.language, "error-lobby-closed"))
                self.retire(record.chat_id, mid, closed)
            return False
        if known is not None and known not in (mid, delivered.previous):
            moved = render.Rendered(self.kit.t(record.language, "lobby-moved"))
            self.retire(record.chat_id, known, moved)
        return _set_lobby(record, mid)

    def retire(
        self,
        chat_id: int,
        message_id: int,
        last_words: render.Rendered | None,
        *,
        delete: bool = True,
    ) -> None:
        """A duplicate of a message the group has (a lobby or a result sent twice, one left
        from an older state): deleted (`delete`, where Telegram lets it), else edited to
        `last_words` without buttons (None: left as it is)."""
        self.sender.retire(chat_id, message_id, last_words, delete=delete)

    def lobby_to_table(self, record: GameRecord) -> int | None:
        """The game starts: its lobby message is to become the table (the next `table`
        edits it, its buttons go with that edit). What the lobby message still waited to
        show is dropped, so that no lobby edit lands on the table. The lobby's message id
        (None: it has none, the table comes as a new message)."""
        assert record.id is not None
        self.sender.discard(lobby_key(record.id))
        return record.lobby.message_id

    # ---------------------------------------------------------------- the table

    def table(self, record: GameRecord, *, closed: str | None = None) -> bool:
        """Want the table message to show the record's state (at most one edit per
        `TABLE_EDIT_INTERVAL`; the last state of a game at once, and never dropped). False
        if it shows that already (as far as this worker knows)."""
        assert record.game is not None and record.id is not None
        kit = self.kit
        running = record.status == "running" and closed is None
        rendered = render.table(
            kit.tr,
            record.language,
            record.game.view(None),
            names=kit.names(record),
            computers=computers(record),
            log=record.meta.log,
            deadline=record.deadline if record.status == "running" else None,
            window=kit.in_window(record),
            # The way to the hand; not in a practice game, whose table is in that same chat.
            bot_username=kit.bot_username
            if record.status == "running" and not record.meta.practice
            else None,
            closed=closed,
            app_link=kit.app_link(record),
        )
        game_id, chat_id = record.id, record.chat_id
        slot = self.sender.slot(table_key(game_id))
        if slot is not None and slot.content is None and slot.shown == rendered:
            return False  # Telegram would say "not modified", and it would cost a call

        def done(delivered: Delivered, _: Any) -> None:
            if delivered.new:
                self._store(chat_id, game_id, lambda r: _set_table(r, delivered.message_id))

        def failed(error: BaseException, _: Any) -> None:
            if isinstance(error, Blocked) and self.bot_gone is not None:
                self._locked(chat_id, game_id, self.bot_gone)

        self.sender.put(
            table_key(game_id),
            chat_id,
            rendered,
            priority=Priority.TABLE if running else Priority.ONCE,
            message_id=record.table_message_id,
            # Evenly spaced within the chat's budget, not a burst that then starves (20 a
            # minute, 3 of them kept: one edit every 3.5 s in a group, more while the
            # lobby's and the start's calls are still in the window).
            gap=kit.settings.table_edit_interval if running else 0.0,
            paced=running,
            kept=not running,
            on_done=done,
            on_failed=failed,
        )
        return True

    # ---------------------------------------------------------------- hands

    def hand_state(self, record: GameRecord, pid: str) -> Any:
        """What a hand message depends on: every seated player sees the bout on the table
        (see `render.hand`), so their message follows each card played; one who can act also
        their options and the deadline (drawn by the reader's client, so it needs no edit
        to stay true); a player who is out sees only that (and the end)."""
        game = record.game
        assert game is not None
        if pid not in game.active_players:
            return ("out", game.is_over)
        timeouts = record.timeouts.get(pid, 0)  # shown until the player moves again
        legal = tuple(game.legal_actions(pid))
        # The trump card shown changes with an exchange (R19), not with any move of this player.
        shown = (game.trump_card, game.stock_size, game.discard_size)
        table = tuple(game.table)
        if is_active(legal) or pid in game.to_act:
            deadline = record.deadline if pid in game.to_act else None
            return (
                game.hand(pid),
                legal,
                table,
                game.attacker,
                game.defender,
                shown,
                timeouts,
                deadline,
            )
        return (game.hand(pid), table, game.attacker, game.defender, shown, game.is_over, timeouts)

    async def hands(
        self,
        record: GameRecord,
        *,
        only: set[str] | None = None,
        force: bool = False,
        choice: Sequence[Action] | None = None,
        transfer_to: str | None = None,
        actor: str | None = None,
        anew: bool = False,
    ) -> None:
        """Want each hand message whose cards or options changed shown anew (or all, with
        `force`). `choice`, `transfer_to`: a tap's options to choose from (see
        `render.hand`); `actor`: the player who tapped (their hand goes right after the
        awaited ones); `anew`: as a new message, the old one retired (/hand)."""
        game = record.game
        assert game is not None and record.id is not None
        kit = self.kit
        blocked = record.meta.blocked
        for seat in record.lobby.seats:
            pid = seat.player_id
            if seat.is_computer or seat.user_id is None or (only is not None and pid not in only):
                continue
            if pid in blocked and not force:
                continue
            key = (record.id, pid)
            # In a throw-in window nobody must decide: it ends by itself (no alert).
            deciding = must_decide(game, pid) and not kit.in_window(record)
            alert = choice is None and self._turn_alert(record, pid, deciding)
            self._deciding[key] = deciding
            state = self.hand_state(record, pid)
            if not force and not alert and self._wanted_hands.get(key) == state:
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
                deadline=record.deadline,
                window=kit.in_window(record),
                choice=choice,
                transfer_to=transfer_to,
                timeouts=record.timeouts.get(pid, 0),
                max_timeouts=MAX_TIMEOUTS,
                app_url=kit.settings.webapp_url,
            )
            if game.is_over:
                rendered = render.Rendered(rendered.text)
            shown = None if choice else state
            self._wanted_hands[key] = shown
            if deciding or pid in game.to_act:
                priority = Priority.AWAITED
            elif pid == actor:
                priority = Priority.OWN
            else:
                priority = Priority.PASSIVE
            self._want_hand(
                record, seat, rendered, (shown, game.move_number), priority, alert, anew
            )

    def deal(self, record: GameRecord) -> None:
        """A game is dealt (not stored yet): where each player's first hand message would
        lie, the latest message the bot knows in their private chat (`Outbox.floor`), goes
        with the record (`hand_floors`). A process killed before it stored the id of a hand
        it sent leaves a copy after it, which the next one deletes once it has sent the hand
        (`_want_hand`)."""
        assert record.id is not None
        for seat in record.lobby.seats:
            if seat.is_computer or seat.user_id is None:
                continue
            self._floored.add((record.id, seat.player_id))  # (this process's sends: its own)
            floor = self.out.floor(seat.user_id)
            if floor is not None:
                record.hand_floors[seat.player_id] = floor.floor

    def _want_hand(
        self,
        record: GameRecord,
        seat: Seat,
        rendered: render.Rendered,
        tag: tuple[Any, int],
        priority: Priority,
        alert: bool,
        anew: bool,
    ) -> None:
        assert record.id is not None and seat.user_id is not None
        game_id, chat_id, pid = record.id, record.chat_id, seat.player_id
        key = (game_id, pid)
        over = record.status == "finished"
        lang = self.kit.lang_of(record, pid)
        # The first look at a hand in this process: a process before it may have sent a
        # new hand message and died before storing its id (the first one, after the deal's
        # floor; or a turn alert, after the stored one, which it deleted first). A copy
        # after that goes once this process sends the hand; none is looked for where the
        # stored message still shows it (an edit).
        floor = record.hand_messages.get(pid, record.hand_floors.get(pid))
        looking = key not in self._floored and floor is not None
        if looking:
            assert floor is not None
            user = seat.user_id
            self.out.may_have_landed(
                user, hand_key(game_id, pid), after=floor, spare=lambda: self._stored(user)
            )
        self._floored.add(key)
        user_id = seat.user_id
        dealt = record.hand_floors.get(pid)  # (where the first hand message lies after)

        def done(delivered: Delivered, tag: tuple[Any, int]) -> None:
            self._sent_hands[key], self._shown_move[key] = tag
            if looking and not delivered.new:  # (no copy: the stored one is the hand)
                self.out.found(user_id, delivered.message_id, hand_key(game_id, pid))
                if dealt is not None and 0 < delivered.message_id - dealt - 1 <= MAX_DEAD_PROBES:
                    text = render.Rendered(rendered.text)
                    self.store.background.spawn(
                        self._look_between(record, pid, user_id, dealt, delivered.message_id, text)
                    )
            if delivered.new:
                self._heard[key] = self.kit.clock()  # a new message: their phone announced it
                self._store(chat_id, game_id, lambda r: _set_hand(r, pid, delivered.message_id))

        def failed(error: BaseException, _: Any) -> None:
            self._sent_hands.pop(key, None)  # not known what it shows: sent in full next time
            self._wanted_hands.pop(key, None)
            if isinstance(error, Blocked):
                self._locked(chat_id, game_id, lambda r: self._blocked(r, pid))

        self.sender.put(
            hand_key(game_id, pid),
            seat.user_id,
            rendered,
            priority=priority,
            message_id=record.hand_messages.get(pid),
            tag=tag,
            fresh=alert or anew,
            retired=render.Rendered(self.kit.t(lang, "hand-replaced")),
            delete_old=not anew,  # /hand: the old one stays, as a line that points below
            kept=over,
            on_done=done,
            on_failed=failed,
        )

    async def _look_between(
        self,
        record: GameRecord,
        pid: str,
        user_id: int,
        dealt: int,
        hand: int,
        last_words: render.Rendered,
    ) -> None:
        """The first look at a stored hand after a start: a copy the process that sent it
        left may lie between the deal's floor and it (its sweep stopped where another send
        into the chat had lost its answer too): looked for, and once every id between them
        was looked at, the hand itself is the floor from then on (no look at the next
        start)."""
        assert record.id is not None
        looked = await self.out.look_between(
            user_id, dealt, hand, last_words, spare=lambda: self._stored(user_id)
        )
        if looked:
            self._store(record.chat_id, record.id, lambda r: _set_floor(r, pid, hand))

    def _stored(self, chat_id: int) -> set[int]:
        """The ids of the messages in chat `chat_id` that the live games have stored (other
        games' hands and half-time warnings, a practice game's table, a lobby opened
        since, /leave and /kick questions not answered yet, asked in the group or in a
        player's private chat): no copy of a hand or a result."""
        found: set[int] = set()
        for record in self.store.live_records():
            meta = record.meta
            if record.chat_id == chat_id:
                found |= {record.table_message_id or 0, record.lobby.message_id or 0}
                found.update(meta.questions)
            for seat in record.lobby.seats:
                if seat.user_id == chat_id:
                    found.add(record.hand_messages.get(seat.player_id, 0))
                    found.add(meta.warnings.get(seat.player_id, 0))
                    found.add(meta.private_questions.get(seat.player_id, 0))
        found.discard(0)
        return found

    def _turn_alert(self, record: GameRecord, pid: str, deciding: bool) -> bool:
        """Whether the player's hand comes as a new, notifying message (Telegram notifies on
        new messages only, never on an edit): the game now waits for their decision and did
        not before, they have neither tapped nor got a new hand message for
        `TURN_ALERT_AFTER` seconds (`AT_CEILING` times that while the bot is at Telegram's
        bot-wide ceiling, `Sender.at_ceiling`: an alert costs two calls, and at 100 games
        the alerts that slow turns bring about would slow the turns further), and they did
        not switch alerts off. A player who taps quickly gets edits. After a restart (or a
        change of leader) that time counts from the first look at their hand: a player who
        was playing then is not alerted at once, as every player would be at their next turn
        (a new message each, just when the lead changed hands)."""
        key = (record.id or 0, pid)
        self._heard.setdefault(key, self.kit.clock())  # (not known: from now)
        if not deciding or self._deciding.get(key) is not False or pid in record.meta.quiet:
            return False  # (unknown before, after a restart: their hand is simply shown)
        if record.hand_messages.get(pid) is None:
            return False  # a new message anyway
        last = self._heard.get(key)
        if last is None:
            return True
        after = self.kit.settings.turn_alert_after
        quiet_for = (self.kit.clock() - last).total_seconds()
        if quiet_for < after:
            return False
        if quiet_for < after * AT_CEILING and self.sender.at_ceiling():
            metrics.TURN_ALERTS_HELD.inc()  # (two calls: the games' hands go first)
            return False
        return True

    async def _blocked(self, record: GameRecord, pid: str) -> None:
        """The player blocked the bot (a 403 on their hand): the group is told, once."""
        blocked = record.meta.blocked
        if pid in blocked:
            return
        blocked.append(pid)
        await self.store.save_quietly(record)
        seat = next((s for s in record.lobby.seats if s.player_id == pid), None)
        if seat is None:
            return
        kit = self.kit
        # with no time limit, nothing times out: the game waits
        key = "group-blocked" if kit.turn_timeout(record) else "group-blocked-no-limit"
        text = kit.t(
            record.language,
            key,
            player=render.esc(kit.seat_name(record.language, seat)),
            link=kit.deep_link(),
        )
        self.post(record.chat_id, render.Rendered(text))
        if seat.user_id is not None:
            try:
                async with kit.db.transaction() as tx:
                    await tx.players.set_can_message(user_id=seat.user_id, value=False)
            except Exception:
                logger.info("could not store that %s blocked the bot", pid)

    def close_hands(self, record: GameRecord, key: str) -> None:
        """Every hand message's last words (`key`), without buttons."""
        for seat in record.lobby.seats:
            mid = record.hand_messages.get(seat.player_id)
            if seat.user_id is None or mid is None:
                continue
            lang = self.kit.lang_of(record, seat.player_id)
            text = render.Rendered(self.kit.t(lang, key))
            assert record.id is not None
            self.sender.put(
                hand_key(record.id, seat.player_id),
                seat.user_id,
                text,
                priority=Priority.ONCE,
                message_id=mid,
                kept=True,
            )

    # ---------------------------------------------------------------- after Telegram took it

    def _locked(
        self, chat_id: int, game_id: int, work: Callable[[GameRecord], Awaitable[None]]
    ) -> None:
        """Run `work` on the chat's live record of game `game_id`, under the chat's lock, in
        a task of its own (the sender's callbacks must not wait)."""

        async def run() -> None:
            async with self.store.locked(chat_id):
                record = self.store.checked(chat_id)
                if record is not None and record.id == game_id:
                    await work(record)

        self.store.background.spawn(run())

    def _store(self, chat_id: int, game_id: int, change: Callable[[GameRecord], bool]) -> None:
        """A new message id, stored with the live record (a game that ended meanwhile keeps
        its old ids: nothing sends to them any more)."""

        async def apply(record: GameRecord) -> None:
            if change(record):
                await self.store.save_quietly(record)

        self._locked(chat_id, game_id, apply)

    # ---------------------------------------------------------------- shutdown

    async def close(self, *, flush: bool = True, within: float = 5.0) -> None:
        """The end of the lead: what is still wanted goes out for `within` seconds at most
        (``flush``; else at once nothing more), then nothing more (the next leader shows
        every game anew)."""
        await self.sender.close(within=within if flush else 0.0)


def _set_table(record: GameRecord, message_id: int) -> bool:
    changed = record.table_message_id != message_id
    record.table_message_id = message_id
    return changed


def _set_lobby(record: GameRecord, message_id: int) -> bool:
    changed = record.lobby.message_id != message_id
    record.lobby.message_id = message_id
    return changed


def _set_floor(record: GameRecord, pid: str, message_id: int) -> bool:
    changed = record.hand_floors.get(pid) != message_id
    record.hand_floors[pid] = message_id
    return changed


def _set_hand(record: GameRecord, pid: str, message_id: int) -> bool:
    changed = record.hand_messages.get(pid) != message_id
    record.hand_messages[pid] = message_id
    return changed
