"""A result posted again after a crash is shown once: the process before posted it and died
before storing so (a SIGKILL right after a game's last move); the next start cannot tell
whether it landed, posts it again, and deletes the copy it finds right after the table."""

from __future__ import annotations

import pytest

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
