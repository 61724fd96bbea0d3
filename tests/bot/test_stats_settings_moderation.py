"""/stats, /settings, /kick, AFK warnings and leaving the group (the stats issue)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot import render
from bot.i18n import Translator
from engine import Game
from storage import ChatSettings, Database
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeGroup, FakeUser


def running(h: BotHarness, group: FakeGroup) -> Game | None:
    record = h.rooms.store.live(group.id)
    return record.game if record is not None and record.status == "running" else None


async def resign_game(
    h: BotHarness, group: FakeGroup, players: list[FakeUser], loser: FakeUser
) -> None:
    """A quick scripted game: `loser` gives up (R18) and is the durak."""
    record = h.rooms.store.live(group.id)
    if record is None:
        await h.send(players[0].send(group, "/newgame"))
        lobby = h.lobby_message(group)
        for p in players[1:]:
            await h.send(p.tap(lobby, "Join"))
        await h.send(players[0].tap(lobby, "Start"))
    await h.send(loser.send(group, "/leave"))
    confirm = h.fake.last_message(group.id)
    await h.send(loser.tap(confirm, confirm.buttons[0][0].text))
    assert running(h, group) is None


async def test_leaderboard_after_scripted_games(harness: BotHarness) -> None:
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    dave = h.user(4, "Dave")
    group = h.fake.group(-4001, "Club", admins={alice})
    for p in (alice, bob, carol, dave):
        await h.send(p.start_private())
    # Bob loses three times, Carol once; Dave plays one game only (ranked all the same).
    for loser in (bob, bob, carol, bob):
        await resign_game(h, group, [alice, bob, carol], loser)
    await resign_game(h, group, [alice, dave], dave)
    await h.send(dave.send(group, "/stats"))
    lines = h.fake.last_message(group.id).text.splitlines()
    ranked = [line for line in lines if line[:2] in ("1.", "2.", "3.", "4.")]
    names = [line.split(":")[0].split(". ")[1] for line in ranked]
    assert names[:2] == ["Alice", "Carol"] and sorted(names[2:]) == ["Bob", "Dave"]
    # Each count says what it counts; no bare "streak +5".
    assert ranked[0].endswith(" · 5 games, never the durak")
    assert ranked[1].endswith(" · 4 games, durak once (25%)")
    bob_line = ranked[names.index("Bob")]
    assert bob_line.endswith(" · 4 games, durak 3 times (75%)")
    assert "provisional" not in bob_line
    # Dave, after one game: a place and a rating, marked provisional.
    dave_line = ranked[names.index("Dave")]
    assert dave_line.endswith(" (provisional) · 1 game, durak once (100%)")
    assert "0 for a new player, higher is better" in lines[-2]  # what the number means
    assert "“Provisional”: fewer than 3 games so far" in lines[-1]
    text = "\n".join(lines)
    assert "openskill" not in text.lower()
    assert not any("streak" in line or "won" in line for line in lines)


async def one_game_bob_lost(h: BotHarness, chat_id: int) -> tuple[FakeUser, FakeGroup]:
    """Alice and Bob play one game in a new group "Club"; Bob gives up."""
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(chat_id, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    await resign_game(h, group, [alice, bob], bob)
    return bob, group


async def test_the_leaderboard_ranks_from_the_first_game(harness: BotHarness) -> None:
    """After one game, everyone who played has a place, their games and times durak, and
    a rating marked provisional."""
    h = harness
    bob, group = await one_game_bob_lost(h, -4009)
    await h.send(bob.send(group, "/stats"))
    lines = h.fake.last_message(group.id).text.splitlines()
    assert lines[2].startswith("1. Alice: ")
    assert lines[2].endswith(" (provisional) · 1 game, never the durak")
    assert lines[3].startswith("2. Bob: ")
    assert lines[3].endswith(" (provisional) · 1 game, durak once (100%)")


async def test_stats_in_private_and_as_a_reply(harness: BotHarness) -> None:
    h = harness
    bob, group = await one_game_bob_lost(h, -4002)
    alice = h.users[1]
    await h.send(bob.send_private("/stats"))
    card = h.fake.last_message(bob.id).text.splitlines()
    assert card[:3] == ["Record of Bob", "", "Club"]
    assert card[3] == "1 game, durak once (100%)"
    # From the first game: a rating, marked provisional, and a place.
    assert card[4].startswith("Rating ") and card[4].endswith(
        " (provisional) · place 2 of 2 in this group"
    )
    assert "provisional before 3 games" in card[-1]
    said = alice.send(group, "good game")
    await h.send(said)
    await h.send(bob.send(group, "/stats", reply_to=said["message"]["message_id"]))
    reply = h.fake.last_message(group.id).text
    assert reply.startswith("Record of Alice\n\nClub\n1 game, never the durak\n")


async def test_private_stats_with_one_group_is_one_block(harness: BotHarness) -> None:
    """All of a player's games in one group: the card shows that group once, not an "All
    groups" block saying the same; a second group brings the overall block back."""
    h = harness
    bob, _club = await one_game_bob_lost(h, -4013)
    alice = h.users[1]
    await h.send(bob.send_private("/stats"))
    card = h.fake.last_message(bob.id).text
    assert "All groups" not in card and card.count("Club") == 1
    pub = h.fake.group(-4014, "Pub", admins={alice})
    await resign_game(h, pub, [alice, bob], alice)
    await h.send(bob.send_private("/stats"))
    lines = h.fake.last_message(bob.id).text.splitlines()
    blocks = [lines[i + 1] for i, line in enumerate(lines) if line == ""]
    assert blocks[:3] == ["All groups", "Pub", "Club"]  # the latest group first
    overall = lines.index("All groups")
    assert lines[overall + 1] == "2 games, durak once (50%)"


async def test_the_current_run_is_worded(harness: BotHarness) -> None:
    """The run is said in words: how many games in a row without being the durak, or as
    the durak; never a bare "+2" or "-2"."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-4016, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    for loser in (alice, bob, bob):
        await resign_game(h, group, [alice, bob], loser)
    await h.send(bob.send_private("/stats"))
    bob_card = h.fake.last_message(bob.id).text.splitlines()
    assert bob_card[3:5] == ["3 games, durak twice (67%)", "The durak 2 games in a row"]
    await h.send(alice.send_private("/stats"))
    alice_card = h.fake.last_message(alice.id).text.splitlines()
    assert alice_card[3:5] == [
        "3 games, durak once (33%)",
        "2 games in a row without being the durak",
    ]
    # Ranked: the rating with its place (the footnote says 0 is where everyone starts).
    assert alice_card[5].startswith("Rating ") and alice_card[5].endswith(
        " · place 1 of 2 in this group"
    )
    assert "0 for a new player, higher is better" in alice_card[-1]
    assert not any("streak" in line or "+" in line for line in alice_card + bob_card)


async def test_a_record_never_says_won(harness: BotHarness) -> None:
    """Durak has a loser and no winner: a record counts games and times durak. A draw
    (both go out in the last bout) and a game someone else lost both read "never the
    durak", not "won 1" or "won 0"."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-4017, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    position = Game.from_position({"1": "6♠", "2": "7♠"}, trump="♦", attacker="1")
    await h.set_position(group, position)
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    await h.send(bob.tap(h.hand_message(bob), "7♠"))  # both out at once: a draw
    assert running(h, group) is None
    await resign_game(h, group, [alice, bob], bob)
    await h.send(alice.send_private("/stats"))
    card = h.fake.last_message(alice.id).text
    assert "2 games, never the durak" in card
    assert "won" not in card.lower()


async def test_settings_change_by_admin_and_refusal_for_others(harness: BotHarness) -> None:
    h = harness
    admin, other = h.user(1, "Admin"), h.user(2, "Other")
    group = h.fake.group(-4003, "Club", admins={admin})
    await h.send(other.send(group, "/settings"))
    assert "Only chat admins" in h.fake.last_message(group.id).text
    await h.send(admin.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    assert "Transfers: off" in menu.button_texts
    expected = {
        "Preset: classic": "Preset: perevodnoy",
        "Deck: 36": "Deck: 52",
        "Throwing in: everybody": "Throwing in: neighbours",
        "Until 1st discard: 5": "Until 1st discard: 6",
        "Show a trump: off": "Show a trump: on",
        "Trump swap: off": "Trump swap: on",
        "Time per move: 60 s": "Time per move: 90 s",
        "Computers on the leaderboard: on": "Computers on the leaderboard: off",
    }
    for before, after in expected.items():
        await h.send(admin.tap(menu, before))
        assert after in menu.button_texts, (before, menu.button_texts)
    assert "Transfers: on" in menu.button_texts  # the perevodnoy preset turned them on
    tap = other.tap(menu, "Transfers: on")
    await h.send(tap)
    assert "Only chat admins" in (h.fake.answer_for(tap).text or "")
    assert "Transfers: on" in menu.button_texts  # unchanged
    async with Database.connect(f"sqlite:///{h.db_path}") as db, db.transaction() as tx:
        stored = await tx.chats.get(chat_id=group.id)
    assert stored.rules.deck_size == 52 and stored.rules.trump_exchange
    assert stored.rules.transfer and stored.rules.transfer_by_showing_trump
    assert stored.rules.throw_in == "neighbours" and stored.rules.first_bout_limit == 6
    assert stored.turn_timeout == 90 and stored.show_computers is False
    await h.send(admin.tap(menu, "Deutsch"))  # one tap: the menu is German now
    assert "✓ Deutsch" in menu.button_texts and "Kartendeck: 52" in menu.button_texts


async def test_settings_apply_to_the_next_game_only(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-4004, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = running(h, group)
    assert game is not None and not game.rules.transfer
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    await h.send(alice.tap(menu, "Transfers: off"))
    assert running(h, group) is game and not game.rules.transfer  # the running game keeps its rules
    await h.send(bob.send(group, "/leave"))
    confirm = h.fake.last_message(group.id)
    await h.send(bob.tap(confirm, confirm.buttons[0][0].text))
    await h.send(alice.send(group, "/newgame"))
    assert "· transfers on —" in h.lobby_message(group).text
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    new = running(h, group)
    assert new is not None and new.rules.transfer


async def test_lobby_opener_may_change_settings_before_the_start(harness: BotHarness) -> None:
    h = harness
    opener, admin = h.user(1, "Opener"), h.user(2, "Admin")
    group = h.fake.group(-4005, "Club", admins={admin})
    await h.send(opener.start_private())
    await h.send(opener.send(group, "/newgame"))
    await h.send(opener.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    await h.send(opener.tap(menu, "Deck: 36"))
    assert "Deck: 52" in menu.button_texts
    assert "· 52 cards ·" in h.lobby_message(group).text  # the lobby shows the rules in force
    # The chat's own options (language, leaderboard) stay the admins'.
    tap = opener.tap(menu, "Deutsch")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-admins-only-chat")
    assert "✓ English" in menu.button_texts
    await h.send(admin.tap(menu, "Deutsch"))
    assert "✓ Deutsch" in menu.button_texts


async def test_kick_removes_the_player_after_confirm(harness: BotHarness) -> None:
    h = harness
    admin, bob, carol = h.user(1, "Admin"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-4006, "Club", admins={admin})
    await h.open_game(group, [admin, bob, carol])
    said = bob.send(group, "brb")
    await h.send(said)
    await h.send(carol.send(group, "/kick", reply_to=said["message"]["message_id"]))
    assert "Only chat admins" in h.fake.last_message(carol.id).text  # to her alone
    await h.send(admin.send(group, "/kick", reply_to=said["message"]["message_id"]))
    confirm = h.fake.last_message(group.id)
    assert "Remove Bob" in confirm.text
    tap = carol.tap(confirm, confirm.buttons[0][0].text)  # not an admin: refused
    await h.send(tap)
    assert running(h, group) is not None
    await h.send(admin.tap(confirm, confirm.buttons[0][0].text))
    assert running(h, group) is None
    assert "removed by an admin" in h.fake.last_message(group.id).text
    table = await h.table_of(group)
    assert "Bob is removed from the game" in table.text and "gives up" not in table.text
    # The question is answered: it says so and offers its button no more.
    confirm = h.fake.message(group.id, confirm.message_id)
    assert confirm.buttons == [] and confirm.text == "Bob was removed by an admin."


async def test_a_second_kick_question_goes_when_the_first_ends_the_game(
    harness: BotHarness,
) -> None:
    h = harness
    admin, bob, carol = h.user(1, "Admin"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-4016, "Club", admins={admin, carol})
    await h.open_game(group, [admin, bob, carol])
    said = bob.send(group, "brb")
    await h.send(said)
    questions = []
    for asker in (admin, carol):  # two admins ask at once
        await h.send(asker.send(group, "/kick", reply_to=said["message"]["message_id"]))
        questions.append(h.fake.last_message(group.id))
    await h.send(admin.tap(questions[0], questions[0].buttons[0][0].text))  # R18 ends it
    await h.settle()
    assert "Bob was removed" in h.fake.message(group.id, questions[0].message_id).text
    assert h.fake.message(group.id, questions[1].message_id).deleted  # nothing left to tap


def test_a_kick_button_keeps_a_long_name_short() -> None:
    rendered = render.confirm_kick(Translator(), "en", game_id=1, user_id=2, name="B" * 120)
    assert rendered.keyboard is not None
    label = rendered.keyboard.inline_keyboard[0][0].text
    assert len(label) < 50 and label.endswith("…") and "B" * 120 in rendered.text


async def test_half_time_warning_then_move_then_removal(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-4007, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = running(h, group)
    assert game is not None
    slow = h.users[int(game.attacker)]
    before = len(h.fake.messages(slow.id))
    h.clock.advance(31)  # half of 60 s
    assert await h.run_due() == 0
    warning = h.fake.last_message(slow.id)
    assert len(h.fake.messages(slow.id)) == before + 1
    assert "Half your time is gone: your move in Club, time runs out at" in warning.text
    # The warning, the table and the hand name the deadline itself (a date_time entity each
    # reader's client counts down), so none goes stale and none needs an edit at half time.
    await h.settle()
    record = h.rooms.store.live(group.id)
    assert record is not None and record.deadline is not None
    unix = int(record.deadline.timestamp())
    table = h.fake.message(group.id, record.table_message_id or 0)
    for message in (warning, table, h.hand_message(slow)):
        times = [e for e in message.entities if e["type"] == "date_time"]
        assert times == [{**times[0], "unix_time": unix, "date_time_format": "r"}]
    assert f"at {record.deadline:%H:%M:%S} UTC" in table.text  # (for an old client)
    h.clock.advance(1)
    await h.run_due()
    assert len(h.fake.messages(slow.id)) == before + 1  # warned once per turn


async def test_r18_a_player_who_leaves_by_command_is_logged_as_giving_up(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-4021, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(bob.send(group, "/leave"))
    confirm = h.fake.last_message(group.id)
    await h.send(bob.tap(confirm, confirm.buttons[0][0].text))
    assert "Bob gives up" in (await h.table_of(group)).text


async def test_a_player_who_leaves_the_group_resigns(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-4008, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(bob.leave(group))
    assert running(h, group) is None
    assert "Bob left the group" in h.fake.last_message(group.id).text
    table = await h.table_of(group)
    assert "Bob leaves the group" in table.text and "gives up" not in table.text


async def test_a_player_who_leaves_the_group_loses_the_lobby_seat(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-4009, "Club", admins={alice})
    for user in (alice, bob):
        await h.send(user.start_private())
    await h.send(alice.send(group, "/newgame"))
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    assert "Bob" in h.lobby_message(group).text
    await h.send(bob.leave(group))
    assert "Bob" not in h.lobby_message(group).text
    tap = alice.tap(h.lobby_message(group), "Start")  # one player left: no game
    await h.send(tap)
    assert h.rooms.store.live(group.id).status == "lobby"


async def test_start_without_payload_welcomes_with_an_add_to_group_button(
    harness: BotHarness,
) -> None:
    h = harness
    ivan = h.user(5, "Ivan", "ru")
    await h.send(ivan.start_private())
    welcome = h.fake.last_message(ivan.id)
    assert "Дурак" in welcome.text
    button = welcome.buttons[0][0]
    assert button.url is not None and button.url.endswith("?startgroup=play")


async def test_stats_unknown_player_in_private(harness: BotHarness, tmp_path: Path) -> None:
    h = harness
    newbie = h.user(9, "Newbie")
    await h.send(newbie.send_private("/stats"))
    assert "No finished group games yet" in h.fake.last_message(newbie.id).text


async def test_half_time_after_a_cancel_leaves_the_closed_hands_closed(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline loop finds the game at half time, then waits for the chat while /cancel
    holds it: it must not warn nor give the cancelled game's hands their buttons back."""
    h = harness
    carol, dave = h.user(3, "Carol"), h.user(4, "Dave")
    group = h.fake.group(-4010, "Two", admins={carol})
    await h.open_game(group, [carol, dave])
    hands = {u: h.hand_message(u).message_id for u in (carol, dave)}
    h.clock.advance(31)  # half time
    entered, gate = asyncio.Event(), asyncio.Event()
    may_manage = h.rooms.lobbies.may_manage

    async def slow_may_manage(record: Any, person: Any) -> bool:  # getChatMember, slowly
        entered.set()
        await gate.wait()
        return await may_manage(record, person)

    monkeypatch.setattr(h.rooms.lobbies, "may_manage", slow_may_manage)
    cancel = asyncio.ensure_future(h.send(carol.send(group, "/cancel")))
    await entered.wait()  # /cancel holds the chat's lock
    due = asyncio.ensure_future(h.rooms.deadlines.run_due())
    await asyncio.sleep(0)  # run_due checks the game and queues for the lock
    gate.set()
    await cancel
    await due
    for user, message_id in hands.items():
        assert h.fake.message(user.id, message_id).buttons == []
        assert not any(
            "left for your move" in m.text for m in h.fake.messages(user.id, include_deleted=True)
        )


async def test_play_again_leaves_out_who_left_the_group(harness: BotHarness) -> None:
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-4011, "Club", admins={alice})
    await h.open_game(group, [alice, bob, carol])
    await h.send(bob.leave(group))
    assert running(h, group) is None
    await h.send(carol.tap(h.fake.last_message(group.id), "Ready for another"))
    lobby = h.lobby_message(group).text
    assert "Players (1/6): Carol" in lobby and "Waiting for: Alice — tap" in lobby
    assert "Bob" not in lobby


async def test_stats_in_a_group_without_games_names_the_group(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-4012, "Card Club", admins={alice})
    await h.send(alice.send(group, "/stats"))
    text = h.fake.last_message(group.id).text
    assert text.startswith(h.rooms.kit.t("en", "stats-title", chat="Card Club"))
    assert h.rooms.kit.t("en", "stats-computer-mark") not in text  # no computer listed


async def test_settings_show_the_language_the_chat_is_served_in(harness: BotHarness) -> None:
    """A group without a language set is served in its admin's: the menu says so and marks
    that language among the three; another is one tap away."""
    h = harness
    ivan = h.user(1, "Ivan", "ru")
    group = h.fake.group(-4013, "Клуб", admins={ivan})
    await h.send(ivan.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    assert "Язык: Русский\n" in menu.text
    assert [b.text for b in menu.buttons[6]] == ["English", "Deutsch", "✓ Русский"]
    await h.send(ivan.tap(menu, "English"))
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        assert (await tx.chats.get(chat_id=group.id)).language == "en"
    assert "✓ English" in menu.button_texts and "Deck: 36" in menu.button_texts


async def test_kick_by_a_non_admin_is_refused_in_the_groups_language(harness: BotHarness) -> None:
    h = harness
    anna, bob, carl = h.user(1, "Anna", "de"), h.user(2, "Bob", "en"), h.user(3, "Carl", "en")
    group = h.fake.group(-4014, "Runde", admins={anna})
    async with h.rooms.kit.db.transaction() as tx:
        await tx.chats.save(settings=ChatSettings(chat_id=group.id, language="de"))
    said = carl.send(group, "hi")
    await h.send(said)
    await h.send(bob.send(group, "/kick", reply_to=said["message"]["message_id"]))
    assert h.fake.last_message(group.id).text == h.rooms.kit.t("de", "error-kick-admins")


async def test_settings_menu_closes_with_done_and_keeps_its_text(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-4015, "Club", admins={alice})
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    await h.send(bob.tap(menu, "Done"))  # not an admin: refused, the menu stays
    assert h.fake.message(group.id, menu.message_id).buttons
    await h.send(alice.tap(menu, "Done"))
    closed = h.fake.message(group.id, menu.message_id)
    assert closed.buttons == []
    assert h.rooms.kit.t("en", "settings-title") in closed.text
    assert "Tap an option" not in closed.text  # no buttons left to tap
    assert "Deck" in closed.text  # the rules stay readable


async def test_kick_in_a_private_chat_says_where_it_works(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    await h.send(alice.start_private(), alice.send_private("/kick"))
    assert h.fake.last_message(alice.id).text == h.rooms.kit.t("en", "kick-in-group")


async def test_a_settings_toast_is_in_the_tappers_language(harness: BotHarness) -> None:
    """The menu stays in the chat's language (English here); the "Saved." toast goes to the
    Russian admin alone, in Russian, as every button answer does."""
    h = harness
    boris = h.user(1, "Boris", "ru")
    group = h.fake.group(-4020, "Club", admins={boris})
    async with h.rooms.kit.db.transaction() as tx:
        await tx.chats.save(settings=ChatSettings(chat_id=group.id, language="en"))
    await h.send(boris.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    tap = boris.tap(menu, "Deck: 36")
    await h.send(tap)
    assert "Deck: 52" in menu.button_texts  # the menu: English
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("ru", "settings-saved")
