"""The Mini App page's files, without a browser: small enough for a phone's first load,
every text they show is in all three locales, and nothing they load comes from a third
party (only Telegram's own script)."""

from __future__ import annotations

import gzip
import re

import pytest

from tests.fakes.miniapp_api import STATIC, app_strings

BUDGET = 100 * 1024  # the first load, compressed (issue #32)
_KEY = re.compile(r"""["'](app-[a-z0-9-]+)["']""")
_URL = re.compile(r"""(?:https?:)?//[A-Za-z0-9.-]+[^\s"'<>)]*""")


def _files() -> list[str]:
    return sorted(p.name for p in STATIC.iterdir() if p.is_file())


def test_the_first_load_is_at_most_100_kb_compressed() -> None:
    sizes = {
        name: len(gzip.compress((STATIC / name).read_bytes(), compresslevel=6)) for name in _files()
    }
    assert {"index.html", "app.js", "app.css"} <= set(sizes)
    assert sum(sizes.values()) <= BUDGET, sizes


@pytest.mark.parametrize("lang", ["en", "de", "ru"])
def test_every_text_key_the_page_uses_is_in_the_locale(lang: str) -> None:
    source = (STATIC / "app.js").read_text(encoding="utf-8")
    used = set(_KEY.findall(source))
    assert len(used) >= 10, used  # the check sees the keys the page asks for
    missing = used - set(app_strings(lang))
    assert not missing, f"locales/{lang}.ftl lacks {sorted(missing)}"


def test_the_page_asks_no_third_party_but_telegrams_script() -> None:
    found = []
    for name in _files():
        text = (STATIC / name).read_text(encoding="utf-8")
        found += [url for url in _URL.findall(text) if "www.w3.org/2000/svg" not in url]
    assert found == ["https://telegram.org/js/telegram-web-app.js"]
