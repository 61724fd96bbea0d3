"""The sandbox: the bot against a local Bot API, played in a browser (docs/sandbox.md).

`bot.sandbox.telegram` is the local Bot API (Telegram's methods, limits and checks, kept in
memory; the tests' fake Telegram too); `bot.sandbox.server` serves it and the page on
loopback and runs the bot against it.
"""
