"""tools/miniapp_screenshots.py photographs the page for the docs: a 360x740 PNG per theme."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from tools.miniapp_screenshots import shoot

pytestmark = pytest.mark.browser


def _size(png: Path) -> tuple[int, int]:
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


async def test_the_screenshots_are_a_phone_screen_in_each_theme(
    browser: Any, tmp_path: Path
) -> None:
    # `browser` skips this where no Chromium can run; the tool launches its own
    written = await shoot(tmp_path)
    assert [p.name for p in written] == ["miniapp-light.png", "miniapp-dark.png"]
    for path in written:
        assert _size(path) == (360, 740)
    assert written[0].read_bytes() != written[1].read_bytes()
