"""No live duplicate of a lobby: a lobby message whose send landed but whose answer was lost
(or whose id a killed bot never stored) works as the lobby, and is retired once another
shows it; a Join on an old lobby message never seats into something the group cannot see."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeGroup, FakeMessage


def lobbies(h: BotHarness, group: FakeGroup) -> list[FakeMessage]:
    """The group's messages with a lobby's buttons (live lobbies)."""

    def lobby_buttons(message: FakeMessage) -> bool:
        data = [b.callback_data or "" for row in message.buttons for b in row]
        return any(d.startswith("l") for d in data)

    return [m for m in h.fake.messages(group.id) if lobby_buttons(m)]


UNTIL_GIVEN_UP = 100
"""502s queued after a lost answer: more than the reply's retries (`REPLY_WITHIN`) and the
sender's tries while the test holds them back take."""


async def lobby_not_known(h: BotHarness, group: FakeGroup) -> None:
    """Alice's /newgame whose lobby landed with its answer lost, and every send after it
    failed (502) until the reply gave up: the lobby is handed to the sender, its message not
    known by id; the 502s go on until the test clears them (`FakeTelegram.clear_faults`).
    Only handled (`h.deliver`): the sender has not sent the lobby anew."""
    alice = h.users[1]
    h.fake.timeout_next("sendMessage", group.id, applied=True)
    h.fake.fail_next("sendMessage", 502, chat_id=group.id, times=UNTIL_GIVEN_UP)
    await h.deliver(alice.send(group, "/newgame"))
    assert h.rooms.store.live(group.id).lobby.message_id is None
    assert len(lobbies(h, group)) == 1


async def lost_lobby(h: BotHarness, group: FakeGroup) -> FakeMessage:
    """The lobby's message not known (`lobby_not_known`), the bot restarted before it could
    send it anew (what it knew of the lost send is gone), then Telegram works again: the
    start shows the lobby anew, and Alice's /newgame again points at it. Two lobby
    messages; the older one."""
    alice = h.users[1]
    await lobby_not_known(h, group)
    (old,) = lobbies(h, group)
    await h.stop()
    h.fake.clear_faults()
    await h.start()
    await h.send(alice.send(group, "/newgame"))
    assert len(lobbies(h, group)) == 2
    return old


async def test_a_lobby_whose_answer_was_lost_is_the_lobby_its_taps_reach(
    harness: BotHarness,
) -> None:
    """The lobby landed and its id is not known (Telegram failed every send after it): the
    taps on it reach the lobby, and it stays the lobby's one message once Telegram works
    again (edited, not sent anew)."""
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-9101, "Club", admins={alice})
    for u in (alice, bob, carol):
        await h.send(u.start_private())
    await lobby_not_known(h, group)
    (first,) = lobbies(h, group)
    await h.deliver(bob.tap(first, "Join"))
    await h.deliver(carol.tap(first, "Join"))
    h.fake.clear_faults()
    await h.settle()
    shown = lobbies(h, group)
    assert [m.message_id for m in shown] == [first.message_id]
    assert "Bob" in shown[0].text and "Carol" in shown[0].text
    assert len(h.fake.messages(group.id)) == 1  # the bot's one message: the lobby


async def test_a_lobby_sent_anew_after_its_answer_was_lost_is_one_message(
    harness: BotHarness,
) -> None:
    """/newgame whose lobby landed with its answer lost: the reply is tried again, and the
    copy that landed is deleted; /newgame again points at the one lobby."""
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-9105, "Club", admins={alice})
    await h.send(alice.start_private())
    h.fake.timeout_next("sendMessage", group.id, applied=True)
    await h.send(alice.send(group, "/newgame"))
    (lobby,) = lobbies(h, group)
    assert lobby.message_id == h.rooms.store.live(group.id).lobby.message_id
    copies = [m for m in h.fake.messages(group.id, include_deleted=True) if m.deleted]
    assert len(copies) == 1 and copies[0].message_id < lobby.message_id
    await h.send(alice.send(group, "/newgame"))
    assert [m.message_id for m in lobbies(h, group)] == [lobby.message_id]


async def test_a_join_on_a_lobby_sent_twice_seats_and_retires_that_message(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9102, "Club", admins={alice})
    for u in (alice, bob):
        await h.send(u.start_private())
    old = await lost_lobby(h, group)
    tap = bob.tap(old, "Join")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "lobby-joined")
    (lobby,) = lobbies(h, group)
    assert lobby.message_id != old.message_id and "Bob" in lobby.text
    await h.send(alice.tap(lobby, "Start"))
    assert h.rooms.store.live(group.id).status == "running"
    assert lobbies(h, group) == []


async def test_a_lobby_left_over_from_a_crash_is_retired_at_its_first_tap(
    harness: BotHarness,
) -> None:
    """The bot stopped after the lobby landed and before it knew its id: the next start
    shows the lobby again (a second message); a Join on the first works, and it goes."""
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-9103, "Club", admins={alice})
    for u in (alice, bob, carol):
        await h.send(u.start_private())
    await lobby_not_known(h, group)
    (old,) = lobbies(h, group)
    await h.stop()
    h.fake.clear_faults()
    await h.start()
    await h.settle()
    assert len(lobbies(h, group)) == 2
    await h.send(bob.tap(old, "Join"))
    (lobby,) = lobbies(h, group)
    assert lobby.message_id != old.message_id and "Bob" in lobby.text
    assert h.fake.message(group.id, old.message_id).deleted
    await h.send(carol.tap(lobby, "Join"))
    await h.send(alice.tap(lobby, "Start"))
    tables = [m for m in h.fake.messages(group.id) if m.text.startswith("Durak · ")]
    assert [m.message_id for m in tables] == [lobby.message_id]
    assert lobbies(h, group) == []


async def test_a_join_on_an_old_lobby_of_a_game_that_began_is_closed(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-9104, "Club", admins={alice})
    for u in (alice, bob, carol):
        await h.send(u.start_private())
    old = await lost_lobby(h, group)
    lobby = lobbies(h, group)[-1]
    await h.send(bob.tap(lobby, "Join"))
    await h.send(alice.tap(lobby, "Start"))
    assert [m.message_id for m in lobbies(h, group)] == [old.message_id]
    tap = carol.tap(old, "Join")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-lobby-closed")
    assert [s.name for s in h.rooms.store.live(group.id).lobby.seats] == ["Alice", "Bob"]
    assert lobbies(h, group) == []
    assert h.fake.message(group.id, old.message_id).text == answer.text


async def test_a_join_on_a_cancelled_lobby_that_kept_its_buttons_is_closed(
    harness: BotHarness,
) -> None:
    """Telegram refused the edit that closed a cancelled lobby: its buttons stayed. Join
    there seats nobody, says the lobby is closed, and the buttons go."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9106, "Club", admins={alice})
    await h.send(alice.start_private(), bob.start_private(), alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    h.fake.fail_next("editMessageText", 400, chat_id=group.id)
    await h.send(alice.tap(lobby, "Cancel"))
    assert lobbies(h, group) == [lobby]  # still with its buttons
    tap = bob.tap(lobby, "Join")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-lobby-closed")
    assert lobbies(h, group) == []
    assert h.rooms.store.live(group.id) is None


async def test_forged_lobby_data_on_another_message_retires_nothing(
    harness: BotHarness,
) -> None:
    """Eve sends the new lobby's Join data from the last game's result (a message with
    buttons, but not these) while the lobby's message is not known: she is seated as from
    the lobby, and the result stays as it is; it does not become the lobby, nor is it
    deleted, and the lobby comes as a message of its own."""
    h = harness
    alice, bob, eve = h.user(1, "Alice"), h.user(2, "Bob"), h.user(66, "Eve")
    group = h.fake.group(-9107, "Club", admins={alice})
    await h.send(eve.start_private())
    await h.open_game(group, [alice, bob])
    await h.rooms.moderation.remove_player(chat_id=group.id, player_id="2", why="left")
    await h.settle()
    (result,) = [m for m in h.fake.messages(group.id) if "Game over" in m.text]
    await lobby_not_known(h, group)
    record = h.rooms.store.live(group.id)
    await h.deliver(eve.tap_raw(result, f"l{record.id}.j"))
    h.fake.clear_faults()
    await h.settle()
    assert [s.name for s in record.lobby.seats] == ["Alice", "Eve"]
    (lobby,) = lobbies(h, group)
    assert lobby.message_id == record.lobby.message_id != result.message_id
    assert "Eve" in lobby.text
    shown = h.fake.message(group.id, result.message_id)
    assert not shown.deleted and "Game over" in shown.text


async def lobby_held_on_its_way(h: BotHarness, group: FakeGroup) -> asyncio.Event:
    """The lobby's message not known (`lobby_not_known`); Telegram works again, Bob takes
    his seat by link, and the sender's send of the lobby anew is held on its way (until the
    event returned is set)."""
    alice, bob = h.users[1], h.users[2]
    group.members[bob.id] = "member"
    await h.send(alice.start_private(), bob.start_private())
    await lobby_not_known(h, group)
    arrived, gate = asyncio.Event(), asyncio.Event()

    async def hold_the_second_lobby(method: str, params: dict[str, Any]) -> None:
        if method == "sendMessage" and params.get("chat_id") == group.id:
            arrived.set()
            await gate.wait()

    h.fake.clear_faults()  # (no await since the sender's last try: it is not on its way)
    h.fake.latency = hold_the_second_lobby
    game_id = h.rooms.store.live(group.id).id
    await h.deliver(bob.send(bob, f"/start j{game_id}"))  # seated
    async with asyncio.timeout(30):  # (a guard: the sender sends the lobby at its next try)
        await arrived.wait()
    return gate


async def test_a_lobby_sent_anew_that_lands_after_the_start_is_retired(
    harness: BotHarness,
) -> None:
    """While the second lobby is on its way, Alice taps Start on the first, which becomes
    the table. The second, landing after the start, is deleted: the table alone stays."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9108, "Club", admins={alice})
    gate = await lobby_held_on_its_way(h, group)
    (first,) = lobbies(h, group)
    await h.deliver(alice.tap(first, "Start"))
    h.fake.latency = None
    gate.set()
    await h.settle()
    assert h.rooms.store.live(group.id).status == "running"
    assert lobbies(h, group) == []
    tables = [m for m in h.fake.messages(group.id) if m.text.startswith("Durak · ")]
    assert [m.message_id for m in tables] == [first.message_id]
    assert bob.id in {s.user_id for s in h.rooms.store.live(group.id).lobby.seats}


async def test_a_lobby_sent_anew_after_a_tap_on_the_first_leaves_one_lobby(
    harness: BotHarness,
) -> None:
    """While the second lobby is on its way, Carol taps Join on the first (the lobby's
    message from then on). The second lands: it is the lobby, and the first is deleted."""
    h = harness
    alice, carol = h.user(1, "Alice"), h.user(3, "Carol")
    h.user(2, "Bob")
    group = h.fake.group(-9109, "Club", admins={alice})
    await h.send(carol.start_private())
    gate = await lobby_held_on_its_way(h, group)
    (first,) = lobbies(h, group)
    await h.deliver(carol.tap(first, "Join"))
    h.fake.latency = None
    gate.set()
    await h.settle()
    (lobby,) = lobbies(h, group)
    assert lobby.message_id != first.message_id
    assert lobby.message_id == h.rooms.store.live(group.id).lobby.message_id
    assert "Bob" in lobby.text and "Carol" in lobby.text
