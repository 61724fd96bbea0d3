"""The "done when" run of issue #34, small: one `python -m bot` on SQLite, polling the fake
Bot API on loopback with Telegram's limits enforced, 3 games at once through 100 injected
Telegram faults and 4 SIGKILLs (at random, right after a tap's answer, inside a sendMessage,
right after a game's last move). `tests/chaos.py` says what is checked; the full run is
`python -m tests.chaos --faults 1000 --kills 20`. Run once by `make test`, on the sources'
engine (marker `chaos`): it is about processes, kills and Telegram's faults, not the
engine's build."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos import run


@pytest.mark.chaos
@pytest.mark.parametrize("seed", [3, 7])  # (5 and 9 pass too)
async def test_games_end_whole_through_telegram_faults_and_kills(tmp_path: Path, seed: int) -> None:
    result = await run(tmp_path, games=3, players=3, faults=100, rate=0.12, kills=4, seed=seed)
    print(result.report())  # (pytest -s: what the run did)
    assert len(result.kills) == 4, result.report()
    assert result.faults.total() >= 100, result.report()
    assert result.problems == [], result.report() + f"\n(the bot's log: {tmp_path / 'bot.log'})"
