"""Computer players: they move through the same path as people (apply, store, show).

With `COMPUTER_DELAY` 0 they move at once, one after another; otherwise each move comes
after the delay (within a throw-in window, at most `WINDOW_SHARE` of it), in a task per
chat, and a restart (or a new leader) plans it again (`drive` from resume).
A stronger player searches in a worker thread; if it fails, it plays easy that move.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import zlib
from dataclasses import dataclass, field

from bot import render
from bot.handling import OUTAGES
from bot.kit import computers
from bot.ops import metrics
from bot.play.room import Room
from engine.ai import make_player
from storage import GameRecord, Seat

logger = logging.getLogger(__name__)

# How long a computer thinks while the database cannot store (its move would fail, and each
# failure loads and shows the game again): the game is tried again this often, not more.
DELAY_WHILE_DOWN = 30.0
# Within a throw-in window a computer thinks at most this share of the window.
WINDOW_SHARE = 0.3


def computer_to_move(record: GameRecord) -> str | None:
    """The first computer seat (clockwise) the game waits for, if any."""
    game = record.game
    if record.status != "running" or game is None or game.is_over:
        return None
    seats = computers(record)
    return next((p for p in game.players if p in seats and p in game.to_act), None)


@dataclass(eq=False, repr=False)
class Computers(Room):
    _thinking: dict[int, asyncio.Task[None]] = field(default_factory=dict, init=False)
    """chat id -> a computer's move"""

    def planned(self) -> frozenset[int]:
        """The chats in which a computer's move is planned."""
        return frozenset(self._thinking)

    async def after_move(self, record: GameRecord, *, actor: str | None = None) -> None:
        """Show the new state (`actor`: who moved), then let computer players the game
        waits for move."""
        await self.screens.show_state(record, actor=actor)
        await self.drive(record)

    async def drive(self, record: GameRecord) -> None:
        """Let the computers the game waits for move (the caller holds the chat's lock)."""
        if computer_to_move(record) is None:
            return
        if self.kit.settings.computer_delay > 0:
            self._schedule(record.chat_id)
            return
        while (pid := computer_to_move(record)) is not None:
            await self._move(record, pid)

    def _schedule(self, chat_id: int) -> None:
        if chat_id not in self._thinking:
            self._thinking[chat_id] = asyncio.create_task(self._think(chat_id))

    async def _think(self, chat_id: int) -> None:
        try:
            delay = self.kit.settings.computer_delay
            live = self.store.live(chat_id)
            if live is not None and self.kit.in_window(live):
                # A throw-in window: it decides within the first part of it, so that the
                # people at the table still see its card (or its Done) in time.
                delay = min(delay, self.kit.throw_in_window(live) * WINDOW_SHARE)
            await asyncio.sleep(max(delay, DELAY_WHILE_DOWN) if self.store.watch.down else delay)
            async with self.store.for_chat(chat_id) as unit:
                record = unit.record
                pid = computer_to_move(record) if record is not None else None
                if record is not None and pid is not None:
                    await self._move(record, pid)
        except asyncio.CancelledError:
            raise
        except OUTAGES as exc:  # (an outage: warned once; or this worker no longer leads)
            logger.info("a computer player's move in chat %s was not stored: %s", chat_id, exc)
        except Exception:
            logger.exception("a computer player's move in chat %s failed", chat_id)
        finally:
            self._thinking.pop(chat_id, None)
        record = self.store.live(chat_id)
        if record is not None and computer_to_move(record) is not None:
            self._schedule(chat_id)

    async def _move(self, record: GameRecord, pid: str) -> None:
        game = record.game
        assert game is not None
        seat = next(s for s in record.lobby.seats if s.player_id == pid)
        seed = zlib.crc32(f"{game.seed}:{game.move_number}:{pid}".encode())  # stable
        player = make_player(seat.level or "easy", seed)
        try:
            thinking = time.perf_counter()
            action = await asyncio.to_thread(player.choose, game.copy(), pid)
            metrics.computer_decided(seat.level, time.perf_counter() - thinking)
        except Exception:  # a bug in a stronger player must not stop the game: play easy
            logger.exception("the %s computer %s failed; it plays easy this move", seat.level, pid)
            action = make_player("easy", seed).choose(game.copy(), pid)
        events = game.apply(pid, action)
        record.timeouts.pop(pid, None)
        await self.store.commit(record, [(pid, events)])
        await self.screens.show_state(record)

    async def add(self, record: GameRecord, level: str) -> str | None:
        """Seat a computer player in the lobby; a locale key if refused."""
        if len(record.lobby.seats) >= record.rules.max_players:
            return "lobby-full"
        number = 1 + sum(1 for s in record.lobby.seats if s.is_computer)
        player_id = render.computer_id(level, number)
        name = render.computer_name(self.kit.tr, record.language, player_id) or player_id
        record.lobby.seats.append(
            Seat(player_id=player_id, user_id=None, name=name, is_computer=True, level=level)
        )
        await self.store.save(record)
        return None

    def cancel(self, chat_id: int) -> None:
        """Drop the chat's planned move (its game moved to another chat)."""
        thinking = self._thinking.pop(chat_id, None)
        if thinking is not None:
            thinking.cancel()

    async def close(self) -> None:
        """Shutdown: planned moves are dropped (a restart plans them again)."""
        tasks = list(self._thinking.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._thinking.clear()
