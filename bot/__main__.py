"""`python -m bot` (or `durak-bot`): start the bot with long polling, or as a webhook
server where `WEBHOOK_URL` is set (`bot.telegram.webhook`). With `--sandbox-without-token`
(what `make run` passes) and no `BOT_TOKEN`, the local sandbox instead (`bot.sandbox`,
docs/sandbox.md); without that flag (the Docker image, a service manager) a missing token
is a setting to fix, as below.

Start-up checks the settings, then the database, then Telegram (`getMe`), and stops at the
first that fails with one line on stderr naming what failed and what to check, and an exit
code (the traceback only at `LOG_LEVEL=DEBUG`):

- 0: stopped by SIGTERM or SIGINT (pending table edits sent, the database closed), also
  when the signal came before the start had begun (`stop_before_the_loop`);
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

    from storage import Lease

EXIT_FIX = 2  # settings or database: fix them before starting again
EXIT_UNREACHABLE = 3  # the Bot API or the database server did not answer: try again later

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
                    reason += (
                        ": put it in .env (cp .env.example .env) or the environment"
                        " (to try the bot without Telegram: make run, or python -m bot.sandbox)"
                    )
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


def stop_before_the_loop() -> None:
    """Until `serve` takes the signals (the imports and the settings: a second or so), a
    SIGTERM ends the process at once with exit code 0, as one during the start does, rather
    than by the signal's default action (killed: 143 in Docker, a failed stop to a chaos
    run's supervisor). Nothing is open then that a stop would have to close."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)


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

    In this order: the web server (with `WEB_PORT`: `/healthz` answers while the rest
    starts; in webhook mode it takes Telegram's posts into the inbox from here on), the
    database, Telegram (`getMe`), then this worker's lead (`bot.leader`: the leader sets up
    Telegram, resumes the games and takes updates, by long polling or from the inbox; a
    standby waits for the lead). Stops once, on the first signal: a stop runs to its end (the
    posts under way answered, the updates under way finished, pending table edits
    published, the lead handed over, the database closed) whatever else arrives meanwhile
    (`make run` under a service manager gets every signal twice); a signal during the start
    unwinds it where it is.
    """
    from bot.app import NAME_KEY, WATCH_KEY, open_database, start_services, stop_services
    from bot.leader import (
        ALLOWED_UPDATES,
        DATABASE_KEY,
        LEADERSHIP_KEY,
        POLLING_ERRORS_KEY,
        UPDATES_KEY,
        inbox_reader,
        leadership,
    )
    from bot.ops.health import Health
    from bot.telegram.polling import polling_errors
    from bot.telegram.webhook import Webhook
    from bot.web import WebServer
    from engine import COMPILED
    from storage import parse_database_url

    settings: Settings = application.bot_data["settings"]

    started: Lease | None = None  # this worker's lease once started: still told while it stops

    def lease() -> Lease | None:
        lead = leadership(application)
        return lead.lease if lead is not None else started

    health = Health(
        database=lambda: application.bot_data.get(DATABASE_KEY),
        lease=lease,
        watch=None if settings.webhook else application.bot_data[WATCH_KEY],
    )
    posts = {}
    webhook = None
    if settings.webhook_url is not None:
        assert settings.webhook_secret is not None  # the settings require it

        webhook = Webhook(
            application,
            url=settings.webhook_url,
            secret=settings.webhook_secret.get_secret_value(),
            database=lambda: application.bot_data.get(DATABASE_KEY),
            reader=lambda: inbox_reader(application),
            allowed_updates=ALLOWED_UPDATES,
            max_connections=settings.webhook_max_connections,
        )
        application.bot_data[UPDATES_KEY] = webhook
        posts[settings.webhook_path] = webhook.post
    else:
        application.bot_data[UPDATES_KEY] = "polling"
        application.bot_data[POLLING_ERRORS_KEY] = polling_errors(
            application, application.bot_data[WATCH_KEY]
        )
    port = settings.web_port
    extend = None
    if settings.webapp_url is not None:  # the Mini App (bot.miniapp): WEB_PORT is set then
        from bot.miniapp.routes import MiniApp

        extend = MiniApp(application).install
    web = (
        WebServer(health, settings.web_host, port, posts=posts, extend=extend)
        if port is not None
        else None
    )
    task = asyncio.current_task()
    stopping = asyncio.Event()
    starting = True

    def stop(sig: signal.Signals) -> None:
        if stopping.is_set():
            logger.info("%s: already stopping", sig.name)
            return
        stopping.set()
        health.stopping()
        if webhook is not None:
            webhook.stopping()
        logger.info("%s: stopping", sig.name)
        if starting and task is not None:
            task.cancel()

    _stop_on_signals(asyncio.get_running_loop(), stop)
    try:
        if web is not None:  # first: /healthz answers while the database is checked
            await web.start()
            logger.info(
                "web server on http://%s:%s (%s%s/healthz, /readyz, /metrics)",
                settings.web_host,
                web.port,
                f"{settings.webhook_path} for Telegram, " if posts else "",
                "/app/ for the Mini App, " if extend is not None else "",
            )
        await open_database(application)
        if webhook is not None:
            webhook.opened()
        async with application:  # initialize (getMe) ... shutdown (closes the HTTP client)
            try:
                await application.start()
                await start_services(application)
                starting = False
                lead = application.bot_data[LEADERSHIP_KEY]
                started = lead.lease
                logger.info(
                    "@%s is up: %s, database %s, engine: %s; worker %s, %s",
                    application.bot.username,
                    f"webhook {settings.webhook_path}" if posts else "long polling",
                    parse_database_url(settings.database_url),  # as str(): no password
                    "compiled (mypyc)" if COMPILED else "pure Python",
                    application.bot_data[NAME_KEY],
                    "leading" if lead.leading else "standing by",
                )
                health.up()
                await stopping.wait()
            finally:
                if web is not None and posts:  # the posts under way answered, then no more
                    await web.drain()  # (long polling: /healthz, /readyz answer to the end)
                await stop_services(application)  # while the HTTP client is open
                if application.running:
                    await application.stop()
    except asyncio.CancelledError:
        if not stopping.is_set():
            raise
    except Exception as exc:
        if not stopping.is_set():
            raise
        logger.info("stopped while starting: %s", exc)  # (a stop was asked for: no failure)
    finally:
        if stopping.is_set() and task is not None:
            while task.cancelling():  # the signal's: the start is unwound, the stop is done
                task.uncancel()
        if web is not None and posts:  # (no post may reach a database being closed)
            await web.drain()
        await stop_services(application)  # a database opened for a start that failed
        if web is not None:
            await web.close()


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


SANDBOX_FLAG = "--sandbox-without-token"
"""`make run`'s: no bot of one's own yet, so the local sandbox. Not the default: a service
(the Docker image) started without its token must stop and say so, not serve a sandbox
on a loopback address nobody reaches."""


def main(argv: list[str] | None = None) -> None:
    stop_before_the_loop()
    from bot.sandbox.run import main_without_token, token_given

    args = sys.argv[1:] if argv is None else argv
    if SANDBOX_FLAG in args and not token_given():  # (docs/sandbox.md)
        main_without_token()
        return
    settings = load_settings()
    secret = settings.bot_token.get_secret_value()
    handler = logging.StreamHandler()
    handler.setFormatter(logs.formatter(settings.log_format, secret))
    global _json_lines
    _json_lines = settings.log_format == "json"
    if settings.log_level != "DEBUG":
        handler.addFilter(_OneLine())
    logging.basicConfig(level=settings.log_level, handlers=[handler])
    logs.keep_payloads_out(logging.getLogger().level)  # no hand in the log, even at DEBUG
    # asyncpg's pool warns with a traceback each second it cannot reconnect to a PostgreSQL
    # that is down; the bot says so itself, once per outage (webhook, leadership, store).
    logging.getLogger("asyncpg.pool").setLevel(logging.ERROR)

    from telegram.error import InvalidToken, NetworkError

    from bot.app import build_application  # after logging is set up
    from bot.telegram.webhook import WebhookUnavailable
    from bot.web import WebUnavailable
    from storage import DatabaseUnreachable, DatabaseUnusable

    application = build_application(settings)
    try:
        asyncio.run(serve(application))
    except KeyboardInterrupt:  # Ctrl-C where the loop takes no signal handlers
        pass
    except (DatabaseUnusable, WebUnavailable, WebhookUnavailable) as exc:
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
