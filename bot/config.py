"""Settings from the environment and `.env` (pydantic-settings).

Every setting is documented in `.env.example`. `BOT_TOKEN` is a secret: it is
held as a `SecretStr`, so it never shows in a repr, a log line or an error.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from storage import parse_database_url

TELEGRAM_API = "https://api.telegram.org/bot"
_APP_NAME = re.compile(r"[A-Za-z0-9_]{3,30}")  # a Mini App's short name (@BotFather /newapp)
_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")  # what Telegram takes as a webhook's secret_token


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True
    )

    bot_token: SecretStr = Field(description="the bot's token from @BotFather (required)")
    database_url: str = "sqlite:///data/durak.sqlite3"
    bot_api_base_url: str = TELEGRAM_API
    default_language: Literal["en", "de", "ru"] = "en"
    turn_timeout: int = Field(default=90, ge=0, description="seconds per turn; 0 = no timeout")
    lobby_timeout: int = Field(default=600, ge=0, description="seconds; 0 = lobbies never expire")
    operator_chat_id: int | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    log_format: Literal["text", "json"] = Field(
        default="text", description="text: for people; json: one JSON object per line"
    )
    table_edit_interval: float = Field(
        default=3.0, ge=0, description="seconds between edits of one group's table message"
    )
    lobby_edit_interval: float = Field(
        default=5.0,
        ge=0,
        description="seconds between edits of a lobby message (Join taps meanwhile are shown "
        "together), so that the group's budget is left for the table",
    )
    computer_delay: float = Field(default=1.5, ge=0, description="seconds a computer 'thinks'")
    turn_alert_after: float = Field(
        default=10.0,
        ge=0,
        description="seconds without a tap after which a player's turn comes as a new, "
        "notifying hand message (0: every turn)",
    )
    # Telegram's limits as the bot keeps them itself (bot.delivery.budget): at most so many
    # messages, edits and deletions in any window of so many seconds.
    private_sends: int = Field(default=3, ge=1, description="calls per private chat and window")
    private_window: float = Field(default=3.0, gt=0, description="seconds, private chats")
    group_sends: int = Field(default=20, ge=1, description="calls per group and window")
    group_window: float = Field(default=60.0, gt=0, description="seconds, groups")
    group_reserve: int = Field(
        default=3, ge=0, description="of a group's window, kept for lobby, start and result"
    )
    bot_sends: int = Field(default=30, ge=1, description="calls per second, the whole bot")
    table_sends: int = Field(
        default=5,
        ge=0,
        description="of BOT_SENDS, calls per second kept for group tables that waited 5 s",
    )
    # Webhook mode (bot.telegram.webhook): set WEBHOOK_URL, and Telegram posts updates to it
    # instead of the bot polling for them.
    webhook_url: str | None = Field(
        default=None, description="the public https URL Telegram posts updates to (none: polling)"
    )
    webhook_secret: SecretStr | None = Field(
        default=None,
        validate_default=True,
        description="Telegram's X-Telegram-Bot-Api-Secret-Token (required with WEBHOOK_URL)",
    )
    webhook_max_connections: int = Field(
        default=40, ge=1, le=100, description="updates Telegram posts at once (1-100)"
    )
    # The Mini App (bot.miniapp, docs/miniapp.md): the table drawn, live, beside the chat.
    webapp_url: str | None = Field(
        default=None,
        description="the public https URL of the web server's /app/ (none: no Mini App)",
    )
    webapp_name: str | None = Field(
        default=None,
        description="the Mini App's short name registered with @BotFather /newapp (the "
        "group's Table button; none: only the private hand's button)",
    )
    # The web server (bot.web): the webhook's posts, the Mini App, /healthz, /readyz, /metrics.
    web_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        validate_default=True,
        description="the web server's port (none: no web server; with WEBHOOK_URL or "
        "WEBAPP_URL: 8080)",
    )
    web_host: str = Field(
        default="127.0.0.1", min_length=1, description="the address the web server binds"
    )
    # Names of earlier releases: refused with what to set instead.
    health_port: str | None = Field(default=None, exclude=True)
    health_host: str | None = Field(default=None, exclude=True)
    webhook_listen: str | None = Field(default=None, exclude=True)
    webhook_port: str | None = Field(default=None, exclude=True)

    @property
    def bot_api_host(self) -> str:
        """The host (and port) of `bot_api_base_url`, for messages: no path, no credentials."""
        parts = urlsplit(self.bot_api_base_url)
        host = parts.hostname or ""
        return f"{host}:{parts.port}" if parts.port else host

    @field_validator("bot_token")
    @classmethod
    def _token_shape(cls, value: SecretStr) -> SecretStr:
        token = value.get_secret_value().strip()
        head, _, tail = token.partition(":")
        if not head.isdigit() or len(tail) < 5:
            raise ValueError("does not look like a bot token (digits:secret)")
        return SecretStr(token)

    @property
    def webhook(self) -> bool:
        """Webhook mode (WEBHOOK_URL set), not long polling."""
        return self.webhook_url is not None

    @property
    def webhook_path(self) -> str:
        """The path of WEBHOOK_URL: where the web server takes Telegram's posts (a reverse
        proxy in front passes the path on as it is)."""
        return urlsplit(self.webhook_url or "").path or "/"

    @field_validator("operator_chat_id", "webhook_url", "webapp_url", "webapp_name", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("web_port", mode="before")
    @classmethod
    def _web_port(cls, value: object, info: ValidationInfo) -> object:
        if value in ("", None):
            needed = info.data.get("webhook_url") or info.data.get("webapp_url")
            return 8080 if needed else None
        return value

    @field_validator("health_port", "health_host", "webhook_listen", "webhook_port")
    @classmethod
    def _renamed(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value in (None, ""):
            return None
        now = "WEB_HOST" if info.field_name in ("health_host", "webhook_listen") else "WEB_PORT"
        raise ValueError(
            f"is now {now}: one web server takes the webhook's posts and answers /healthz, "
            f"/readyz and /metrics"
        )

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        parse_database_url(value)  # a ValueError naming what is wrong (no password shown)
        return value

    @field_validator("webhook_url")
    @classmethod
    def _webhook_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError("must be the https:// URL Telegram posts updates to")
        if parts.query or parts.fragment:
            raise ValueError("must have no query or fragment (the path is the webhook's)")
        return value

    @field_validator("webapp_url")
    @classmethod
    def _webapp_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme != "https" or not parts.hostname:
            raise ValueError("must be the https:// URL of the Mini App (Telegram opens only https)")
        if parts.query or parts.fragment:
            raise ValueError("must have no query or fragment")
        return value

    @field_validator("webapp_name")
    @classmethod
    def _webapp_name(cls, value: str | None) -> str | None:
        if value is not None and not _APP_NAME.fullmatch(value):
            raise ValueError("must be the short name given to @BotFather (3-30 of A-Za-z0-9_)")
        return value

    @field_validator("webhook_secret", mode="before")
    @classmethod
    def _webhook_secret(cls, value: object, info: ValidationInfo) -> object:
        if value == "":
            value = None
        if value is None:
            if info.data.get("webhook_url") is not None:
                raise ValueError(
                    "is required with WEBHOOK_URL: the same random value for every worker "
                    "(e.g. openssl rand -hex 32)"
                )
            return None
        text = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
        if not _SECRET.fullmatch(text):  # never says what it got: it is a secret
            raise ValueError("must be 1 to 256 characters of A-Z, a-z, 0-9, _ and -")
        return SecretStr(text)

    @field_validator("bot_api_base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value
