"""Test doubles: a fake Telegram Bot API for python-telegram-bot (the `telegram` package)."""

from tests.fakes.html import HtmlParseError, parse_html
from tests.fakes.telegram import (
    BOT_USERNAME,
    TOKEN,
    Button,
    Call,
    CallbackAnswer,
    FakeGroup,
    FakeMessage,
    FakeTelegram,
    FakeUser,
)

__all__ = [
    "BOT_USERNAME",
    "TOKEN",
    "Button",
    "Call",
    "CallbackAnswer",
    "FakeGroup",
    "FakeMessage",
    "FakeTelegram",
    "FakeUser",
    "HtmlParseError",
    "parse_html",
]
