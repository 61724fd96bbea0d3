"""Whole games through the real python-telegram-bot stack and the fake Bot API."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from telegram import User

from bot.callbacks import MoveData, decode
from bot.delivery.screens import Screens
from bot.kit import Person
from bot.telegram.handlers import person_of
from engine import Game
from storage import Database, FinishedGame
from tests.bot.conftest import TOKEN, BotHarness, ManualClock, make_settings
from tests.fakes.telegram import FakeGroup, FakeTelegram, FakeUser


def person_of_user(user: FakeUser) -> Person:
    return person_of(User(user.id, user.first_name, is_bot=False, language_code="en"))


def running_game(h: BotHarness, group: FakeGroup) -> Game | None:
    record = h.rooms.store.live(group.id)
    if record is None or record.status != "running":
        return None
    return record.game


async def play_to_the_end(
    h: BotHarness, group: FakeGroup, rng: random.Random, max_taps: int = 6000
) -> int:
    """Players the game waits for tap random buttons of their current keyboards."""
    taps = 0
    while (game := running_game(h, group)) is not None:
        actor = rng.choice(sorted(game.to_act))
        assert await h.tap_random(h.users[int(actor)], rng)
        taps += 1
        assert taps < max_taps, "the game does not end"
    return taps


async def stored_result(h: BotHarness, group: FakeGroup) -> FinishedGame:
    async with Database.connect(f"sqlite:///{h.db_path}") as db, db.transaction() as tx:
        games = await tx.results.count(chat_id=group.id)
        assert games == 1
        board = await tx.results.leaderboard(chat_id=group.id, limit=10, min_games=0)
        assert board
        record = await tx.games.latest_for_chat(chat_id=group.id)
        return await tx.results.for_game(game_id=record.id or 0)


def make_players(h: BotHarness, n: int, *, mixed: bool = False) -> list[FakeUser]:
    """Players named Alice, Bob, ...; English unless `mixed` (then en, de, ru in turn)."""
    names = ["Alice", "Bob", "Carol", "Dan", "Eve", "Finn"]
    langs = ["en", "de", "ru"] if mixed else ["en"]
    return [h.user(i + 1, names[i], langs[i % len(langs)]) for i in range(n)]


@pytest.mark.parametrize("n", [2, 3, 4, 6])
async def test_full_game_with_random_taps_ends_with_a_stored_result(
    harness: BotHarness, n: int
) -> None:
    h = harness
    players = make_players(h, n, mixed=True)
    group = h.fake.group(-1000 - n, "Club", admins={players[0]})
    await h.open_game(group, players)
    assert running_game(h, group) is not None
    await play_to_the_end(h, group, random.Random(n))
    result_message = h.fake.last_message(group.id)
    assert "Game over" in result_message.text
    assert "Ready for another" in result_message.button_texts
    result = await stored_result(h, group)
    assert [p.name for p in result.participants] == [p.first_name for p in players]
    assert result.draw or result.durak in {str(p.id) for p in players}
    assert h.fake.unanswered_callbacks() == []


async def test_restart_in_the_middle_loses_nothing(harness: BotHarness) -> None:
    h = harness
    players = make_players(h, 3)
    group = h.fake.group(-2001, "Club", admins={players[0]})
    await h.open_game(group, players)
    rng = random.Random(5)
    for _ in range(15):
        game = running_game(h, group)
        assert game is not None
        await h.tap_random(h.users[int(sorted(game.to_act)[0])], rng)
    before = running_game(h, group)
    assert before is not None
    snapshot = before.to_dict()
    await h.restart()  # a new application on the same database
    after = running_game(h, group)
    assert after is not None and after.to_dict() == snapshot
    await play_to_the_end(h, group, rng)
    assert "Game over" in h.fake.last_message(group.id).text
    await stored_result(h, group)


async def test_stale_and_foreign_taps_change_nothing(harness: BotHarness) -> None:
    h = harness
    alice, bob, _carol = make_players(h, 3)
    outsider = h.user(99, "Mallory")
    group = h.fake.group(-2002, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = running_game(h, group)
    assert game is not None
    attacker = h.users[int(game.attacker)]
    defender = h.users[int(game.defender)]
    hand = h.hand_message(attacker)
    card = next(b for row in hand.buttons for b in row if b.callback_data)
    state = game.to_dict()

    # someone else's turn: the defender taps a card while the attacker must open
    tap = defender.tap(h.hand_message(defender), h.hand_message(defender).buttons[0][0].text)
    await h.send(tap)
    assert "not your turn" in (h.fake.answer_for(tap).text or "").lower()
    assert game.to_dict() == state

    # a non-player replays the attacker's button data
    tap = outsider.tap_raw(hand, card.callback_data or "")
    await h.send(tap)
    assert "not playing" in (h.fake.answer_for(tap).text or "")
    assert game.to_dict() == state

    # forged data: as a late tap ("too late": the hand shows the game already, no edit)
    for data in ("m1.0.c99", "x" * 64, "l1.z", ""):
        tap = attacker.tap_raw(hand, data)
        await h.send(tap)
        answer = h.fake.answer_for(tap)
        assert answer is not None and answer.text == h.rooms.kit.t("en", "error-stale-shown")
        assert game.to_dict() == state
        assert h.hand_message(attacker).buttons == hand.buttons
    tap = attacker.tap_raw(hand, "m999.0.T")  # well-formed, but no such game
    await h.send(tap)
    assert h.fake.answer_for(tap).text == h.rooms.kit.t("en", "error-game-gone")
    tap = outsider.tap_raw(hand, "x")  # not a player: nothing to show again
    await h.send(tap)
    assert h.fake.answer_for(tap).text == h.rooms.kit.t("en", "error-unknown-button")
    assert game.to_dict() == state

    # the real tap works once; the same button again is stale and changes nothing more: the
    # hand already shows the move, so the doubled tap is answered quietly, without an edit
    tap = attacker.tap_raw(hand, card.callback_data or "")
    await h.send(tap)
    assert game.move_number == 1
    moved = game.to_dict()
    h.fake.clear_calls()
    again = attacker.tap_raw(hand, card.callback_data or "")
    await h.send(again)
    assert h.fake.answer_for(again).text is None
    assert h.fake.calls_for("editMessageText") == []  # Telegram would say "not modified"
    assert game.to_dict() == moved
    assert h.fake.unanswered_callbacks() == []


async def test_join_through_the_deep_link(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-2003, "Club", admins={alice})
    await h.send(alice.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    assert "Alice" in lobby.text  # the opener who started the bot is seated
    tap = bob.tap(lobby, "Join")  # Bob never started the bot
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.url is not None
    assert answer.url.startswith("https://t.me/durak_test_bot?start=j")
    assert "Bob" not in h.lobby_message(group).text
    payload = answer.url.split("start=")[1]
    await h.send(bob.start_private(payload))
    assert "Bob" in h.lobby_message(group).text
    assert "seat" in h.fake.last_message(bob.id).text
    # The lobby shows the seat; the group gets no message of its own for it.
    assert h.fake.last_message(group.id).message_id == h.lobby_message(group).message_id


async def test_a_deep_link_with_a_forged_number_gets_the_welcome(harness: BotHarness) -> None:
    h = harness
    bob = h.user(2, "Bob")
    await h.send(bob.start_private("j" + "9" * 30))  # beyond any database integer
    assert "Add me to a group" in h.fake.last_message(bob.id).text


async def _join_link(h: BotHarness, group: FakeGroup, opener: FakeUser, user: FakeUser) -> str:
    """/newgame by `opener`; `user` taps Join without having started the bot: the link."""
    await h.send(opener.start_private())
    await h.send(opener.send(group, "/newgame"))
    tap = user.tap(h.lobby_message(group), "Join")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.url is not None
    return answer.url.split("start=")[1]


async def test_an_old_deep_link_says_what_to_do_instead_of_only_closed(harness: BotHarness) -> None:
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-2010, "Club", admins={alice})
    group.add(bob)
    group.add(carol)
    payload = await _join_link(h, group, alice, bob)
    await h.send(alice.send(group, "/cancel"))
    # The lobby is gone and nothing replaced it: closed, and how to play (a first message).
    await h.send(bob.start_private(payload))
    text = h.fake.last_message(bob.id).text
    assert "This lobby is closed." in text and "/newgame" in text
    # A newer lobby is open: the old link points to it.
    await h.send(alice.send(group, "/newgame"))
    await h.send(carol.start_private(payload))
    assert "a new one is open in Club" in h.fake.last_message(carol.id).text
    assert "Carol" not in h.lobby_message(group).text  # not seated by the old link
    await h.send(bob.tap(h.lobby_message(group), "Join"))  # Bob sits in the new lobby
    await h.send(bob.start_private(payload))
    assert "You have a seat in the game in Club" in h.fake.last_message(bob.id).text


async def test_an_old_deep_link_of_a_started_game_brings_a_seated_player_their_cards(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-2011, "Club", admins={alice})
    group.add(bob)
    payload = await _join_link(h, group, alice, bob)
    await h.send(bob.start_private(payload))  # seated
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    first_hand = h.hand_message(bob)
    await h.send(bob.start_private(payload))  # the same link, once more
    hand = h.hand_message(bob)
    assert hand.message_id != first_hand.message_id and hand.buttons
    assert "closed" not in h.fake.last_message(bob.id).text


async def test_an_old_link_of_a_game_that_ends_meanwhile_posts_nothing_in_the_group(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-2039, "Club", admins={alice})
    group.add(bob)
    payload = await _join_link(h, group, alice, bob)
    await h.send(bob.start_private(payload))
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    resend = h.rooms.moves.resend_hand

    async def cancelled_first(**kwargs: Any) -> bool:  # the game ends between the two steps
        await h.rooms.moderation.cancel(
            chat_id=group.id, person=person_of_user(alice), message_id=None
        )
        return await resend(**kwargs)

    monkeypatch.setattr(h.rooms.moves, "resend_hand", cancelled_first)
    before = len(h.fake.messages(group.id))
    await h.send(bob.start_private(payload))
    said = [m.text for m in h.fake.messages(group.id)[before:]]
    assert not any("no game" in text for text in said), said
    assert "This lobby is closed." in h.fake.last_message(bob.id).text


async def test_second_newgame_points_to_the_open_lobby(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-2004, "Club", admins={alice})
    await h.send(alice.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobbies = len(h.fake.messages(group.id))
    await h.send(alice.send(group, "/newgame"))
    reply = h.fake.last_message(group.id)
    assert "already" in reply.text
    assert len(h.fake.messages(group.id)) == lobbies + 1


async def test_only_opener_or_admin_may_start_and_two_players_are_needed(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob, carol = make_players(h, 3)
    group = h.fake.group(-2005, "Club", admins={carol})
    for p in (alice, bob, carol):
        await h.send(p.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    tap = alice.tap(lobby, "Start")
    await h.send(tap)
    assert "At least 2" in (h.fake.answer_for(tap).text or "")
    await h.send(bob.tap(lobby, "Join"))
    tap = bob.tap(lobby, "Start")
    await h.send(tap)
    assert "Only the player who opened" in (h.fake.answer_for(tap).text or "")
    assert running_game(h, group) is None
    await h.send(carol.tap(lobby, "Start"))  # an admin may
    assert running_game(h, group) is not None


async def test_turn_timeout_moves_for_the_player_and_three_remove_him(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2006, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = running_game(h, group)
    assert game is not None
    opener = game.attacker
    h.clock.advance(59)
    assert await h.run_due() == 0
    h.clock.advance(2)
    assert await h.run_due() == 1
    assert game.move_number == 1  # the opener played his lowest card
    assert (
        "runs out of time"
        in h.fake.message(group.id, h.rooms.store.live(group.id).table_message_id or 0).text
    )
    # keep timing out whoever is to move; the third timeout in a row removes that player
    for _ in range(12):
        if running_game(h, group) is None:
            break
        h.clock.advance(61)
        await h.run_due()
    assert running_game(h, group) is None
    result = await stored_result(h, group)
    assert any(p.result == "timed_out" for p in result.participants)
    assert "removed" in h.fake.last_message(group.id).text
    table = await h.table_of(group)
    assert "removed after three timeouts" in table.text and "gives up" not in table.text
    assert opener in game.players


async def test_a_deadline_that_fails_does_not_stop_the_others_and_is_retried_later(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One chat whose timeout cannot be handled (a bug, a broken row) is logged and retried
    after a pause; the other chats' turns still time out, and the scheduler does not spin."""
    h = harness
    alice, bob, carol, dan = make_players(h, 4)
    broken = h.fake.group(-2016, "Broken", admins={alice})
    fine = h.fake.group(-2017, "Fine", admins={carol})
    await h.open_game(broken, [alice, bob])
    await h.open_game(fine, [carol, dan])
    broken_game, fine_game = running_game(h, broken), running_game(h, fine)
    assert broken_game is not None and fine_game is not None
    expire = h.rooms.deadlines.expire

    async def failing(chat_id: int, now: datetime) -> None:
        if chat_id == broken.id:
            raise RuntimeError("boom")
        await expire(chat_id, now)

    monkeypatch.setattr(h.rooms.deadlines, "expire", failing)
    h.clock.advance(61)
    assert await h.run_due() == 2
    assert fine_game.move_number == 1 and broken_game.move_number == 0
    # the broken chat is not retried at once: the scheduler's next wake-up is later
    assert await h.run_due() == 0
    next_wake = h.rooms.deadlines.next_deadline()
    assert next_wake is not None and next_wake > h.clock()
    monkeypatch.setattr(h.rooms.deadlines, "expire", expire)  # the fault is gone
    h.clock.advance(16)
    await h.run_due()
    assert broken_game.move_number == 1  # handled on the retry


async def test_a_lobby_whose_message_cannot_be_sent_is_closed_not_left_invisible(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-2018, "Club", admins={alice})
    h.fake.fail_next("sendMessage", 400, "Bad Request: chat not found", chat_id=group.id)
    await h.send(alice.send(group, "/newgame"))
    assert h.fake.messages(group.id) == [] or "Join" not in h.fake.last_message(group.id).text
    assert h.rooms.store.live(group.id) is None
    await h.send(alice.send(group, "/newgame"))  # the next try opens a lobby people can see
    assert h.fake.last_message(group.id).button_texts[:1] == ["Join"]


async def test_a_lobby_whose_message_timed_out_stays_open_and_is_shown_again(
    harness: BotHarness,
) -> None:
    """The send timed out after Telegram delivered it: the reply is tried again, the lobby
    people see works and is the one stored. (A lobby whose id never came back, its retries
    run out: tests/bot/test_dupes_lobby.py.)"""
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2019, "Club", admins={alice})
    h.fake.timeout_next("sendMessage", chat_id=group.id, applied=True)
    await h.send(alice.send(group, "/newgame"))
    lobby = h.fake.last_message(group.id)
    assert lobby.button_texts[:1] == ["Join"]
    await h.send(bob.start_private())
    await h.send(bob.tap(lobby, "Join"))  # the delivered lobby message keeps working
    assert "Bob" in h.fake.last_message(group.id).text
    assert h.rooms.store.live(group.id).lobby.message_id == h.fake.last_message(group.id).message_id


async def test_newgame_resends_a_lobby_whose_message_never_arrived(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-2020, "Club", admins={alice})
    # Lost before Telegram got it, each time it was tried (`Outbox.send`'s retries).
    h.fake.timeout_next("sendMessage", chat_id=group.id, times=100)
    await h.send(alice.send(group, "/newgame"))
    assert not any("Join" in m.button_texts for m in h.fake.messages(group.id))
    h.fake.clear_faults()
    await h.send(alice.send(group, "/newgame"))
    assert h.fake.last_message(group.id).button_texts[:1] == ["Join"]
    assert "Alice" in h.fake.last_message(group.id).text


async def test_a_second_newgame_answers_as_a_reply_to_the_open_lobby_or_table(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2021, "Club", admins={alice})
    await h.send(alice.send(group, "/newgame"))
    lobby = h.fake.last_message(group.id)
    await h.send(bob.send(group, "/newgame"))
    pointer = h.fake.last_message(group.id)
    assert "already being set up" in pointer.text
    assert pointer.reply_to_message_id == lobby.message_id
    assert sum("Join" in m.button_texts for m in h.fake.messages(group.id)) == 1
    other = h.fake.group(-2022, "Other club", admins={alice})
    await h.open_game(other, [alice, bob])
    await h.send(bob.send(other, "/newgame"))
    pointer = h.fake.last_message(other.id)
    assert "A game is running here" in pointer.text
    assert pointer.reply_to_message_id == h.rooms.store.live(other.id).table_message_id


async def test_lobby_expires(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-2007, "Club", admins={alice})
    await h.send(alice.send(group, "/newgame"))
    h.clock.advance(601)
    assert await h.run_due() == 1
    lobby = h.fake.messages(group.id)[0]
    assert "closed" in lobby.text and lobby.buttons == []
    await h.send(alice.send(group, "/newgame"))  # a new lobby may open
    assert h.fake.last_message(group.id).button_texts[:1] == ["Join"]


async def test_people_seated_in_a_lobby_hear_in_private_that_it_closed(harness: BotHarness) -> None:
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob", "de"), h.user(3, "Carol")
    group = h.fake.group(-2037, "Club", admins={alice})
    for user in (alice, bob, carol):
        await h.send(user.start_private())
    await h.send(alice.send(group, "/newgame"))
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    h.clock.advance(601)
    assert await h.run_due() == 1  # expired
    assert "nicht rechtzeitig begonnen" in h.fake.last_message(bob.id).text  # his language
    assert "did not start in time" in h.fake.last_message(alice.id).text
    await h.send(alice.send(group, "/newgame"))
    await h.send(carol.tap(h.lobby_message(group), "Join"))
    before = len(h.fake.messages(alice.id))
    await h.send(alice.send(group, "/cancel"))
    assert "was cancelled before it started" in h.fake.last_message(carol.id).text
    assert len(h.fake.messages(alice.id)) == before  # who cancelled knows


async def test_blocked_player_is_named_in_the_group_and_times_out(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2008, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = running_game(h, group)
    assert game is not None
    blocker = h.users[int(game.defender)]
    await h.send(blocker.block_bot())
    # the attacker opens; the defender's hand cannot be updated any more
    attacker = h.users[int(game.attacker)]
    hand = h.hand_message(attacker)
    first = next(b for row in hand.buttons for b in row if "·" not in b.text)
    await h.send(attacker.tap(hand, first.callback_data or ""))
    notice = h.fake.last_message(group.id)
    assert "blocked" in h.fake.messages(group.id)[-1].text or any(
        "blocked" in m.text for m in h.fake.messages(group.id)
    )
    assert notice is not None
    h.clock.advance(61)
    await h.run_due()
    assert game.defender_took or game.move_number >= 2  # the blocked defender timed out


async def test_rate_limit_and_bad_request_do_not_lose_the_move(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2009, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = running_game(h, group)
    assert game is not None
    attacker = h.users[int(game.attacker)]
    hand = h.hand_message(attacker)
    first = next(b for row in hand.buttons for b in row if "·" not in b.text)
    h.fake.fail_next("editMessageText", 429, retry_after=1, chat_id=group.id)
    h.fake.fail_next(
        "editMessageText", 400, "Bad Request: message to edit not found", chat_id=attacker.id
    )
    await h.send(attacker.tap(hand, first.callback_data or ""))
    assert game.move_number == 1  # stored despite both errors
    # the table's edit was tried again after exactly retry_after, with the latest state
    table = h.fake.message(group.id, h.rooms.store.live(group.id).table_message_id or 0)
    assert f"\nTable: {first.text}\n" in table.text  # the card played lies on the table
    new_hand = h.hand_message(attacker)
    assert new_hand.message_id != hand.message_id  # sent anew, id stored


async def test_bot_removed_from_group_closes_the_game_without_result(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2010, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    hand = h.hand_message(alice)
    await h.send(group.remove_bot())
    assert running_game(h, group) is None
    async with Database.connect(f"sqlite:///{h.db_path}") as db, db.transaction() as tx:
        assert await tx.results.count(chat_id=group.id) == 0
    assert "removed" in hand.text and hand.buttons == []


async def test_leave_asks_to_confirm_then_the_player_is_the_durak(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2011, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(bob.send(group, "/leave"))
    confirm = h.fake.last_message(group.id)
    assert "give up" in confirm.text
    await h.send(bob.tap(confirm, confirm.buttons[0][0].text))
    assert running_game(h, group) is None
    result = await stored_result(h, group)
    assert result.durak == str(bob.id)
    assert {p.player_id: p.result for p in result.participants}[str(bob.id)] == "resigned"
    confirm = h.fake.message(group.id, confirm.message_id)
    assert confirm.buttons == [] and confirm.text == "Bob gave up."
    assert "Bob gives up" in (await h.table_of(group)).text


async def test_cancelling_a_lobby_answers_in_the_lobbys_words(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-2035, "Club", admins={alice})
    await h.send(alice.start_private())
    command = alice.send(group, "/newgame")
    await h.send(command)
    lobby = h.lobby_message(group)
    cancel = alice.send(group, "/cancel")
    await h.send(cancel)
    reply = h.fake.last_message(group.id)
    assert reply.text == "This lobby was cancelled."  # not "no result is recorded"
    assert reply.reply_to_message_id == cancel["message"]["message_id"]
    assert "This lobby was cancelled." in h.fake.message(group.id, lobby.message_id).text


async def test_cancel_by_opener_stores_no_result(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2012, "Club")
    await h.open_game(group, [alice, bob])
    await h.send(bob.send(group, "/cancel"))
    assert running_game(h, group) is not None  # not the opener, not an admin
    table_id = h.rooms.store.live(group.id).table_message_id
    assert table_id is not None
    await h.send(alice.send(group, "/cancel"))
    assert running_game(h, group) is None
    assert "cancelled" in h.fake.last_message(group.id).text
    # The table no longer waits for anyone nor offers the way to the hand.
    table = h.fake.message(group.id, table_id)
    assert "cancelled" in table.text
    assert "Waiting" not in table.text
    assert table.buttons == []
    async with Database.connect(f"sqlite:///{h.db_path}") as db, db.transaction() as tx:
        assert await tx.results.count(chat_id=group.id) == 0


async def test_hand_command_resends_the_hand(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2013, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    old = h.hand_message(alice)
    await h.send(alice.send(group, "/hand"))
    new = h.hand_message(alice)
    assert new.message_id != old.message_id
    assert new.buttons
    # The old message keeps no buttons that would act on the same game.
    assert h.fake.message(alice.id, old.message_id).buttons == []


async def test_hand_command_whose_send_fails_keeps_the_old_hand(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2033, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    old = h.hand_message(alice)
    buttons = old.buttons  # a copy of the keyboard as it is now
    h.fake.fail_next("sendMessage", 500, chat_id=alice.id)
    await h.send(alice.send(group, "/hand"))
    # Sent again later (#22: resent until the player has it); only then does the old one
    # lose its buttons: one live keyboard at every moment, and in the end the new one.
    new = h.hand_message(alice)
    assert new.message_id != old.message_id and new.buttons == buttons
    assert h.fake.message(alice.id, old.message_id).buttons == []


async def test_hand_command_from_someone_not_playing_answers_in_the_group(
    harness: BotHarness,
) -> None:
    """Even from a user the bot cannot write to privately: the answer is in the group."""
    h = harness
    alice, bob = make_players(h, 2)
    carol = h.user(3, "Carol")  # never started the bot
    group = h.fake.group(-2032, "Club", admins={alice})
    await h.send(carol.send(group, "/hand"))
    assert h.fake.last_message(group.id).text == h.rooms.kit.t("en", "error-no-game")
    await h.open_game(group, [alice, bob])
    await h.send(carol.send(group, "/hand"))
    assert h.fake.last_message(group.id).text == h.rooms.kit.t("en", "error-not-in-game")


async def test_group_migration_keeps_the_game(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2015, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = running_game(h, group)
    await h.send(group.migrate_to_supergroup(-1002015))
    assert h.rooms.store.live(-1002015) is not None
    moved = h.rooms.store.live(-1002015).game
    assert moved is not None and game is not None
    assert moved.to_dict() == game.to_dict()


async def test_rules_and_help_answer_in_the_callers_language(harness: BotHarness) -> None:
    h = harness
    anna = h.user(7, "Anna", "de")
    group = h.fake.group(-2016, "Runde", admins={anna})
    await h.send(anna.send(group, "/rules"))
    assert (
        "Regeln" in h.fake.last_message(group.id).text
        or "Trumpf" in h.fake.last_message(group.id).text
    )
    await h.send(anna.send(group, "/help"))
    assert "/newgame" in h.fake.last_message(group.id).text


async def test_editing_a_sent_command_does_not_run_it_again(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-2030, "Club", admins={alice})
    await h.send(alice.start_private())
    sent = alice.send(group, "/newgame")
    await h.send(sent)
    before = len(h.fake.messages(group.id))
    message = {**sent["message"], "edit_date": sent["message"]["date"] + 5}
    await h.send({"update_id": sent["update_id"] + 10_000, "edited_message": message})
    assert len(h.fake.messages(group.id)) == before  # no "a game is already being set up"


async def test_a_started_lobby_asks_nobody_to_join(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2031, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    assert record is not None
    lobby = h.fake.message(group.id, record.lobby.message_id or 0)
    # The lobby message became the table: no lobby button is left on it.
    assert lobby.message_id == record.table_message_id
    assert all(b.callback_data is None for row in lobby.buttons for b in row)
    assert "Join" not in lobby.text and "Bob" in lobby.text


async def test_help_in_a_group_sends_practice_to_the_private_chat(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-2032, "Club", admins={alice})
    await h.send(alice.send(group, "/help"))
    text = h.fake.last_message(group.id).text
    assert "/practice play against the computer (in our private chat)" in text


async def test_a_bot_added_to_a_group_says_how_to_start_once(harness: BotHarness) -> None:
    h = harness
    anna = h.user(1, "Anna", "de")
    group = h.fake.group(-2033, "Stammtisch", admins={anna})
    group.bot_status = "left"
    await h.send(group.add_bot(by=anna))
    hello = h.fake.last_message(group.id)
    assert "Sende /newgame" in hello.text  # in the language of whoever added the bot
    await h.send(group.add_bot(by=anna, admin=True))  # promoted: no second greeting
    assert h.fake.last_message(group.id).message_id == hello.message_id


async def test_a_group_that_becomes_a_supergroup_is_not_greeted_again(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2038, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(group.migrate_to_supergroup())
    supergroup = group.migrated_to
    assert supergroup is not None
    before = len(h.fake.messages(supergroup.id))
    await h.send(supergroup.migrated_bot_update())  # Telegram: the bot "joined" the new chat
    assert len(h.fake.messages(supergroup.id)) == before
    assert running_game(h, supergroup) is not None
    # Removed and added again later: the group knows the bot already.
    await h.send(supergroup.remove_bot(by=alice))
    before = len(h.fake.messages(supergroup.id))
    await h.send(supergroup.add_bot(by=alice))
    assert len(h.fake.messages(supergroup.id)) == before


async def test_commands_sent_as_the_group_are_refused_as_anonymous(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-2034, "Club", admins={alice})
    for command in ("/newgame", "/cancel", "/stats"):
        update = alice.send(group, command)
        # What Telegram sends for an anonymous admin: the group as sender_chat, a stand-in
        # account as the sender.
        update["message"]["sender_chat"] = group.chat_dict()
        update["message"]["from"] = {
            "id": 1087968824,
            "is_bot": True,
            "first_name": "Group",
            "username": "GroupAnonymousBot",
        }
        await h.send(update)
        assert "can't tell who you are" in h.fake.last_message(group.id).text
    assert h.rooms.store.live(group.id) is None  # no lobby opened by "Group"
    for command, expected in (("/help", "/newgame"), ("/rules", "Deck: 36 cards")):
        update = alice.send(group, command)  # these need nobody's name: answered
        update["message"]["sender_chat"] = group.chat_dict()
        await h.send(update)
        assert expected in h.fake.last_message(group.id).text


async def test_other_private_messages_are_told_what_the_bot_understands(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice", "de")
    await h.send(alice.start_private())
    assert "/practice" in h.fake.last_message(alice.id).text  # the welcome mentions practice
    await h.send(alice.send_private("hallo"))
    assert "Ich verstehe nur Befehle" in h.fake.last_message(alice.id).text
    await h.send(alice.send_private("/foo"))
    assert "Diesen Befehl kenne ich nicht" in h.fake.last_message(alice.id).text
    group = h.fake.group(-2036, "Club", admins={alice})
    before = len(h.fake.messages(group.id))
    await h.send(alice.send(group, "hallo"))  # the group's chatter is none of the bot's business
    assert len(h.fake.messages(group.id)) == before


async def test_command_menus_are_registered_per_scope_and_language(harness: BotHarness) -> None:
    h = harness
    group_menu = h.fake.commands({"type": "all_group_chats"})
    private_menu = h.fake.commands({"type": "all_private_chats"})
    assert "newgame" in {c["command"] for c in group_menu}
    assert "newgame" not in {c["command"] for c in private_menu}
    # Everything that works in private is in its menu.
    assert {"start", "practice", "hand", "rules", "leave", "stats", "help"} <= {
        c["command"] for c in private_menu
    }
    russian = h.fake.commands({"type": "all_group_chats"}, "ru")
    assert russian and russian != group_menu


async def test_a_double_tap_applies_once(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2017, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = running_game(h, group)
    assert game is not None
    attacker = h.users[int(game.attacker)]
    hand = h.hand_message(attacker)
    first = next(b for row in hand.buttons for b in row if "·" not in b.text)
    taps = [attacker.tap(hand, first.callback_data or "") for _ in range(2)]
    await asyncio.gather(*(h.send(t) for t in taps))  # both in flight at once
    assert game.move_number == 1
    answers = [h.fake.answer_for(t) for t in taps]
    assert all(a is not None for a in answers)
    # the second finds the hand showing the move already: a quiet answer, not "out of date"
    assert not any(a.text for a in answers if a)


async def test_errors_are_reported_to_the_operator_without_the_token(tmp_path: Path) -> None:
    fake = FakeTelegram(token=TOKEN)
    settings = make_settings(tmp_path / "db.sqlite3", operator_chat_id=4242)
    h = BotHarness(
        fake=fake, db_path=tmp_path / "db.sqlite3", clock=ManualClock(), settings=settings
    )
    await h.start()
    try:
        fake.user(4242, "Operator")
        await h.send(fake.user(4242, "Operator").start_private())
        alice = h.user(1, "Alice")
        group = fake.group(-2018, "Club", admins={alice})

        async def broken(**_: object) -> None:
            raise RuntimeError(f"boom with {TOKEN}")

        h.rooms.lobbies.new_game = broken  # type: ignore[method-assign]
        await h.send(alice.send(group, "/newgame"))
        report = fake.last_message(4242)
        assert "RuntimeError" in report.text
        assert TOKEN not in report.text
    finally:
        await h.stop()


async def test_a_keyboard_stays_valid_while_nothing_it_shows_changes(harness: BotHarness) -> None:
    """Another attacker passing does not make this attacker's keyboard stale."""
    h = harness
    alice, bob, carol = make_players(h, 3)
    group = h.fake.group(-2019, "Club", admins={alice})
    await h.open_game(group, [alice, bob, carol])
    game = Game.from_position(
        {"1": "6♠ 6♥ 9♦", "2": "7♠ 10♣ J♣", "3": "6♦ 8♥ K♦"},
        trump="A♣",
        stock="7♣ 8♣",
        attacker="1",
    )
    await h.set_position(group, game)
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    await h.send(bob.tap(h.hand_message(bob), "7♠"))
    assert game.to_act == frozenset({"1", "3"})
    carol_keyboard = h.hand_message(carol)
    await h.send(
        alice.tap(h.hand_message(alice), "Done")
    )  # Alice passes; Carol's view is unchanged
    tap = carol.tap(carol_keyboard, "6♦")
    await h.send(tap)
    assert "out of date" not in (h.fake.answer_for(tap).text or "")
    assert h.fake.answer_for(tap).text is None  # obeyed as on the current keyboard
    assert [str(a) for a, _ in game.table] == ["6♠", "6♦"]


async def test_only_the_player_who_asked_can_confirm_leave(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2020, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(bob.send(group, "/leave"))
    confirm = h.fake.last_message(group.id)
    tap = alice.tap(confirm, confirm.buttons[0][0].text)
    await h.send(tap)
    assert "another player" in (h.fake.answer_for(tap).text or "")
    assert running_game(h, group) is not None


async def test_a_move_that_meets_another_writer_changes_nothing_and_the_game_goes_on(
    harness: BotHarness,
) -> None:
    """Optimistic concurrency: another process saved the game first (a Conflict)."""
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2021, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    game = record.game
    assert game is not None
    async with Database.connect(f"sqlite:///{h.db_path}") as other, other.transaction() as tx:
        stored = await tx.games.get(game_id=record.id or 0)
        await tx.games.save(record=stored, expected_version=stored.version)  # bump the version
    attacker = h.users[int(game.attacker)]
    hand = h.hand_message(attacker)
    first = next(b for row in hand.buttons for b in row if "·" not in b.text)
    tap = attacker.tap(hand, first.callback_data or "")
    await h.send(tap)
    assert "changed at the same moment" in (h.fake.answer_for(tap).text or "")
    await h.settle()  # the stored game is loaded again
    reloaded = running_game(h, group)
    assert reloaded is not None and reloaded.move_number == 0
    tap = attacker.tap(h.hand_message(attacker), first.callback_data or "")
    await h.send(tap)
    assert running_game(h, group) is not None and running_game(h, group).move_number == 1  # type: ignore[union-attr]


async def test_a_game_whose_save_failed_is_loaded_again_even_if_the_first_reloads_fail(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a failed save the stored game is loaded again, retried while the database
    keeps failing, so that its deadline and computers go on without waiting for a tap."""
    h = harness
    h.rooms.store.reload_delays = (0.0, 0.0, 0.0)  # no waiting in the test
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2023, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    async with Database.connect(f"sqlite:///{h.db_path}") as other, other.transaction() as tx:
        stored = await tx.games.get(game_id=record.id or 0)
        await tx.games.save(record=stored, expected_version=stored.version)  # bump the version
    load = h.rooms.store.load
    failures = [RuntimeError("database unreachable")] * 2

    async def flaky_load(chat_id: int) -> Any:
        if failures and h.rooms.store.live(chat_id) is None:  # loading from the database fails
            raise failures.pop()
        return await load(chat_id)

    monkeypatch.setattr(h.rooms.store, "load", flaky_load)
    game = record.game
    assert game is not None
    attacker = h.users[int(game.attacker)]
    hand = h.hand_message(attacker)
    first = next(b for row in hand.buttons for b in row if "·" not in b.text)
    await h.send(attacker.tap(hand, first.callback_data or ""))  # its save meets a Conflict
    await h.settle()
    assert failures == []  # two reloads failed ...
    assert h.rooms.store.live(group.id) is not None  # ... and the third brought the game back
    assert h.rooms.deadlines.next_deadline() is not None


async def test_a_groups_language_is_its_first_openers_until_changed(harness: BotHarness) -> None:
    """The group's messages stay in the chat's language (its first opener's), whoever posts;
    each player's hand and toasts are in their own."""
    h = harness
    anna, ivan, tom = h.user(7, "Anna", "de"), h.user(8, "Ivan", "ru"), h.user(9, "Tom", "en")
    group = h.fake.group(-2030, "Runde", admins={anna})
    for user in (anna, ivan, tom):
        await h.send(user.start_private())
    await h.send(anna.send(group, "/newgame"))
    assert "neues Spiel" in h.lobby_message(group).text
    await h.send(anna.send(group, "/cancel"))

    await h.send(ivan.send(group, "/newgame"))  # a Russian opener: still a German lobby
    lobby = h.lobby_message(group)
    assert "neues Spiel" in lobby.text
    join = tom.tap(lobby, "Mitspielen")
    await h.send(join)
    toast = h.fake.answer_for(join)
    assert toast is not None and toast.text == h.rooms.kit.t("en", "lobby-joined")
    await h.send(tom.send(group, "/help"))
    assert h.fake.last_message(group.id).html == h.rooms.kit.t("de", "help-text")

    await h.send(ivan.tap(lobby, "Starten"))
    for user, lang in ((ivan, "ru"), (tom, "en")):
        assert h.rooms.kit.t(lang, "hand-title", chat="Runde") in h.hand_message(user).html


async def test_leave_in_a_lobby_points_to_its_button(harness: BotHarness) -> None:
    h = harness
    alice, bob = make_players(h, 2)
    group = h.fake.group(-2031, "Club", admins={alice})
    for user in (alice, bob):
        await h.send(user.start_private())
    await h.send(alice.send(group, "/newgame"))
    await h.send(alice.send(group, "/leave"))
    # to her alone, in private (the bot may write to her there)
    assert h.fake.last_message(alice.id).text == h.rooms.kit.t("en", "leave-in-lobby")


async def test_a_toast_in_a_language_the_bot_lacks_is_in_the_games(harness: BotHarness) -> None:
    h = harness
    ivan, olena = h.user(8, "Ivan", "ru"), h.user(9, "Olena", "uk")
    group = h.fake.group(-2034, "Клуб", admins={ivan})
    for user in (ivan, olena):
        await h.send(user.start_private())
    await h.send(ivan.send(group, "/newgame"))
    join = olena.tap(h.lobby_message(group), h.rooms.kit.t("ru", "button-join"))
    await h.send(join)
    toast = h.fake.answer_for(join)
    assert toast is not None and toast.text == h.rooms.kit.t("ru", "lobby-joined")


async def test_long_names_are_shortened_in_running_text_and_whole_in_stats(
    harness: BotHarness,
) -> None:
    """Telegram allows 64 characters for a first name alone: seat lines, the lobby, the log,
    "waiting for" and the result show the first 23 and an ellipsis; /stats the whole name."""
    h = harness
    first, last = "Maximilian" + "x" * 54, "von Habsburg-Lothringen"
    alice = h.fake.user(1, first, last_name=last)
    h.users[1] = alice
    bob = h.user(2, "Bob")
    group = h.fake.group(-2031, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    short = (first[:23] + "…").replace("&", "&amp;")
    lobby = h.fake.message(group.id, h.rooms.store.live(group.id).lobby.message_id or 0)
    table = await h.table_of(group)
    for text in (lobby.text, table.text, h.hand_message(bob).text):
        assert short in text and first not in text
    while (record := h.rooms.store.live(group.id)) is not None and record.game is not None:
        await h.rooms.moderation.remove_player(chat_id=group.id, player_id="1", why="left")
    await h.settle()
    result = h.fake.last_message(group.id).text
    assert "Game over" in result and short in result and first not in result
    await h.send(alice.send(alice, "/stats"))
    assert f"{first} {last}" in h.fake.last_message(alice.id).text


async def test_a_result_the_bot_never_posted_is_posted_by_the_next_start(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot stored the last move and died before the result went out (a crash, a leader
    that lost the lead): the next start (or leader) posts it, once."""
    h = harness
    players = make_players(h, 2)
    group = h.fake.group(-1101, "Club", admins={players[0]})
    await h.open_game(group, players)
    with monkeypatch.context() as patch:
        patch.setattr(Screens, "_send_result", lambda self, record: None)  # dies right here
        await play_to_the_end(h, group, random.Random(11))
    assert not any("Game over" in m.text for m in h.fake.messages(group.id))
    await h.restart()
    await h.settle()
    results = [m for m in h.fake.messages(group.id) if "Game over" in m.text]
    assert len(results) == 1 and "Ready for another" in results[0].button_texts
    await h.restart()  # stored as posted: not again
    await h.settle()
    assert len([m for m in h.fake.messages(group.id) if "Game over" in m.text]) == 1


def _is_move(data: str | None) -> bool:
    try:
        return isinstance(decode(data), MoveData)
    except ValueError:
        return False


async def test_the_last_hands_of_a_game_that_just_ended_are_shown_again_after_a_restart(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The result went out, the last hands did not (the bot died in between): the next
    start shows them, so no hand keeps live buttons after the game."""
    h = harness
    players = make_players(h, 3)
    group = h.fake.group(-1102, "Club", admins={players[0]})
    await h.open_game(group, players)
    hands = Screens.hands

    async def none_at_the_end(self: Screens, record: Any, **kwargs: Any) -> None:
        if record.status != "finished":
            await hands(self, record, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Screens, "hands", none_at_the_end)
        await play_to_the_end(h, group, random.Random(12))

    def live_keyboards() -> int:
        return sum(
            1
            for p in players
            for m in h.fake.messages(p.id)
            if not m.deleted and any(_is_move(b.callback_data) for row in m.buttons for b in row)
        )

    before = live_keyboards()
    assert before > 0
    await h.restart()
    await h.settle()
    assert live_keyboards() == 0
    assert len([m for m in h.fake.messages(group.id) if "Game over" in m.text]) == 1
