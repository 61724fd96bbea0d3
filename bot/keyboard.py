"""Inline keyboards as small immutable values, sent to Telegram as ready-made JSON.

python-telegram-bot's `InlineKeyboardMarkup` would do the same job, but each of its buttons is a
full `TelegramObject` (built, frozen, then turned back into a dict on every call): for a hand
of a dozen cards that was a large share of the bot's time per move. These keep only what the
bot uses (callback, link and Mini App buttons, and their colour), use the Bot API's own field
names, and are encoded once (orjson: compact UTF-8 JSON, several times as fast as the
standard library).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import orjson

Style = Literal["primary", "success", "danger"]
"""A button's colour (Bot API 9.4, `InlineKeyboardButton.style`; python-telegram-bot's
`constants.KeyboardButtonStyle`): blue, green, red. Telegram refuses any other value;
clients older than February 2026 ignore the field and draw the button as usual."""

PRIMARY: Final[Style] = "primary"  # blue: what the player most likely does now (a card)
SUCCESS: Final[Style] = "success"  # green: finishing well (Done)
DANGER: Final[Style] = "danger"  # red: giving something up (Take)


@dataclass(frozen=True, slots=True)
class Button:
    """One inline button: `callback_data` (at most 64 bytes), a `url`, or a `web_app` (the
    https URL of a Mini App: private chats only); `style` colours it."""

    text: str
    callback_data: str | None = None
    url: str | None = None
    style: Style | None = None
    web_app: str | None = None

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.callback_data, self.url, self.web_app)) != 1:
            raise ValueError(
                f"button {self.text!r} needs exactly one of callback_data, url and web_app"
            )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any]
        if self.callback_data is not None:
            out = {"text": self.text, "callback_data": self.callback_data}
        elif self.web_app is not None:
            out = {"text": self.text, "web_app": {"url": self.web_app}}
        else:
            assert self.url is not None
            out = {"text": self.text, "url": self.url}
        if self.style is not None:
            out["style"] = self.style
        return out


@dataclass(frozen=True, slots=True, init=False)
class Keyboard:
    """An inline keyboard: rows of buttons (the Bot API's `InlineKeyboardMarkup`)."""

    inline_keyboard: tuple[tuple[Button, ...], ...]
    json: str = field(compare=False, repr=False)
    """The `reply_markup` parameter of a Bot API call, encoded once."""

    def __init__(self, rows: Iterable[Iterable[Button]]) -> None:
        keyboard = tuple(tuple(row) for row in rows)
        object.__setattr__(self, "inline_keyboard", keyboard)
        object.__setattr__(self, "json", orjson.dumps(self.to_dict()).decode())

    def to_dict(self) -> dict[str, Any]:
        return {"inline_keyboard": [[b.to_dict() for b in row] for row in self.inline_keyboard]}
