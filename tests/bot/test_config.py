"""Start-up settings: a missing or malformed setting is one clear line and exit code 2 (only
`make run` starts the sandbox without a token: tests/sandbox/test_sandbox_start.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def run_bot(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in Settings.model_fields}
    clean.pop("BOT_TOKEN", None)
    clean.update(env)
    clean["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,  # no .env here
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("env", [{}, {"BOT_TOKEN": ""}])  # unset, or empty as in .env.example
def test_missing_token_stops_with_one_line_that_says_where_it_goes(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """`python -m bot` as a service runs it (the Docker image): no sandbox nobody reaches."""
    result = run_bot(tmp_path, **env)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "durak-bot: setting BOT_TOKEN is required: put it in .env (cp .env.example .env)"
        " or the environment (to try the bot without Telegram: make run, or python -m"
        " bot.sandbox)"
    )
    assert "Traceback" not in result.stderr


def test_a_malformed_setting_reads_without_library_words(tmp_path: Path) -> None:
    result = run_bot(tmp_path, BOT_TOKEN="not-a-token")
    assert result.stderr.strip() == (
        "durak-bot: setting BOT_TOKEN does not look like a bot token (digits:secret)"
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TURN_TIMEOUT", "soon"),
        ("DEFAULT_LANGUAGE", "fr"),
        ("BOT_API_BASE_URL", "ftp://x"),
        ("DATABASE_URL", "mysql://u:SECRET@db/x"),
        ("DATABASE_URL", "sqlite:///x.db?synchronous=bogus"),
        ("WEB_PORT", "70000"),
        ("WEB_PORT", "eighty"),
        ("LOG_FORMAT", "xml"),
    ],
)
def test_malformed_setting_is_named(tmp_path: Path, name: str, value: str) -> None:
    result = run_bot(tmp_path, BOT_TOKEN="123456:SECRET-abcdef", **{name: value})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0]
    assert "SECRET" not in result.stderr


def test_malformed_token_is_refused_without_echoing_it(tmp_path: Path) -> None:
    result = run_bot(tmp_path, BOT_TOKEN="not-a-token-SECRET")
    assert result.returncode == 2
    assert "BOT_TOKEN" in result.stderr
    assert "SECRET" not in result.stderr


def test_settings_never_show_the_token() -> None:
    settings = Settings(_env_file=None, bot_token="123456:SECRET-abcdef")  # type: ignore[call-arg]
    assert "SECRET" not in repr(settings) and "SECRET" not in str(settings.model_dump())
    assert settings.database_url == "sqlite:///data/durak.sqlite3"


def test_the_web_server_is_off_and_on_loopback_by_default() -> None:
    settings = Settings(_env_file=None, bot_token="123456:SECRET-abcdef")  # type: ignore[call-arg]
    assert (settings.web_port, settings.web_host, settings.log_format) == (
        None,
        "127.0.0.1",
        "text",
    )
    empty = Settings(_env_file=None, bot_token="123456:SECRET-abcdef", web_port="")  # type: ignore[call-arg, arg-type]
    assert empty.web_port is None  # as .env.example leaves it


def test_in_webhook_mode_the_web_server_listens_on_8080_by_default() -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        bot_token="123456:SECRET-abcdef",
        webhook_url="https://bot.example/telegram",
        webhook_secret="s3cret",
    )
    assert settings.web_port == 8080


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("HEALTH_PORT", "WEB_PORT"),
        ("HEALTH_HOST", "WEB_HOST"),
        ("WEBHOOK_PORT", "WEB_PORT"),
        ("WEBHOOK_LISTEN", "WEB_HOST"),
    ],
)
def test_a_setting_of_an_earlier_release_says_what_it_is_now(
    tmp_path: Path, old: str, new: str
) -> None:
    """One web server serves the webhook and the health checks: the four settings of the two
    servers before are refused with the one to set instead, not silently ignored."""
    result = run_bot(tmp_path, BOT_TOKEN="123:ABCDEFGH", **{old: "8081"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"durak-bot: setting {old} is now {new}: one web server takes the webhook's posts and "
        "answers /healthz, /readyz and /metrics"
    ]


def test_webhook_url_without_a_secret_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_bot(tmp_path, BOT_TOKEN="123:ABCDEFGH", WEBHOOK_URL="https://bot.example/telegram")
    assert result.returncode == 2
    assert result.stderr.strip().startswith(
        "durak-bot: setting WEBHOOK_SECRET is required with WEBHOOK_URL"
    ), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_malformed_webhook_secret_is_refused_without_showing_it(tmp_path: Path) -> None:
    result = run_bot(
        tmp_path,
        BOT_TOKEN="123:ABCDEFGH",
        WEBHOOK_URL="https://bot.example/telegram",
        WEBHOOK_SECRET="not allowed!SECRETVALUE",
    )
    assert result.returncode == 2
    assert "WEBHOOK_SECRET must be 1 to 256 characters" in result.stderr
    assert "SECRETVALUE" not in result.stderr


def test_without_webhook_url_the_bot_polls_and_needs_no_secret() -> None:
    settings = Settings(_env_file=None, bot_token="123:ABCDEFGH")  # type: ignore[call-arg]
    assert not settings.webhook and settings.webhook_secret is None
    hooked = Settings(
        _env_file=None,  # type: ignore[call-arg]
        bot_token="123:ABCDEFGH",
        webhook_url="https://bot.example/telegram/hook",
        webhook_secret="s3cret-_value",
    )
    assert hooked.webhook and hooked.webhook_path == "/telegram/hook"
    assert "s3cret" not in repr(hooked)
