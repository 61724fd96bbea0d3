"""Telegram layer (python-telegram-bot v22): thin handlers over `bot.service.GameService`."""

import os

# Durations from python-telegram-bot (e.g. RetryAfter.retry_after) as timedelta, the
# behaviour of its next major version; without this it warns on every 429.
os.environ.setdefault("PTB_TIMEDELTA", "true")
