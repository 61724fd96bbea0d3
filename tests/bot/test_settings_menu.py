"""/settings as a phone shows it (#19): every label fits its row in every language, the
language is one tap away, the preset line says "custom" when the options match no preset,
and buttons from before the choices were buttons (or forged ones) get a clear answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.callbacks import MAX_CALLBACK_BYTES, decode
from bot.house_rules import LANGUAGES, OPTIONS, PERSONAL_ALERTS, step
from bot.i18n import Translator
from bot.keyboard import Keyboard
from bot.render.settings import LAYOUT, personal_menu, render_menu
from engine import PRESETS
from storage import ChatSettings
from tests.bot.conftest import BotHarness

PHONE_ROW = 40
"""Characters a phone shows across a row of inline buttons (about 20 each at two a row)."""

TR = Translator()


def every_settings() -> Iterator[ChatSettings]:
    """Each value of each option (stepped through its whole cycle), every preset, and each
    language set or none."""
    for name, rules in PRESETS.items():
        yield ChatSettings(chat_id=-1, preset=name, rules=rules)
    for key in OPTIONS.keys() - {"l"}:
        settings = ChatSettings(chat_id=-1)
        for _ in range(6):  # the longest cycle has five values
            settings = step(settings, key, default_timeout=60)
            yield settings
    for language in (None, *LANGUAGES):
        yield ChatSettings(chat_id=-1, language=language)


def too_long(keyboard: Keyboard | None) -> list[str]:
    assert keyboard is not None
    return [
        button.text
        for row in keyboard.inline_keyboard
        for button in row
        if len(button.text) > PHONE_ROW // len(row)
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_settings_button_fits_a_phone_row(lang: str) -> None:
    for settings in every_settings():
        menu = render_menu(TR, lang, settings, default_timeout=60)
        assert too_long(menu.keyboard) == [], settings
        assert menu.keyboard is not None
        for row in menu.keyboard.inline_keyboard:
            for button in row:
                assert button.callback_data is not None
                assert len(button.callback_data.encode()) <= MAX_CALLBACK_BYTES
                decode(button.callback_data)  # every button's data is the bot's own
    for alerts in PERSONAL_ALERTS.values():
        assert too_long(personal_menu(TR, lang, alerts).keyboard) == []


def test_the_menu_lists_the_options_in_the_order_of_its_buttons() -> None:
    assert [key for row in LAYOUT for key in row] == list(OPTIONS)


async def test_the_language_is_russian_in_one_tap(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-8001, "Club", admins={alice})
    async with h.rooms.kit.db.transaction() as tx:
        await tx.chats.save(settings=ChatSettings(chat_id=group.id, language="en"))
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    assert [b.text for b in menu.buttons[6]] == ["✓ English", "Deutsch", "Русский"]
    await h.send(alice.tap(menu, "Русский"))
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        assert (await tx.chats.get(chat_id=group.id)).language == "ru"
    assert [b.text for b in menu.buttons[6]] == ["English", "Deutsch", "✓ Русский"]
    assert "Язык: Русский\n" in menu.text and "Колода: 36" in menu.button_texts


async def test_the_preset_reads_custom_after_a_change_and_its_name_when_it_matches(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-8002, "Club", admins={alice})
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    assert "Preset: classic" in menu.button_texts
    await h.send(alice.tap(menu, "Deck: 36"))  # 52 cards: no preset has them
    assert "Preset: custom" in menu.button_texts
    assert "Preset: custom\n" in menu.text
    await h.send(alice.tap(menu, "Deck: 52"))  # 24
    await h.send(alice.tap(menu, "Deck: 24"))  # 32: the short preset
    assert "Preset: short (32 cards)" in menu.button_texts
    await h.send(alice.tap(menu, "Deck: 32"))  # 36 again
    assert "Preset: classic" in menu.button_texts
    await h.send(alice.tap(menu, "Transfers: off"))  # the perevodnoy preset is classic + this
    assert "Preset: perevodnoy" in menu.button_texts
    await h.send(alice.tap(menu, "Trump swap: off"))
    assert "Preset: custom" in menu.button_texts


async def test_an_old_language_button_draws_the_menu_anew_and_changes_nothing(
    harness: BotHarness,
) -> None:
    """A menu sent before the languages were a choice had one button, "Sl", stepping to the
    next language: its tap now shows the three choices and sets nothing."""
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-8003, "Club", admins={alice})
    async with h.rooms.kit.db.transaction() as tx:
        await tx.chats.save(settings=ChatSettings(chat_id=group.id, language="en"))
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    tap = alice.tap_raw(menu, "Sl")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "settings-menu-changed")
    assert "✓ English" in menu.button_texts and "Русский" in menu.button_texts
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        assert (await tx.chats.get(chat_id=group.id)).language == "en"


@pytest.mark.parametrize("data", ["Slxx", "Sdru", "Sny"])
async def test_forged_settings_data_is_answered_and_changes_nothing(
    harness: BotHarness, data: str
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-8004, "Club", admins={alice})
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    before = (menu.text, menu.button_texts)
    tap = alice.tap_raw(menu, data)
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-unknown-button")
    menu = h.fake.message(group.id, menu.message_id)
    assert (menu.text, menu.button_texts) == before
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        assert await tx.chats.get(chat_id=group.id) == ChatSettings(chat_id=group.id)


async def test_the_private_menu_chooses_alerts_and_answers_old_and_forged_buttons(
    harness: BotHarness,
) -> None:
    h = harness
    bob = h.user(2, "Bob")
    await h.send(bob.start_private(), bob.send_private("/settings"))
    menu = h.fake.last_message(bob.id)
    assert menu.button_texts == ["Alerts on", "Alerts off", "✓ As each group sets it", "Done"]
    await h.send(bob.tap(menu, "Alerts off"))
    menu = h.fake.message(bob.id, menu.message_id)
    assert "✓ Alerts off" in menu.button_texts
    # The old menu's one button ("Sn", which stepped): the choices again, nothing changed.
    old = bob.tap_raw(menu, "Sn")
    await h.send(old)
    answer = h.fake.answer_for(old)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "settings-menu-changed")
    assert "✓ Alerts off" in h.fake.message(bob.id, menu.message_id).button_texts
    forged = bob.tap_raw(menu, "Slru")  # a group's option in the private chat
    await h.send(forged)
    answer = h.fake.answer_for(forged)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-unknown-button")
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        assert (await tx.players.get(user_id=bob.id)).turn_alerts is False
