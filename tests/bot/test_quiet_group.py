"""A quiet group (#31): only the lobby's opening and the result make the members' phones
ring; what concerns one person goes to that person; the lobby message becomes the table;
the lobby's edits leave the group's budget to the table; /leave and /kick questions have a
No (R18)."""

from __future__ import annotations

import random

import pytest

from bot.callbacks import BadCallback, KickData, LeaveData, decode, encode_kick, encode_leave
from tests.bot.conftest import BotHarness, make_settings
from tests.bot.test_game_flow import play_to_the_end, running_game
from tests.fakes.telegram import FakeGroup, FakeUser


def t(h: BotHarness, key: str, **args: str) -> str:
    return h.rooms.kit.t("en", key, **args)


async def lobby_of_three(h: BotHarness, chat_id: int) -> tuple[FakeGroup, list[FakeUser]]:
    """Alice (an admin) opens a lobby; Bob and Carol started the bot."""
    players = [h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")]
    group = h.fake.group(chat_id, "Club", admins={players[0]})
    for user in players:
        await h.send(user.start_private())
    await h.send(players[0].send(group, "/newgame"))
    return group, players


async def test_a_whole_game_rings_the_group_twice_whatever_outsiders_do(
    harness: BotHarness,
) -> None:
    h = harness
    group, (alice, bob, carol) = await lobby_of_three(h, -7101)
    dave = h.user(4, "Dave")  # started the bot, plays in no game here
    erin = h.user(5, "Erin")  # never started the bot
    await h.send(dave.start_private())
    lobby = h.lobby_message(group)
    for user in (bob, bob, carol):  # Bob taps Join twice
        await h.send(user.tap(lobby, "Join"))
    again = bob.tap(lobby, "Join")
    await h.send(again)
    answer = h.fake.answer_for(again)
    assert answer is not None and answer.text == t(h, "lobby-already-joined")
    said = bob.send(group, "brb")
    await h.send(said)
    for user in (dave, erin):
        for command in ("/hand", "/leave", "/settings", "/cancel"):
            await h.send(user.send(group, command))
        await h.send(user.send(group, "/kick", reply_to=said["message"]["message_id"]))
    join = lobby.button("Join").callback_data or ""
    await h.send(alice.tap(lobby, "Start"))
    stale = dave.tap_raw(lobby, join)  # from a keyboard drawn before the start
    await h.send(stale)
    answer = h.fake.answer_for(stale)
    assert answer is not None and answer.text == t(h, "error-lobby-closed")
    for user in (dave, erin):
        await h.send(user.send(group, "/hand"))
    await play_to_the_end(h, group, random.Random(7))

    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        record = await tx.games.latest_for_chat(chat_id=group.id)
    assert record.status == "finished" and record.result_message_id is not None
    rang = h.fake.notifications(group.id)
    assert len(rang) <= 3  # the bound; in fact: the lobby's opening and the result
    assert [m.message_id for m in rang] == [lobby.message_id, record.result_message_id]
    # Dave heard each answer in private; Erin (who the bot cannot write to) in the group,
    # where it rang nobody's phone.
    told_dave = [m.text for m in h.fake.messages(dave.id)]
    assert t(h, "leave-in-lobby") in told_dave and t(h, "error-not-opener") in told_dave
    assert t(h, "error-admins-only") in told_dave
    assert t(h, "error-kick-admins") in told_dave
    assert t(h, "error-not-in-game") in told_dave  # /hand once the game ran
    in_group = [m.text for m in h.fake.messages(group.id)]
    assert t(h, "error-kick-admins") in in_group and t(h, "error-not-in-game") in in_group
    # /hand while the lobby was open: pointed to it, not told there is no game
    assert t(h, "newgame-lobby-open") in in_group and t(h, "error-no-game") not in in_group


async def test_the_lobby_message_becomes_the_table(harness: BotHarness) -> None:
    h = harness
    group, (alice, bob, _) = await lobby_of_three(h, -7102)
    lobby = h.lobby_message(group)
    await h.send(bob.tap(lobby, "Join"))
    before = len(h.fake.messages(group.id))
    start = alice.tap(lobby, "Start")
    await h.send(start)
    answer = h.fake.answer_for(start)
    assert answer is not None and answer.text == t(h, "lobby-started")
    # No message more in the group: the lobby shows the table, its buttons gone.
    assert len(h.fake.messages(group.id)) == before
    table = await h.table_of(group)
    assert table.message_id == lobby.message_id
    assert "Join" not in table.text and "Waiting for" in table.text
    assert all(b.callback_data is None for row in table.buttons for b in row)
    # After a restart the table is still that message, and it follows the game.
    await h.restart()
    game = running_game(h, group)
    assert game is not None
    edits = len(h.fake.message(group.id, lobby.message_id).history)
    await h.tap_random(h.users[int(sorted(game.to_act)[0])], random.Random(1))
    await h.settle()
    assert len(h.fake.message(group.id, lobby.message_id).history) > edits
    assert (await h.table_of(group)).message_id == lobby.message_id


async def test_joins_in_a_row_are_shown_in_one_lobby_edit(harness: BotHarness) -> None:
    h = harness
    await h.stop()
    h.settings = make_settings(h.db_path, lobby_edit_interval=5.0)
    await h.start()
    group, (alice, bob, carol) = await lobby_of_three(h, -7103)
    dave = h.user(4, "Dave")
    await h.send(dave.start_private())
    lobby = h.lobby_message(group)
    taps = [user.tap(lobby, "Join") for user in (bob, carol, dave)]
    for tap in taps:  # three taps in a row, within the interval
        await h.deliver(tap)
        answer = h.fake.answer_for(tap)  # each hears it at once, in the tap's answer
        assert answer is not None and answer.text == t(h, "lobby-joined")
    await h.settle()
    shown = h.fake.message(group.id, lobby.message_id)
    assert f"{alice.first_name}, Bob, Carol, Dave" in shown.text
    assert len(shown.history) == 2  # Bob's at once, then Carol's and Dave's together


async def test_a_lobby_edit_still_waiting_at_the_start_never_covers_the_table(
    harness: BotHarness,
) -> None:
    h = harness
    await h.stop()
    h.settings = make_settings(h.db_path, lobby_edit_interval=5.0)
    await h.start()
    group, (alice, bob, carol) = await lobby_of_three(h, -7107)
    lobby = h.lobby_message(group)
    for tap in (bob.tap(lobby, "Join"), carol.tap(lobby, "Join"), alice.tap(lobby, "Start")):
        await h.deliver(tap)  # Carol's seat waits for the interval when Start comes
    await h.settle()
    shown = h.fake.message(group.id, lobby.message_id)
    assert "Waiting for" in shown.text and "Join" not in shown.text
    # The lobby with Bob, then the table: Carol's lobby edit was dropped, not sent after.
    assert len(shown.history) == 2
    assert "Carol" not in shown.history[1][0]


async def test_computers_are_the_openers_to_add_and_a_tap_by_another_says_so(
    harness: BotHarness,
) -> None:
    h = harness
    group, (_, bob, _) = await lobby_of_three(h, -7104)
    lobby = h.lobby_message(group)
    tap = bob.tap(lobby, "Add computer")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.show_alert
    assert answer.text == t(h, "error-computers-opener", opener="Alice")
    assert "🤖" not in h.lobby_message(group).text
    assert h.fake.message(group.id, lobby.message_id).history == []  # the lobby unchanged


async def test_r18_leave_has_a_no_that_only_the_asker_may_tap(harness: BotHarness) -> None:
    h = harness
    group, (alice, bob, carol) = await lobby_of_three(h, -7105)
    lobby = h.lobby_message(group)
    for user in (bob, carol):
        await h.send(user.tap(lobby, "Join"))
    await h.send(alice.tap(lobby, "Start"))
    await h.send(bob.send(group, "/leave"))
    question = h.fake.last_message(group.id)
    assert question.button_texts == [t(h, "button-resign"), t(h, "button-play-on")]
    assert not question.notified  # silent, like every group message but a few
    other = carol.tap(question, t(h, "button-play-on"))
    await h.send(other)
    answer = h.fake.answer_for(other)
    assert answer is not None and answer.text == t(h, "error-not-your-button")
    no = bob.tap(question, t(h, "button-play-on"))
    await h.send(no)
    answer = h.fake.answer_for(no)
    assert answer is not None and answer.text == t(h, "leave-kept")
    assert h.fake.message(group.id, question.message_id).deleted  # nothing left of it
    game = running_game(h, group)
    assert game is not None and "2" in game.active_players


async def test_r18_questions_left_open_go_when_the_game_ends(harness: BotHarness) -> None:
    """A /leave or /kick question the game ended without an answer to is deleted from the
    group (its buttons would look live under the result); one answered Yes stays, saying
    what it did."""
    h = harness
    group, (alice, bob, carol) = await lobby_of_three(h, -7107)
    lobby = h.lobby_message(group)
    for user in (bob, carol):
        await h.send(user.tap(lobby, "Join"))
    await h.send(alice.tap(lobby, "Start"))
    await h.send(bob.send(group, "/leave"))
    left_open = h.fake.last_message(group.id)
    said = carol.send(group, "hi")
    await h.send(said)
    await h.send(alice.send(group, "/kick", reply_to=said["message"]["message_id"]))
    kick = h.fake.last_message(group.id)
    await h.send(carol.send(group, "/leave"))
    answered = h.fake.last_message(group.id)
    assert len({left_open.message_id, kick.message_id, answered.message_id}) == 3
    await h.send(carol.tap(answered, t(h, "button-resign")))  # Yes: the game ends (R18)
    await h.settle()
    assert h.fake.message(group.id, left_open.message_id).deleted
    assert h.fake.message(group.id, kick.message_id).deleted
    kept = h.fake.message(group.id, answered.message_id)
    assert not kept.deleted and kept.text == t(h, "result-resigned", player="Carol")


async def test_r18_kick_has_a_no_for_admins(harness: BotHarness) -> None:
    h = harness
    group, (alice, bob, carol) = await lobby_of_three(h, -7106)
    lobby = h.lobby_message(group)
    for user in (bob, carol):
        await h.send(user.tap(lobby, "Join"))
    await h.send(alice.tap(lobby, "Start"))
    said = bob.send(group, "brb")
    await h.send(said)
    await h.send(alice.send(group, "/kick", reply_to=said["message"]["message_id"]))
    question = h.fake.last_message(group.id)
    assert question.button_texts == [t(h, "button-kick", player="Bob"), t(h, "button-kick-no")]
    not_admin = carol.tap(question, t(h, "button-kick-no"))
    await h.send(not_admin)
    answer = h.fake.answer_for(not_admin)
    assert answer is not None and answer.text == t(h, "error-kick-admins") and answer.show_alert
    assert not h.fake.message(group.id, question.message_id).deleted
    no = alice.tap(question, t(h, "button-kick-no"))
    await h.send(no)
    assert h.fake.message(group.id, question.message_id).deleted
    answer = h.fake.answer_for(no)  # the admin hears what the No did
    assert answer is not None and answer.text == t(h, "kick-dropped", player="Bob")
    game = running_game(h, group)
    assert game is not None and "2" in game.active_players


def test_r18_the_questions_no_buttons_decode_and_forged_ones_do_not() -> None:
    assert decode(encode_leave(7, 42, no=True)) == LeaveData(7, 42, no=True)
    assert decode(encode_leave(7, 42)) == LeaveData(7, 42)
    assert decode(encode_kick(7, 42, no=True)) == KickData(7, 42, no=True)
    assert decode(encode_kick(7, 42)) == KickData(7, 42)
    for forged in ("q7.42.y", "k7.42.n.n", "q7.42."):
        with pytest.raises(BadCallback):
            decode(forged)
