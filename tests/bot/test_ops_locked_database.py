"""A database locked by another process (an sqlite3 shell left in a transaction, a tool
holding the write lock): every tap is answered within about 2 s, "could not be saved"
(not after the 8-10 s the audit measured), the operator hears of it once, one warning in
the log for the whole time rather than one per tap, and the game goes on when it is
released."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import AsyncIterator

import pytest

from tests.bot.conftest import TOKEN, BotHarness, ManualClock, make_settings
from tests.bot.test_database_outage import OPERATOR, attacker_tap, game_of_two, operator_texts
from tests.fakes.telegram import FakeTelegram

BOUND = 4.0  # seconds of wall-clock time a tap may take (2 s of lock wait, and the rest)


@pytest.fixture
async def bot(tmp_path) -> AsyncIterator[BotHarness]:  # type: ignore[no-untyped-def]
    db_path = tmp_path / "durak.sqlite3"
    h = BotHarness(
        fake=FakeTelegram(token=TOKEN),
        db_path=db_path,
        clock=ManualClock(),
        settings=make_settings(db_path, operator_chat_id=OPERATOR),
    )
    await h.start()
    try:
        await h.send(h.user(OPERATOR, "Operator").start_private())
        yield h
    finally:
        await h.stop()


async def test_a_locked_database_answers_every_tap_soon_tells_the_operator_once_and_recovers(
    bot: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    h = bot
    group, _, _ = await game_of_two(h, -9101)
    other = sqlite3.connect(h.db_path, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        not_saved = h.rooms.kit.t("en", "error-storage")
        for _ in range(3):
            tap = attacker_tap(h, group)
            started = time.monotonic()
            await h.send(tap)
            took = time.monotonic() - started
            answer = h.fake.answer_for(tap)
            assert answer is not None and answer.text == not_saved
            assert took < BOUND, f"the tap was answered after {took:.1f} s"
            assert h.rooms.store.live(group.id).game.move_number == 0  # type: ignore[union-attr]
        [told] = operator_texts(h)  # once for the whole time
        assert "lock" in told
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1, [r.getMessage() for r in warnings]
    finally:
        other.execute("ROLLBACK")
        other.close()
    tap = attacker_tap(h, group)
    await h.send(tap)
    assert h.rooms.store.live(group.id).game.move_number == 1  # type: ignore[union-attr]
    await h.settle()
    assert len(operator_texts(h)) == 2  # and once that it stores again
