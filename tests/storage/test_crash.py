"""Crash safety: SIGKILL a writer mid-stream; everything it reported committed survives."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from storage import Database

ROOT = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("crash_writer.py")


def _run_and_kill(url: str, seed: int, lines: int) -> list[tuple[int, int, bool]]:
    """Start the writer, read ``lines`` commit reports, SIGKILL it; return the reports."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), url, str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    reports: list[tuple[int, int, bool]] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            game_id, move, over = line.split()
            reports.append((int(game_id), int(move), over == "1"))
            if len(reports) >= lines:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, stderr
    assert len(reports) == lines, f"the writer stopped early:\n{stderr}"
    return reports


@pytest.mark.parametrize("executor", ["aiosqlite", "inline"])
async def test_sigkill_loses_no_committed_action(tmp_path: Path, executor: str) -> None:
    url = f"sqlite:///{tmp_path / 'crash.sqlite3'}?executor={executor}"
    rng = random.Random(executor)
    reported: dict[int, int] = {}
    finished: set[int] = set()
    for round_ in range(3):
        reports = _run_and_kill(url, seed=round_, lines=rng.randint(80, 250))
        for game_id, move, over in reports:
            reported[game_id] = max(reported.get(game_id, 0), move)
            if over:
                finished.add(game_id)
        async with Database.connect(url) as db:
            assert await db.integrity_check() == ["ok"]
            async with db.transaction(readonly=True) as tx:
                for game_id, move in reported.items():
                    record = await tx.games.get(game_id=game_id)
                    assert record.game is not None
                    assert record.game.move_number >= move, (game_id, move)
                for game_id in finished:
                    assert (await tx.games.get(game_id=game_id)).status == "finished"
                    result = await tx.results.for_game(game_id=game_id)
                    assert result.game_id == game_id
                    assert (
                        await tx.results.player_record(player_id=result.participants[0].player_id)
                    ).games >= 1
                assert await tx.results.count() >= len(finished)
                assert len(await tx.games.all_active()) <= 1
    assert finished, "no game finished: make the runs longer"
