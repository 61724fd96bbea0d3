"""Test doubles: a fake Telegram Bot API for python-telegram-bot (`tests.fakes.telegram`, the
sandbox's `bot.sandbox.telegram`),
the HTML Telegram accepts (`tests.fakes.html`), the fake served on a loopback socket
(`tests.fakes.loopback`), and Telegram posting its updates to a webhook
(`tests.fakes.webhook`)."""
