"""Test-wide settings."""

import os

# python-telegram-bot 22 gives RetryAfter.retry_after as a timedelta with this set (and
# warns without it); the bot sets it too, in bot/__init__.py.
os.environ.setdefault("PTB_TIMEDELTA", "true")
