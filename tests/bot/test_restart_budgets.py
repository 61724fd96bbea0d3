"""Telegram counts a bot's calls whichever process made them: a process that starts (a
restart, or a new leader) counts what the one before it sent in the windows that are still
open (`bot.leader`, `Budgets.carry`), so its first calls, showing every game again, meet no
429."""

from __future__ import annotations

import pytest

from bot import leader
from bot.render import Rendered
from tests.bot.conftest import BotHarness


async def _fill_alices_window(h: BotHarness) -> None:
    """A game of Alice and Bob, and then three messages to Alice at once: her private
    window (3 calls in 3 s) is full when the bot restarts."""
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-7601, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    for n in range(3):
        await h.rooms.kit.out.send(alice.id, Rendered(f"note {n}"))


def _refused(h: BotHarness) -> list[str]:
    return [f"{c.method} {c.chat_id}" for c in h.fake.calls if c.error_code == 429]


async def test_a_restart_counts_what_the_process_before_it_sent(harness: BotHarness) -> None:
    h = harness
    await _fill_alices_window(h)
    await h.restart()  # shows Alice's hand again at once: a call into her full window
    await h.settle()
    assert _refused(h) == []
    assert h.hand_message(h.users[1]).buttons  # shown, once her window had room


async def test_without_counting_them_a_restart_meets_a_429(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The test above can fail: a start that forgets them is refused.)"""

    async def forget(self: leader.Term) -> None:
        pass

    monkeypatch.setattr(leader.Term, "_carry_budgets", forget)
    h = harness
    await _fill_alices_window(h)
    await h.restart()
    await h.settle()
    assert _refused(h) == ["editMessageText 1"]
