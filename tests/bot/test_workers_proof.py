"""The proof of issue #30 on one machine: three workers on one PostgreSQL behind a webhook
that Telegram (the fake) delivers to round-robin, several games at once; the leader is
SIGKILLed (at random moments, and right after a commit) and replaced, SIGSTOPped for 30 s
and continued, PostgreSQL is stopped and started, then every worker is restarted with
SIGTERM. `tests/workers.py` says what is checked; the failover times are in the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import postgres
from tests.workers import prove

pytestmark = pytest.mark.postgres


async def test_three_workers_lose_nothing_while_their_leader_dies_hangs_and_restarts(
    tmp_path: Path,
) -> None:
    why = postgres.missing()
    if why is not None:
        pytest.skip(why)
    proof = await prove(tmp_path, workers=3, games=3, kills=4, hang=30.0, seed=7)
    print(proof.report())  # (pytest -s: the failover times)
    assert (proof.kills, proof.hangs, proof.outages, proof.restarts) == (4, 1, 1, 3), proof.report()
    assert proof.problems == [], proof.report() + f"\n(worker logs: {tmp_path / 'workers.log'})"
