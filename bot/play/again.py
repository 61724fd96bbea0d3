"""Play again that starts itself.

The result of a group game offers its players "Ready for another". The first tap opens a
lobby (`GameMeta.again_of`: the game it follows) with the tapper and the computers of that
game seated, and the other people of that game waiting by name (not who was removed or
left the group); each tap of theirs, on the result or on the lobby's Join, seats them
(stored, like any Join). The game starts by itself once all of them sit, or when the
minute after the first tap runs out (`AGAIN_WAIT`, the lobby's stored deadline: it holds
over a restart or a change of leader) with two seats or more, one a person; with fewer,
the lobby stays open as any other. The result loses its button once that game begins (or
its lobby stops waiting), and a result's button closes when /newgame opens the next lobby.

Only the chat's latest game offers this: a tap on an older result, or on one whose next
game is set up or running already, is answered and opens nothing; someone who did not
play that game is told to Join. A practice game's result starts the next practice game
at once (its only person is ready, its computers are).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from bot import render
from bot.callbacks import AgainData
from bot.delivery import Blocked, SendError, Tap
from bot.kit import Person
from bot.play.lobby import Lobbies
from bot.play.room import Room
from storage import GameRecord, NotFound, StorageError

logger = logging.getLogger(__name__)

AGAIN_WAIT: Final = timedelta(minutes=1)
"""After the first "Ready", how long the lobby waits for the others."""

GONE_FOR_GOOD: Final = ("kicked", "timed_out", "left")
"""Players not waited for (removed, or gone from the group): they may still tap Join like
anyone else."""


@dataclass(eq=False, repr=False)
class Again(Room):
    lobbies: Lobbies

    async def ready(self, *, query: Tap, person: Person, data: AgainData) -> None:
        """A tap on a result's "Ready for another"."""
        kit = self.kit
        async with self.store.for_game(data.game_id) as unit:
            if unit is None:
                await self.out.answer(query, kit.t(person.language, "error-game-gone"))
                return
            old = await self.store.game(data.game_id)
            lang = kit.personal_language(person, old)  # toasts: the tapper's language
            if query.chat_id != old.chat_id:  # forged elsewhere
                await self.out.answer(query, kit.t(lang, "error-unknown-button"))
                return
            self._one_result(old, query)
            played = any(s.user_id == person.user_id for s in old.lobby.seats)
            current = unit.record
            if current is not None and current.meta.again_of == old.id:
                if current.status == "running":
                    await self.out.answer(query, kit.t(lang, "again-started"))
                elif not played:  # anyone may Join the lobby, below
                    await self.out.answer(query, kit.t(lang, "again-lobby-open"))
                else:  # seated like any Join (and the game may start: `joined`)
                    await self.lobbies._join(current, person, query)
                return
            if old.game is None or old.status != "finished":
                await self.out.answer(query, kit.t(lang, "error-game-gone"))
                return
            if not played:
                await self.out.answer(query, kit.t(lang, "again-not-player"), alert=True)
                return
            if current is not None:  # a game of its own, set up or running since
                key = "newgame-running" if current.status == "running" else "again-lobby-open"
                await self.out.answer(query, kit.t(lang, key))
                return
            if not await self._latest(old):
                await self.out.answer(query, kit.t(lang, "again-stale"), alert=True)
                return
            if old.meta.practice:  # practice again: same opponents, still unranked
                await self.out.answer(query)
                levels = [s.level or "easy" for s in old.lobby.seats if s.is_computer]
                await self.lobbies._practice(person, levels)
                return
            await self._open(old, person, query, lang)

    def _one_result(self, old: GameRecord, query: Tap) -> None:
        """A tap on a result of `old` that is not the one stored: a copy (the bot died after
        it landed, before it stored so, and the next start posted it again). The tap counts
        as one on the result, and the copy is deleted."""
        tapped, posted = query.message_id, old.result_message_id
        if tapped is not None and posted is not None and tapped != posted and query.carried:
            self.screens.retire(old.chat_id, tapped, None)

    async def _latest(self, old: GameRecord) -> bool:
        """Whether `old` is its chat's latest game (no lobby opened since, not even one
        that closed)."""
        try:
            async with self.kit.db.transaction(readonly=True) as tx:
                latest = await tx.games.latest_for_chat(chat_id=old.chat_id)
        except NotFound:
            return False
        return latest.id == old.id

    async def _open(self, old: GameRecord, person: Person, query: Tap, lang: str) -> None:
        """The first "Ready": a lobby waiting for the others, stored in one transaction with
        its deadline, the computers of that game and the people it waits for."""
        assert old.game is not None
        gone = {pid for pid, why in old.meta.left.items() if why in GONE_FOR_GOOD}
        waited = {
            s.player_id: s.name
            for s in old.lobby.seats
            if not s.is_computer and s.player_id not in gone
        }
        computers = [dataclasses.replace(s) for s in old.lobby.seats if s.is_computer]
        durak = old.game.durak

        def fill(record: GameRecord) -> None:
            record.meta.again_of = old.id
            record.meta.previous_durak = durak
            record.deadline = self.kit.clock() + AGAIN_WAIT
            room = record.rules.max_players - len(record.lobby.seats)
            record.lobby.seats += computers[: max(room, 0)]

        record = await self.lobbies._open(old.chat_id, old.meta.title, person, waited, fill=fill)
        await self.out.answer(query, self.kit.t(lang, "lobby-again"))
        await self.joined(record)

    async def joined(self, record: GameRecord) -> None:
        """Someone sat in a lobby (the caller holds its lock): a Play again lobby starts
        once all the people it waits for sit."""
        if record.status != "lobby" or record.meta.again_of is None:
            return
        seated = {s.player_id for s in record.lobby.seats}
        if all(pid in seated for pid in record.meta.asked) and _startable(record):
            await self.lobbies._begin(record)

    async def expired(self, record: GameRecord) -> None:
        """The minute of a Play again lobby ran out (the caller holds its lock): it starts
        with two seats or more (one a person); else it stays open as any lobby, until the
        lobby timeout, without waiting for anyone."""
        if _startable(record):
            seated = {s.player_id for s in record.lobby.seats}
            left_out = [pid for pid in record.meta.asked if pid not in seated]
            await self.lobbies._begin(record)
            await self._tell_left_out(record, left_out)
            return
        again_of, record.meta.again_of = record.meta.again_of, None
        timeout = self.kit.settings.lobby_timeout
        record.deadline = self.kit.clock() + timedelta(seconds=timeout) if timeout else None
        await self.store.save(record)
        await self.lobbies.refresh(record)
        if again_of is not None:  # an ordinary lobby now: "Ready" would only point to it
            await self._close(again_of)

    async def _tell_left_out(self, record: GameRecord, player_ids: list[str]) -> None:
        """Those the minute did not wait for any longer hear in private that the next game
        began without them (else their last word would be the result's "Ready")."""
        title = render.esc(record.meta.title or "")
        text = render.Rendered(self.kit.t(record.language, "again-left-out", chat=title))
        for pid in player_ids:
            with contextlib.suppress(Blocked, SendError):  # (a courtesy: not retried)
                await self.out.send(int(pid), text, patient=False)

    async def began(self, record: GameRecord) -> None:
        """A game began: the result of the game it follows (Play again) loses its button."""
        if record.meta.again_of is not None:
            await self._close(record.meta.again_of)

    async def opened(self, record: GameRecord) -> None:
        """/newgame opened a lobby: the result of the game before it loses its button (a
        tap on it would be answered that a game is being set up)."""
        assert record.id is not None
        try:
            async with self.kit.db.transaction(readonly=True) as tx:
                before = await tx.games.previous(chat_id=record.chat_id, game_id=record.id)
        except NotFound:
            return
        except StorageError as exc:
            logger.info("the result before game %s keeps its button: %s", record.id, exc)
            return
        if before.status == "finished":
            await self.screens.close_result(before)

    async def _close(self, game_id: int) -> None:
        try:
            old = await self.store.game(game_id)
        except StorageError as exc:  # the button stays; a tap on it is answered all the same
            logger.info("the result of game %s keeps its button: %s", game_id, exc)
            return
        await self.screens.close_result(old)


def _startable(record: GameRecord) -> bool:
    """Two seats or more, one a person, no more than the rules seat."""
    seats = record.lobby.seats
    return 2 <= len(seats) <= record.rules.max_players and any(not s.is_computer for s in seats)
