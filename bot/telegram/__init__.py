"""The only code that reaches into python-telegram-bot's or httpx's internals.

Checked against python-telegram-bot 22.5 and httpx 0.28 (`tests/bot/test_request.py` holds
the request path to PTB's own, so that a new release cannot make them drift apart). What
is used, and where:

- `telegram.request._requestparameter.RequestParameter` (`request.call`): one parameter of
  a `RequestData`, built directly instead of through `Bot._post`.
- `HTTPXRequest._client` and its `_transport_for_url`, `_merge_url`, `_timeout`, `headers`
  (`request.JsonRequest`): the client's transport, reached past `AsyncClient.send`.
- `HTTPXRequest.parse_json_payload` overridden (`request.UpdatesRequest`, documented by PTB
  for reading answers): taps read without the message's text and keyboard.
- `ExtBot.rate_limiter` and `BaseRateLimiter.process_request` (`request.call`): calls made
  past `Bot._post` still go through the bot's rate limiter.
- `Bot._bot_user` (`bot_username`): whether `Bot.initialize` already fetched the bot's own
  user, so that start-up does not ask Telegram twice.
- The waits of PTB's polling loop after an error (`telegram.ext._utils.networkloop`: 1 s,
  then 1.5 times as long each time, at most 30 s; none after a timeout), which
  `polling.PollingWatch` repeats in its log lines, and which errors that loop hands to
  `Updater.start_polling`'s `error_callback` (every `TelegramError` but a timeout or a 429).

`handlers` maps updates to the rooms of `bot.play` with PTB's public API only; `polling`
says in the log what long polling's connection to the Bot API does.
"""

from __future__ import annotations

from telegram import Bot


async def bot_username(bot: Bot) -> str:
    """The bot's @username (without the @), as `getMe` tells it: from `Bot.initialize`'s
    call where it was made, else by asking."""
    if bot._bot_user is not None:
        return bot.username or ""
    return (await bot.get_me()).username or ""
