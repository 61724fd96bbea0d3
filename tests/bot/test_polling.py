"""The production path: long polling (getUpdates) with the post_init/post_shutdown hooks,
against the fake Bot API."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from telegram import Update
from telegram.ext import ContextTypes, TypeHandler

from bot.app import build_application, start_services, stop_services
from bot.telegram.handlers import ROOMS_KEY
from bot.telegram.polling import PollingWatch, polling_errors
from bot.telegram.request import UpdatesRequest
from tests.bot.conftest import TOKEN, make_settings
from tests.fakes.telegram import FakeTelegram


async def test_long_polling_handles_updates_and_resumes_after_restart(tmp_path: Path) -> None:
    fake = FakeTelegram(token=TOKEN)
    settings = make_settings(tmp_path / "db.sqlite3")
    alice = fake.user(1, "Alice")
    group = fake.group(-6001, "Club", admins={alice})

    async def run_until_handled(*updates: dict[str, object]) -> None:
        app = build_application(
            settings,
            request=fake.request(),
            get_updates_request=fake.updates_request(),
        )
        handled = asyncio.Event()
        seen: list[int] = []

        async def mark(update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
            seen.append(update.update_id)
            if len(seen) == len(updates):
                handled.set()

        app.add_handler(TypeHandler(Update, mark), group=1)  # runs after the bot's handlers
        async with app:  # initialize / shutdown, as run_polling does
            assert app.post_init is start_services and app.post_shutdown is stop_services
            await app.post_init(app)
            fake.queue(*updates)
            await app.updater.start_polling(timeout=5)  # type: ignore[union-attr]
            await app.start()
            await asyncio.wait_for(handled.wait(), timeout=30)
            await app.updater.stop()  # type: ignore[union-attr]
            await app.stop()
            await app.post_shutdown(app)
            assert ROOMS_KEY not in app.bot_data

    await run_until_handled(alice.start_private(), alice.send(group, "/newgame"))
    lobby = fake.last_message(group.id)
    assert "Alice" in lobby.text and "Join" in lobby.button_texts
    before = lobby.text
    # a second process on the same database: the lobby is still there and still answers
    await run_until_handled(alice.send(group, "/newgame"))
    assert "already" in fake.last_message(group.id).text
    assert lobby.text == before


async def test_failed_polls_are_an_outage_in_the_log_and_other_errors_reach_the_handlers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A poll that times out (retried at once, without a word from python-telegram-bot) and
    one answered 502 are one outage: a warning, a line, and a line when a poll is answered
    again; neither is an update error. A 409 (another process polls with this token) is."""
    fake = FakeTelegram(token=TOKEN)
    alice = fake.user(1, "Alice")
    watch = PollingWatch("api.telegram.org", clock=lambda: 0.0)  # the seconds: not asserted
    app = build_application(
        make_settings(tmp_path / "db.sqlite3"),
        request=fake.request(),
        get_updates_request=UpdatesRequest(watch=watch, httpx_kwargs={"transport": fake.transport}),
    )
    handled = asyncio.Event()
    errors: list[object] = []

    async def mark(update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        handled.set()

    async def error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        errors.append((update, context.error))

    app.add_handler(TypeHandler(Update, mark), group=1)
    app.add_error_handler(error)
    fake.timeout_next("getUpdates")
    fake.fail_next("getUpdates", 502)
    fake.fail_next("getUpdates", 409)
    fake.queue(alice.start_private())
    async with app:
        await start_services(app)
        with caplog.at_level(logging.INFO, logger="bot.telegram.polling"):
            await app.updater.start_polling(  # type: ignore[union-attr]
                timeout=5, error_callback=polling_errors(app, watch)
            )
            await app.start()
            await asyncio.wait_for(handled.wait(), timeout=30)
            await app.updater.stop()  # type: ignore[union-attr]
            await app.stop()
        await stop_services(app)
    said = [
        (r.levelname, r.getMessage()) for r in caplog.records if r.name == "bot.telegram.polling"
    ]
    assert said == [
        (
            "WARNING",
            "lost the connection to the Bot API (api.telegram.org): Timed out; polling again now",
        ),
        (
            "INFO",
            "still no connection to the Bot API (api.telegram.org), 2 failed polls in 0 s: "
            "Bad Gateway; polling again in 1.0 s",
        ),
        (
            "INFO",
            "the connection to the Bot API (api.telegram.org) is back after 0 s and 2 failed polls",
        ),
    ]
    assert [(update, type(e).__name__) for update, e in errors] == [(None, "Conflict")]
