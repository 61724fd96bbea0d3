"""Pure rendering: (game view, language) -> message text (Telegram HTML) and keyboards.

Nothing here talks to Telegram or the database, so every text is tested without
either. The public table is drawn from `game.view(None)`, which holds no hand:
a hand can only reach the player it belongs to, through `hand()`.

- `common`: `Rendered`, escaping, names, the rules in force;
- `lobby`, `table` (with the log of events), `hand`, `messages` (the result, confirm
  questions, how to play, /help, menus): one module per kind of message;
- `settings` (the /settings menu) and `stats` (/stats), imported by their own names.
"""

from bot.render.common import (
    Rendered,
    card_str,
    card_text,
    cards_text,
    computer_id,
    computer_name,
    esc,
    name_of,
    pack,
    rules_lines,
    rules_summary,
    rules_text,
    short_name,
    time_html,
)
from bot.render.hand import hand
from bot.render.lobby import LobbySeat, lobby
from bot.render.messages import (
    add_to_group_keyboard,
    confirm_kick,
    confirm_leave,
    help_message,
    howto,
    practice_menu,
    result,
)
from bot.render.table import log_line, table, waiting_line

__all__ = [
    "LobbySeat",
    "Rendered",
    "add_to_group_keyboard",
    "card_str",
    "card_text",
    "cards_text",
    "computer_id",
    "computer_name",
    "confirm_kick",
    "confirm_leave",
    "esc",
    "hand",
    "help_message",
    "howto",
    "lobby",
    "log_line",
    "name_of",
    "pack",
    "practice_menu",
    "result",
    "rules_lines",
    "rules_summary",
    "rules_text",
    "short_name",
    "table",
    "time_html",
    "waiting_line",
]
