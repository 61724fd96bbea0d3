"""Bot benchmark with one or several worker processes behind a webhook (issues #20, #30).

    python bench/bot.py --workers 3 [--database postgresql|postgresql://...] [--games 12]
    (the same as `python bench/workers.py ...`)

N `python -m bot` processes in webhook mode on one PostgreSQL (a server of its own with
durable settings, as `bench/bot.py --database postgresql`, or an empty database of yours),
or one on SQLite (`--database sqlite`), the fake Bot API on loopback posting every update
to them round-robin (`WebhookDelivery`, as a reverse proxy in front of the workers would,
one update of a chat at a time, as Telegram does), and G games of P players at machine
pace: each player taps a playable button as soon as their hand has changed
(`tests.workers.People`). Telegram's limits are out of the way (as in `bench/bot.py`): this
measures the workers and the database.

Printed: the play phase's wall time, the updates acknowledged a second, the moves stored a
second, a tap's latency (from its post to the bot's answer to it, p50/p99: what the player
waits for), the post's answer time (what Telegram waits for), posts that failed and were
sent again, and the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from storage import Database, NotFound
from tests.bot.conftest import TOKEN
from tests.fakes.loopback import LoopbackBotAPI
from tests.fakes.telegram import FakeTelegram
from tests.fakes.webhook import Attempt, WebhookDelivery
from tests.workers import NAMES, Cluster, People, game_over, open_games

UNLIMITED = "1000000"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


async def run(args: argparse.Namespace, url: str, workdir: Path) -> bool:
    fake = FakeTelegram(token=TOKEN)
    rng = random.Random(args.seed)
    users = [
        fake.user(100 + i, NAMES[i % len(NAMES)] + str(i)) for i in range(args.games * args.players)
    ]
    seated = [users[g * args.players : (g + 1) * args.players] for g in range(args.games)]
    groups = [fake.group(-5000 - g, f"Club {g}", admins={m[0]}) for g, m in enumerate(seated)]
    people = People(fake, users, random.Random(rng.random()))
    async with LoopbackBotAPI(fake) as server:
        cluster = Cluster(
            server,
            url,
            workdir,
            args.workers,
            # No turn runs out: the players wait for their hand, so a hand left showing an
            # older state would stall its game, and the run fails with what each stuck chat
            # shows.
            TURN_TIMEOUT="0",
            COMPUTER_DELAY="0",
            PRIVATE_SENDS=UNLIMITED,
            GROUP_SENDS=UNLIMITED,
            BOT_SENDS=UNLIMITED,
        )
        await cluster.start_all()
        try:
            await server.wait_for(lambda: fake.webhook is not None)
            async with WebhookDelivery(fake, urls=cluster.urls) as delivery:
                await open_games(fake, server, delivery, groups, seated)
                acked_before, attempts_before = len(delivery.acknowledged), len(delivery.attempts)
                load_before = os.getloadavg()[0]
                started = time.perf_counter()
                while not all(game_over(fake, g) for g in groups):
                    await server.wait_for(
                        lambda: people.ready() or all(game_over(fake, g) for g in groups)
                    )
                    people.act()
                await delivery.idle()
                elapsed = time.perf_counter() - started
                load_after = os.getloadavg()[0]
                acked = len(delivery.acknowledged) - acked_before
                attempts = delivery.attempts[attempts_before:]
        except BaseException:
            stuck = []
            for group, members in zip(groups, seated, strict=True):
                if game_over(fake, group):
                    continue
                stuck.append(f"group {group.id}:")
                for m in fake.messages(group.id)[-2:]:
                    stuck.append(f"  {m.message_id}: {m.text[:300]!r}")
                for user in members:
                    for m in fake.messages(user.id)[-3:]:
                        shown = f"{m.text[:120]!r} {m.button_texts}"
                        stuck.append(f"  user {user.id} {m.message_id} ({m.edits}): {shown}")
            (Path.cwd() / "bench-workers.log").write_text(cluster.logs() + "\n".join(stuck))
            raise
        finally:
            people.close()
            codes = await cluster.stop_all()
    moves = await stored_moves(url, [g.id for g in groups])
    answered = [a.seconds for a in attempts if a.ok]
    latencies = tap_latencies(fake, attempts, people.tapped)
    print(f"{args.workers} workers, {args.games} games of {args.players} players, machine pace")
    print(
        f"play phase: {elapsed:.2f} s; load average (1 min) before/after: "
        f"{load_before:.2f}/{load_after:.2f}"
    )
    print(f"taps: {people.taps}; updates acknowledged: {acked}, {acked / elapsed:.0f} per second")
    print(f"moves stored: {moves}, {moves / elapsed:.0f} per second")
    print(
        f"a tap, from its post to its answer: p50 {percentile(latencies, 50) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 99) * 1000:.1f} ms ({len(latencies)} taps)"
    )
    print(
        f"a post's answer (Telegram waits for it): p50 {percentile(answered, 50) * 1000:.1f} ms, "
        f"p99 {percentile(answered, 99) * 1000:.1f} ms"
    )
    failed = [a for a in attempts if not a.ok]
    print(f"posts that failed and were sent again: {len(failed)}")
    ok = all(code == 0 for code in codes) and not failed
    if not ok:
        print(f"FAILED: exit codes {codes}, {len(failed)} failed posts")
        (Path.cwd() / "bench-workers.log").write_text(cluster.logs())
    return ok


def tap_latencies(
    fake: FakeTelegram, attempts: list[Attempt], tapped: dict[int, str]
) -> list[float]:
    """For each tap, seconds from its (first) post to the bot's answer to it."""
    posted: dict[int, float] = {}
    for attempt in attempts:
        start = attempt.at - attempt.seconds
        posted[attempt.update_id] = min(start, posted.get(attempt.update_id, start))
    answered: dict[str, float] = {}
    for call in fake.calls:
        if call.method == "answerCallbackQuery" and call.ok:
            answered.setdefault(str(call.params.get("callback_query_id")), call.at)
    return [
        answered[query] - posted[update_id]
        for update_id, query in tapped.items()
        if update_id in posted and query in answered
    ]


async def stored_moves(url: str, chat_ids: list[int]) -> int:
    db = await Database.open(url)
    try:
        total = 0
        async with db.transaction(readonly=True) as tx:
            for chat_id in chat_ids:
                try:
                    record = await tx.games.latest_for_chat(chat_id=chat_id)
                except NotFound:
                    continue
                if record.game is not None:
                    total += record.game.move_number
        return total
    finally:
        await db.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--database",
        default="postgresql",
        help="postgresql: a server of its own (durable settings); a postgresql:// URL of an "
        "empty database; or sqlite (one worker only: what several should match)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="durak-bench-workers-") as tmp:
        if args.database == "postgresql":
            from tests import postgres

            server = postgres.PostgresServer.start(durable=True)
            try:
                ok = asyncio.run(run(args, server.url("postgres"), Path(tmp)))
            finally:
                server.stop()
        elif args.database.startswith(("postgresql://", "postgres://")):
            ok = asyncio.run(run(args, args.database, Path(tmp)))
        elif args.database == "sqlite" and args.workers == 1:  # the embedded default, as a
            url = f"sqlite:///{Path(tmp) / 'durak.sqlite3'}"  # webhook: the one to match
            ok = asyncio.run(run(args, url, Path(tmp)))
        else:
            parser.error("several workers need PostgreSQL: --database postgresql or a URL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
