"""The production path: long polling (getUpdates) with the post_init/post_shutdown hooks,
against the fake Bot API."""

from __future__ import annotations

import asyncio
from pathlib import Path

from telegram import Update
from telegram.ext import ContextTypes, TypeHandler

from bot.app import build_application, start_services, stop_services
from bot.telegram.handlers import ROOMS_KEY
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
            rate_limiter=False,
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
