"""The sandbox's group and first people speak the page's language: the first page opened
in German, before anything happened, names them in German (Anna and Ben in the
Durak-Runde) and has Telegram report German for them, so the bot answers in German; once
something was said, another page's language renames nobody."""

from __future__ import annotations

from bot.sandbox.server import Sandbox
from tests.sandbox.conftest import GROUP_ID, Page


def _people(box: Sandbox) -> list[tuple[str, str | None]]:
    return [(p["name"], p["lang"]) for p in box.state()["people"]]


async def test_a_page_in_german_names_the_group_and_people_in_german(page: Page) -> None:
    box = page.box
    assert box.state()["group"]["title"] == "Durak club"  # until a page says its language
    _, de = await page.get("api/strings", **{"Accept-Language": "de-DE,de;q=0.9"})
    assert de["lang"] == "de"
    assert box.state()["group"]["title"] == box.translator.t("de", "sandbox-group-title")
    assert _people(box) == [("Anna", "de"), ("Ben", "de")]
    anna = box.people[0].id
    await page.say(anna, GROUP_ID, "/newgame")
    await box.wait_for(lambda: any(m.buttons for m in box.fake.messages(GROUP_ID)))
    lobby = next(m for m in box.fake.messages(GROUP_ID) if m.buttons)
    assert "Anna" in lobby.text and "Mitspielen" in lobby.button_texts  # the bot speaks German


async def test_once_something_was_said_a_page_renames_nobody(page: Page) -> None:
    box = page.box
    await page.get("api/strings?lang=ru")
    assert _people(box) == [("Аня", "ru"), ("Борис", "ru")]
    await page.say(box.people[0].id, box.people[0].id, "/start")
    await box.wait_for(lambda: bool(box.fake.messages(box.people[0].id, from_bot=True)))
    await page.get("api/strings?lang=en")
    assert _people(box) == [("Аня", "ru"), ("Борис", "ru")]
    assert box.state()["group"]["title"] == box.translator.t("ru", "sandbox-group-title")
