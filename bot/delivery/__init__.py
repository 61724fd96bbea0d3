"""Everything the bot sends: the Bot API calls (`Outbox`), Telegram's limits as the bot
keeps them (`Budgets`), the one mechanism that decides what goes out and when (`Sender`),
and what each game's table and hand messages show (`Screens`).

Features never call the Bot API themselves: they hand a record or a `Rendered` message
here. Telegram's errors arrive as `Blocked` (403), `Refused` (a 400) or another
`SendError` (a 429, a timeout, a network error: `transient`; Telegram's own faults among
them: `telegram_fault`).
"""

from telegram.error import BadRequest as Refused
from telegram.error import TelegramError as SendError

from bot.delivery.budget import Budgets, Limits, Window
from bot.delivery.outbox import (
    Blocked,
    Membership,
    Outbox,
    Sent,
    Stopping,
    Tap,
    telegram_fault,
    transient,
)
from bot.delivery.sender import Delivered, Priority, Sender

__all__ = [
    "Blocked",
    "Budgets",
    "Delivered",
    "Limits",
    "Membership",
    "Outbox",
    "Priority",
    "Refused",
    "SendError",
    "Sender",
    "Sent",
    "Stopping",
    "Tap",
    "Window",
    "telegram_fault",
    "transient",
]
