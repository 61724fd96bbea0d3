"""A kill right after a burst into a private chat: the burst came after the leader's last
write of its send budgets, so the next start does not know when its calls were made. It
reckons them as made as late as the kill could have been (at its own start), not at that
write: a call it makes into that chat waits until Telegram's window for the burst has
passed, and meets no 429 (seen in the chaos run about 2 s after a restart)."""

from __future__ import annotations

import pytest

from bot.render import Rendered
from engine import Game
from tests.bot.conftest import BotHarness
from tests.bot.test_ops_restart_429 import Writes


def _refused(h: BotHarness) -> list[str]:
    return [f"{c.method} {c.chat_id}" for c in h.fake.calls if c.error_code == 429]


async def test_a_burst_after_the_last_write_is_waited_out_after_a_kill(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-7641, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    writes = Writes(monkeypatch)
    h.timing.advance(3.1)  # (Alice's window is empty again)
    out = h.rooms.kit.out
    await out.send(alice.id, Rendered("note"))
    await writes.now(h)  # the last write before the kill: Alice busy just before it
    h.timing.advance(0.4)
    for n in range(2):  # her window (3 calls in 3 s) full, 0.4 s after the write
        await out.send(alice.id, Rendered(f"burst {n}"))
    await h.restart()  # killed right after the burst; the start shows the game again
    for _ in range(2):  # and Alice asks for help twice at once
        await h.send(alice.send_private("/help"))
    await h.settle()
    assert _refused(h) == []
    assert h.hand_message(alice).buttons  # her hand shown again


async def test_a_game_that_ended_after_the_last_write_is_waited_out_after_a_kill(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The game's last move came after the last write, and the kill right after it (the
    chaos run's "after-last-move"): its hands' last edits went out unwritten. The game is
    no longer running, yet its players' private chats are reckoned full at the next start
    all the same (a 429 on seed 3 of the small chaos run, 1.4 s after such a restart)."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-7642, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.set_position(
        group, Game.from_position({"1": "6♠", "2": "9♠ 10♣"}, trump="♦", attacker="1")
    )
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    writes = Writes(monkeypatch)
    h.timing.advance(3.1)  # (every window empty again)
    await writes.now(h)  # the last write: the game running, nobody's chat busy
    await h.send(bob.tap(h.hand_message(bob), "9♠"))  # the last move: Bob is the durak
    assert "Game over" in h.fake.messages(group.id)[-1].text
    await h.restart()  # killed right after it
    for _ in range(3):  # and Alice asks for help three times at once
        await h.send(alice.send_private("/help"))
    await h.settle()
    assert _refused(h) == []
