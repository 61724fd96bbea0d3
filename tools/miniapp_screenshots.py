"""Screenshots of the Mini App page at 360x740 in Telegram's light and dark themes, for the
docs (docs/img/miniapp-light.png, docs/img/miniapp-dark.png).

    python -m tools.miniapp_screenshots [--out docs/img]

Serves the page with the tests' stand-in server (tests/fakes/miniapp_api.py) in a scripted
mid-bout state and photographs it in Debian's headless Chromium (tests/browser.py: no
browser is downloaded). Run it from the repository with the development extras installed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tests import browser as chromium
from tests.fakes.miniapp_api import MiniAppStandIn, mid_bout

SCHEMES = ("light", "dark")


async def shoot(out: Path) -> list[Path]:
    """Writes miniapp-<scheme>.png into `out` for each scheme; the paths written."""
    from playwright.async_api import async_playwright

    await asyncio.to_thread(out.mkdir, parents=True, exist_ok=True)
    written = []
    async with MiniAppStandIn(mid_bout()) as server, async_playwright() as playwright:
        browser = await chromium.launch(playwright)
        try:
            for scheme in SCHEMES:
                opened = await chromium.open_page(browser, server.url, scheme=scheme)
                page = opened.page
                await page.locator("#hand .hand-card").first.wait_for()
                path = out / f"miniapp-{scheme}.png"
                await page.screenshot(path=str(path), animations="disabled")
                await opened.context.close()
                written.append(path)
        finally:
            await browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    args = parser.parse_args()
    if why := chromium.missing():
        sys.exit(why)
    for path in asyncio.run(shoot(args.out)):
        print(path)


if __name__ == "__main__":
    main()
