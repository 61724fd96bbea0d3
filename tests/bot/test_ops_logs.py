"""LOG_LEVEL=DEBUG, which the README suggests for tracebacks, writes no hand to the log:
the libraries that log what they carry (aiosqlite each statement with its parameters, the
saved game with every hand; python-telegram-bot each call with its keyboard of cards) stay
at INFO whatever `LOG_LEVEL` says."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator

import pytest

from bot.ops import logs
from engine import Card
from engine.cards import SUITS
from tests.bot.conftest import BotHarness

CARDS = [str(Card(rank, suit)) for rank in range(2, 15) for suit in SUITS]


@pytest.fixture
def debug_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """The root logger at DEBUG as `python -m bot` sets it up for LOG_LEVEL=DEBUG."""
    names = [*logs.PAYLOAD_LOGGERS, "telegram", "httpx"]
    levels = {name: logging.getLogger(name).level for name in names}
    caplog.set_level(logging.DEBUG)
    logs.keep_payloads_out(logging.DEBUG)
    try:
        yield caplog
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def leaks(record: logging.LogRecord) -> list[str]:
    """What of a hand a log line would show: a card, or a saved game's hands."""
    text = record.getMessage()
    if record.exc_info:
        text += logging.Formatter().formatException(record.exc_info)
    return [card for card in CARDS if card in text] + (['"hands"'] if '"hands"' in text else [])


async def test_a_whole_game_at_debug_logs_no_card_of_any_hand(
    harness: BotHarness, debug_log: pytest.LogCaptureFixture
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-100501, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    rng = random.Random(3)
    for _ in range(3000):
        record = next(iter(h.rooms.store.live_records()), None)
        if record is None or record.status != "running":
            break
        game = record.game
        assert game is not None
        await h.tap_random(h.users[int(sorted(game.to_act)[0])], rng)
    assert "Game over" in h.fake.last_message(group.id).text
    ours = [r for r in debug_log.records if not r.name.startswith("tests")]
    assert logging.getLogger("bot.store").isEnabledFor(logging.DEBUG)  # the bot's own
    leaked = [(r.name, r.getMessage()[:120], found) for r in ours if (found := leaks(r))]
    assert leaked == []
