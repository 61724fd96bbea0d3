"""The bot's own inline keyboards encode exactly as python-telegram-bot's would."""

from __future__ import annotations

import json

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.keyboard import Button, Keyboard


def test_keyboard_json_is_what_telegram_gets_from_ptb() -> None:
    ours = Keyboard(
        [
            [Button("6♠", callback_data="m1.4.a6S"), Button("Take", callback_data="m1.4.t")],
            [Button("Open the bot", url="https://t.me/durak_bot?start=j1")],
        ]
    )
    ptb = InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton("6♠", callback_data="m1.4.a6S"),
                InlineKeyboardButton("Take", callback_data="m1.4.t"),
            ],
            [InlineKeyboardButton("Open the bot", url="https://t.me/durak_bot?start=j1")],
        ]
    )
    assert json.loads(ours.json) == ptb.to_dict()
    assert "6♠" in ours.json  # readable UTF-8, not \\u escapes (smaller requests)


def test_a_button_is_either_a_callback_or_a_link() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Button("both", callback_data="x", url="https://t.me/x")
    with pytest.raises(ValueError, match="exactly one"):
        Button("neither")


def test_keyboards_compare_by_their_buttons() -> None:
    rows = [[Button("a", callback_data="1")]]
    assert Keyboard(rows) == Keyboard(rows)
    assert Keyboard(rows) != Keyboard([[Button("a", callback_data="2")]])
