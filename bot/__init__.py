"""The Telegram layer (python-telegram-bot v22): updates in through `bot.telegram.handlers`,
the features in `bot.play`, everything sent through `bot.delivery` (docs/architecture.md)."""

import os

# Durations from python-telegram-bot (e.g. RetryAfter.retry_after) as timedelta, the
# behaviour of its next major version; without this it warns on every 429.
os.environ.setdefault("PTB_TIMEDELTA", "true")
