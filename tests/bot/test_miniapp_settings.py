"""WEBAPP_URL and WEBAPP_NAME (#32): unset, no button anywhere and nothing changes; set, they
must be what Telegram takes, and the web server runs even with long polling."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.bot.conftest import BotHarness, make_settings


async def test_without_the_settings_no_table_or_hand_shows_a_mini_app_button(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-3000, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    table = await h.table_of(group)
    assert table.button_texts == ["My cards"]
    for user in (alice, bob):
        rows = (h.hand_message(user).reply_markup or {})["inline_keyboard"]
        assert not any("web_app" in button for row in rows for button in row)
        assert "Open the table" not in h.hand_message(user).button_texts


def test_the_mini_app_url_must_be_https_and_the_name_botfathers(tmp_path: Path) -> None:
    db = tmp_path / "x.sqlite3"
    with pytest.raises(ValidationError, match="https"):
        make_settings(db, webapp_url="http://bot.example/app/")
    with pytest.raises(ValidationError, match="BotFather"):
        make_settings(db, webapp_url="https://bot.example/app/", webapp_name="no spaces")
    empty = make_settings(db, webapp_url="", webapp_name="")
    assert empty.webapp_url is None and empty.webapp_name is None and empty.web_port is None


def test_with_the_mini_app_the_web_server_runs_with_long_polling_too(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "x.sqlite3", webapp_url="https://bot.example/app/")
    assert not settings.webhook and settings.web_port == 8080
