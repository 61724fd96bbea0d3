"""`python -m bot` (or `durak-bot`): start the bot with long polling.

A missing or malformed setting stops start-up with one line naming it and exit
code 2. The token is never logged.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from typing import TYPE_CHECKING

from pydantic import ValidationError

from bot.config import Settings

if TYPE_CHECKING:
    from telegram.ext import Application

logger = logging.getLogger("bot")


class _Redacting(logging.Formatter):
    """Keep the token out of every log line: messages (httpx logs request URLs, which contain
    it) and tracebacks (python-telegram-bot's InvalidToken names it)."""

    def __init__(self, fmt: str, secret: str) -> None:
        super().__init__(fmt)
        self.secret = secret

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text.replace(self.secret, "<token>") if self.secret else text


def load_settings() -> Settings:
    try:
        return Settings()  # type: ignore[call-arg]
    except ValidationError as exc:
        for error in exc.errors():
            name = "_".join(str(part) for part in error["loc"]).upper() or "settings"
            missing = error["type"] == "missing" or error.get("input") == ""
            reason = error["msg"].removeprefix("Value error, ")  # no library words
            if missing:
                reason = "is required"
                if name == "BOT_TOKEN":  # where it goes
                    reason += ": put it in .env (cp .env.example .env) or the environment"
            print(f"durak-bot: setting {name} {reason}", file=sys.stderr)
            break
        raise SystemExit(2) from None


def _stop_on_signals(application: Application) -> bool:  # type: ignore[type-arg]
    """Stop on SIGINT, SIGTERM or SIGABRT, once: a stop runs to its end (pending table edits
    published, the database closed) whatever else arrives meanwhile.

    python-telegram-bot's own handlers raise SystemExit on every signal, and a second one
    (`make run` under a service manager: make passes the signal on to the bot, which gets
    it twice) broke off its shutdown half-way, skipping `post_stop`."""
    loop = asyncio.new_event_loop()  # run_polling takes the current loop
    asyncio.set_event_loop(loop)
    stopping = False

    def stop(sig: signal.Signals) -> None:
        nonlocal stopping
        if stopping:
            logger.info("%s: already stopping", sig.name)
            return
        stopping = True
        logger.info("%s: stopping", sig.name)
        if not application.running:  # still starting: PTB's way, which unwinds the start
            raise SystemExit
        application.stop_running()

    try:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGABRT):
            loop.add_signal_handler(sig, stop, sig)
    except NotImplementedError:  # no signal handlers on this loop (Windows): PTB's own
        return False
    return True


def main() -> None:
    settings = load_settings()
    secret = settings.bot_token.get_secret_value()
    handler = logging.StreamHandler()
    handler.setFormatter(_Redacting("%(asctime)s %(levelname)s %(name)s: %(message)s", secret))
    logging.basicConfig(level=settings.log_level, handlers=[handler])
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # It logs every 429 it does not retry as an error with a traceback; the bot retries and
    # logs those itself (bot.outbox).
    logging.getLogger("telegram.ext.AIORateLimiter").setLevel(logging.CRITICAL)

    from telegram.error import InvalidToken

    from bot.app import build_application  # after logging is set up

    application = build_application(settings)
    ours = _stop_on_signals(application)
    try:
        application.run_polling(
            allowed_updates=["message", "callback_query", "my_chat_member"],
            # None: ours, set above; else PTB's (which warns where a loop has none)
            stop_signals=None if ours else (signal.SIGINT, signal.SIGTERM, signal.SIGABRT),
        )
    except InvalidToken:
        print("durak-bot: setting BOT_TOKEN was rejected by Telegram", file=sys.stderr)
        raise SystemExit(2) from None
    except Exception:
        # Logged through the redacting formatter: an uncaught traceback could name the token.
        logging.getLogger("bot").critical("the bot stopped on an error", exc_info=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
