"""The "done when" run of issue #34, small: one `python -m bot` on SQLite, polling the fake
Bot API on loopback with Telegram's limits enforced, 3 games at once through 100 injected
Telegram faults and 4 SIGKILLs (at random, right after a tap's answer, inside a sendMessage,
right after a game's last move). `tests/chaos.py` says what is checked; the full run is
`python -m tests.chaos --faults 1000 --kills 20`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos import run


@pytest.mark.xfail(
    strict=False,
    reason="fails on main eafd654, before the fixes of #34: late taps answered with no text "
    "and not applied (#34 item 2); /start's and /newgame's replies lost to one 500 with an "
    "ERROR and a traceback (item 3); taps never answered when answerCallbackQuery met a fault "
    "or a kill (item 4); results posted twice after a kill or a lost answer, a second lobby "
    "left live with Join, hands left with live buttons (item 5)",
)
async def test_games_end_whole_through_telegram_faults_and_kills(tmp_path: Path) -> None:
    result = await run(tmp_path, games=3, players=3, faults=100, rate=0.12, kills=4, seed=3)
    print(result.report())  # (pytest -s: what the run did)
    assert len(result.kills) == 4, result.report()
    assert result.faults.total() >= 100, result.report()
    assert result.problems == [], result.report() + f"\n(the bot's log: {tmp_path / 'bot.log'})"
