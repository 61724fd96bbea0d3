"""Headless Chromium for the Mini App page's tests, driven by playwright.

The browser is Debian's ``chromium`` (``/usr/bin/chromium``; .ci/run installs it where
missing), never one playwright downloads: do not run ``playwright install``. Where it or the
playwright package is missing, `missing` says what to install, and the browser tests are
skipped with that reason (the terminal summary says so).

`open_page` opens the page of a stand-in or of the bot in a new context: the request for
Telegram's ``telegram-web-app.js`` is answered by ``tests/fakes/telegram_web_app.js``
(with the initData, start parameter and theme given), and every URL the page asks for is
recorded in `Opened.requests` (a test asserts none leaves 127.0.0.1).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Route

CHROMIUM = os.environ.get("DURAK_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TELEGRAM_JS = "https://telegram.org/js/telegram-web-app.js"
STUB = Path(__file__).resolve().parent / "fakes" / "telegram_web_app.js"
WIDTH, HEIGHT = 360, 740

LIGHT = {
    "bg_color": "#ffffff",
    "secondary_bg_color": "#f1f1f4",
    "text_color": "#000000",
    "hint_color": "#999999",
    "link_color": "#2481cc",
    "button_color": "#2481cc",
    "button_text_color": "#ffffff",
    "destructive_text_color": "#e53935",
}
DARK = {
    "bg_color": "#17212b",
    "secondary_bg_color": "#232e3c",
    "text_color": "#f5f5f5",
    "hint_color": "#708499",
    "link_color": "#6ab3f3",
    "button_color": "#5288c1",
    "button_text_color": "#ffffff",
    "destructive_text_color": "#ec3942",
}


def missing() -> str | None:
    """Why no browser test can run here (what to install), or None if they can."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing: pip install -e '.[dev]'"
    if not (os.path.isfile(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM}: apt-get install chromium (Debian), then run again"
    return None


async def launch(playwright: Any) -> Browser:
    browser: Browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    return browser


@dataclass
class Opened:
    page: Page
    context: BrowserContext
    requests: list[str] = field(default_factory=list)

    def elsewhere(self) -> list[str]:
        """The URLs asked for that are neither on 127.0.0.1 nor Telegram's own script."""
        return [
            url
            for url in self.requests
            if not url.startswith("http://127.0.0.1:") and url != TELEGRAM_JS
        ]


async def open_page(
    browser: Browser,
    url: str,
    *,
    scheme: str = "light",
    init_data: str = "query_id=AAE&user=%7B%22id%22%3A1%7D&auth_date=1&hash=00",
    start_param: str = "",
    width: int = WIDTH,
    height: int = HEIGHT,
    before: Any = None,
) -> Opened:
    """A new context and page at `url`, Telegram's script stubbed; `before(page)` (a
    coroutine function) runs before the page loads (e.g. to install a fake clock)."""
    context = await browser.new_context(
        viewport={"width": width, "height": height},
        color_scheme=scheme,  # type: ignore[arg-type]
    )
    page = await context.new_page()
    opened = Opened(page=page, context=context)
    page.on("request", lambda request: opened.requests.append(request.url))
    given = {
        "initData": init_data,
        "start_param": start_param,
        "colorScheme": scheme,
        "themeParams": DARK if scheme == "dark" else LIGHT,
    }
    await page.add_init_script(f"window.__tg = {json.dumps(given)};")

    async def stub(route: Route) -> None:
        await route.fulfill(
            status=200, content_type="application/javascript", body=STUB.read_text()
        )

    await page.route(TELEGRAM_JS, stub)
    if before is not None:
        await before(page)
    await page.goto(url)
    return opened
