"""Kills under Telegram's limits: a process killed right after a burst (its last write of
the send budgets just before it: `bot.leader`), and the next one, showing every game
again, meets no 429."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bot import leader
from tests.bot.conftest import BotHarness


class Writes:
    """The leader's periodic write of its budgets, made when the test says (the last one
    before a kill), and none as it stops: a process killed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(leader, "KEEP_BUDGETS_EVERY", 3600.0)
        save = self._save = leader.Term._save_budgets

        async def killed_before_the_last(self: leader.Term, *, final: bool, **kw: Any) -> None:
            if not final:
                await save(self, final=final, **kw)

        monkeypatch.setattr(leader.Term, "_save_budgets", killed_before_the_last)

    async def now(self, h: BotHarness) -> None:
        lead = leader.leadership(h.app)
        assert lead is not None and lead.term is not None
        await self._save(lead.term, final=False)


def _refused(h: BotHarness) -> list[str]:
    return [f"{c.method} {c.chat_id}" for c in h.fake.calls if c.error_code == 429]


async def test_games_played_through_kills_after_bursts_meet_no_429(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two games, and every few moves a burst (a group's /rules, a tap storm on a hand)
    right after the leader's last write of its budgets, and a kill; every restart shows
    both games again. No call is refused, and both games end."""
    h = harness
    users = [h.user(n, name) for n, name in enumerate(["Alice", "Bob", "Carol", "Dan"], 1)]
    groups = [
        h.fake.group(-7631, "Club", admins={users[0]}),
        h.fake.group(-7632, "Pub", admins={users[2]}),
    ]
    await h.open_game(groups[0], users[:2])
    await h.open_game(groups[1], users[2:])
    await h.restart()  # (stopped: its budgets written for the next)
    await h.settle()
    writes = Writes(monkeypatch)
    rng = random.Random(7)
    for cycle in range(3000):
        live = [r for r in h.rooms.store.live_records() if r.status == "running"]
        if not live:
            break
        for record in live:
            game = record.game
            assert game is not None
            await h.tap_random(h.users[int(sorted(game.to_act)[0])], rng)
        if cycle % 5 == 4:
            await writes.now(h)  # the last write before the kill
            record = live[0]
            opener = h.users[int(sorted(record.game.to_act)[0])]  # type: ignore[union-attr]
            hand = h.hand_message(opener)
            group = next(g for g in groups if g.id == record.chat_id)
            await h.deliver(*[opener.send(group, "/rules") for _ in range(8)])
            data = hand.buttons[0][0].callback_data or ""
            await h.deliver(*[opener.tap(hand, data) for _ in range(5)])
            await h.restart()  # killed right after the burst
            await h.settle()
    assert _refused(h) == []
    assert [r for r in h.rooms.store.live_records() if r.status == "running"] == []
