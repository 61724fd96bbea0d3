"""One place builds the application (python-telegram-bot v22).

`build_application` wires settings, the HTTP request objects, handlers and the
start-up/shut-down hooks. `open_database` checks the database file and opens it (`python -m
bot` does so before it contacts Telegram). `start_services` (the `post_init` hook, called by
`bot.__main__.serve` and by tests) opens the database if that was not done and starts this
worker's `bot.leader.Leadership`: on SQLite the worker leads at once, and the games are
resumed before it returns; on PostgreSQL it leads if no other worker does, and stands by
otherwise. `stop_services` (the `post_stop` hook, before the HTTP client closes) hands the
lead over (pending table edits published first) and closes the database.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from datetime import datetime

from telegram.ext import Application, ApplicationBuilder
from telegram.request import BaseRequest

from bot.config import Settings
from bot.delivery.sender import LoopTiming, Timing
from bot.i18n import Translator
from bot.leader import (
    DATABASE_KEY,
    LEADERSHIP_KEY,
    TIMING_KEY,
    USERNAME_KEY,
    Leadership,
    leadership,
)
from bot.ops import metrics
from bot.telegram import bot_username
from bot.telegram.handlers import register
from bot.telegram.polling import PollingWatch, TrackedUpdates, Unconfirmed
from bot.telegram.request import JsonRequest, UpdatesRequest
from storage import (
    QUICK_CHECK_SECONDS,
    Database,
    check_database,
    parse_database_url,
    utcnow,
    worker_name,
)

logger = logging.getLogger(__name__)

WATCH_KEY = "polling_watch"  # the PollingWatch that long polling's request reports to
LEASE_CLOCK_KEY = "lease_clock"  # the clock by which this worker reckons its lease
NAME_KEY = "worker_name"  # this worker's name among the workers (its database sessions')
CONCURRENT_UPDATES = 256  # updates handled at once (PTB's processor)


def build_application(
    settings: Settings,
    *,
    request: BaseRequest | None = None,
    get_updates_request: BaseRequest | None = None,
    clock: Callable[[], datetime] = utcnow,
    timing: Timing | None = None,
    translator: Translator | None = None,
    seeds: Callable[[], int | None] | None = None,
    lease_clock: Callable[[], float] = time.monotonic,
) -> Application:  # type: ignore[type-arg]
    builder: ApplicationBuilder = (  # type: ignore[type-arg]
        Application.builder()
        .token(settings.bot_token.get_secret_value())
        .base_url(settings.bot_api_base_url)
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
    processor: TrackedUpdates | None = None
    if settings.webhook:  # Telegram posts the updates (bot.telegram.webhook): no Updater
        builder = builder.updater(None)
    else:  # PTB's default for long polling (one connection), reading taps without keyboards
        if get_updates_request is None:  # (a poll confirms only updates handled: a kill
            unconfirmed = Unconfirmed()  # loses none; see `Unconfirmed`)
            get_updates_request = UpdatesRequest(
                connection_pool_size=1, watch=watch, unconfirmed=unconfirmed
            )
            processor = TrackedUpdates(CONCURRENT_UPDATES, unconfirmed)
        builder = builder.get_updates_request(get_updates_request)
    # chats in parallel; bot.store serialises each chat
    builder = builder.concurrent_updates(processor or CONCURRENT_UPDATES)
    # No python-telegram-bot rate limiter: the bot keeps Telegram's limits itself, per chat
    # (bot.delivery.sender), and a 429 pauses that chat alone, not every chat of the bot.
    application = builder.build()
    application.bot_data["settings"] = settings
    application.bot_data["clock"] = clock
    application.bot_data[TIMING_KEY] = timing or LoopTiming()
    application.bot_data["seeds"] = seeds or (lambda: None)
    application.bot_data["translator"] = translator or Translator(default=settings.default_language)
    application.bot_data[WATCH_KEY] = watch
    application.bot_data[LEASE_CLOCK_KEY] = lease_clock  # (tests: one they move)
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
    name = application.bot_data.setdefault(NAME_KEY, worker_name())
    db = await Database.open(settings.database_url, name=name)
    db.observer = metrics.transaction_done
    application.bot_data[DATABASE_KEY] = db
    return db


async def start_services(application: Application) -> None:  # type: ignore[type-arg]
    """Open the database (unless `open_database` did) and start leading or standing by
    (`bot.leader`): on SQLite the games are resumed before this returns."""
    db = await open_database(application)
    application.bot_data[USERNAME_KEY] = await bot_username(application.bot)
    lease = db.lease(application.bot_data[NAME_KEY], clock=application.bot_data[LEASE_CLOCK_KEY])
    lead = Leadership(application, db, lease)
    application.bot_data[LEADERSHIP_KEY] = lead
    await lead.start()
    if not lead.leading:
        logger.info("another worker leads: this one stands by")
    gc.freeze()  # start-up objects live forever: keep them out of full collections


def leading(application: Application) -> bool:  # type: ignore[type-arg]
    """Whether this worker plays now."""
    lead = leadership(application)
    return lead is not None and lead.leading


async def stop_services(application: Application) -> None:  # type: ignore[type-arg]
    """Hand the lead over (a leader sends its pending table edits first), close the
    database. Idempotent."""
    lead: Leadership | None = application.bot_data.pop(LEADERSHIP_KEY, None)
    if lead is not None:
        await lead.stop()
    db: Database | None = application.bot_data.pop(DATABASE_KEY, None)
    if db is not None:
        await db.close()
    if lead is not None:
        logger.info("stopped: pending edits published, the lead handed over, database closed")
