"""/stats: leaderboard and player records as text. Pure functions, like `bot.render`.

Every number says what it counts: "4 games, durak twice (50%)", a run in words ("3 games
in a row without being the durak"), and a rating with its place among the ranked players
and a footnote on its scale (μ − 3σ: 0 for a newcomer, higher is better). Every player is
ranked from their first game; a rating from fewer than `SETTLED_GAMES` games is marked
provisional. No library or model is named in a player's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot.i18n import Translator
from bot.render.common import Rendered, computer_name, esc
from storage import LeaderboardRow, PlayerRecord

MIN_RANKED_GAMES: Final = 1  # places and ratings are shown from the first game
SETTLED_GAMES: Final = 3  # a rating from fewer games is shown as provisional
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


def _shown_rating(tr: Translator, lang: str, value: float | None, games: int) -> str:
    """The rating, marked provisional before `SETTLED_GAMES` games."""
    if games < SETTLED_GAMES and value is not None:
        return tr.t(lang, "stats-provisional", rating=_rating(value, lang))
    return _rating(value, lang)


def _tally(tr: Translator, lang: str, games: int, durak: int, rate: float) -> str:
    """'4 games, durak twice (50%)'."""
    return tr.t(lang, "stats-tally", games=games, durak=durak, rate=_percent(rate, lang))


def _run(tr: Translator, lang: str, streak: int) -> str | None:
    """The current run in words: games in a row without being the durak, or as the durak."""
    if streak > 0:
        return tr.t(lang, "stats-run-clean", n=streak)
    if streak < 0:
        return tr.t(lang, "stats-run-durak", n=-streak)
    return None


def _name(tr: Translator, lang: str, row: LeaderboardRow) -> str:
    if row.is_computer:  # named in the chat's language of today, not of the game's day
        return esc(computer_name(tr, lang, row.player_id) or row.name) + " 🤖"
    return esc(row.name)


def _line(tr: Translator, lang: str, rank: int, row: LeaderboardRow) -> str:
    return tr.t(
        lang,
        "stats-line",
        rank=str(rank),
        name=_name(tr, lang, row),
        rating=_shown_rating(tr, lang, row.rating, row.games),
        tally=_tally(tr, lang, row.games, row.durak_count, row.durak_rate),
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
    """The chat's top players by rating, then the caller's own line if ranked below them.
    Everyone is ranked from their first game; a rating from fewer than `SETTLED_GAMES`
    games is marked provisional (and a note says what that means)."""
    lines = [f"<b>{tr.t(lang, 'stats-title', chat=esc(title))}</b>", ""]
    lines += [_line(tr, lang, n, row) for n, row in enumerate(rows, start=1)]
    if me is not None:
        my_rank, mine = me
        if my_rank is not None and all(r.player_id != mine.player_id for r in rows):
            if my_rank > len(rows) + 1:  # "…" stands for the ranks between the top and mine
                lines.append("…")
            lines.append(_line(tr, lang, my_rank, mine))
    ranked_shown = len(lines) > 2
    if not ranked_shown:
        lines.append(tr.t(lang, "stats-empty"))
    notes = []
    shown = [*rows, *([me[1]] if me is not None else [])]
    if ranked_shown:
        notes.append(tr.t(lang, "stats-footer"))
        if any(row.games < SETTLED_GAMES for row in shown):
            notes.append(tr.t(lang, "stats-provisional-note", min=SETTLED_GAMES))
    if show_computers and any(row.is_computer for row in shown):  # the 🤖 needs explaining
        notes.append(tr.t(lang, "stats-computer-mark"))
    if notes:
        lines += ["", *(f"<i>{note}</i>" for note in notes)]
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


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's record in one group (``title``) or over all groups (``title`` None), with
    their place among the ``ranked`` players there (``rank`` None: not ranked)."""

    title: str | None
    record: PlayerRecord
    rank: int | None = None
    ranked: int = 0


def _rating_line(tr: Translator, lang: str, standing: Standing) -> str:
    record = standing.record
    rating = _shown_rating(tr, lang, record.rating, record.games)
    if standing.rank is None:
        return tr.t(lang, "stats-rating", rating=rating)
    return tr.t(
        lang,
        "stats-rating-place",
        rating=rating,
        rank=standing.rank,
        of=max(standing.ranked, standing.rank),
        scope="all" if standing.title is None else "group",
    )


def _block(tr: Translator, lang: str, standing: Standing) -> list[str]:
    record = standing.record
    heading = tr.t(lang, "stats-overall") if standing.title is None else esc(standing.title)
    # a run as long as the record says nothing the tally does not ("never the durak")
    run = _run(tr, lang, record.streak) if abs(record.streak) < record.games else None
    return [
        f"<b>{heading}</b>",
        _tally(tr, lang, record.games, record.durak_count, record.durak_rate),
        *([run] if run is not None else []),
        _rating_line(tr, lang, standing),
    ]


def player_card(
    tr: Translator,
    lang: str,
    *,
    name: str,
    overall: Standing | None,
    chats: Sequence[Standing],
) -> Rendered:
    """A player's own record: overall, then per group; one block if all of their games
    were in one group (the two would say the same)."""
    lines = [f"<b>{tr.t(lang, 'stats-player-title', name=esc(name))}</b>"]
    if overall is None:
        lines.append(tr.t(lang, "stats-no-games"))
        return Rendered("\n".join(lines))
    only_one = len(chats) == 1 and chats[0].record.games == overall.record.games
    for standing in chats if only_one else [overall, *chats]:
        lines += ["", *_block(tr, lang, standing)]
    lines += ["", f"<i>{tr.t(lang, 'stats-rating-note', min=SETTLED_GAMES)}</i>"]
    return Rendered("\n".join(lines))
