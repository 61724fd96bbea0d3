"""A long hand on a 360-pixel phone: from 13 cards on it lies in two rows, so that every
card's corner (rank and suit) shows whole, with at least the strip of card a 12-card hand
leaves in its one row (headless Chromium against tests/fakes/miniapp_api.py)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser import open_page
from tests.fakes.miniapp_api import MiniAppStandIn, mid_bout

pytestmark = pytest.mark.browser

_RANKS = ["6", "7", "8", "9", "10", "J", "Q", "K", "A"]

# Per card: its box, its next neighbour's in the same row, and whether the centre and the
# right end of its corner's rank and suit are the card itself (not covered by another).
_CORNERS = """() => Array.from(document.querySelectorAll('#hand .hand-card')).map(node => {
  const box = node.getBoundingClientRect();
  const next = node.nextElementSibling;
  const seen = (el) => {
    const r = el.getBoundingClientRect();
    const y = r.top + r.height / 2;
    return [r.left + r.width / 2, r.right - 1].every(x => {
      const hit = document.elementFromPoint(x, y);
      return hit !== null && node.contains(hit);
    }) && r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight;
  };
  const svg = node.querySelector('svg.card');
  return {
    card: node.dataset.card,
    row: Array.from(node.parentElement.parentElement.children).indexOf(node.parentElement),
    top: box.top,
    strip: next ? next.getBoundingClientRect().left - box.left : box.width,
    rank: seen(svg.querySelector('text.rank')),
    suit: seen(svg.querySelector('use')),
  };
})"""


def _hand(count: int) -> list[str]:
    return [rank + suit for suit in "♠♥♦♣" for rank in _RANKS][:count]


async def test_a_fifteen_card_hand_shows_every_corner_at_360_pixels(browser: Any) -> None:
    twelve = mid_bout()
    twelve["hand"] = _hand(12)
    async with MiniAppStandIn(twelve) as server:
        page = (await open_page(browser, server.url)).page
        await expect(page.locator("#hand .hand-card")).to_have_count(12)
        one_row = await page.evaluate(_CORNERS)
        least = min(c["strip"] for c in one_row)

        fifteen = mid_bout(version=18)
        fifteen["hand"] = _hand(15)
        fifteen["legal"] = [
            {"action": f"defend 9♠ {c}", "card": c, "kind": "defend", "label": c}
            for c in ("10♠", "A♠", "10♥", "K♦")  # raised ones, in both rows
        ] + [{"action": "take", "card": None, "kind": "take", "label": "Take"}]
        server.push(fifteen)
        await expect(page.locator("#hand .hand-card")).to_have_count(15)
        corners = await page.evaluate(_CORNERS)
        assert [c["card"] for c in corners] == fifteen["hand"]
        for corner in corners:
            assert corner["rank"] and corner["suit"], corner  # whole, on screen, uncovered
            assert corner["strip"] >= least, (corner, least)
        assert [c["row"] for c in corners] == [0] * 8 + [1] * 7  # two rows, the first longer
        assert await page.evaluate("document.documentElement.scrollWidth") <= 360
        take = await page.locator("#actions .action").bounding_box()
        assert take is not None and take["y"] + take["height"] <= 740
