"""One place builds the application (python-telegram-bot v22).

`build_application` wires settings, the HTTP request objects, handlers and the
start-up/shut-down hooks. `open_database` checks the database file and opens it (`python -m
bot` does so before it contacts Telegram). `start_services` (the `post_init` hook, called by
`bot.__main__.serve` and by tests) opens the database if that was not done, registers the
command menus, resumes every stored game and starts the deadline scheduler (and points the
metrics of `bot.ops.metrics` at the database and the games). On a shared database (several
workers on one PostgreSQL) only the leader (`lead`) registers the menus and resumes the games;
a follower takes the lead when the leader is gone (`keep_leading`), and does both then;
`stop_services` (the `post_stop` hook, before the HTTP client closes) stops the scheduler,
publishes pending table edits and closes the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from telegram.ext import Application, ApplicationBuilder
from telegram.request import BaseRequest

from bot.config import Settings
from bot.delivery import Outbox, SendError
from bot.delivery.budget import Budgets, Limits, Window
from bot.delivery.ledger import Ledger
from bot.delivery.sender import LoopTiming, Timing
from bot.i18n import Translator
from bot.kit import Kit
from bot.ops import games, metrics
from bot.play import Rooms
from bot.telegram import bot_username
from bot.telegram.handlers import ROOMS_KEY, register
from bot.telegram.polling import PollingWatch
from bot.telegram.request import JsonRequest, UpdatesRequest
from storage import (
    QUICK_CHECK_SECONDS,
    Database,
    StorageError,
    check_database,
    parse_database_url,
    utcnow,
)

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
DATABASE_KEY = "database"  # the open database, from open_database until stop_services
WATCH_KEY = "polling_watch"  # the PollingWatch that long polling's request reports to
TIMING_KEY = "timing"  # the sender's clock (tests: a virtual one)
LEADER_KEY = "leader"  # shared database: the task that keeps or takes the lead
LEADING_KEY = "leading"  # whether this worker leads now (`lead`)
ON_LEAD_KEY = "on_lead"  # more start-up work of the leader's (the webhook's registration)
LEAD_SECONDS = 5.0  # shared database: how often a follower tries to take the lead


def limits(settings: Settings) -> Limits:
    """Telegram's limits as the settings give them (see `bot.delivery.budget`)."""
    return Limits(
        private=Window(settings.private_sends, settings.private_window),
        group=Window(settings.group_sends, settings.group_window),
        bot=Window(settings.bot_sends, 1.0),
        reserve=min(settings.group_reserve, settings.group_sends - 1),
    )


def build_application(
    settings: Settings,
    *,
    request: BaseRequest | None = None,
    get_updates_request: BaseRequest | None = None,
    clock: Callable[[], datetime] = utcnow,
    timing: Timing | None = None,
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
    watch = PollingWatch(settings.bot_api_host)
    if settings.webhook:  # Telegram posts the updates (bot.telegram.webhook): no Updater
        builder = builder.updater(None)
    else:  # PTB's default for long polling (one connection), reading taps without keyboards
        builder = builder.get_updates_request(
            get_updates_request or UpdatesRequest(connection_pool_size=1, watch=watch)
        )
    # No python-telegram-bot rate limiter: the bot keeps Telegram's limits itself, per chat
    # (bot.delivery.sender), and a 429 pauses that chat alone, not every chat of the bot.
    application = builder.build()
    application.bot_data["settings"] = settings
    application.bot_data["clock"] = clock
    application.bot_data[TIMING_KEY] = timing or LoopTiming()
    application.bot_data["seeds"] = seeds or (lambda: None)
    application.bot_data["translator"] = translator or Translator(default=settings.default_language)
    application.bot_data[WATCH_KEY] = watch
    register(application)
    return application


async def open_database(application: Application) -> Database:  # type: ignore[type-arg]
    """Check the database file (`check_database`: a damaged one is refused before anything
    writes to it), then open and migrate it; kept for `start_services`. Raises
    `storage.DatabaseUnusable` for a file the bot cannot use."""
    settings: Settings = application.bot_data["settings"]
    db: Database | None = application.bot_data.get(DATABASE_KEY)
    if db is not None:
        return db
    if not await check_database(settings.database_url, time_limit=QUICK_CHECK_SECONDS):
        logger.warning(
            "database %s: the quick check stopped after %.0f s (a large file); starting without it",
            parse_database_url(settings.database_url),  # as str(): never a password
            QUICK_CHECK_SECONDS,
        )
    db = await Database.open(settings.database_url)
    db.observer = metrics.transaction_done
    application.bot_data[DATABASE_KEY] = db
    return db


async def start_services(application: Application) -> None:  # type: ignore[type-arg]
    """Open the database (unless `open_database` did), register commands, resume games,
    start the deadline scheduler."""
    tr: Translator = application.bot_data["translator"]
    settings: Settings = application.bot_data["settings"]
    db = await open_database(application)
    out = Outbox(application.bot, Budgets(limits(settings)), application.bot_data[TIMING_KEY])
    if db.url.scheme == "postgresql":  # other workers may send into the same chats
        out.ledger = Ledger(db, limits(settings))
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
    metrics.watch_games(lambda: games.census(rooms.store.live_records()))
    if not await lead(application):
        logger.info("another worker leads: it set the command menus and showed the games")
    application.bot_data[SCHEDULER_KEY] = asyncio.create_task(rooms.deadlines.run_scheduler())
    if db.shared:  # a follower takes over when the leader is gone
        application.bot_data[LEADER_KEY] = asyncio.create_task(keep_leading(application))
    gc.freeze()  # start-up objects live forever: keep them out of full collections


async def lead(application: Application) -> bool:  # type: ignore[type-arg]
    """Whether this worker leads the workers on its database (SQLite: it is the only one;
    PostgreSQL: it holds the leader's lock, `Database.try_lead`). A worker that has just
    become the leader registers the command menus and shows every stored game again (what
    a leader that died had still to send was lost with it); the others do neither: one
    worker's start-up is not every worker's, and Telegram hears the menus once."""
    rooms: Rooms = application.bot_data[ROOMS_KEY]
    was = application.bot_data.get(LEADING_KEY, False)
    try:
        leading = await rooms.kit.db.try_lead()
    except StorageError as exc:
        logger.info("could not tell whether this worker leads: %s", exc)
        leading = False
    application.bot_data[LEADING_KEY] = leading
    if leading and not was:
        if rooms.kit.db.shared:
            logger.info("this worker leads: it sets the command menus and shows the games")
        await register_commands(rooms.kit.out, application.bot_data["translator"])
        resumed = await rooms.start()
        logger.info("resumed %d games", resumed)
        for work in application.bot_data.get(ON_LEAD_KEY, ()):
            await work()
    return leading


def leading(application: Application) -> bool:  # type: ignore[type-arg]
    """Whether this worker leads now (as `lead` last found; SQLite: always)."""
    return bool(application.bot_data.get(LEADING_KEY, False))


async def keep_leading(application: Application) -> None:  # type: ignore[type-arg]
    """Shared database: every `LEAD_SECONDS`, the leader checks it still holds its lock and
    a follower tries to take it (the leader stopped or died). Runs until cancelled."""
    while True:
        await asyncio.sleep(LEAD_SECONDS)
        try:
            await lead(application)
        except Exception:
            logger.exception("taking the lead failed; tried again later")


async def stop_services(application: Application) -> None:  # type: ignore[type-arg]
    """Stop the scheduler and computer players, publish pending table edits, close the
    database. Idempotent."""
    for key in (LEADER_KEY, SCHEDULER_KEY):
        task: asyncio.Task[Any] | None = application.bot_data.pop(key, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    application.bot_data.pop(LEADING_KEY, None)
    rooms: Rooms | None = application.bot_data.pop(ROOMS_KEY, None)
    db: Database | None = application.bot_data.pop(DATABASE_KEY, None)
    if rooms is not None:
        await rooms.close()  # publishes pending table edits
        await rooms.kit.db.close()
        logger.info("stopped: pending edits published, database closed")
    if db is not None:  # opened for a start that failed later, or the same as rooms'
        await db.close()


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
