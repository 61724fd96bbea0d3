"""Prove that several workers on one PostgreSQL lose nothing when their leader dies, hangs
or restarts, and how long each failover takes (issue #30).

    python -m tools.prove_workers [--workers 3] [--games 6] [--kills 10] [--hang 30]
                                  [--outage 3] [--seed 1] [--database postgresql://...]

Starts a PostgreSQL of its own (Debian's `postgresql` package; or give `--database`, an
empty database: then PostgreSQL is not stopped on the way), the workers as `python -m bot`
processes in webhook mode, and a fake Telegram on loopback that posts the updates to them
round-robin; plays the games with simulated people while it SIGKILLs the leader, SIGSTOPs
it for `--hang` seconds, stops PostgreSQL for `--outage` seconds and restarts each worker
with SIGTERM; prints what it checked and the failover times (`tests/workers.py`) and exits
1 if anything did not hold. Run it from the repository, with the development extras
installed (`make test` does).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from tests import postgres
from tests.workers import prove


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--hang", type=float, default=30.0)
    parser.add_argument("--outage", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", help="an empty PostgreSQL database (default: its own)")
    args = parser.parse_args()
    if args.database is None and (missing := postgres.missing()):
        sys.exit(f"prove_workers: {missing}")
    with tempfile.TemporaryDirectory(prefix="durak-proof-") as folder:
        workdir = Path(folder)
        proof = asyncio.run(
            prove(
                workdir,
                database_url=args.database,
                workers=args.workers,
                games=args.games,
                players=args.players,
                kills=args.kills,
                hang=args.hang,
                outage=args.outage,
                seed=args.seed,
                progress=print,
            )
        )
        print(proof.report())
        if proof.problems:
            kept = Path.cwd() / "workers-proof.log"
            kept.write_text((workdir / "workers.log").read_text())
            print(f"the workers' logs: {kept}")
            sys.exit(1)


if __name__ == "__main__":
    main()
