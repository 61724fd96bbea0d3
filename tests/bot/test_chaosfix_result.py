"""A result posted again after a crash is shown once: the process before posted it and died
before storing so (a SIGKILL right after a game's last move); the next start cannot tell
whether it landed, posts it again, and deletes the copy it finds right after the table."""

from __future__ import annotations

from typing import Any

import pytest

from bot.delivery.outbox import Outbox
from bot.delivery.screens import Screens
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeGroup, FakeMessage


def results(h: BotHarness, group: FakeGroup) -> list[FakeMessage]:
    return [m for m in h.fake.messages(group.id) if "Game over" in m.text]


async def game_ends_and_the_bot_dies(
    h: BotHarness, monkeypatch: pytest.MonkeyPatch, chat_id: int
) -> FakeGroup:
    """A two-player game ends; its result lands but the bot dies before storing its id."""
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(chat_id, "Club", admins={alice})
    await h.open_game(group, [alice, bob])

    async def dies_first(self: Screens, game_id: int, message_id: int) -> None:
        return None

    with monkeypatch.context() as patch:
        patch.setattr(Screens, "_result_posted", dies_first)
        await h.rooms.moderation.remove_player(chat_id=group.id, player_id="2", why="left")
        await h.settle()
    assert len(results(h, group)) == 1
    return group


async def test_a_result_posted_again_after_a_crash_is_shown_once(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    group = await game_ends_and_the_bot_dies(h, monkeypatch, -9301)
    await h.restart()
    await h.settle()
    (result,) = results(h, group)
    assert "Ready for another" in result.button_texts
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        record = await tx.games.latest_for_chat(chat_id=group.id)
    assert record.result_message_id == result.message_id


async def test_what_people_wrote_after_the_game_stays_when_the_result_comes_again(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    group = await game_ends_and_the_bot_dies(h, monkeypatch, -9302)
    update = h.users[2].send(group, "gg")
    await h.send(update)
    gg = h.fake.message(group.id, update["message"]["message_id"])
    await h.restart()
    await h.settle()
    assert len(results(h, group)) == 1
    assert not gg.deleted and gg.text == "gg" and gg.edits == 0


async def test_a_result_posted_again_is_shown_once_through_a_fault_in_the_search(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search for the copy meets one of Telegram's faults (a 502 on its first look):
    it is tried again, and the copy goes."""
    h = harness
    group = await game_ends_and_the_bot_dies(h, monkeypatch, -9303)
    (copy,) = results(h, group)
    edit = Outbox._edit  # (the search looks with an edit)
    failed: list[int] = []

    async def faulty(self: Any, chat_id: int, message_id: int, *args: Any, **kw: Any) -> None:
        if (chat_id, message_id) == (group.id, copy.message_id) and not failed:
            failed.append(message_id)
            h.fake.fail_next("editMessageText", 502, chat_id=chat_id)
        await edit(self, chat_id, message_id, *args, **kw)

    monkeypatch.setattr(Outbox, "_edit", faulty)
    await h.restart()
    await h.settle()
    assert failed  # (the search met the fault)
    (result,) = results(h, group)
    assert "Ready for another" in result.button_texts
