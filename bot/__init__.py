"""Telegram layer (python-telegram-bot v22)."""
