"""An in-memory fake of the Telegram Bot API, spoken to through PTB's real HTTP stack.

The fake is an ``httpx.MockTransport``; python-telegram-bot talks to it exactly as it
talks to https://api.telegram.org (same URLs, same form encoding, same error handling)::

    fake = FakeTelegram()
    app = fake.make_application()          # or, by hand:
    app = (
        Application.builder()
        .token(fake.token)                 # "123:TEST"
        .request(fake.request())
        .get_updates_request(fake.updates_request())
        .build()
    )
    alice = fake.user(1, "Alice")
    group = fake.group(-1001, "Durak club", admins={alice})
    async with app:                        # initialize() calls getMe on the fake
        await fake.deliver(app, alice.send(group, "/newgame"))
        lobby = fake.last_message(group.id)
        await fake.deliver(app, alice.tap(lobby, "Join"))
        assert fake.answer_for(...)        # the toast of that tap

No network is used: any request to a host other than api.telegram.org raises
``httpx.ConnectError``.

The modules, from the wire inwards (each builds on the next):

- `transport`: `FakeTelegram` itself, the HTTP side: the httpx transport and its handler
  (reading form, multipart and JSON bodies as the Bot API does, answering in its JSON),
  error injection (``fail_next``, ``timeout_next``, ``clear_faults``, ``chaos``), the
  ``latency`` hook, and the request objects and ``Application`` wired to the fake
  (``request``,
  ``make_application``, ``deliver``).
- `methods`: the Bot API methods the fake answers (``sendMessage``, ``editMessageText``,
  ``answerCallbackQuery``, ``getChatMember``, ``setMyCommands``, ``getMe``, ``getUpdates``,
  ``setWebhook``, ``deleteWebhook``, ``getWebhookInfo``), each refusing what Telegram
  refuses. Telegram's posting to a webhook is `tests.fakes.webhook`.
- `state`: what the fake keeps (chats and members, messages as `FakeMessage` with their
  `Button`s, `CallbackAnswer`s, command menus, pending updates, the `Webhook`, the log of
  each `Call`) and what tests read of it (``messages``, ``last_message``, ``answer_for``,
  ``calls_for``..., ``watch``: a callback on each change of a message).
- `scenarios`: simulated people, `FakeUser` and `FakeGroup` (commands, taps, blocking the
  bot, joining, leaving, kicks, migration), which make the updates Telegram would send.
"""

from bot.sandbox.telegram.limits import Limits, Window
from bot.sandbox.telegram.scenarios import FakeGroup, FakeUser
from bot.sandbox.telegram.state import (
    BOT_USERNAME,
    TOKEN,
    Button,
    Call,
    CallbackAnswer,
    FakeMessage,
    Webhook,
)
from bot.sandbox.telegram.transport import FakeTelegram

__all__ = [
    "BOT_USERNAME",
    "TOKEN",
    "Button",
    "Call",
    "CallbackAnswer",
    "FakeGroup",
    "FakeMessage",
    "FakeTelegram",
    "FakeUser",
    "Limits",
    "Webhook",
    "Window",
]
