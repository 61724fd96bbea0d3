"""Texts that fit one phone screen (#31): /settings in about 600 characters, /howto in at most
12 short lines and about 800 characters, in every language, measured over the text a player
receives (the fake Telegram's plain text: HTML tags not counted); and the wording fixes of
German and Russian that came with them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot import render
from bot.house_rules import LANGUAGES
from bot.i18n import Translator
from bot.render.settings import render_menu
from engine import PRESETS, Rules
from storage import ChatSettings
from tests.bot.conftest import BotHarness
from tests.bot.test_howto import EVERY_OPTION, set_rules
from tests.bot.test_settings_menu import every_settings
from tests.fakes.html import parse_html

TR = Translator()
SETTINGS_MAX = 600
"""Characters of /settings' text: with the keyboard below it, about one phone screen."""
HOWTO_MAX = 800
"""Characters of /howto with the rules most chats play (classic, its 32-card short form)."""
HOWTO_MAX_PRESET = 950
"""...and with any preset's rules (transfers add a line: perevodnoy)."""
HOWTO_LINES = 12


def plain(html: str) -> str:
    """What Telegram shows of a message sent with parse_mode=HTML."""
    return parse_html(html, strict=True)[0]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_settings_fit_a_phone_screen_with_every_value(lang: str) -> None:
    longest = max(
        (render_menu(TR, lang, settings, default_timeout=60) for settings in every_settings()),
        key=lambda menu: len(plain(menu.text)),
    )
    assert len(plain(longest.text)) <= SETTINGS_MAX, plain(longest.text)
    closed = render_menu(TR, lang, ChatSettings(chat_id=-1), default_timeout=60, closed=True)
    assert len(plain(closed.text)) <= SETTINGS_MAX


@pytest.mark.parametrize("lang", LANGUAGES)
def test_r1_to_r19_howto_fits_a_phone_screen_in_every_language(lang: str) -> None:
    for name, rules in PRESETS.items():
        text = plain(render.howto(TR, lang, rules))
        limit = HOWTO_MAX if not rules.transfer and name != "online" else HOWTO_MAX_PRESET
        assert len(text) <= limit, (name, len(text), text)
        named = plain(render.howto(TR, lang, rules, chat="A group with quite a long name"))
        assert len(named.splitlines()) <= HOWTO_LINES, name
    for rules in (Rules(), Rules(deck_size=32)):
        assert len(plain(render.howto(TR, lang, rules))) <= HOWTO_MAX
    every = plain(render.howto(TR, lang, EVERY_OPTION, chat="A group with quite a long name"))
    assert len(every.splitlines()) <= HOWTO_LINES  # every line the how-to can have
    assert "24" in every and "36" in plain(render.howto(TR, lang, Rules()))  # the deck


@pytest.mark.parametrize("lang", LANGUAGES)
async def test_what_a_player_receives_fits(harness: BotHarness, lang: str) -> None:
    h = harness
    alice = h.user(1, "Alice", lang)
    group = h.fake.group(-9301, "Club", admins={alice})
    await h.send(alice.start_private())
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    assert menu.buttons and len(menu.text) <= SETTINGS_MAX
    await set_rules(h, group, Rules())
    await h.send(alice.send(group, "/howto"))
    howto = h.fake.last_message(group.id)
    assert len(howto.text) <= HOWTO_MAX and len(howto.text.splitlines()) <= HOWTO_LINES
    await h.send(alice.send_private("/howto"))  # practice's rules in the private chat
    private = h.fake.last_message(alice.id)
    assert len(private.text) <= HOWTO_MAX and len(private.text.splitlines()) <= HOWTO_LINES


# ---------------------------------------------------------------- German and Russian


def test_the_german_rules_line_names_transfers_once() -> None:
    line = render.rules_summary(TR, "de", Rules.preset("perevodnoy"))
    assert line == "Regeln: Perewodnoi · 36 Karten · Weiterschieben an — alle mit /rules"
    assert line.count("Weiterschieben") == 1


def test_r2_the_german_howto_says_what_beats_what_in_a_sentence_with_a_verb() -> None:
    beat = next(line for line in render.howto(TR, "de", Rules()).splitlines() if "Schlagen" in line)
    assert "Eine höhere Karte derselben Farbe oder ein Trumpf schlägt" in beat
    assert "jeder Trumpf jede Karte" not in beat


def test_russian_writes_seconds_one_way_and_keeps_move_and_bout_apart() -> None:
    texts = [
        TR.t("ru", "rules-timeout", seconds=40),
        TR.t("ru", "settings-seconds", seconds=40),
    ]
    assert all("40 с" in text for text in texts), texts
    # (the game's other times are date_time entities, drawn by the reader's client)
    russian = (Path(__file__).parents[2] / "locales" / "ru.ftl").read_text(encoding="utf-8")
    assert "сек" not in russian
    # A move (one player's decision) is "ход"; a bout (attack to discard or pick-up) "раунд".
    assert TR.t("ru", "rules-timeout", seconds=40).startswith("Время на ход")
    bouts = [
        TR.t("ru", "seat-draws"),
        TR.t("ru", "rules-first-bout", count=5),
        TR.t("ru", "result-bouts", count=5),
        TR.t("ru", "howto-bout"),
        TR.t("ru", "howto-limit", max=6, first=5),
    ]
    assert all("раунд" in text.lower() for text in bouts), bouts
    assert not re.search(r"\bход(а|у|ом)?\b", " ".join(bouts)), bouts


async def test_private_rules_begin_with_a_title_that_names_the_game(harness: BotHarness) -> None:
    h = harness
    alice, ivan = h.user(1, "Alice"), h.user(2, "Ivan", "ru")
    group = h.fake.group(-9302, "Клуб", admins={alice})
    await h.open_game(group, [alice, ivan])
    await h.send(ivan.send_private("/rules"))
    rules = h.fake.last_message(ivan.id)
    first = rules.text.splitlines()[0]
    assert first == "Правила игры в группе «Клуб»"
    assert rules.html.startswith("<b>Правила игры в группе «Клуб»</b>\n")
