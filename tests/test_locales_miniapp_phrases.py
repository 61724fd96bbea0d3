"""The Mini App's words where a player met clumsy ones: its status line puts `app-soon` in
the table's sentences in place of their time, so it must read there (Russian "время выйдет
скоро" did not); the chooser's title stands over moves, not cards."""

from __future__ import annotations

import pytest

from bot.i18n import LOCALES_DIR, Translator

tr = Translator(LOCALES_DIR)


@pytest.mark.parametrize(
    ("lang", "key", "args", "reads"),
    [
        (
            "ru",
            "table-waiting-until",
            {"names": "Алиса"},
            "⏳ Ждём: Алиса, время выйдет совсем скоро.",
        ),
        ("ru", "table-window", {}, "⏳ В отбой совсем скоро, если никто не подкинет."),
        (
            "de",
            "table-waiting-until",
            {"names": "Alice"},
            "⏳ Wir warten auf Alice: Die Zeit läuft gleich ab.",
        ),
        (
            "de",
            "table-window-take",
            {"player": "Bob"},
            "⏳ Bob nimmt gleich alles auf, wenn niemand mehr zuwirft.",
        ),
    ],
)
def test_the_status_lines_time_reads_in_the_sentence(
    lang: str, key: str, args: dict[str, str], reads: str
) -> None:
    assert tr.t(lang, key, time=tr.t(lang, "app-soon"), **args) == reads


@pytest.mark.parametrize(("lang", "title"), [("ru", "Как сыграть?"), ("de", "Welcher Zug?")])
def test_the_chooser_asks_for_a_move(lang: str, title: str) -> None:
    assert tr.t(lang, "app-choose") == title
