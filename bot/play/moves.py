"""A tap on a hand: the move it means, why a card cannot be played, and /hand.

A tap is judged against the keyboard it came from: one from an older keyboard than the
player's current one is "too late" (and brings the current hand where it is not shown or on
its way), but for the same press as the move just made, answered quietly. A tap from a
second hand message (left live by a lost answer) counts as one on the hand, and retires it.
A card that fits in several ways (or would only transfer) asks first. The move is
acknowledged (the tap answered) only once it is stored; its answer and the hands it changed
go out together.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Final

from bot import render
from bot.callbacks import CardTap, MoveData, Refresh
from bot.delivery import Tap
from bot.kit import Person, seated
from bot.play.computers import Computers
from bot.play.room import Room
from engine import Action, ErrorCode, IllegalMove, Transfer
from engine.advice import actions_for_card, transfer_target, why_not
from storage import Conflict, GameRecord

logger = logging.getLogger(__name__)


@dataclass(eq=False, repr=False)
class Moves(Room):
    computers: Computers

    def error_text(self, lang: str | None, code: ErrorCode) -> str:
        return self.kit.t(lang, f"error-{code.value.replace('_', '-')}")

    async def tap(self, *, query: Tap, person: Person, data: MoveData) -> None:
        """A tap on a hand (or confirm) button."""
        t, out = self.kit.t, self.out
        lang = person.language
        async with self.store.for_game(data.game_id) as unit:
            record = unit.game(data.game_id, "running") if unit is not None else None
            if record is None or record.game is None:
                await out.answer(query, t(lang, "error-game-gone"))
                return
            game = record.game
            pid = person.player_id
            if pid not in game.players:
                await out.answer(query, t(lang, "error-not-in-game"))
                return
            lang = self.kit.lang_of(record, pid)
            if pid not in game.active_players:  # out of cards (R17), or gone
                double = self.screens.double_tap(record, pid, data.move, data.intent)
                await out.answer(query, None if double else t(lang, "error-player-out"))
                return
            self.screens.tapped(record, pid)  # they are looking: no turn alert for a while
            if query.chat_id is not None and self.screens.orphan(record, pid, query.message_id):
                # A second hand message (a lost answer's): retired, and its tap counts as
                # one on the hand.
                assert query.message_id is not None
                self.screens.retire_orphan(record, pid, query.chat_id, query.message_id)
            intent = data.intent
            if isinstance(intent, Refresh):
                await out.answer(query)
                await self.screens.hands(record, only={pid}, force=True, actor=pid)
                return
            # A tap is judged against what that keyboard showed: one made at this move, or
            # one made earlier that still shows what the player can decide now (a later
            # move of someone else changed nothing of it). Else it is out of date.
            shown = self.screens.shown_move(record, pid)
            if data.move > game.move_number or (
                data.move < game.move_number
                and (data.move != shown or not self.screens.sees_current(record, pid))
            ):
                await self._stale(record, pid, lang, data, query)
                return
            if isinstance(intent, CardTap):
                action = await self._card(record, pid, lang, intent, query)
                if action is None:  # answered: why not, or which of several it means
                    return
            else:
                action = intent
            try:
                events = game.apply(pid, action)
            except IllegalMove as exc:
                await out.answer(query, self.error_text(lang, exc.code))
                return
            record.timeouts.pop(pid, None)
            try:
                await self.store.commit(record, [(pid, events)])
            except Conflict:
                await out.answer(query, t(lang, "error-conflict"))
                return
            self.screens.applied(record, pid, data.move, data.intent)
            # The move is stored: its answer and its hands go out at once (one round trip
            # to Telegram for the tap, not two).
            answering = asyncio.ensure_future(out.answer(query))
            try:
                await self.computers.after_move(record, actor=pid)
            finally:
                await answering

    async def _stale(
        self, record: GameRecord, pid: str, lang: str, data: MoveData, query: Tap
    ) -> None:
        """A tap from a keyboard older than the game: the same press as the move just made
        is answered quietly; any other is told it came too late, and the current hand is
        shown (unless it is already, or on its way: no edit for it)."""
        if self.screens.double_tap(record, pid, data.move, data.intent):
            await self.out.answer(query)
            return
        await self._out_of_date(record, pid, lang, query)

    async def _out_of_date(self, record: GameRecord, pid: str, lang: str, query: Tap) -> None:
        """A tap that does not fit the game as it is: "too late" where the hand shows the
        game now (no edit), else "here is your current hand", and it comes."""
        if self.screens.sees_current(record, pid):
            first = _moved_last(record, pid)
            if first is None:
                text = self.kit.t(lang, "error-stale-shown")
            else:  # (a toast is plain text: the name as it is)
                name = self.kit.names(record, lang).get(first, "?")
                text = self.kit.t(lang, "error-stale-after", player=name)
            await self.out.answer(query, text)
            return
        await self.out.answer(query, self.kit.t(lang, "error-stale"))
        await self.screens.reshow(record, pid)

    async def _card(
        self, record: GameRecord, pid: str, lang: str, tap: CardTap, query: Tap
    ) -> Action | None:
        """What a tapped card means: the one action it plays, or None once the tap was
        answered with why it cannot be played or with the options to choose from."""
        game = record.game
        assert game is not None
        options = actions_for_card(game.legal_actions(pid), tap.card)
        if not options:
            code = why_not(game, pid, tap.card)  # None: fine, but not now
            if code is None:
                await self.out.answer(query, self.kit.t(lang, "error-not-your-turn"))
            else:
                await self.out.answer(query, self.error_text(lang, code))
            return None
        # A card that would only transfer asks first: a defender who meant to cover must not
        # pass the bout on by mistake (the Transfer buttons are one tap).
        if len(options) > 1 or isinstance(options[0], Transfer):
            await self.out.answer(query)
            await self.screens.hands(
                record,
                only={pid},
                force=True,
                choice=options,
                transfer_to=transfer_target(game, pid, options),
            )
            return None
        return options[0]

    async def unknown_button(self, *, query: Tap, person: Person) -> None:
        """Callback data the bot never made (forged, or from a much older version): nothing
        changes; a player of a running game is answered as for a late tap (and gets the
        current keyboard where their hand does not show it), anyone else "unknown button"."""
        for peeked in await self.store.running_games_of(person):
            async with self.store.for_chat(peeked.chat_id) as unit:
                record = unit.record
                if record is None or record.game is None or record.status != "running":
                    continue
                pid = person.player_id
                await self._out_of_date(record, pid, self.kit.lang_of(record, pid), query)
                return
        await self.out.answer(query, self.kit.t(person.language, "error-unknown-button"))

    async def resend_hand(
        self,
        *,
        person: Person,
        chat_id: int | None,
        message_id: int | None = None,
        quiet: bool = False,
    ) -> bool:
        """/hand: send the hand again as a new private message (the old one loses its keys).

        In a group: that group's game. In private: every running game of the player, the
        ones waiting for them last (nearest the bottom of the chat)."""
        kit, pid = self.kit, person.player_id
        records = (
            [r for r in (await self.store.peek(chat_id),) if r is not None]
            if chat_id is not None
            else await self.store.running_games_of(person)
        )
        records.sort(key=lambda r: r.game is not None and pid in r.game.to_act)
        sent = False
        for peeked in records:
            if peeked.status != "running" or not seated(peeked, person):
                continue
            async with self.store.for_chat(peeked.chat_id) as unit:
                record = unit.record  # the live copy, under the lock
                if record is None or record.game is None:
                    continue
                await self._hand_anew(record, person)
            sent = True
        if sent or quiet:  # quiet: the caller says what else to say, and where
            return sent
        if chat_id is not None:  # in a group, from someone who does not play there
            lang = await kit.chat_language(chat_id, person.language)
            running = any(r.status == "running" for r in records)
            if running:  # that person's business: told privately where the bot may
                await self.tell(
                    chat_id, person, "error-not-in-game", lang=lang, message_id=message_id
                )
            else:  # about the chat ("here"): answered where it was asked
                lobby = any(r.status == "lobby" for r in records)  # no game yet, but a lobby
                key = "newgame-lobby-open" if lobby else "error-no-game"
                await self.out.send(chat_id, render.Rendered(kit.t(lang, key)), reply_to=message_id)
            return False
        text = render.Rendered(kit.t(person.language, "error-no-game"))
        await self.out.send(person.user_id, text)
        return False

    async def _hand_anew(self, record: GameRecord, person: Person) -> None:
        """The player's hand as a new message; the old one keeps only a line of text."""
        pid = person.player_id
        self.screens.drop_hand(record, pid)
        if pid in record.meta.blocked:
            record.meta.blocked.remove(pid)
        await self.screens.hands(record, only={pid}, force=True, actor=pid, anew=True)


_PLAYED: Final = frozenset({"attack", "add", "defend", "transfer", "show", "take", "pass"})
"""The table's log entries of a player's own move (not a timeout, nor a removal)..."""
_AFTER: Final = frozenset({"beaten", "picked", "out"})
"""...and what a move may bring about with it (the bout's end, a player out)."""


def _moved_last(record: GameRecord, pid: str) -> str | None:
    """The player whose move the table's log names last, if that was a move of someone
    other than `pid` (the one a late tap of `pid` came after)."""
    for entry in reversed(record.meta.log):
        if entry.kind in _AFTER:
            continue
        if entry.kind in _PLAYED and entry.player not in (None, pid):
            return entry.player
        return None
    return None
