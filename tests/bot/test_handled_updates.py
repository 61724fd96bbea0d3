"""Webhook mode's groundwork (#20): the update being handled is stored as handled in the
transaction of its first save, and only by the task handling it."""

from __future__ import annotations

from bot import handling
from tests.bot.conftest import BotHarness


async def test_a_new_lobby_is_stored_with_its_update_id(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-9001, "Club", admins={alice})
    update = alice.send(group, "/newgame")
    with handling.handling(update["update_id"]) as state:
        await h.deliver(update)
    await h.settle()
    assert state.recorded and state.outage is None
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        assert await tx.updates.handled(update_id=update["update_id"])
        assert (await tx.games.active_for_chat(chat_id=group.id)).status == "lobby"


async def test_in_polling_mode_no_update_id_is_stored(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-9002, "Club", admins={alice})
    update = alice.send(group, "/newgame")
    await h.send(update)
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        assert not await tx.updates.handled(update_id=update["update_id"])
