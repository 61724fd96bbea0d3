"""What every message is made of: `Rendered`, escaping, names, the rules in force."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from bot.i18n import Translator
from bot.keyboard import Keyboard
from engine import Card, Rules
from engine.ai import LEVELS


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    keyboard: Keyboard | None = None
    notify: bool = False
    """In a group, whether this message, sent as a new one, makes the members' phones announce
    it: only the lobby's opening and the result do; every other group message is silent
    (`disable_notification`). In a private chat a new message always notifies (a turn alert
    must); an edit never does."""


NAME_LIMIT: Final = 24
"""Characters of a name in running text; Telegram allows 64 for a first name alone."""


def short_name(name: str, limit: int = NAME_LIMIT) -> str:
    """A name for running text (seat lines, the log, "waiting for", the result): whole up
    to `limit` characters, else cut with an ellipsis. /stats shows names whole."""
    return name if len(name) <= limit else name[: limit - 1].rstrip() + "…"


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def computer_id(level: str, number: int) -> str:
    """The player id of a lobby's `number`th computer player of `level`."""
    return f"cpu-{level}-{number}"


def computer_name(tr: Translator, lang: str, player_id: str) -> str | None:
    """A computer player's name in `lang`, made from its id (see `computer_id`), so that it
    follows the chat's language; None for an id that is not a computer's."""
    prefix, _, rest = player_id.partition("-")
    level, _, number = rest.rpartition("-")
    if prefix != "cpu" or level not in LEVELS or not number.isdigit():
        return None
    return tr.t(lang, "computer-name", n=int(number), level=tr.t(lang, f"level-{level}"))


RED_SUITS: Final = ("♥", "♦")
EMOJI: Final = "\ufe0f"
"""Variation selector 16: ♥️ ♦️ in emoji presentation, which every Telegram client draws
red, in light and dark themes alike; ♠ ♣ stay text and take the theme's text colour. So
the two colours of a deck tell suits apart at a glance (♥ and ♦ as plain text look like
♠ and ♣ on a phone)."""


def card_str(text: str) -> str:
    """A card's text as shown (``"6♥"`` -> ``"6♥️"``): red suits in emoji presentation."""
    if text.endswith(RED_SUITS):
        return text + EMOJI
    return text


def card_text(card: Card | None) -> str:
    return "—" if card is None else card_str(str(card))


def cards_text(cards: Iterable[Card | str]) -> str:
    """Cards in a row, each as `card_str` shows it."""
    return " ".join(card_str(str(card)) for card in cards)


def time_html(tr: Translator, lang: str, deadline: datetime, fmt: str = "r") -> str:
    """A moment as Telegram's date_time entity (Bot API 9.5), which each reader's client
    draws in their own language and time: with `fmt` "r", "in 38 seconds", counting down
    as they look, with no edit from the bot. Inside, for a client too old to know the tag,
    the clock time in UTC ("at 12:34:56 UTC"): never stale, unlike a count of seconds."""
    moment = deadline.astimezone(UTC) if deadline.tzinfo else deadline.replace(tzinfo=UTC)
    fallback = tr.t(lang, "time-at", time=moment.strftime("%H:%M:%S"))
    return f'<tg-time unix="{int(moment.timestamp())}" format="{fmt}">{fallback}</tg-time>'


def name_of(names: Mapping[str, str], player: str) -> str:
    return esc(names.get(player, player))


# ---------------------------------------------------------------- rules


def rules_lines(tr: Translator, lang: str, rules: Rules) -> list[str]:
    """The rules in force, one short line each."""
    preset = rules.preset_name()
    yes, no = tr.t(lang, "value-on"), tr.t(lang, "value-off")
    lines = [
        tr.t(lang, "rules-preset", preset=tr.t(lang, f"preset-{preset or 'custom'}")),
        tr.t(lang, "rules-deck", count=rules.deck_size),
        tr.t(lang, "rules-throw-in", mode=tr.t(lang, f"throw-in-{rules.throw_in}")),
        tr.t(lang, "rules-first-bout", count=rules.first_bout_limit),
        tr.t(lang, "rules-transfer", value=yes if rules.transfer else no),
    ]
    if rules.transfer:
        lines.append(
            tr.t(lang, "rules-show-trump", value=yes if rules.transfer_by_showing_trump else no)
        )
    lines.append(tr.t(lang, "rules-trump-exchange", value=yes if rules.trump_exchange else no))
    if rules.redeal_on_flush:  # R6: no /settings entry and off in every preset; named when on
        lines.append(tr.t(lang, "rules-redeal", value=yes))
    return lines


def rules_summary(tr: Translator, lang: str, rules: Rules) -> str:
    """The rules in one line (the lobby): preset, deck and transfers; /rules has the rest."""
    preset = rules.preset_name()
    return tr.t(
        lang,
        "rules-summary",
        preset=tr.t(lang, f"preset-{preset or 'custom'}"),
        cards=tr.t(lang, "cards-count", count=rules.deck_size),
        transfers=tr.t(lang, "value-on" if rules.transfer else "value-off"),
    )


def pack(texts: Sequence[str], limit: int = 4000) -> list[str]:
    """Join texts with a blank line between them into as few messages as Telegram takes
    (4096 characters; `limit` counts the HTML source, which is never shorter)."""
    messages: list[str] = []
    for text in texts:
        if messages and len(messages[-1]) + 2 + len(text) <= limit:
            messages[-1] += "\n\n" + text
        else:
            messages.append(text)
    return messages


def rules_text(
    tr: Translator, lang: str, rules: Rules, turn_timeout: int, *, title: str | None = None
) -> str:
    """/rules: a title ("Rules", or `title`: whose game they are, in a private chat), then a
    line per option."""
    lines = [f"<b>{title or tr.t(lang, 'rules-title')}</b>", *rules_lines(tr, lang, rules)]
    if turn_timeout:
        lines.append(tr.t(lang, "rules-timeout", seconds=turn_timeout))
    else:
        lines.append(tr.t(lang, "rules-no-timeout"))
    return "\n".join(lines)
