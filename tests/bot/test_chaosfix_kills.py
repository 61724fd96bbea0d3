"""Kills in a row while a game's first hands (or its result) go out: each process sends a
player's hand, it lands, and the process dies before it heard of it (its answer lost, or it
was killed inside the send) and before it looked for the copy the one before it left. Every
such copy lies after the hand's floor (`GameRecord.hand_floors`; a result's:
`GameMeta.result_floor`), so the start that finally sends it and lives deletes them all:
each player has one hand with live buttons, the current one, and the group one result,
however many starts died before it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from bot import leader
from bot.delivery import Outbox, screens
from bot.render import Rendered
from tests.bot.conftest import BotHarness, make_settings
from tests.bot.test_chaosfix_hands import live_hands
from tests.bot.test_chaosfix_result import results
from tests.bot.test_computers import start_practice
from tests.bot.test_turn_alerts import two_at


def killed_without_a_last_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop writes no last word of the send budgets: `BotHarness.restart` is a kill
    (what is pending was sent already: the tests settle first)."""
    save = leader.Term._save_budgets

    async def killed_before_the_last(self: leader.Term, *, final: bool, **kw: Any) -> None:
        if not final:
            await save(self, final=final, **kw)

    monkeypatch.setattr(leader.Term, "_save_budgets", killed_before_the_last)


@contextlib.contextmanager
def deaf() -> Iterator[None]:
    """Meanwhile each hand that lands is not heard of by the bot: its id is never stored,
    and the copies before it are not looked for, as when the process died right after the
    send went out (killed inside it, or its answer lost and the process killed before it
    tried again)."""

    async def no_search(self: Outbox, *args: Any, **kw: Any) -> None:
        pass

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(screens, "_set_hand", lambda record, pid, message_id: False)
        patch.setattr(Outbox, "sweep", no_search)
        yield


async def kill(h: BotHarness) -> None:
    """Killed (`killed_without_a_last_write`), and started again: the start shows every
    game again."""
    await h.restart()
    await h.settle()


@pytest.mark.parametrize("kills", [2, 3])
async def test_hands_sent_by_starts_killed_in_a_row_leave_one_live_hand(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch, kills: int
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9411, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    killed_without_a_last_write(monkeypatch)
    with deaf():
        await h.send(alice.send(group, "/newgame"))
        await h.send(bob.tap(h.lobby_message(group), "Join"))
        await h.send(alice.tap(h.lobby_message(group), "Start"))
        for _ in range(kills - 1):  # each start sends the hands again, and dies
            await kill(h)
    copies = {u.id: live_hands(h, u) for u in (alice, bob)}
    assert all(len(found) == kills for found in copies.values())
    await kill(h)
    for user in (alice, bob):
        (hand,) = live_hands(h, user)
        assert hand.message_id == h.hand_message(user).message_id
        assert all(m.deleted for m in copies[user.id])
        assert not h.fake.messages(user.id)[0].deleted  # (the welcome before the deal stays)


async def test_a_practice_table_stays_while_the_hands_of_killed_starts_go(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A practice game's table lies in the private chat too, among the copies: it is the
    game's own (its id is stored), and it stays."""
    h = harness
    solo = h.user(1, "Solo")
    killed_without_a_last_write(monkeypatch)
    with deaf():
        await start_practice(h, solo)
        await kill(h)
    copies = live_hands(h, solo)
    assert len(copies) == 2
    await kill(h)
    (hand,) = live_hands(h, solo)
    assert hand.message_id == h.hand_message(solo).message_id
    tables = [m for m in h.fake.messages(solo.id) if m.text.startswith("Durak · ")]
    assert len(tables) == 1


async def test_a_player_in_two_games_gets_the_copies_of_each_looked_for(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob plays in two groups: the first game's hand was sent by a start that died, the
    second game was dealt after it, its hand's id stored. The next start looks for both
    games' copies in Bob's chat (neither search is taken for a send that lost its answer,
    which would stop the other): the first game's copy goes, and the second game's hand
    stays. (No time limit: a restart changes no deadline.)"""
    h = harness
    h.settings = make_settings(h.db_path, turn_timeout=0)
    await h.restart()
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    club = h.fake.group(-9412, "Club", admins={alice})
    pub = h.fake.group(-9413, "Pub", admins={carol})
    for p in (alice, bob, carol):
        await h.send(p.start_private())
    killed_without_a_last_write(monkeypatch)
    with deaf():
        await h.send(alice.send(club, "/newgame"))
        await h.send(bob.tap(h.lobby_message(club), "Join"))
        await h.send(alice.tap(h.lobby_message(club), "Start"))
    await h.send(carol.send(pub, "/newgame"))
    await h.send(bob.tap(h.lobby_message(pub), "Join"))
    await h.send(carol.tap(h.lobby_message(pub), "Start"))
    (first, second) = live_hands(h, bob)
    await kill(h)
    hands = live_hands(h, bob)
    assert first.deleted
    assert not second.deleted and len(hands) == 2
    assert {m.message_id for m in hands} == {
        r.hand_messages["2"] for r in h.rooms.store.live_records()
    }


async def test_the_search_passes_over_what_the_games_stored_there(harness: BotHarness) -> None:
    """A start looks for the copies of a hand the processes before it sent: every message
    of the bot's after the hand's floor that it does not know is taken for one, but those
    that the live games stored there (`spare`: another game's hand, a practice table)."""
    h = harness
    alice = h.user(1, "Alice")
    await h.send(alice.start_private())
    (welcome,) = h.fake.messages(alice.id)
    out = h.rooms.kit.out
    copy = await out.send(alice.id, Rendered("a hand"))
    other = await out.send(alice.id, Rendered("another game's hand"))
    await h.restart()  # (this start knows neither)
    out = h.rooms.kit.out
    out.may_have_landed(alice.id, "hand", after=welcome.message_id, spare=lambda: {other})
    await out.send(alice.id, Rendered("a hand"), key="hand")
    assert h.fake.message(alice.id, copy).deleted
    assert not h.fake.message(alice.id, other).deleted


async def test_a_game_dealt_by_a_start_that_never_wrote_to_its_players_is_searched_too(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alice and Bob started the bot and sat down in a lobby long before a restart (their
    private chats quiet for more than Telegram's window): the start that deals knows where
    the bot last wrote to them all the same (kept for every player seated in a lobby or
    game, not only for the chats in Telegram's open windows), so a hand it sent and died
    before storing is found by the next start."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9414, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    await h.send(alice.send(group, "/newgame"))
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    h.timing.advance(60)  # (every window closed)
    await h.restart()
    killed_without_a_last_write(monkeypatch)
    with deaf():
        await h.send(alice.tap(h.lobby_message(group), "Start"))
    copies = {u.id: live_hands(h, u) for u in (alice, bob)}
    assert all(len(found) == 1 for found in copies.values())
    await kill(h)
    for user in (alice, bob):
        (hand,) = live_hands(h, user)
        assert hand.message_id == h.hand_message(user).message_id
        assert copies[user.id][0].deleted


async def test_a_result_posted_by_starts_killed_in_a_row_is_shown_once(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game ends and its result lands, and the bot dies before it stores its id; the
    next start posts it again, and dies the same way before it looked for the copy. The
    start after it deletes both copies (they lie after where the bot wrote last in the
    group when the game ended), and what people wrote meanwhile stays."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9415, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    killed_without_a_last_write(monkeypatch)

    async def dies_first(self: screens.Screens, game_id: int, message_id: int) -> None:
        return None

    with deaf(), monkeypatch.context() as patch:
        patch.setattr(screens.Screens, "_result_posted", dies_first)
        await h.rooms.moderation.remove_player(chat_id=group.id, player_id="2", why="left")
        await h.settle()
        update = alice.send(group, "gg")
        await h.send(update)
        await kill(h)
    copies = results(h, group)
    assert len(copies) == 2
    await kill(h)
    (result,) = results(h, group)
    assert "Ready for another" in result.button_texts
    assert all(m.deleted for m in copies)
    gg = h.fake.message(group.id, update["message"]["message_id"])
    assert not gg.deleted and gg.text == "gg" and gg.edits == 0
    assert (await h.table_of(group)).text.startswith("Durak · ")


async def test_a_game_dealt_before_the_bot_ever_wrote_to_a_player_is_searched_too(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's /start was never answered (Telegram failed every try), and he joined: the bot
    has no message of its own in his chat when it deals, but it saw his /start there, and
    his hand's copies lie after it."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9416, "Club", admins={alice})
    await h.send(alice.start_private())
    h.fake.fail_next("sendMessage", 502, chat_id=bob.id, times=20)
    await h.send(bob.start_private())
    h.fake.clear_faults()
    assert not [m for m in h.fake.messages(bob.id) if m.from_bot]
    killed_without_a_last_write(monkeypatch)
    with deaf():
        await h.send(alice.send(group, "/newgame"))
        await h.send(bob.tap(h.lobby_message(group), "Join"))
        await h.send(alice.tap(h.lobby_message(group), "Start"))
    (copy,) = live_hands(h, bob)
    await kill(h)
    (hand,) = live_hands(h, bob)
    assert copy.deleted
    assert hand.message_id == h.hand_message(bob).message_id


async def test_a_copy_left_where_other_sends_lost_their_answers_goes_at_the_next_start(
    harness: BotHarness,
) -> None:
    """Bob's /start was never answered (every try timed out), and then his first hand's
    answer was lost too though it landed: the hand sent again lands, but with two lost
    sends in his chat the bot cannot tell the copy from the other one's, and leaves it. The
    next start, showing his stored hand, looks between the hand's floor and that hand,
    and deletes the copy."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9417, "Club", admins={alice})
    await h.send(alice.start_private())
    h.fake.timeout_next("sendMessage", chat_id=bob.id, times=20)
    await h.send(bob.start_private())
    h.fake.clear_faults()
    await h.send(alice.send(group, "/newgame"))
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    h.fake.timeout_next("sendMessage", chat_id=bob.id, applied=True)
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    copies = live_hands(h, bob)
    assert len(copies) == 2  # (in this process: other sends lost their answers too)
    await kill(h)
    (hand,) = live_hands(h, bob)
    assert hand.message_id == h.hand_message(bob).message_id
    assert copies[0].deleted


async def test_a_leave_question_asked_in_private_is_no_copy_to_a_search_after_a_kill(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob asked in his private chat to leave; the bot is killed, and meanwhile he deleted
    his hand: the next start sends it anew and looks for copies after the stored one. The
    question, stored with the game, is none: it stays, and its Yes still works."""
    h = harness
    group, _, bob = await two_at(h, -9431)
    await h.send(bob.send_private("/leave"))
    question = h.fake.last_message(bob.id)
    assert "Yes, I give up" in question.button_texts
    killed_without_a_last_write(monkeypatch)
    h.fake.delete_by_user(bob.id, h.hand_message(bob).message_id)
    await kill(h)
    assert not h.fake.message(bob.id, question.message_id).deleted
    assert h.hand_message(bob).buttons  # his hand sent anew
    await h.send(bob.tap(question, "Yes, I give up"))
    assert "Game over" in h.fake.messages(group.id)[-1].text
