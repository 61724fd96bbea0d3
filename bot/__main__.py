"""`python -m bot` (or `durak-bot`): start the bot with long polling, or as a webhook
server where `WEBHOOK_URL` is set (`bot.telegram.webhook`).

Start-up checks the settings, then the database, then Telegram (`getMe`), and stops at the
first that fails with one line on stderr naming what failed and what to check, and an exit
code (the traceback only at `LOG_LEVEL=DEBUG`):

- 0: stopped by SIGTERM or SIGINT (pending table edits sent, the database closed);
- 1: an unexpected error (a bug), logged with its traceback;
- 2: something to fix before starting again: a setting (missing, malformed, or a token
  Telegram rejects) or the database (damaged, not a database, read-only, its disk full, a
  newer schema);
- 3: the Bot API could not be reached (the network, `BOT_API_BASE_URL`), or the database
  server (PostgreSQL: not running, a wrong host or port): starting again later may work.

The token is never logged.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import ValidationError

from bot.config import TELEGRAM_API, Settings
from bot.ops import logs

if TYPE_CHECKING:
    from telegram.ext import Application

EXIT_FIX = 2  # settings or database: fix them before starting again
EXIT_UNREACHABLE = 3  # the Bot API or the database server did not answer: try again later
ALLOWED_UPDATES = ("message", "callback_query", "my_chat_member")

logger = logging.getLogger("bot")


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


class _OneLine(logging.Filter):
    """python-telegram-bot logs a few network errors with their traceback: the last poll of
    a stop without network, a start-up step that failed (which `main` reports itself). Below
    `LOG_LEVEL=DEBUG` they are one line each."""

    def filter(self, record: logging.LogRecord) -> bool:
        from telegram.error import NetworkError

        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, NetworkError) and record.name.startswith("telegram"):
            record.msg = f"{record.getMessage()}: {error}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def _stop_on_signals(
    loop: asyncio.AbstractEventLoop, stop: Callable[[signal.Signals], None]
) -> bool:
    """Call ``stop`` on SIGINT, SIGTERM or SIGABRT. False where the loop takes no signal
    handlers (Windows): there Ctrl-C stops the bot as a KeyboardInterrupt."""
    try:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGABRT):
            loop.add_signal_handler(sig, stop, sig)
    except NotImplementedError:
        return False
    return True


async def serve(application: Application) -> None:  # type: ignore[type-arg]
    """Start, take updates until a stop signal, stop. Raises what stopped the start.

    In the order of `Application.run_polling` (or, with `WEBHOOK_URL`, of python-telegram-
    bot's custom-server way: no `Updater`, the webhook server hands each update to the
    application), with the database opened before Telegram is asked anything, and the
    polling loop's errors passed to `polling_errors`. Stops once, on the first signal: a stop
    runs to its end (the webhook's posts under way answered, pending table edits published,
    the database closed) whatever else arrives meanwhile (`make run` under a service manager
    gets every signal twice); a signal during the start unwinds it where it is.
    """
    from bot.app import (
        DATABASE_KEY,
        ON_LEAD_KEY,
        WATCH_KEY,
        leading,
        open_database,
        start_services,
        stop_services,
    )
    from bot.ops.health import Health, HealthServer
    from bot.telegram.polling import polling_errors
    from bot.telegram.webhook import Webhook, WebhookServer
    from engine import COMPILED
    from storage import parse_database_url

    settings: Settings = application.bot_data["settings"]
    health = Health(
        database=lambda: application.bot_data.get(DATABASE_KEY),
        watch=None if settings.webhook else application.bot_data[WATCH_KEY],
    )
    port = settings.health_port
    server = HealthServer(health, settings.health_host, port) if port is not None else None
    hook: WebhookServer | None = None
    if settings.webhook_url is not None:
        assert settings.webhook_secret is not None  # the settings require it
        hook = WebhookServer(
            Webhook(
                application,
                url=settings.webhook_url,
                secret=settings.webhook_secret.get_secret_value(),
                database=lambda: application.bot_data.get(DATABASE_KEY),
                allowed_updates=ALLOWED_UPDATES,
                max_connections=settings.webhook_max_connections,
            ),
            settings.webhook_path,
            settings.webhook_listen,
            settings.webhook_port,
        )
    updater = application.updater
    assert (updater is None) == (hook is not None)  # the builder makes one for polling only
    task = asyncio.current_task()
    stopping = asyncio.Event()
    starting = True

    def stop(sig: signal.Signals) -> None:
        if stopping.is_set():
            logger.info("%s: already stopping", sig.name)
            return
        stopping.set()
        health.stopping()
        logger.info("%s: stopping", sig.name)
        if starting and task is not None:
            task.cancel()

    _stop_on_signals(asyncio.get_running_loop(), stop)
    try:
        if server is not None:  # first: /healthz answers while the database is checked
            await server.start()
            logger.info(
                "health server on http://%s:%s (/healthz, /readyz, /metrics)",
                settings.health_host,
                server.port,
            )
        await open_database(application)
        async with application:  # initialize (getMe) ... shutdown (closes the HTTP client)
            try:
                await start_services(application)
                if hook is not None:
                    await hook.start()  # listening before Telegram is told where to post
                    # By the leader only (Telegram takes one setWebhook a second), and by
                    # whichever worker takes the lead later (`bot.app.lead`).
                    application.bot_data[ON_LEAD_KEY] = [hook.webhook.register]
                    if leading(application):
                        await hook.webhook.register()
                    mode = (
                        f"webhook {settings.webhook_path} on {settings.webhook_listen}:{hook.port}"
                    )
                else:
                    assert updater is not None
                    await updater.start_polling(
                        allowed_updates=ALLOWED_UPDATES,
                        error_callback=polling_errors(application, application.bot_data[WATCH_KEY]),
                    )
                    mode = "long polling"
                await application.start()
                starting = False
                logger.info(
                    "@%s is up: %s, database %s, engine: %s",
                    application.bot.username,
                    mode,
                    parse_database_url(settings.database_url),  # as str(): no password
                    "compiled (mypyc)" if COMPILED else "pure Python",
                )
                health.up()
                await stopping.wait()
            finally:
                if hook is not None:  # the posts under way are answered, then no more
                    await hook.drain()
                    await hook.close()
                if updater is not None and updater.running:
                    await updater.stop()
                if application.running:
                    await application.stop()
                await stop_services(application)  # while the HTTP client is open
    except asyncio.CancelledError:
        if not stopping.is_set():
            raise
        if task is not None:
            task.uncancel()  # the signal's: the start is unwound, the stop is done
    finally:
        if hook is not None:
            await hook.close()
        await stop_services(application)  # a database opened for a start that failed
        if server is not None:  # last: /readyz says "stopping" until the end
            await server.close()


def _fail(message: str, code: int, secret: str) -> None:
    """One line on stderr and the exit code; the traceback only at LOG_LEVEL=DEBUG. With
    LOG_FORMAT=json the line is a log line too (CRITICAL), so that every line is JSON."""
    logger.debug("start-up failed", exc_info=True)
    line = f"durak-bot: {message}"
    if _json_lines:
        logger.critical("%s", line)
    else:
        print(line.replace(secret, "<token>"), file=sys.stderr)
    raise SystemExit(code) from None


_json_lines = False  # LOG_FORMAT=json: set by `main` once the settings are read


def main() -> None:
    settings = load_settings()
    secret = settings.bot_token.get_secret_value()
    handler = logging.StreamHandler()
    handler.setFormatter(logs.formatter(settings.log_format, secret))
    global _json_lines
    _json_lines = settings.log_format == "json"
    if settings.log_level != "DEBUG":
        handler.addFilter(_OneLine())
    logging.basicConfig(level=settings.log_level, handlers=[handler])
    logging.getLogger("httpx").setLevel(logging.WARNING)

    from telegram.error import InvalidToken, NetworkError

    from bot.app import build_application  # after logging is set up
    from bot.ops.health import HealthUnavailable
    from bot.telegram.webhook import WebhookUnavailable
    from storage import DatabaseUnreachable, DatabaseUnusable

    application = build_application(settings)
    try:
        asyncio.run(serve(application))
    except KeyboardInterrupt:  # Ctrl-C where the loop takes no signal handlers
        pass
    except (DatabaseUnusable, HealthUnavailable, WebhookUnavailable) as exc:
        _fail(str(exc), EXIT_FIX, secret)
    except DatabaseUnreachable as exc:
        _fail(str(exc), EXIT_UNREACHABLE, secret)
    except InvalidToken:
        message = "setting BOT_TOKEN was rejected by Telegram"
        if settings.bot_api_base_url != TELEGRAM_API:  # Telegram's 404 for a bad token, too
            message += f" (or BOT_API_BASE_URL, at {settings.bot_api_host}, is no Bot API)"
        _fail(message, EXIT_FIX, secret)
    except NetworkError as exc:
        _fail(
            f"cannot reach the Bot API at {settings.bot_api_host} ({exc.message}): check the "
            f"network, BOT_API_BASE_URL and BOT_TOKEN",
            EXIT_UNREACHABLE,
            secret,
        )
    except Exception:
        # Logged through the redacting formatter: an uncaught traceback could name the token.
        logging.getLogger("bot").critical("the bot stopped on an error", exc_info=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
