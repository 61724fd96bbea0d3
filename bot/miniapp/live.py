"""Who watches which game in the Mini App, and what each is sent (server-sent events).

The leader's `bot.play.Rooms` holds one `Live`, told of every save of a game by the store
(`GameStore.saved`, called right after the commit): each stream of that game gets the new
state at once (built for its viewer by `bot.miniapp.views.state`), so a change reaches every
open view as soon as it is stored. A stream keeps only the newest state not yet written (a
snapshot: a slow reader skips what it missed, and catches up with the next), and a state
equal to the last one it wrote (a save of message ids only) is not sent again.

Onlookers cost the game nothing: nothing here calls Telegram, and their view is the public
one, built once per language and save whatever their number. Streams are bounded:
`MAX_STREAMS` in all, `MAX_PER_USER` per user. A page names itself (`page`, made once per
page load): its new stream of a game replaces its old one (a reconnect, whose old
connection the server may not have noticed closed yet), while the same user's other pages
(the table open on a phone and a desktop) keep theirs.

`Live` is also what a move from the app was made on (`bot.play.moves.Seen`): the states a
player's streams were sent, by move number, so that a move made on an older state that
still shows what they can decide counts, as a tap on an older hand message does.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any, Final

import orjson

from bot.delivery.screens import Screens
from bot.kit import Kit
from bot.miniapp.views import state
from bot.ops.metrics import MINIAPP_STREAMS
from storage import GameRecord

logger = logging.getLogger(__name__)

MAX_STREAMS: Final = 2000
"""Event streams open at once, in all."""
MAX_PER_USER: Final = 3
"""Event streams one user may hold open at once (of different games)."""
HEARTBEAT: Final = 15.0
"""Seconds between `: ping` lines on a quiet stream (proxies close idle connections)."""
SHOWN_MOVES: Final = 8
"""Moves remembered per player: what their app showed at each."""
_UNSENT: Final = ("now", "version")  # what changes without anything to show


class TooMany(Exception):
    """No more streams for this user, or at all."""


class Stream:
    """One open event stream: a viewer of a game, and the state waiting to be written."""

    __slots__ = (
        "_last",
        "_pending",
        "_wake",
        "closed",
        "game_id",
        "lang",
        "page",
        "user_id",
        "viewer",
    )

    def __init__(
        self, game_id: int, user_id: int, viewer: str | None, lang: str, page: str = ""
    ) -> None:
        self.game_id, self.user_id, self.viewer, self.lang = game_id, user_id, viewer, lang
        self.page = page
        self.closed = False
        self._pending: bytes | None = None
        self._last: dict[str, Any] | None = None
        self._wake = asyncio.Event()

    def offer(self, shown: dict[str, Any]) -> None:
        """A new state: kept to be written (replacing one not written yet), unless it shows
        what the last one did."""
        key = {k: v for k, v in shown.items() if k not in _UNSENT}
        if key == self._last:
            return
        self._last = key
        self._pending = frame(shown)
        self._wake.set()

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    async def next(self, within: float) -> bytes | None:
        """The next frame to write: a state, or None after `within` s without one (a
        ping is due) or once the stream is closed."""
        if self._pending is None and not self.closed:
            try:
                await asyncio.wait_for(self._wake.wait(), within)
            except TimeoutError:
                return None
        self._wake.clear()
        pending, self._pending = self._pending, None
        return None if self.closed else pending


def frame(shown: dict[str, Any]) -> bytes:
    """A state as one server-sent event (orjson writes no newline: one data line)."""
    return b"event: state\nid: %d\ndata: %s\n\n" % (shown["version"], orjson.dumps(shown))


class Live:
    """The leader's streams, by game."""

    def __init__(
        self,
        kit: Kit,
        screens: Screens,
        *,
        max_streams: int = MAX_STREAMS,
        max_per_user: int = MAX_PER_USER,
    ) -> None:
        self.kit = kit
        self.screens = screens
        self.max_streams, self.max_per_user = max_streams, max_per_user
        self.closed = False
        self._streams: dict[int, list[Stream]] = {}
        self._users: Counter[int] = Counter()
        self._count = 0
        # (game id, player) -> {move number: what the player could decide then}
        self._shown: dict[tuple[int, str], dict[int, Any]] = {}

    # ---------------------------------------------------------------- streams

    def open(self, record: GameRecord, user_id: int, lang: str, page: str = "") -> Stream:
        """A stream of the game for the user (seated: their own view; else the public one),
        its current state waiting to be written; it replaces the stream the same `page` had
        of the game. Raises `TooMany`."""
        assert record.id is not None and record.game is not None
        if self.closed:
            raise TooMany("closed")
        for old in self._streams.get(record.id, []):
            if old.user_id == user_id and old.page == page:  # a reconnect: the old one goes
                self.leave(old)
                old.close()
        if self._count >= self.max_streams or self._users[user_id] >= self.max_per_user:
            raise TooMany("streams")
        pid = str(user_id)
        viewer = pid if pid in record.game.players else None
        stream = Stream(record.id, user_id, viewer, lang, page)
        self._streams.setdefault(record.id, []).append(stream)
        self._users[user_id] += 1
        self._count += 1
        MINIAPP_STREAMS.set(self._count)
        stream.offer(self._state(record, viewer, lang))
        return stream

    def leave(self, stream: Stream) -> None:
        """The stream ended (its client left, or it was replaced). Idempotent."""
        streams = self._streams.get(stream.game_id)
        if streams is None or stream not in streams:
            return
        streams.remove(stream)
        if not streams:
            del self._streams[stream.game_id]
        self._count -= 1
        MINIAPP_STREAMS.set(self._count)
        self._users[stream.user_id] -= 1
        if self._users[stream.user_id] <= 0:
            del self._users[stream.user_id]

    def watching(self, game_id: int) -> int:
        """Streams open on the game."""
        return len(self._streams.get(game_id, ()))

    def close(self) -> None:
        """The end of the lead, or of the web server: every stream ends (the page connects
        again, to whoever leads then)."""
        self.closed = True
        for streams in list(self._streams.values()):
            for stream in list(streams):
                self.leave(stream)
                stream.close()
        self._shown.clear()

    # ---------------------------------------------------------------- states

    def saved(self, record: GameRecord) -> None:
        """The store saved the game (`GameStore.saved`): each of its streams gets the new
        state, built once per viewer and language."""
        streams = self._streams.get(record.id or 0)
        if not streams or record.game is None:
            return
        built: dict[tuple[str | None, str], dict[str, Any]] = {}
        for stream in streams:
            key = (stream.viewer, stream.lang)
            shown = built.get(key)
            if shown is None:
                try:
                    shown = built[key] = self._state(record, stream.viewer, stream.lang)
                except Exception:  # a view must never break the game's save
                    logger.exception("the Mini App state of game %s failed", record.id)
                    return
            stream.offer(shown)

    def _state(self, record: GameRecord, viewer: str | None, lang: str) -> dict[str, Any]:
        shown = state(self.kit, record, viewer, lang)
        game = record.game
        if viewer is not None and game is not None and record.status == "running":
            moves = self._shown.setdefault((record.id or 0, viewer), {})
            moves[game.move_number] = self.screens.hand_state(record, viewer)
            while len(moves) > SHOWN_MOVES:
                del moves[min(moves)]
        elif record.status != "running":
            for key in [k for k in self._shown if k[0] == record.id]:
                del self._shown[key]
        return shown

    # ---------------------------------------------------------------- `Seen`

    def still_shows(self, record: GameRecord, pid: str, move: int) -> bool:
        """Whether the state the player's app was sent at `move` still shows what they can
        decide now."""
        shown = self._shown.get((record.id or 0, pid), {})
        return move in shown and shown[move] == self.screens.hand_state(record, pid)

    def sees_current(self, record: GameRecord, pid: str) -> bool:
        """The app is sent each state as it is stored: it shows the game as it is."""
        return True
