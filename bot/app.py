"""One place builds the application (python-telegram-bot v22).

`build_application` wires settings, the HTTP request objects, handlers and the
start-up/shut-down hooks. `post_init` (run by `run_polling`/`run_webhook`, or
by `start_services` in tests) opens the database, registers the command menus,
resumes every stored game and starts the deadline scheduler; `post_stop` (before the
HTTP client closes) stops the scheduler, publishes pending table edits and closes the
database.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from telegram.ext import AIORateLimiter, Application, ApplicationBuilder
from telegram.request import BaseRequest

from bot.config import Settings
from bot.delivery import Outbox, SendError
from bot.i18n import Translator
from bot.kit import Kit
from bot.play import Rooms
from bot.telegram import bot_username
from bot.telegram.handlers import ROOMS_KEY, register
from bot.telegram.request import JsonRequest, UpdatesRequest
from engine import COMPILED
from storage import Database, utcnow

logger = logging.getLogger(__name__)

GROUP_COMMANDS = (
    "newgame",
    "stats",
    "rules",
    "hand",
    "leave",
    "cancel",
    "settings",
    "kick",
    "howto",
    "help",
)
PRIVATE_COMMANDS = (
    "start",
    "practice",
    "howto",
    "stats",
    "hand",
    "rules",
    "leave",
    "cancel",
    "help",
)
SCHEDULER_KEY = "scheduler"


def build_application(
    settings: Settings,
    *,
    request: BaseRequest | None = None,
    get_updates_request: BaseRequest | None = None,
    rate_limiter: bool = True,
    clock: Callable[[], datetime] = utcnow,
    translator: Translator | None = None,
    seeds: Callable[[], int | None] | None = None,
) -> Application:  # type: ignore[type-arg]
    builder: ApplicationBuilder = (  # type: ignore[type-arg]
        Application.builder()
        .token(settings.bot_token.get_secret_value())
        .base_url(settings.bot_api_base_url)
        .concurrent_updates(256)  # chats in parallel; bot.store serialises each chat
        .post_init(start_services)
        # run_polling: stop(), post_stop, shutdown() (closes the HTTP client), post_shutdown.
        # Pending table edits need the client: stop here. post_shutdown only catches a start
        # that failed half-way (no post_stop then); a second call does nothing.
        .post_stop(stop_services)
        .post_shutdown(stop_services)
    )
    # PTB's default for the bot's calls (a pool of 256 connections), on the shorter path.
    builder = builder.request(request or JsonRequest(connection_pool_size=256))
    # PTB's default for long polling (one connection), reading taps without their keyboards.
    builder = builder.get_updates_request(
        get_updates_request or UpdatesRequest(connection_pool_size=1)
    )
    if rate_limiter:
        # Throttles to Telegram's limits. No retries: while the limiter waits out one 429 it
        # holds back every call of every chat; the bot retries per chat instead.
        builder = builder.rate_limiter(AIORateLimiter(max_retries=0))
    application = builder.build()
    application.bot_data["settings"] = settings
    application.bot_data["clock"] = clock
    application.bot_data["seeds"] = seeds or (lambda: None)
    application.bot_data["translator"] = translator or Translator(default=settings.default_language)
    register(application)
    return application


async def start_services(application: Application) -> None:  # type: ignore[type-arg]
    """Open the database, register commands, resume games, start the deadline scheduler."""
    settings: Settings = application.bot_data["settings"]
    tr: Translator = application.bot_data["translator"]
    db = await Database.open(settings.database_url)
    out = Outbox(application.bot)
    kit = Kit(
        db=db,
        out=out,
        tr=tr,
        settings=settings,
        bot_username=await bot_username(application.bot),
        clock=application.bot_data["clock"],
        seeds=application.bot_data["seeds"],
    )
    rooms = Rooms(kit)
    application.bot_data[ROOMS_KEY] = rooms
    await register_commands(out, tr)
    resumed = await rooms.start()
    logger.info(
        "resumed %d games; engine: %s", resumed, "compiled (mypyc)" if COMPILED else "pure Python"
    )
    application.bot_data[SCHEDULER_KEY] = asyncio.create_task(rooms.deadlines.run_scheduler())
    gc.freeze()  # start-up objects live forever: keep them out of full collections


async def stop_services(application: Application) -> None:  # type: ignore[type-arg]
    """Stop the scheduler and computer players, publish pending table edits, close the
    database. Idempotent."""
    task: asyncio.Task[Any] | None = application.bot_data.pop(SCHEDULER_KEY, None)
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    rooms: Rooms | None = application.bot_data.pop(ROOMS_KEY, None)
    if rooms is not None:
        await rooms.close()  # publishes pending table edits
        await rooms.kit.db.close()
        logger.info("stopped: pending edits published, database closed")


async def register_commands(out: Outbox, tr: Translator) -> None:
    """Command menus per scope (groups, private chats) and per language."""
    try:
        for lang in (None, *tr.languages):
            for scope, names in (
                ("all_group_chats", GROUP_COMMANDS),
                ("all_private_chats", PRIVATE_COMMANDS),
            ):
                commands = [(n, tr.t(lang or tr.default, f"cmd-{n}")) for n in names]
                await out.set_commands(commands, scope=scope, language=lang)
    except SendError as exc:
        logger.warning("could not register the command menus: %s", exc)
