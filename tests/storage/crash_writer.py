"""A writer for the crash test: plays seeded games, one transaction per action, forever.

    python crash_writer.py DATABASE_URL SEED

After each transaction commits it prints ``<game id> <move number> <finished 0|1>`` and
flushes, so the parent knows exactly which actions were committed before it kills us.
"""

from __future__ import annotations

import asyncio
import random
import sys
from datetime import timedelta

from engine import Game, RandomPlayer, Rules
from storage import (
    Database,
    FinishedGame,
    GameRecord,
    Lobby,
    NotFound,
    Participant,
    Player,
    Seat,
    utcnow,
)

CHAT_ID = -1000


def new_game(rng: random.Random) -> GameRecord:
    user_ids = rng.sample(range(1, 10), rng.randint(2, 4))
    seats = [Seat(player_id=str(u), user_id=u, name=f"Игрок {u}") for u in user_ids]
    players = [s.player_id for s in seats]
    rules = Rules.preset(rng.choice(["classic", "perevodnoy", "short"]))
    return GameRecord(
        chat_id=CHAT_ID,
        status="running",
        language="ru",
        rules=rules,
        lobby=Lobby(opener_id=user_ids[0], seats=seats),
        game=Game.new(players, rules=rules, seed=rng.randrange(2**32)),
        started_at=utcnow(),
    )


def finished(record: GameRecord, game: Game) -> FinishedGame:
    outcome = game.outcome
    assert outcome is not None and record.started_at is not None
    order = [p for group in outcome.out_order for p in group]
    participants = []
    for seat, player in enumerate(game.players):
        is_durak = player == outcome.durak
        participants.append(
            Participant(
                seat=seat,
                player_id=player,
                user_id=int(player),
                name=f"Игрок {player}",
                is_computer=False,
                result="durak" if is_durak else ("draw" if outcome.draw else "won"),
                place=order.index(player) + 1 if player in order else len(game.players),
            )
        )
    return FinishedGame(
        chat_id=record.chat_id,
        game_id=record.id,
        rules=record.rules,
        started_at=record.started_at,
        ended_at=utcnow(),
        bouts=outcome.bouts,
        draw=outcome.draw,
        durak=outcome.durak,
        participants=participants,
    )


async def main(url: str, seed: int) -> None:
    rng = random.Random(seed)
    async with Database.connect(url) as db:
        while True:
            async with db.transaction() as tx:
                try:
                    record = await tx.games.active_for_chat(chat_id=CHAT_ID)
                except NotFound:
                    record = await tx.games.create(record=new_game(rng))
                game = record.game
                assert game is not None
                player = rng.choice(sorted(game.to_act))
                game.apply(player, RandomPlayer(rng.randrange(2**32)).choose(game, player))
                await tx.players.upsert(player=Player(int(player), f"Игрок {player}", "ru"))
                record.deadline = utcnow() + timedelta(seconds=60)
                record.timeouts = {player: 0}
                if game.is_over:
                    record.status = "finished"
                    record.deadline = None
                    await tx.results.record(result=finished(record, game))
                await tx.games.save(record=record, expected_version=record.version)
            print(record.id, game.move_number, int(game.is_over), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
