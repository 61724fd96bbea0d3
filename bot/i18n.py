"""Localisation with Project Fluent: one ``locales/<lang>.ftl`` file per language.

Usage::

    tr = Translator()                       # loads every locales/*.ftl once
    tr.t("ru", "cards-count", count=5)      # "5 карт"
    tr.t("de-AT", "button-join")            # "de-AT" -> "de"
    tr.t("pt-br", "button-join")            # unknown language -> English
    tr.t("en", "lobby-title.hint")          # "message.attribute" selects an attribute

Arguments are either ``int`` (numbers; plural variants are chosen by CLDR rules, e.g.
Russian one/few/many) or ``str``. Strings are inserted verbatim: the caller passes them
already HTML-escaped, because the bot sends messages with ``parse_mode=HTML``.

A key missing from a language falls back to English; a key missing everywhere never
raises — it is logged and rendered as ``[key]`` (tests/test_locales.py keeps the files
complete).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from fluent.runtime import FluentBundle, FluentResource
from fluent.syntax import ast as fluent_ast

__all__ = ["DEFAULT_LANGUAGE", "LOCALES_DIR", "FluentArg", "Translator"]

logger = logging.getLogger(__name__)

DEFAULT_LANGUAGE = "en"
LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"

FluentArg = str | int
_CACHE_SIZE = 50_000


class Translator:
    """All languages found in ``locales_dir`` (``<lang>.ftl``), loaded at construction."""

    def __init__(
        self, locales_dir: Path | str | None = None, *, default: str = DEFAULT_LANGUAGE
    ) -> None:
        directory = Path(locales_dir) if locales_dir is not None else LOCALES_DIR
        self._default = default.lower()
        self._bundles: dict[str, FluentBundle] = {}
        self._cache: dict[tuple[str | None, str, tuple[tuple[str, FluentArg], ...]], str] = {}
        for path in sorted(directory.glob("*.ftl")):
            language = path.stem.lower()
            resource = FluentResource(path.read_text(encoding="utf-8"))
            for entry in resource.body:
                if isinstance(entry, fluent_ast.Junk):
                    logger.warning(
                        "Syntax error in %s, ignored: %r", path.name, (entry.content or "").strip()
                    )
            bundle = FluentBundle([language], use_isolating=False)
            bundle.add_resource(resource)
            self._bundles[language] = bundle
        if self._default not in self._bundles:
            raise FileNotFoundError(f"no {self._default}.ftl in {directory}")

    @property
    def languages(self) -> tuple[str, ...]:
        """Available language codes, e.g. ("de", "en", "ru")."""
        return tuple(sorted(self._bundles))

    @property
    def default(self) -> str:
        return self._default

    def normalize(self, code: str | None) -> str:
        """Map a Telegram ``language_code`` (IETF tag) to an available language:
        "de-AT" -> "de", "RU" -> "ru", "pt-br"/None/"" -> the default ("en")."""
        return self.available(code) or self._default

    def available(self, code: str | None) -> str | None:
        """The available language a ``language_code`` names ("de-AT" -> "de"), else None."""
        if not code:
            return None
        tag = code.strip().replace("_", "-").lower()
        if tag in self._bundles:
            return tag
        primary = tag.split("-", 1)[0]
        if primary in self._bundles:
            return primary
        return None

    def has(self, key: str, lang: str | None = None) -> bool:
        """Whether ``key`` ("message" or "message.attribute") exists in the language
        (the default language when ``lang`` is None) — without fallback."""
        language = self._default if lang is None else self.normalize(lang)
        message_id, _, attribute = key.partition(".")
        bundle = self._bundles[language]
        if not bundle.has_message(message_id):
            return False
        message = bundle.get_message(message_id)
        if attribute:
            return attribute in message.attributes
        return message.value is not None

    def t(self, lang: str | None, key: str, **args: FluentArg) -> str:
        """Translate ``key`` for ``lang`` with ``args``; never raises for missing keys.

        Results are cached: a game renders the same few dozen strings over and over, and
        formatting numbers through Babel costs tens of microseconds each time."""
        cache_key = (lang, key, tuple(sorted(args.items())))
        cached = self._cache.get(cache_key)
        if cached is None:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            cached = self._cache[cache_key] = self._format(lang, key, **args)
        return cached

    def _format(self, lang: str | None, key: str, **args: FluentArg) -> str:
        language = self.normalize(lang)
        message_id, _, attribute = key.partition(".")
        candidates = [language] if language == self._default else [language, self._default]
        for candidate in candidates:
            bundle = self._bundles[candidate]
            if not bundle.has_message(message_id):
                continue
            message = bundle.get_message(message_id)
            pattern = message.attributes.get(attribute) if attribute else message.value
            if pattern is None:
                continue
            if candidate != language:
                logger.warning("Missing translation %r for %r, using %r", key, language, candidate)
            result, errors = bundle.format_pattern(pattern, dict(args))
            text = result if isinstance(result, str) else f"[{key}]"
            for error in errors:
                logger.warning("Error formatting %r for %r: %s", key, candidate, error)
            return text
        logger.warning("Missing translation %r (language %r)", key, language)
        return f"[{key}]"

    def format_exact(self, lang: str, key: str, **args: FluentArg) -> tuple[str, list[str]]:
        """Format ``key`` in exactly ``lang`` (no fallback); returns (text, error messages).
        Raises KeyError if the language or key is missing. Meant for checks and tests."""
        bundle = self._bundles[lang]
        message_id, _, attribute = key.partition(".")
        if not bundle.has_message(message_id):
            raise KeyError(f"{lang}: {key}")
        message = bundle.get_message(message_id)
        pattern = message.attributes.get(attribute) if attribute else message.value
        if pattern is None:
            raise KeyError(f"{lang}: {key}")
        result, errors = bundle.format_pattern(pattern, dict(args))
        text = result if isinstance(result, str) else ""
        return text, [str(error) for error in errors]

    def in_all_languages(self, key: str, **args: FluentArg) -> Mapping[str, str]:
        """``key`` rendered in every language (e.g. for setMyCommands per language)."""
        return {language: self.t(language, key, **args) for language in self.languages}
