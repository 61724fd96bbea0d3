"""A game's start and end: one log line each, and the counters of `bot.ops.metrics`.

The lines name the game's id, its players (how many, how many of them computers), its
rules preset (or "custom"), whether it is a practice game, and at the end its result
(durak, draw, or cancelled: ended without a result) and length. Never who holds which card,
and not who the durak is (the results table has that). In `LOG_FORMAT=json` the same
facts are fields of their own (``event``, ``players``, ``computers``, ``preset``, ``mode``,
``result``, ``bouts``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from bot.ops import metrics
from storage import GameRecord

logger = logging.getLogger("bot.games")


def _facts(record: GameRecord) -> dict[str, object]:
    seats = record.lobby.seats
    return {
        "players": len(seats),
        "computers": sum(1 for s in seats if s.is_computer),
        "preset": record.rules.preset_name() or "custom",
        "mode": "practice" if record.meta.practice else "group",
    }


def started(record: GameRecord) -> None:
    """The game of `record` was dealt and stored."""
    facts = _facts(record)
    metrics.GAMES_STARTED.labels(facts["mode"]).inc()
    logger.info(
        "game %s started: %s players (%s computers), rules %s, %s",
        record.id,
        facts["players"],
        facts["computers"],
        facts["preset"],
        facts["mode"],
        extra={"event": "game_started", **facts},
    )


def ended(record: GameRecord) -> None:
    """The game of `record` ended and that was stored: finished (with a result) or
    cancelled."""
    game = record.game
    outcome = game.outcome if game is not None else None
    if record.status == "finished" and outcome is not None:
        result = "draw" if outcome.draw else "durak"
        bouts: int | None = outcome.bouts
    else:
        result, bouts = "cancelled", None
    facts = _facts(record)
    metrics.GAMES_FINISHED.labels(facts["mode"], result).inc()
    logger.info(
        "game %s ended: %s, %s players (%s computers), rules %s, %s",
        record.id,
        result if bouts is None else f"{result} after {bouts} bouts",
        facts["players"],
        facts["computers"],
        facts["preset"],
        facts["mode"],
        extra={"event": "game_ended", "result": result, "bouts": bouts, **facts},
    )


def census(records: Iterable[GameRecord]) -> tuple[int, int]:
    """(games running, lobbies open) among the live `records`."""
    running = lobbies = 0
    for record in records:
        if record.status == "running":
            running += 1
        elif record.status == "lobby":
            lobbies += 1
    return running, lobbies
