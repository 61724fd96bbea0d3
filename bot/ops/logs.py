"""The log's two forms, and the ids a log line carries.

`LOG_FORMAT=text` (the default) is for people: ``time LEVEL logger: message``.
`LOG_FORMAT=json` is for machines: one JSON object per line, with ``time`` (UTC, ISO 8601),
``level``, ``logger``, ``message``, the ``chat_id``, ``game_id`` and ``update_id`` the line
was logged for where they are known, and ``exception`` (the traceback) when there is one.

The ids come from context variables: the update's handling sets the update's id and chat
(`bot.telegram.handlers`), a chat's unit of work its chat and game (`bot.store`). Each
update, deadline and computer move runs in an asyncio task of its own, so a line logged for
one never carries another's ids. Both forms replace the bot's token with ``<token>``
wherever it would show (httpx logs request URLs, which contain it; python-telegram-bot's
InvalidToken names it).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Final, Literal

import orjson

CHAT_ID: Final[ContextVar[int | None]] = ContextVar("chat_id", default=None)
GAME_ID: Final[ContextVar[int | None]] = ContextVar("game_id", default=None)
UPDATE_ID: Final[ContextVar[int | None]] = ContextVar("update_id", default=None)

TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
FIELDS: Final = ("event", "players", "computers", "preset", "mode", "result", "bouts")
"""Facts a log call may pass as ``extra=`` that a JSON line carries as fields of their own
(`bot.ops.games`)."""


@contextlib.contextmanager
def ids(
    *, chat_id: int | None = None, game_id: int | None = None, update_id: int | None = None
) -> Iterator[None]:
    """Log lines within carry the ids given (None: as before), and as before after it."""
    tokens = [
        (var, var.set(value))
        for var, value in ((CHAT_ID, chat_id), (GAME_ID, game_id), (UPDATE_ID, update_id))
        if value is not None
    ]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


class Redacting(logging.Formatter):
    """The readable form, without the token."""

    def __init__(self, secret: str, fmt: str = TEXT_FORMAT) -> None:
        super().__init__(fmt)
        self.secret = secret

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text.replace(self.secret, "<token>") if self.secret else text


class JsonLines(logging.Formatter):
    """One JSON object per line (see the module), without the token."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def _clean(self, text: str) -> str:
        return text.replace(self.secret, "<token>") if self.secret else text

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": self._clean(record.getMessage()),
        }
        for key, var in (("chat_id", CHAT_ID), ("game_id", GAME_ID), ("update_id", UPDATE_ID)):
            value = var.get()
            if value is not None:
                line[key] = value
        for key in FIELDS:
            if key in record.__dict__:
                line[key] = record.__dict__[key]
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = self._clean(record.exc_text)
        if record.stack_info:
            line["stack"] = self._clean(self.formatStack(record.stack_info))
        return orjson.dumps(line).decode()


PAYLOAD_LOGGERS: Final = ("aiosqlite", "asyncpg", "httpcore", "telegram")
"""Libraries whose DEBUG lines carry what they handle: aiosqlite each statement with its
parameters (a saved game holds every hand), httpcore each request, python-telegram-bot
each call with its parameters (a hand's keyboard) and each update. They log from INFO."""


def keep_payloads_out(level: int) -> None:
    """However low `LOG_LEVEL` is (`level`), no library writes a hand to the log: those of
    `PAYLOAD_LOGGERS` log from INFO, httpx (whose INFO line is every call's URL) from
    WARNING."""
    for name in PAYLOAD_LOGGERS:
        logging.getLogger(name).setLevel(max(level, logging.INFO))
    logging.getLogger("httpx").setLevel(max(level, logging.WARNING))


def formatter(form: Literal["text", "json"], secret: str) -> logging.Formatter:
    """The formatter of `LOG_FORMAT` `form`, keeping `secret` out."""
    return JsonLines(secret) if form == "json" else Redacting(secret)
