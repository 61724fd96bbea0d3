"""The fake Telegram takes an inline button's `style` (Bot API 9.4) as Telegram does: one of
primary, success and danger, or none; any other value is refused with a 400."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import KeyboardButtonStyle
from telegram.error import BadRequest

from tests.fakes.telegram import Button, FakeTelegram


@pytest.fixture
def fake() -> FakeTelegram:
    return FakeTelegram()


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = Bot("123:TEST", request=fake.request(), get_updates_request=fake.updates_request())
    async with bot:
        yield bot


def styled(style: str | None) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton("Take", callback_data="t", style=style)]])


async def test_the_three_styles_telegram_accepts_are_kept(fake: FakeTelegram, bot: Bot) -> None:
    group = fake.group(-1001, "Club")
    for style in KeyboardButtonStyle:  # primary, success, danger (and their colour aliases)
        await bot.send_message(group.id, "hand", reply_markup=styled(style))
        assert fake.last_message(group.id).buttons == [[Button("Take", "t", None, str(style))]]
    await bot.send_message(group.id, "hand", reply_markup=styled(None))
    assert fake.last_message(group.id).buttons == [[Button("Take", "t", None, None)]]


@pytest.mark.parametrize("style", ["blue", "red", "secondary", "PRIMARY", ""])
async def test_any_other_style_is_refused_and_nothing_is_sent(
    fake: FakeTelegram, bot: Bot, style: str
) -> None:
    group = fake.group(-1001, "Club")
    with pytest.raises(BadRequest, match="button"):
        await bot.send_message(group.id, "hand", reply_markup=styled(style))
    assert fake.messages(group.id) == []
    sent = await bot.send_message(group.id, "hand")
    with pytest.raises(BadRequest, match="button"):  # an edit is checked the same way
        await bot.edit_message_text(
            "hand 2", chat_id=group.id, message_id=sent.message_id, reply_markup=styled(style)
        )
    assert fake.last_message(group.id).text == "hand"
