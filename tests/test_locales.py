"""The .ftl files stay complete and consistent; the Translator behaves as documented."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from fluent.syntax import FluentParser, ast, visitor

from bot.i18n import LOCALES_DIR, Translator
from tests.fakes.html import HtmlParseError, parse_html

REFERENCE = "en"
LANGUAGES = sorted(p.stem for p in LOCALES_DIR.glob("*.ftl"))
OTHERS = [lang for lang in LANGUAGES if lang != REFERENCE]
# CLDR plural categories for integers (+ "other" for fractions) per language.
PLURAL_CATEGORIES = {
    "en": {"one", "other"},
    "de": {"one", "other"},
    "ru": {"one", "few", "many", "other"},
}
ALL_CATEGORIES = {"zero", "one", "two", "few", "many", "other"}
SAMPLE_NUMBERS = (0, 1, 2, 3, 4, 5, 11, 12, 14, 21, 22, 25, 100, 101, 111, 1000)


class _Variables(visitor.Visitor):
    """Collects $variables, and those used as selectors (they must be numbers)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.selectors: set[str] = set()

    def visit_VariableReference(self, node: ast.VariableReference) -> None:
        self.names.add(node.id.name)

    def visit_SelectExpression(self, node: ast.SelectExpression) -> None:
        selector: object = node.selector
        if isinstance(selector, ast.FunctionReference) and selector.arguments.positional:
            selector = selector.arguments.positional[0]
        if isinstance(selector, ast.VariableReference):
            self.selectors.add(selector.id.name)
        self.generic_visit(node)


class _Selects(visitor.Visitor):
    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[ast.SelectExpression] = []

    def visit_SelectExpression(self, node: ast.SelectExpression) -> None:
        self.nodes.append(node)
        self.generic_visit(node)


def _parse(lang: str) -> ast.Resource:
    source = (LOCALES_DIR / f"{lang}.ftl").read_text(encoding="utf-8")
    return FluentParser(with_spans=False).parse(source)


def _messages(lang: str) -> dict[str, ast.Message]:
    return {e.id.name: e for e in _parse(lang).body if isinstance(e, ast.Message)}


def _variables(message: ast.Message) -> _Variables:
    collector = _Variables()
    collector.visit(message)
    return collector


def _keys(lang: str) -> set[str]:
    keys: set[str] = set()
    for name, message in _messages(lang).items():
        if message.value is not None:
            keys.add(name)
        keys.update(f"{name}.{attr.id.name}" for attr in message.attributes)
    return keys


@pytest.fixture(scope="module")
def translator() -> Translator:
    return Translator()


def test_expected_languages_exist() -> None:
    assert {"en", "de", "ru"} <= set(LANGUAGES)
    assert set(Translator().languages) == set(LANGUAGES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_syntax_errors(lang: str) -> None:
    junk = [e.content for e in _parse(lang).body if isinstance(e, ast.Junk)]
    assert not junk, f"{lang}.ftl has syntax errors in: {junk}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_duplicate_messages(lang: str) -> None:
    names = [e.id.name for e in _parse(lang).body if isinstance(e, ast.Message | ast.Term)]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"{lang}.ftl defines these twice: {duplicates}"


@pytest.mark.parametrize("lang", OTHERS)
def test_same_keys_as_english(lang: str) -> None:
    reference, keys = _keys(REFERENCE), _keys(lang)
    assert not reference - keys, f"missing in {lang}.ftl: {sorted(reference - keys)}"
    assert not keys - reference, f"not in en.ftl but in {lang}.ftl: {sorted(keys - reference)}"


@pytest.mark.parametrize("lang", OTHERS)
def test_same_placeholders_as_english(lang: str) -> None:
    reference = _messages(REFERENCE)
    differences = {}
    for name, message in _messages(lang).items():
        if name not in reference:
            continue
        expected = _variables(reference[name]).names
        found = _variables(message).names
        if expected != found:
            differences[name] = {"en": sorted(expected), lang: sorted(found)}
    assert not differences, f"placeholders differ from en.ftl: {differences}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_selects_cover_all_categories(lang: str) -> None:
    """A select on CLDR categories must offer every category the language uses."""
    problems = []
    for name, message in _messages(lang).items():
        collector = _Selects()
        collector.visit(message)
        for select in collector.nodes:
            keys = {v.key.name for v in select.variants if isinstance(v.key, ast.Identifier)}
            if not keys & (ALL_CATEGORIES - {"other"}):
                continue  # not a plural select (e.g. { $mode -> [all] ... *[other] ... })
            missing = PLURAL_CATEGORIES[lang] - keys
            unused = (keys & ALL_CATEGORIES) - PLURAL_CATEGORIES[lang]
            if missing or unused:
                problems.append((name, sorted(missing), sorted(unused)))
    assert not problems, f"{lang}: (message, missing categories, foreign categories) {problems}"


def _sample_args(message: ast.Message, number: int = 3) -> dict[str, str | int]:
    """Selector variables get a number, the others a (pre-escaped) string."""
    variables = _variables(message)
    return {name: number if name in variables.selectors else "Alice" for name in variables.names}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_formats_cleanly(lang: str, translator: Translator) -> None:
    for name, message in _messages(lang).items():
        keys = ([name] if message.value is not None else []) + [
            f"{name}.{attr.id.name}" for attr in message.attributes
        ]
        for key in keys:
            for number in SAMPLE_NUMBERS:
                args = _sample_args(message, number)
                text, errors = translator.format_exact(lang, key, **args)
                assert not errors, f"{lang}:{key} with {args}: {errors}"
                assert text.strip(), f"{lang}:{key} is empty"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_messages_are_valid_telegram_html(lang: str, translator: Translator) -> None:
    """Sent with parse_mode=HTML: no raw '<' or '&', only tags Telegram accepts."""
    for name, message in _messages(lang).items():
        if message.value is None:
            continue
        text = translator.t(lang, name, **_sample_args(message))
        try:
            parse_html(text, strict=True)
        except HtmlParseError as exc:
            pytest.fail(f"{lang}:{name} is not valid Telegram HTML ({exc}): {text!r}")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_bidi_isolation_marks(lang: str, translator: Translator) -> None:
    text = translator.t(lang, "lobby-players", count=2, max=6, names="Alice, Bob")
    assert "\u2068" not in text
    assert "\u2069" not in text


def test_russian_plurals(translator: Translator) -> None:
    rendered = ", ".join(translator.t("ru", "cards-count", count=n) for n in (1, 2, 5, 21, 11))
    assert rendered == "1 карта, 2 карты, 5 карт, 21 карта, 11 карт"
    more = [translator.t("ru", "cards-count", count=n) for n in (3, 4, 12, 14, 22, 25, 101, 111)]
    assert more == [
        "3 карты",
        "4 карты",
        "12 карт",
        "14 карт",
        "22 карты",
        "25 карт",
        "101 карта",
        "111 карт",
    ]
    assert translator.t("ru", "players-count", count=1) == "1 игрок"
    assert translator.t("ru", "players-count", count=3) == "3 игрока"
    assert translator.t("ru", "players-count", count=6) == "6 игроков"


def test_english_and_german_plurals(translator: Translator) -> None:
    assert translator.t("en", "cards-count", count=1) == "1 card"
    assert translator.t("en", "cards-count", count=0) == "0 cards"
    assert translator.t("en", "cards-count", count=2) == "2 cards"
    assert translator.t("en", "cards-count", count=21) == "21 cards"
    assert translator.t("de", "cards-count", count=1) == "1 Karte"
    assert translator.t("de", "cards-count", count=0) == "0 Karten"
    assert translator.t("de", "cards-count", count=6) == "6 Karten"
    assert translator.t("en", "players-count", count=1) == "1 player"
    assert translator.t("de", "lobby-need-players", min=2) == (
        "Zum Starten werden mindestens 2 Spieler benötigt."
    )


def test_string_arguments_are_inserted_verbatim(translator: Translator) -> None:
    # The caller escapes HTML; the translator must not touch (or double-escape) it.
    text = translator.t("en", "lobby-created", name="Tom &amp; Jerry")
    assert text.startswith("Tom &amp; Jerry wants to play")


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("en", "en"),
        ("de", "de"),
        ("de-AT", "de"),
        ("de_CH", "de"),
        ("RU", "ru"),
        ("ru-RU", "ru"),
        ("pt-br", "en"),
        ("uk", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_normalize(code: str | None, expected: str, translator: Translator) -> None:
    assert translator.normalize(code) == expected


def test_unknown_language_falls_back_to_english(translator: Translator) -> None:
    assert translator.t("pt-br", "button-join") == translator.t("en", "button-join") == "Join"
    assert translator.t("de-AT", "button-join") == "Mitspielen"
    assert translator.t(None, "cards-count", count=2) == "2 cards"


def test_missing_key_is_logged_not_raised(
    translator: Translator, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="bot.i18n"):
        assert translator.t("ru", "no-such-key", count=1) == "[no-such-key]"
    assert "no-such-key" in caplog.text


def test_fallback_attributes_and_custom_folder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "en.ftl").write_text(
        "hello = Hello, { $name }!\n    .short = Hi\nonly-en = English only\n",
        encoding="utf-8",
    )
    (tmp_path / "de.ftl").write_text("hello = Hallo, { $name }!\n", encoding="utf-8")
    translator = Translator(tmp_path)
    assert translator.languages == ("de", "en")
    assert translator.t("de", "hello", name="Anna") == "Hallo, Anna!"
    assert translator.t("en", "hello.short") == "Hi"
    assert translator.has("hello.short")
    assert not translator.has("hello.short", "de")
    with caplog.at_level(logging.WARNING, logger="bot.i18n"):
        assert translator.t("de", "only-en") == "English only"
        assert translator.t("de", "hello.short") == "Hi"
    assert "only-en" in caplog.text
    assert translator.in_all_languages("hello", name="X") == {"de": "Hallo, X!", "en": "Hello, X!"}


def test_missing_default_language_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "de.ftl").write_text("hello = Hallo\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError):
        Translator(tmp_path)


def test_russian_never_declines_a_name_or_title_after_a_preposition() -> None:
    """Russian declines a noun after «в», «на», «под» ...; a group's title or a player's name
    inserted there stays in the nominative and reads wrong («Дурак в Картёжники»). Such
    strings put it in quotes after a noun («в группе «Картёжники»») or after a separator."""
    preposition = re.compile(
        r"(?:^|\s)(?:в|во|на|из|с|со|к|ко|у|от|для|о|об|про|за|под|по|при)\s+(?:<b>)?"
        r"\{ \$(?:chat|player|target) \}"
    )
    text = (LOCALES_DIR / "ru.ftl").read_text(encoding="utf-8")
    assert [line for line in text.splitlines() if preposition.search(line)] == []
