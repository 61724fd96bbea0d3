"""The fake Telegram Bot API the tests use: the sandbox's local Bot API
(`bot.sandbox.telegram`), which is part of the product since `make sandbox` runs the bot
against it. This name stays for the tests (and `bench/`): ``tests.fakes.telegram`` and its
submodules (``.limits``, ``.methods``, ``.scenarios``, ``.state``, ``.transport``) are the
very modules of `bot.sandbox.telegram`, so a test that patches one patches the other.
"""

import sys

from bot.sandbox.telegram import *  # noqa: F403
from bot.sandbox.telegram import __all__ as __all__
from bot.sandbox.telegram import limits, methods, scenarios, state, transport

for _module in (limits, methods, scenarios, state, transport):
    sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}"] = _module
