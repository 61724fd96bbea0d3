"""The fake Bot API keeps Telegram's rule for Mini App buttons: a `web_app` button opens an
https URL, and only in a private chat (a group gets the app's direct link, a `url` button)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo
from telegram.error import BadRequest

from tests.fakes.telegram import FakeTelegram


def web_app(url: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton("Table", web_app=WebAppInfo(url))]])


@pytest.fixture
def fake() -> FakeTelegram:
    return FakeTelegram()


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = Bot("123:TEST", request=fake.request(), get_updates_request=fake.updates_request())
    async with bot:
        yield bot


async def test_a_web_app_button_goes_to_a_private_chat_only(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.user(1, "Alice")
    alice.start_private()  # (the bot may write to her)
    group = fake.group(-1001, "Club", admins={alice})
    await bot.send_message(alice.id, "hand", reply_markup=web_app("https://bot.example/app/"))
    markup = fake.last_message(alice.id).reply_markup or {}
    assert markup["inline_keyboard"][0][0]["web_app"] == {"url": "https://bot.example/app/"}
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_TYPE_INVALID"):
        await bot.send_message(group.id, "table", reply_markup=web_app("https://bot.example/"))
    sent = await bot.send_message(group.id, "table")
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_TYPE_INVALID"):
        await bot.edit_message_text(
            "table",
            chat_id=group.id,
            message_id=sent.message_id,
            reply_markup=web_app("https://x.org/"),
        )


async def test_a_web_app_must_be_https(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.user(1, "Alice")
    alice.start_private()  # (the bot may write to her)
    with pytest.raises(BadRequest, match=r"(?i)only https links are allowed"):
        await bot.send_message(alice.id, "hand", reply_markup=web_app("http://bot.example/app/"))
