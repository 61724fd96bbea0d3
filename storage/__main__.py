"""The database's maintenance commands (the database from ``DATABASE_URL``, as the bot's, or
``--database-url``):

    python -m storage backup PATH [--force]
    python -m storage recompute-ratings [--chat CHAT_ID]

``backup`` copies the database to the file PATH while the bot runs (SQLite's online backup
API: every move stored before it began is in the copy), checks the copy and prints one line
with its size and the time it took. It does not replace an existing PATH unless --force.

``recompute-ratings`` recomputes every rating from the stored finished games (after a rating
model change, say). Ratings are also kept up to date as games finish; both give the same
numbers.

Exit codes as the bot's: 0 done, 1 an unexpected error (a bug), 2 fix something first (the
line says what).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from storage.backup import PAGES_PER_STEP, BackupRefused, backup
from storage.database import Database
from storage.errors import DatabaseUnusable
from storage.url import DEFAULT_DATABASE_URL, parse_database_url

EXIT_FIX = 2  # as the bot's: something to fix first


async def recompute(url: str, chat_id: int | None) -> int:
    async with Database.connect(url) as db, db.transaction() as tx:
        return await tx.results.recompute_ratings(chat_id=chat_id)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL),
        help="the database (default: DATABASE_URL, as the bot's)",
    )
    parser = argparse.ArgumentParser(
        prog="python -m storage",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    save = commands.add_parser("backup", parents=[common], help="an online backup to a file")
    save.add_argument("path", help="the backup file to write")
    save.add_argument("--force", action="store_true", help="replace PATH if it exists")
    save.add_argument("--pages", type=int, default=PAGES_PER_STEP, help=argparse.SUPPRESS)
    rate = commands.add_parser(
        "recompute-ratings", parents=[common], help="recompute ratings from stored games"
    )
    rate.add_argument("--chat", type=int, default=None, help="only this chat's ratings")
    return parser


def _fail(message: str) -> None:
    print(f"python -m storage: {message}", file=sys.stderr)
    raise SystemExit(EXIT_FIX)


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        url = parse_database_url(args.database_url)
    except ValueError as error:
        _fail(str(error))
    try:
        if args.command == "backup":
            print(backup(url, args.path, force=args.force, pages=args.pages))
        else:
            games = asyncio.run(recompute(args.database_url, args.chat))
            print(f"recomputed ratings from {games} finished games")
    except (BackupRefused, DatabaseUnusable) as error:
        _fail(str(error))


if __name__ == "__main__":
    main()
