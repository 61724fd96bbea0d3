"""Start the sandbox: `make sandbox`, `python -m bot.sandbox`, and `python -m bot` (`make
run`) without a `BOT_TOKEN`. Ctrl-C (or SIGTERM) stops the bot as it stops in production,
then the page."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from pathlib import Path
from typing import NoReturn

from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.ops import logs
from bot.sandbox.server import TOKEN, Sandbox, SandboxUnavailable, sandbox_settings

logger = logging.getLogger("bot")

DATABASE = Path("data/sandbox.sqlite3")


class _Token(BaseSettings):
    """Only whether a token is given, where `Settings` would read it (environment, .env),
    and `WEB_PORT`, the page's port then."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")
    bot_token: str = ""
    web_port: str = ""


def token_given() -> bool:
    """Whether `BOT_TOKEN` is set (in the environment or .env): the real bot, in Telegram;
    else `make run` (`python -m bot --sandbox-without-token`) starts the sandbox."""
    return bool(_Token().bot_token.strip())


def main_without_token() -> None:
    """`make run` without a token: the sandbox, on `WEB_PORT` (8080 if unset)."""
    port = _Token().web_port.strip() or "8080"
    if not port.isdigit() or int(port) > 65535:
        _fail("setting WEB_PORT must be a port number (0 to 65535)")
    main(["--port", port], why="BOT_TOKEN is not set: starting the local sandbox instead")


def _fail(message: str) -> NoReturn:
    """One line on stderr and exit code 2, as `python -m bot` says what to fix."""
    print(f"durak-bot: {message}", file=sys.stderr)
    raise SystemExit(2)


async def run(host: str, port: int, database: Path) -> None:
    sandbox = Sandbox(database=database)
    await sandbox.start(host, port)
    logger.info(
        "local sandbox on http://%s:%d (no Telegram: set BOT_TOKEN to run your bot there)",
        host,
        sandbox.port,
    )
    assert sandbox.bot is not None
    try:
        await sandbox.bot.finished.wait()  # a stop signal (the bot's), or a failed start
    finally:
        await sandbox.close()
    if sandbox.bot.error is not None:
        raise sandbox.bot.error


def main(argv: list[str] | None = None, *, why: str | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bot.sandbox", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address of the page (loopback)")
    parser.add_argument("--port", type=int, default=8080, help="port of the page (0: any)")
    parser.add_argument(
        "--database", type=Path, default=DATABASE, help="the sandbox's SQLite file (made anew)"
    )
    args = parser.parse_args(argv)
    handler = logging.StreamHandler()
    handler.setFormatter(logs.formatter("text", TOKEN))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    logs.keep_payloads_out(logging.INFO)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:  # the environment's settings (TURN_TIMEOUT...) apply: checked first
        sandbox_settings("http://127.0.0.1/bot", args.database)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = "_".join(str(part) for part in error["loc"]).upper()
        _fail(f"setting {name} {error['msg'].removeprefix('Value error, ')}")
    if why:
        logger.info("%s", why)
    try:
        with contextlib.suppress(KeyboardInterrupt):  # where the loop takes no signals
            asyncio.run(run(args.host, args.port, args.database))
    except SandboxUnavailable as exc:
        _fail(str(exc))
