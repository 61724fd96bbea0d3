"""What an operator watches: metrics (`metrics`), the health checks (`health`, served by the
web server, `bot.web`; `probe`, the image's HEALTHCHECK) and the log's form and context
(`logs`). See docs/operating.md.

These modules sit at the bottom of `bot/`: the rest of the bot calls them, they call nothing
of the bot's but what they are handed (`health.Health` gets the application's state as
callables), so that any room may count or log without an import cycle.
"""
