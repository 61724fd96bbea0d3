"""`python -m storage recompute-ratings [--database-url URL] [--chat CHAT_ID]`

Recomputes every rating from the stored finished games (after a rating model change,
say). Ratings are also kept up to date as games finish; both give the same numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from storage.database import Database
from storage.url import DEFAULT_DATABASE_URL


async def recompute(url: str, chat_id: int | None) -> int:
    async with Database.connect(url) as db, db.transaction() as tx:
        return await tx.results.recompute_ratings(chat_id=chat_id)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m storage", description=__doc__)
    parser.add_argument("command", choices=["recompute-ratings"])
    parser.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
    )
    parser.add_argument("--chat", type=int, default=None, help="only this chat's ratings")
    args = parser.parse_args()
    games = asyncio.run(recompute(args.database_url, args.chat))
    print(f"recomputed ratings from {games} finished games")


if __name__ == "__main__":
    main()
