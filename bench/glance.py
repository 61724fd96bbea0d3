"""How long the table and the hands are, over whole 6-player games with transfers.

Plays whole games of six (computer players of the easy level, seeded) with transfers, showing a
trump and the trump swap on, 36 and 52 cards, through the renderer with the log the bot
keeps, and measures every state a player could see: the group's table and each seated
player's hand, in English, German and Russian. Prints p50 / p95 / max of the lines and of the
characters a reader sees (the HTML's tags left out, its entities read; the deadline as its
text for old clients, as long as "in 38 seconds"). The targets (issue #31): the table's p95 at
most 10 lines and 500 characters. Run: `python bench/glance.py [--games N] [--seed S]`.
"""

from __future__ import annotations

import argparse
import html
import re
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

# bench/bot.py is named like the package measured here: keep this folder off the import path.
_ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _ROOT / "bench"]
sys.path.append(str(_ROOT))

from bot import render  # noqa: E402
from bot.i18n import Translator  # noqa: E402
from bot.log import entries_for, trim  # noqa: E402
from engine import Game, Rules, Transferred  # noqa: E402
from engine.ai import EasyPlayer  # noqa: E402
from storage import LogEntry  # noqa: E402

LANGS = ("en", "de", "ru")
NAMES = ("Alexandra", "Bob", "Владимир", "Jean-Baptiste", "Mia", "Konstantin")
TAG = re.compile(r"<[^>]+>")
MAX_LINES, MAX_CHARS = 10, 500


def visible(text: str) -> str:
    """What a reader sees of a message's HTML."""
    return html.unescape(TAG.sub("", text))


def play(
    seed: int, deck: int, tr: Translator
) -> tuple[dict[str, list[str]], dict[str, list[str]], int]:
    """One whole game: every table and every hand shown along it, by language; and the number
    of transfers made."""
    players = [str(i + 1) for i in range(len(NAMES))]
    names = dict(zip(players, NAMES, strict=True))
    rules = Rules.preset("perevodnoy").model_copy(
        update={"deck_size": deck, "transfer_by_showing_trump": True, "trump_exchange": True}
    )
    game = Game.new(players, rules=rules, seed=seed)
    choosers = {p: EasyPlayer(seed * 10 + i) for i, p in enumerate(players)}
    deadline = datetime(2026, 12, 5, 12, 0, 40, tzinfo=UTC)
    log: list[LogEntry] = []
    tables: dict[str, list[str]] = {lang: [] for lang in LANGS}
    hands: dict[str, list[str]] = {lang: [] for lang in LANGS}
    transfers = 0
    while not game.is_over:
        player = sorted(game.to_act)[0]
        events = game.apply(player, choosers[player].choose(game, player))
        transfers += sum(isinstance(e, Transferred) for e in events)
        log += entries_for(events)
        trim(log)
        deadline += timedelta(seconds=5)
        for lang in LANGS:
            public = game.view(None)
            tables[lang].append(
                render.table(tr, lang, public, names=names, log=log, deadline=deadline).text
            )
            for p in game.active_players:
                hands[lang].append(
                    render.hand(
                        tr,
                        lang,
                        game.view(p),
                        game_id=1,
                        names=names,
                        chat_title="Durak club",
                        deadline=deadline,
                    ).text
                )
    return tables, hands, transfers


def figures(texts: list[str]) -> str:
    shown = [visible(t) for t in texts]
    lines = [t.count("\n") + 1 for t in shown]
    chars = [len(t) for t in shown]

    def stats(values: list[int]) -> str:
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        return f"p50 {cuts[49]:.0f} / p95 {cuts[94]:.0f} / max {max(values)}"

    return f"lines {stats(lines)}; characters {stats(chars)} ({len(texts)} texts)"


def p95(values: list[int]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[94]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per deck size")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    tr = Translator()
    started = time.perf_counter()
    tables: dict[str, list[str]] = {lang: [] for lang in LANGS}
    hands: dict[str, list[str]] = {lang: [] for lang in LANGS}
    transfers = 0
    for deck in (36, 52):
        for n in range(args.games):
            t, h, moved = play(args.seed + n, deck, tr)
            transfers += moved
            for lang in LANGS:
                tables[lang] += t[lang]
                hands[lang] += h[lang]
    print(f"{2 * args.games} games of six (36 and 52 cards), {transfers} transfers")
    ok = True
    for lang in LANGS:
        print(f"table {lang}: {figures(tables[lang])}")
        shown = [visible(t) for t in tables[lang]]
        ok &= p95([t.count("\n") + 1 for t in shown]) <= MAX_LINES
        ok &= p95([len(t) for t in shown]) <= MAX_CHARS
    for lang in LANGS:
        print(f"hand  {lang}: {figures(hands[lang])}")
    verdict = "met" if ok else "MISSED"
    print(f"target (table p95 <= {MAX_LINES} lines, <= {MAX_CHARS} characters): {verdict}")
    print(f"{time.perf_counter() - started:.1f} s")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
