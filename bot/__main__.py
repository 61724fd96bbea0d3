"""`python -m bot` (or `durak-bot`): start the bot with long polling.

A missing or malformed setting stops start-up with one line naming it and exit
code 2. The token is never logged.
"""

from __future__ import annotations

import logging
import sys

from pydantic import ValidationError

from bot.config import Settings


class _Redact(logging.Filter):
    """Keep the token out of every log line (httpx logs request URLs, which contain it)."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secret:
            message = record.getMessage()
            if self.secret in message:
                record.msg = message.replace(self.secret, "<token>")
                record.args = None
        return True


def load_settings() -> Settings:
    try:
        return Settings()  # type: ignore[call-arg]
    except ValidationError as exc:
        for error in exc.errors():
            name = "_".join(str(part) for part in error["loc"]).upper() or "settings"
            reason = "is required" if error["type"] == "missing" else error["msg"]
            print(f"durak-bot: setting {name} {reason}", file=sys.stderr)
            break
        raise SystemExit(2) from None


def main() -> None:
    settings = load_settings()
    logging.basicConfig(
        level=settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    redact = _Redact(settings.bot_token.get_secret_value())
    for handler in logging.getLogger().handlers:
        handler.addFilter(redact)
    logging.getLogger("httpx").setLevel(logging.WARNING)

    from bot.app import build_application  # after logging is set up

    application = build_application(settings)
    application.run_polling(allowed_updates=["message", "callback_query", "my_chat_member"])


if __name__ == "__main__":
    main()
