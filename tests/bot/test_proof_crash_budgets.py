"""A leader that dies (no hand-over) leaves behind the calls it made into Telegram's windows
as of its last write of them, every `KEEP_BUDGETS_EVERY` seconds (`bot.leader`). A game that
moved after that write edited every seated player's hand, a burst into chats that may have
been quiet before (a game that just started): the next leader reckons those private chats
full, so that its first calls, showing every game again, meet no 429 there. (The workers
proof met it: a leader killed a moment after a game started.)"""

from __future__ import annotations

from typing import Any

import pytest

from bot import leader
from bot.render import Rendered
from tests.bot.conftest import BotHarness


def _crash_on_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop that writes no last word of the budgets (a process killed), and no write of
    them but the one as a leader begins (the killing comes before the next)."""
    monkeypatch.setattr(leader, "KEEP_BUDGETS_EVERY", 3600.0)
    save = leader.Term._save_budgets

    async def killed_before_the_last(self: leader.Term, *, final: bool, **kw: Any) -> None:
        if not final:
            await save(self, final=final, **kw)

    monkeypatch.setattr(leader.Term, "_save_budgets", killed_before_the_last)


def _refused(h: BotHarness) -> list[str]:
    return [f"{c.method} {c.chat_id}" for c in h.fake.calls if c.error_code == 429]


async def _a_game_begun_after_the_last_write(h: BotHarness) -> None:
    """Alice and Bob start a game (the leader last wrote its budgets as it began, with no
    game), and then three messages go to Alice at once: her private window (3 calls in
    3 s) is full when the leader dies."""
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-7611, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    for n in range(3):
        await h.rooms.kit.out.send(alice.id, Rendered(f"note {n}"))


async def test_the_next_leader_waits_out_the_hands_of_a_game_that_moved_after_the_write(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    _crash_on_stop(monkeypatch)
    await h.restart()  # (begun anew: its first write is the one the next leader reads)
    await _a_game_begun_after_the_last_write(h)
    await h.restart()  # the next leader shows Alice's hand again
    await h.settle()
    assert _refused(h) == []
    assert h.hand_message(h.users[1]).buttons  # shown, once her window had room
