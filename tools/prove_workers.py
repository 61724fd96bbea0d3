"""Prove that several workers on one PostgreSQL lose no move when they die (issue #20).

    python -m tools.prove_workers [--workers 3] [--games 6] [--kills 10] [--seed 1]
                                  [--database postgresql://...]

Starts a PostgreSQL of its own (Debian's `postgresql` package; or give `--database`, an
empty database), the workers as `python -m bot` processes in webhook mode, and a fake
Telegram on loopback that posts the updates to them round-robin; plays the games with
simulated people while it SIGKILLs workers at random moments and then restarts each with
SIGTERM; prints what it checked (`tests/workers.py`) and exits 1 if anything did not hold.
Run it from the repository, with the development extras installed (`make test` does).
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
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", help="an empty PostgreSQL database (default: its own)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="durak-proof-") as folder:
        workdir = Path(folder)
        server = None
        url = args.database
        if url is None:
            missing = postgres.missing()
            if missing:
                sys.exit(f"prove_workers: {missing}")
            server = postgres.PostgresServer.start()
            url = server.url("postgres")
        try:
            proof = asyncio.run(
                prove(
                    url,
                    workdir,
                    workers=args.workers,
                    games=args.games,
                    players=args.players,
                    kills=args.kills,
                    seed=args.seed,
                    progress=print,
                )
            )
        finally:
            if server is not None:
                server.stop()
        print(proof.report())
        if proof.problems:
            kept = Path.cwd() / "workers-proof.log"
            kept.write_text((workdir / "workers.log").read_text())
            print(f"the workers' logs: {kept}")
            sys.exit(1)


if __name__ == "__main__":
    main()
