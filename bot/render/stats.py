"""/stats: leaderboard and player records as text. Pure functions, like `bot.render`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from bot.i18n import Translator
from bot.render.common import Rendered, computer_name, esc
from storage import LeaderboardRow, PlayerRecord

MIN_RANKED_GAMES: Final = 3
TOP: Final = 10


# Numbers as each language writes them: a decimal comma and a space before % in de and ru.
_DECIMAL_COMMA = frozenset(("de", "ru"))


def _rating(value: float | None, lang: str) -> str:
    if value is None:
        return "—"
    text = f"{value:.1f}"
    return text.replace(".", ",") if lang in _DECIMAL_COMMA else text


def _percent(value: float, lang: str) -> str:
    number = f"{value * 100:.0f}"
    return f"{number}\u00a0%" if lang in _DECIMAL_COMMA else f"{number}%"


def _streak(value: int) -> str:
    return f"+{value}" if value > 0 else str(value)


def _line(tr: Translator, lang: str, rank: int | None, row: LeaderboardRow) -> str:
    if row.is_computer:  # named in the chat's language of today, not of the game's day
        name = esc(computer_name(tr, lang, row.player_id) or row.name) + " 🤖"
    else:
        name = esc(row.name)
    if rank is None:  # too few games: a rating this early says nothing yet
        return tr.t(
            lang,
            "stats-line-unranked",
            name=name,
            games=row.games,
            min=MIN_RANKED_GAMES,
            durak=row.durak_count,
            rate=_percent(row.durak_rate, lang),
        )
    return tr.t(
        lang,
        "stats-line",
        rank=str(rank),
        name=name,
        rating=_rating(row.rating, lang),
        games=row.games,
        durak=row.durak_count,
        rate=_percent(row.durak_rate, lang),
        streak=_streak(row.streak),
    )


def leaderboard(
    tr: Translator,
    lang: str,
    *,
    title: str,
    rows: Sequence[LeaderboardRow],
    me: tuple[int | None, LeaderboardRow] | None,
    show_computers: bool,
) -> Rendered:
    """The chat's top players by rating, then the caller's own line if not among them."""
    lines = [f"<b>{tr.t(lang, 'stats-title', chat=esc(title))}</b>", ""]
    if not rows:
        lines.append(tr.t(lang, "stats-empty", min=MIN_RANKED_GAMES))
    for rank, row in enumerate(rows, start=1):
        lines.append(_line(tr, lang, rank, row))
    if me is not None and all(r.player_id != me[1].player_id for r in rows):
        my_rank, mine = me
        # "…" stands for the ranks between the top and the caller's; with none shown, a gap
        lines += ["…" if rows else "", _line(tr, lang, my_rank, mine)]
    lines += ["", f"<i>{tr.t(lang, 'stats-footer', min=MIN_RANKED_GAMES)}</i>"]
    shown = [*rows, *([me[1]] if me is not None else [])]
    if show_computers and any(row.is_computer for row in shown):  # the 🤖 needs explaining
        lines.append(f"<i>{tr.t(lang, 'stats-computer-mark')}</i>")
    return Rendered("\n".join(lines))


def as_row(record: PlayerRecord) -> LeaderboardRow:
    return LeaderboardRow(
        player_id=record.player_id,
        user_id=record.user_id,
        name=record.name,
        is_computer=record.is_computer,
        games=record.games,
        durak_count=record.durak_count,
        durak_rate=record.durak_rate,
        rating=record.rating,
        streak=record.streak,
    )


def _record_lines(tr: Translator, lang: str, record: PlayerRecord) -> list[str]:
    return [
        tr.t(
            lang,
            "stats-record",
            rating=_rating(record.rating, lang)
            if record.games >= MIN_RANKED_GAMES
            else tr.t(lang, "stats-rating-pending", min=MIN_RANKED_GAMES),
            games=record.games,
            won=record.won,
            durak=record.durak_count,
            rate=_percent(record.durak_rate, lang),
            streak=_streak(record.streak),
        )
    ]


def player_card(
    tr: Translator,
    lang: str,
    *,
    name: str,
    overall: PlayerRecord | None,
    chats: Sequence[tuple[str, PlayerRecord]],
) -> Rendered:
    """A player's own record: overall, then per group."""
    lines = [f"<b>{tr.t(lang, 'stats-player-title', name=esc(name))}</b>"]
    if overall is None:
        lines.append(tr.t(lang, "stats-no-games"))
        return Rendered("\n".join(lines))
    lines += ["", f"<b>{tr.t(lang, 'stats-overall')}</b>", *_record_lines(tr, lang, overall)]
    for title, record in chats:
        lines += ["", f"<b>{esc(title)}</b>", *_record_lines(tr, lang, record)]
    return Rendered("\n".join(lines))
