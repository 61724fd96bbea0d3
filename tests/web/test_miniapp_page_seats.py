"""The Mini App page's seat list marks a computer's seat as the lobby does (🤖), and only
a computer's (headless Chromium against tests/fakes/miniapp_api.py)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser import open_page
from tests.fakes.miniapp_api import MiniAppStandIn, app_strings, mid_bout

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_a_computers_seat_is_marked(browser: Any, lang: str) -> None:
    state = mid_bout()
    state["seats"][2].update(name="Computer 1 (easy)", computer=True)
    async with MiniAppStandIn(state, lang=lang) as server:
        page = (await open_page(browser, server.url)).page
        seats = page.locator("#seats .seat")
        await expect(seats).to_have_count(2)
        await expect(seats.nth(1).locator(".seat-head")).to_contain_text("🤖")
        mark = seats.nth(1).locator(".bot")
        await expect(mark).to_have_attribute("aria-label", app_strings(lang)["app-page-computer"])
        await expect(mark).to_be_visible()
        await expect(seats.nth(0).locator(".bot")).to_have_count(0)  # Boris is a person
        await expect(page.locator("#my-seat .bot")).to_have_count(0)
