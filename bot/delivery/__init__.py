"""Everything the bot sends: the Bot API calls (`Outbox`), the coalescing of edits
(`Coalescer`), and what each game's table and hand messages show (`Screens`).

Features never call the Bot API themselves: they hand a record or a `Rendered` message
here. Telegram's errors arrive as `Blocked` (403), `Refused` (a 400) or another
`SendError` (a 429, a timeout, a network error: `transient`).
"""

from telegram.error import BadRequest as Refused
from telegram.error import TelegramError as SendError

from bot.delivery.coalescer import Coalescer
from bot.delivery.outbox import Blocked, Membership, Outbox, Sent, Tap, transient

__all__ = [
    "Blocked",
    "Coalescer",
    "Membership",
    "Outbox",
    "Refused",
    "SendError",
    "Sent",
    "Tap",
    "transient",
]
