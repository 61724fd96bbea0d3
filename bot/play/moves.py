"""A tap on a hand: the move it means, why a card cannot be played, and /hand.

A tap is judged against the keyboard it came from: one from an older keyboard than the
player's current one is "too late" (and brings the current hand where it is not shown or on
its way), but for the same press as the move just made, answered quietly. A tap from a
second hand message (left live by a lost answer) counts as one on the hand, and retires it.
A card that fits in several ways (or would only transfer) asks first. The move is
acknowledged (the tap answered) only once it is stored; its answer and the hands it changed
go out together.

A move from the Mini App (`app_move`) takes the same path (`_judge`), judged against the
state the app showed (`Seen`: `bot.miniapp.live.Live`) as a tap is against its keyboard, and
answered with the same words, returned to the page instead of a toast.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Protocol

from bot import render
from bot.callbacks import CardTap, MoveData, Refresh
from bot.delivery import Tap
from bot.delivery.screens import Screens
from bot.kit import Person, seated
from bot.play.computers import Computers
from bot.play.room import Room
from engine import Action, Card, ErrorCode, IllegalMove, Transfer
from engine.advice import actions_for_card, transfer_target, why_not
from storage import Conflict, GameRecord

logger = logging.getLogger(__name__)


Answer = Callable[..., Awaitable[None]]
"""Answers a move: with a text, or quietly (no argument, or None)."""


class Seen(Protocol):
    """What the player was shown when they made a move (the chat's hand message, or the
    Mini App's state)."""

    def still_shows(self, record: GameRecord, pid: str, move: int) -> bool:
        """Whether what was shown at `move` (older than the game) still shows what the
        player can decide now."""
        ...

    def sees_current(self, record: GameRecord, pid: str) -> bool:
        """Whether what the player sees now shows the game as it is."""
        ...


@dataclass(frozen=True, slots=True)
class Judged:
    """What a move from the app came to: applied (or the same move again), and the answer's
    text (None: a quiet answer)."""

    applied: bool
    text: str | None


@dataclass(frozen=True, slots=True)
class _HandSeen:
    """The chat's hand message as what a tap was made on."""

    screens: Screens

    def still_shows(self, record: GameRecord, pid: str, move: int) -> bool:
        return move == self.screens.shown_move(record, pid) and self.screens.sees_current(
            record, pid
        )

    def sees_current(self, record: GameRecord, pid: str) -> bool:
        return self.screens.sees_current(record, pid)


@dataclass(eq=False, repr=False)
class Moves(Room):
    computers: Computers

    @property
    def _hand(self) -> _HandSeen:
        return _HandSeen(self.screens)

    def error_text(self, lang: str | None, code: ErrorCode) -> str:
        return self.kit.t(lang, f"error-{code.value.replace('_', '-')}")

    async def tap(self, *, query: Tap, person: Person, data: MoveData) -> None:
        """A tap on a hand (or confirm) button."""

        async def answer(text: str | None = None) -> None:
            await self.out.answer(query, text)

        await self._judge(person, data, answer, self._hand, query=query)

    async def app_move(self, *, person: Person, data: MoveData, seen: Seen) -> Judged:
        """A move sent by the Mini App (`bot.miniapp`): judged as a tap on the hand's button
        of that action would be, against what the app showed (`seen`), and answered with the
        same words; the chat's hand and table follow as after a tap. An action that is not
        legal and plays a card is answered as a tap on that card."""
        said: list[str | None] = []

        async def answer(text: str | None = None) -> None:
            said.append(text)

        verdict = await self._judge(person, data, answer, seen, query=None)
        return Judged(verdict is not None, said[0] if said else None)

    async def _judge(
        self, person: Person, data: MoveData, answer: Answer, seen: Seen, *, query: Tap | None
    ) -> str | None:
        """The one path of a move (a tap, `query`; or the app's, None): "applied", "double"
        (the same press as the move just made, answered quietly), or None: not applied,
        answered why."""
        t = self.kit.t
        lang = person.language
        async with self.store.for_game(data.game_id) as unit:
            record = unit.game(data.game_id, "running") if unit is not None else None
            if record is None or record.game is None:
                await answer(t(lang, "error-game-gone"))
                return None
            game = record.game
            pid = person.player_id
            if pid not in game.players:
                await answer(t(lang, "error-not-in-game"))
                return None
            lang = self.kit.lang_of(record, pid)
            if pid not in game.active_players:  # out of cards (R17), or gone
                double = self.screens.double_tap(record, pid, data.move, data.intent)
                await answer(None if double else t(lang, "error-player-out"))
                return "double" if double else None
            self.screens.tapped(record, pid)  # they are looking: no turn alert for a while
            if (
                query is not None
                and query.chat_id is not None
                and self.screens.orphan(record, pid, query.message_id)
            ):
                # A second hand message (a lost answer's): retired, and its tap counts as
                # one on the hand.
                assert query.message_id is not None
                self.screens.retire_orphan(record, pid, query.chat_id, query.message_id)
            intent = data.intent
            if isinstance(intent, Refresh):
                await answer()
                await self.screens.hands(record, only={pid}, force=True, actor=pid)
                return None
            # A move is judged against what was shown when it was made: one made at this
            # move, or one made earlier that still shows what the player can decide now (a
            # later move of someone else changed nothing of it). Else it is out of date.
            if data.move > game.move_number or (
                data.move < game.move_number and not seen.still_shows(record, pid, data.move)
            ):
                return await self._stale(record, pid, lang, data, answer, seen)
            if isinstance(intent, CardTap):
                action = await self._card(record, pid, lang, intent, answer)
                if action is None:  # answered: why not, or which of several it means
                    return None
            else:
                action = intent
                card = getattr(action, "card", None)
                if (
                    query is None
                    and isinstance(card, Card)
                    and not actions_for_card(game.legal_actions(pid), card)
                ):
                    await answer(self._why_not(record, pid, lang, card))
                    return None
            try:
                events = game.apply(pid, action)
            except IllegalMove as exc:
                await answer(self.error_text(lang, exc.code))
                return None
            record.timeouts.pop(pid, None)
            try:
                await self.store.commit(record, [(pid, events)])
            except Conflict:
                await answer(t(lang, "error-conflict"))
                return None
            self.screens.applied(record, pid, data.move, data.intent)
            # The move is stored: its answer and its hands go out at once (one round trip
            # to Telegram for the tap, not two).
            answering = asyncio.ensure_future(answer())
            try:
                await self.computers.after_move(record, actor=pid)
            finally:
                await answering
            return "applied"

    async def _stale(
        self, record: GameRecord, pid: str, lang: str, data: MoveData, answer: Answer, seen: Seen
    ) -> str | None:
        """A move from a keyboard older than the game: the same press as the move just made
        is answered quietly; any other is told it came too late, and the current hand is
        shown (unless it is already, or on its way: no edit for it)."""
        if self.screens.double_tap(record, pid, data.move, data.intent):
            await answer()
            return "double"
        await self._out_of_date(record, pid, lang, answer, seen)
        return None

    async def _out_of_date(
        self, record: GameRecord, pid: str, lang: str, answer: Answer, seen: Seen
    ) -> None:
        """A move that does not fit the game as it is: "too late" where what the player
        sees shows the game now (no edit), else "here is your current hand", and it comes."""
        if seen.sees_current(record, pid):
            first = _moved_last(record, pid)
            if first is None:
                text = self.kit.t(lang, "error-stale-shown")
            else:  # (a toast is plain text: the name as it is)
                name = self.kit.names(record, lang).get(first, "?")
                text = self.kit.t(lang, "error-stale-after", player=name)
            await answer(text)
            return
        await answer(self.kit.t(lang, "error-stale"))
        await self.screens.reshow(record, pid)

    def _why_not(self, record: GameRecord, pid: str, lang: str, card: Card) -> str:
        """Why a card cannot be played now, in words."""
        assert record.game is not None
        code = why_not(record.game, pid, card)  # None: fine, but not now
        if code is None:
            return self.kit.t(lang, "error-not-your-turn")
        return self.error_text(lang, code)

    async def _card(
        self, record: GameRecord, pid: str, lang: str, tap: CardTap, answer: Answer
    ) -> Action | None:
        """What a tapped card means: the one action it plays, or None once the tap was
        answered with why it cannot be played or with the options to choose from."""
        game = record.game
        assert game is not None
        options = actions_for_card(game.legal_actions(pid), tap.card)
        if not options:
            await answer(self._why_not(record, pid, lang, tap.card))
            return None
        # A card that would only transfer asks first: a defender who meant to cover must not
        # pass the bout on by mistake (the Transfer buttons are one tap).
        if len(options) > 1 or isinstance(options[0], Transfer):
            await answer()
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

                async def answer(text: str | None = None) -> None:
                    await self.out.answer(query, text)

                lang = self.kit.lang_of(record, pid)
                await self._out_of_date(record, pid, lang, answer, self._hand)
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
