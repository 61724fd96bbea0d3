"""The sandbox's page in a real browser: headless Chromium, driven by Playwright, plays a
whole three-person game by clicking in the page (with SANDBOX_SCREENSHOT=docs/img/sandbox.png
it takes the docs' picture anew, mid-game).

Chromium is Debian's (`/usr/bin/chromium`; CI's .ci/run installs it); Playwright's own
browser downloads are never used. Where either is missing the test is skipped, saying why.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.sandbox.server import Sandbox
from bot.sandbox.telegram import Limits, Window
from tests import browser
from tests.sandbox.conftest import FAST

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = os.environ.get("SANDBOX_SCREENSHOT")  # docs/img/sandbox.png: the picture again
MAX_CLICKS = 3000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing())),
]
async_api = pytest.importorskip(
    "playwright.async_api", reason="no playwright: pip install -e '.[dev]'"
)

# Telegram's limits ten times over, in the local Bot API and in the bot alike: the test
# checks the page, not the pace Telegram allows (tests/sandbox/test_sandbox.py does).
FASTER = {**FAST, "PRIVATE_SENDS": "30", "GROUP_SENDS": "200", "BOT_SENDS": "300"}
LIMITS = Limits(private=Window(30, 3.0), group=Window(200, 60.0), bot=Window(300, 1.0))


@pytest.fixture
async def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Sandbox]:
    monkeypatch.chdir(tmp_path)
    for name, value in FASTER.items():
        monkeypatch.setenv(name, value)
    sandbox = Sandbox(database=tmp_path / "sandbox.sqlite3", limits=LIMITS)
    await sandbox.start(port=0)
    try:
        yield sandbox
    finally:
        await sandbox.close()


async def test_three_people_play_a_whole_game_by_clicking_in_the_page(
    box: Sandbox, tmp_path: Path
) -> None:
    errors: list[str] = []
    async with async_api.async_playwright() as p:
        chromium = await browser.launch(p)
        page = await chromium.new_page(viewport={"width": 1280, "height": 800}, locale="en-US")
        page.on("pageerror", lambda error: errors.append(str(error)))
        outside: list[str] = []
        page.on(
            "request",
            lambda r: (
                None if r.url.startswith(f"http://127.0.0.1:{box.port}/") else outside.append(r.url)
            ),
        )
        await page.goto(f"http://127.0.0.1:{box.port}/")
        expect = async_api.expect
        await expect(page.locator("#bot-status")).to_have_text("Bot running")
        group = page.locator('[data-chat="group"]')
        private = page.locator('[data-chat="private"]')

        async def person(name: str) -> None:
            await page.locator("#people button", has_text=name).click()
            await expect(page.locator("#private-title")).to_have_text(name)

        async def join(name: str) -> None:
            """Join, which answers a newcomer with the deep link that seats them."""
            await group.get_by_role("button", name="Join", exact=True).last.click()
            await expect(private.locator(".msg").last).to_contain_text(
                "Durak club"  # "You have a seat in the game in Durak club", in any language
            )

        # Alice opens a lobby with a command typed in the group, Bob joins, Carol is added
        await group.locator("input").fill("/newgame")
        await group.locator("input").press("Enter")
        await expect(group.get_by_role("button", name="Join", exact=True)).to_be_visible()
        await join("Alice")
        await person("Bob")
        await join("Bob")
        # Cancel is the opener's: Bob is told so in an alert, which he closes
        await group.get_by_role("button", name="Cancel", exact=True).last.click()
        await expect(page.locator("#alert")).to_contain_text("opened the game")
        await page.locator("#alert").get_by_role("button").click()
        await expect(page.locator("#alert")).to_be_hidden()
        form = page.locator("#add-person")
        await form.locator("input").fill("Carol")
        await form.locator("select").select_option("de")
        await form.get_by_role("button").click()
        await expect(page.locator("#private-title")).to_have_text("Carol")
        await join("Carol")
        await person("Alice")
        await group.get_by_role("button", name="Start", exact=True).last.click()
        await expect(group.locator(".msg").last).to_contain_text("Trump")
        # The deadline as a reader's Telegram draws it: "in 59 seconds", not the UTC text
        # inside the date_time entity (which only a client too old for it shows).
        deadline = group.locator(".msg").last.locator("time.tg-time")
        await expect(deadline).to_contain_text(re.compile(r"in \d+ (second|minute)"))
        assert "UTC" not in await group.locator(".msg").last.inner_text()
        # the first turn rings the phone of whoever opens (TURN_ALERT_AFTER=0): announced
        await expect(page.locator(".toast.notify").first).to_be_visible()

        # Each in turn taps a card or an action the hand offers (not the dotted ones,
        # which cannot be played now) until the result asks who is ready for another.
        rng = random.Random(3)
        again = group.get_by_role("button", name="Ready for another")
        clicks = 0
        shot = restarted = False
        while not await again.count():
            for name in ("Alice", "Bob", "Carol"):
                await person(name)
                hand = private.locator(".msg").last.locator(".keyboard button")
                labels = [label for label in await hand.all_inner_texts() if label[:1] != "·"]
                if not labels:
                    continue
                if not shot and clicks >= 12 and name == "Alice":  # mid-game: the picture
                    shot = True
                    await page.locator("#toasts").evaluate("toasts => toasts.replaceChildren()")
                    shot_path = ROOT / SCREENSHOT if SCREENSHOT else tmp_path / "sandbox.png"
                    await page.screenshot(path=str(shot_path))
                if not restarted and clicks >= 20:  # the bot restarts mid-game, the game goes on
                    restarted = True
                    async with page.expect_response("**/api/restart"):
                        await page.get_by_role("button", name="Restart the bot").click()
                    await expect(page.locator("#bot-status")).to_have_text("Bot running")
                version = int(await page.locator("body").get_attribute("data-version") or 0)
                label = re.compile(f"^{re.escape(rng.choice(labels))}$")
                try:
                    await hand.filter(has_text=label).first.click(timeout=3000)
                except async_api.Error:  # the keyboard changed meanwhile: look again
                    continue
                clicks += 1
                await page.wait_for_function(  # the page has shown what the tap changed
                    "v => Number(document.body.dataset.version) > v", arg=version
                )
            assert clicks < MAX_CLICKS, "the game does not end"
        await expect(group.locator(".msg").last).to_contain_text("durak")
        assert await page.locator(".bell").count()  # what rang the phones is marked

        # /stats knows the game; all three are ready for another, and it starts
        await group.locator("input").fill("/stats")
        await group.locator("input").press("Enter")
        await expect(group.locator(".msg").last).to_contain_text("Leaderboard")
        for name in ("Alice", "Bob", "Carol"):
            await person(name)
            await again.last.click()
        await expect(group.locator(".msg", has_text="Trump")).to_have_count(2)
        await chromium.close()
    assert box.bot is not None and box.bot.restarts == 1
    assert not errors
    assert not outside  # nothing but the sandbox's own loopback server
