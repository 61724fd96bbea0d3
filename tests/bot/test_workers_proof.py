"""The proof of issue #20 on one machine: three workers on one PostgreSQL behind a webhook
that Telegram (the fake) delivers to round-robin, several games at once, workers SIGKILLed
in the middle of turns and replaced, then a rolling restart with SIGTERM. Every game
finishes, no acknowledged update is lost, each deadline fires once, no chat goes over its
budget (no 429), and each group has one table message (`tests/workers.py` says how)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import postgres
from tests.workers import prove

pytestmark = pytest.mark.postgres


async def test_three_workers_lose_no_move_while_they_are_killed_and_restarted(
    tmp_path: Path, pg_server: postgres.PostgresServer
) -> None:
    async with postgres.fresh_database(pg_server) as url:
        proof = await prove(url, tmp_path, workers=3, games=3, kills=4, seed=7)
    assert proof.kills == 4 and proof.restarts == 3, proof.report()
    assert proof.problems == [], proof.report() + f"\n(worker logs: {tmp_path / 'workers.log'})"
