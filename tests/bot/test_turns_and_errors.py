"""What the bot issue asks of turns, seats and Telegram's answers, end to end: deadlines after
a restart, the timeout move, the seat limit (R3), unblocking, a group that became a
supergroup, and edits that change nothing."""

from __future__ import annotations

from pathlib import Path

from bot import render
from engine import Card, Game, Rules
from storage import ChatSettings
from tests.bot.conftest import TOKEN, BotHarness, ManualClock
from tests.fakes.telegram import FakeGroup, FakeUser


def live(h: BotHarness, chat_id: int) -> Game:
    record = h.rooms.store.live(chat_id)
    assert record.status == "running" and record.game is not None
    return record.game


async def three_at(
    h: BotHarness, chat_id: int, position: Game
) -> tuple[FakeGroup, tuple[FakeUser, FakeUser, FakeUser]]:
    """Alice, Bob and Carol (ids 1, 2, 3) start a game in a new group; then `position`
    (players "1", "2", "3") replaces its deal."""
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(chat_id, "Club", admins={alice})
    await h.open_game(group, [alice, bob, carol])
    await h.set_position(group, position)
    return group, (alice, bob, carol)


async def test_a_deadline_is_re_armed_after_a_restart(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6001, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.restart()
    h.clock.advance(61)
    assert await h.run_due() == 1
    assert live(h, group.id).move_number == 1  # the timeout move was made


async def test_r7_an_opener_who_times_out_plays_his_lowest_non_trump(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6002, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    position = Game.from_position(
        {"1": "6♣ 9♥ 7♠", "2": "8♠ 7♥"}, trump="A♣", stock="10♣ J♣", attacker="1"
    )
    await h.set_position(group, position)
    h.clock.advance(61)
    assert await h.run_due() == 1
    assert live(h, group.id).table == [(Card.parse("7♠"), None)]  # not the trump 6♣


async def test_r3_a_lobby_seats_no_more_players_than_the_deck_allows(harness: BotHarness) -> None:
    h = harness
    async with h.rooms.kit.db.transaction() as tx:  # 24 cards: at most four players
        await tx.chats.save(settings=ChatSettings(chat_id=-6003, rules=Rules(deck_size=24)))
    users = [h.user(i, f"U{i}") for i in range(1, 6)]
    group = h.fake.group(-6003, "Club", admins={users[0]})
    for user in users:
        await h.send(user.start_private())
    await h.send(users[0].send(group, "/newgame"))
    for user in users[1:]:
        tap = user.tap(h.lobby_message(group), "Join")
        await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "lobby-full")
    assert "U5" not in h.lobby_message(group).text
    assert len(h.rooms.store.live(group.id).lobby.seats) == 4


async def test_a_player_who_unblocks_the_bot_gets_the_hand_back(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6004, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = live(h, group.id)
    attacker, defender = h.users[int(game.attacker)], h.users[int(game.defender)]
    await h.send(defender.block_bot())
    hand = h.hand_message(attacker)
    playable = next(b for row in hand.buttons for b in row if "·" not in b.text)
    await h.send(attacker.tap(hand, playable.callback_data or ""))
    assert any("blocked" in m.text for m in h.fake.messages(group.id))
    await h.send(defender.start_private())  # Restart: the bot may write again
    assert "Take" in h.hand_message(defender).button_texts


async def test_a_group_that_became_a_supergroup_plays_on(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6005, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(group.migrate_to_supergroup(-1006005))
    supergroup = group.migrated_to
    assert isinstance(supergroup, FakeGroup)
    game = live(h, supergroup.id)
    attacker = h.users[int(game.attacker)]
    hand = h.hand_message(attacker)
    playable = next(b for row in hand.buttons for b in row if "·" not in b.text)
    await h.send(attacker.tap(hand, playable.callback_data or ""))
    assert game.move_number == 1


async def test_showing_the_same_hands_again_costs_nothing(harness: BotHarness) -> None:
    """What a message shows already is not sent again (Telegram would refuse it as "message
    is not modified", and the call would count against the chat's limits); where the bot
    cannot know, Telegram's refusal is taken as done."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6006, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    messages = len(h.fake.messages(alice.id))
    h.fake.clear_calls()
    await h.rooms.screens.hands(record, force=True)  # the same hands once more
    await h.settle()
    assert h.fake.calls_for("editMessageText") == []
    assert len(h.fake.messages(alice.id)) == messages  # nothing sent anew


async def test_a_turn_that_ran_out_while_the_bot_was_down_gets_time_after_the_restart(
    harness: BotHarness,
) -> None:
    """Taps sent while the bot was down arrive after it starts: the player's move is taken,
    not pre-empted by a timeout (and a timeout strike) for the bot's own downtime."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6010, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    attacker = h.users[int(live(h, group.id).attacker)]
    hand = h.hand_message(attacker)
    card = next(b for row in hand.buttons for b in row if "·" not in b.text)
    await h.stop()
    h.clock.advance(600)  # down for ten minutes: the 60 s turn ran out long ago
    await h.start()
    assert await h.run_due() == 0  # not yet: the player has some time
    tap = attacker.tap(h.hand_message(attacker), card.callback_data or "")
    await h.send(tap)
    game = live(h, group.id)
    assert game.move_number == 1 and game.history[0][0] == str(attacker.id)
    assert not h.rooms.store.live(group.id).timeouts  # no strike
    h.clock.advance(61)
    assert await h.run_due() == 1  # the next turn has its full time, as usual


async def test_r19_after_a_trump_exchange_every_hand_shows_the_new_face_up_trump(
    harness: BotHarness,
) -> None:
    """Bob exchanges before Alice opens: Alice's and Carol's hands must not go on naming
    the old face-up trump, which is now in Bob's hand."""
    h = harness
    group, (alice, bob, carol) = await three_at(
        h,
        -6011,
        Game.from_position(
            {"1": "7♣ 9♥ 7♠", "2": "6♦ 8♠ 7♥", "3": "Q♣ J♥ 10♠"},
            trump="A♦",
            stock="10♣ J♣ K♣",
            attacker="1",
            rules=Rules(trump_exchange=True),
        ),
    )
    assert "A♦" in h.hand_message(carol).text
    exchange = h.rooms.kit.t("en", "button-exchange")
    await h.send(bob.tap(h.hand_message(bob), exchange))
    assert live(h, group.id).trump_card == Card.parse("6♦")
    for user in (alice, carol):
        text = h.hand_message(user).text
        assert "6♦" in text and "A♦" not in text, text


async def test_the_time_given_after_a_restart_is_given_three_times_per_move_at_most(
    harness: BotHarness,
) -> None:
    """A bot that keeps crashing (or a lead that keeps changing hands) must not hold a turn
    open for ever: the 30 s come three times for a move at most, are stored (a reload keeps
    them), and then the turn times out as usual."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6012, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    h.clock.advance(600)
    await h.restart()  # down for ten minutes: 30 s more
    assert await h.run_due() == 0
    for _ in range(2):  # and again, before the 30 s are over: 30 s more, twice
        h.clock.advance(20)
        await h.restart()
        assert await h.run_due() == 0
    h.clock.advance(20)
    await h.restart()  # a fourth time: nothing more
    h.clock.advance(11)
    assert await h.run_due() == 1  # the third 30 s are over: the timeout move
    assert live(h, group.id).move_number == 1


async def test_a_lobby_goes_on_in_the_supergroup_its_group_became(harness: BotHarness) -> None:
    """The lobby's buttons were in the old group: the lobby is posted anew in the new one,
    and joining and starting work there."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6013, "Club", admins={alice}, members={bob})
    await h.send(alice.start_private(), bob.start_private(), alice.send(group, "/newgame"))
    await h.send(group.migrate_to_supergroup(-1006013))
    supergroup = group.migrated_to
    assert isinstance(supergroup, FakeGroup)
    lobby = h.lobby_message(supergroup)
    await h.send(bob.tap(lobby, "Join"))
    await h.send(alice.tap(h.lobby_message(supergroup), "Start"))
    assert live(h, supergroup.id).players == ("1", "2")


async def test_r14_a_card_that_can_only_transfer_asks_before_passing_the_bout_on(
    harness: BotHarness,
) -> None:
    """Bob taps 8♥, which cannot beat 8♠ but could transfer: he is asked (Transfer / Back)
    rather than the bout passing on at once; the Transfer button does it in one tap."""
    h = harness
    group, (alice, bob, _carol) = await three_at(
        h,
        -6014,
        Game.from_position(
            {"1": "8♠ 9♣", "2": "8♥ 6♣ 7♦", "3": "10♣ J♣ Q♣ K♣"},
            trump="A♦",
            stock="10♥ J♥ K♥",
            attacker="1",
            rules=Rules.preset("perevodnoy"),
        ),
    )
    await h.send(alice.tap(h.hand_message(alice), "8♠"))
    await h.send(bob.tap(h.hand_message(bob), "8♥"))
    assert live(h, group.id).move_number == 1  # nothing transferred yet
    question = h.hand_message(bob)
    assert question.button_texts == ["Transfer 8♥️", "Back"]
    assert "Transfer the attack? Carol would defend then." in question.text  # R14: the next
    await h.send(bob.tap(h.hand_message(bob), "Transfer 8♥"))
    assert live(h, group.id).defender == "3"


async def test_r18_a_player_whose_time_ran_out_is_told_the_bot_moved_for_them(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6015, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    opener = h.users[int(live(h, group.id).attacker)]
    told = h.rooms.kit.t("en", "hand-timed-out", count=1, max=3)
    assert told not in h.hand_message(opener).text
    h.clock.advance(61)
    assert await h.run_due() == 1
    assert told in h.hand_message(opener).text  # with the card the bot played for them
    # What a third timeout means (R18): the durak, not "out" (which is how one wins).
    assert "at 3 you lose this game as the durak" in told


async def test_the_table_is_edited_at_most_once_per_interval(
    tmp_path: Path,
) -> None:
    """The table is edited at most every TABLE_EDIT_INTERVAL seconds (the moves themselves
    wait for nothing), and a table that shows everything already costs no call. (That moves
    made in between go out as one edit of the latest state: tests/bot/test_sender.py.)"""
    from tests.bot.conftest import make_settings
    from tests.fakes.telegram import FakeTelegram

    db_path = tmp_path / "durak.sqlite3"
    fake = FakeTelegram(token=TOKEN)
    h = BotHarness(
        fake=fake,
        db_path=db_path,
        clock=ManualClock(),
        settings=make_settings(db_path, table_edit_interval=3.0),
    )
    fake.enforce(clock=h.timing.now)
    await h.start()
    try:
        alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
        group = h.fake.group(-6020, "Club", admins={alice})
        await h.open_game(group, [alice, bob])
        table_id = h.rooms.store.live(group.id).table_message_id or 0
        h.fake.clear_calls()
        edited_at: list[float] = []
        h.fake.watch(
            lambda m, _: (
                edited_at.append(h.timing.now())
                if (m.chat_id, m.message_id) == (group.id, table_id)
                else None
            )
        )
        attacker = h.users[int(live(h, group.id).attacker)]
        defender = h.users[int(live(h, group.id).defender)]
        for user in (attacker, defender):
            hand = h.hand_message(user)
            button = next(b for row in hand.buttons for b in row if "·" not in b.text)
            await h.send(user.tap(hand, button.callback_data or ""))
        edits = [c for c in h.fake.calls_for("editMessageText") if c.params["chat_id"] == group.id]
        assert len(edits) == 2 and all(c.ok for c in edits)
        assert len(edited_at) == 2 and edited_at[1] - edited_at[0] >= 3.0
        text = h.fake.message(group.id, table_id).text
        assert "←" in text  # the latest state: the attack covered
        h.fake.clear_calls()
        h.rooms.screens.table(h.rooms.store.live(group.id))  # nothing new to show
        await h.settle()
        assert h.fake.calls_for("editMessageText") == []
    finally:
        await h.stop()


async def test_r8_the_table_log_tells_a_lead_from_a_throw_in(harness: BotHarness) -> None:
    """The log tells the first card of a bout ("attacks") from a card added to it ("throws
    in", R8, R9), naming the card; the table shows both as they lie, each once."""
    h = harness
    position = Game.from_position(
        {"1": "6♠ 9♥", "2": "9♠ 10♣ J♣", "3": "6♦ 7♣"}, trump="K♦", stock="Q♥ J♥", attacker="1"
    )
    group, (alice, _, carol) = await three_at(h, -6021, position)
    for user, card in ((alice, "6♠"), (carol, "6♦")):
        hand = h.hand_message(user)
        button = hand.button(card)
        await h.send(user.tap(hand, button.callback_data or ""))
    table = (await h.table_of(group)).text
    assert "\nTable: 6♠   6♦️\n" in table and table.count("6♦") == 1
    record = h.rooms.store.live(group.id)
    names = h.rooms.kit.names(record)
    log = record.meta.log
    assert [render.log_line(h.rooms.kit.tr, "de", e, names) for e in log] == [
        "Alice spielt 6♠ aus",
        "Carol wirft 6♦️ zu",
    ]


async def test_a_table_edit_that_failed_is_not_taken_as_shown(harness: BotHarness) -> None:
    """Only an edit Telegram took counts as what the table shows: after a 429 the chat waits
    exactly retry_after, and the table's latest state goes out then."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-6022, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    record = h.rooms.store.live(group.id)
    table_id = record.table_message_id or 0
    attacker = h.users[int(live(h, group.id).attacker)]
    hand = h.hand_message(attacker)
    playable = next(b for row in hand.buttons for b in row if "·" not in b.text)
    h.fake.clear_calls()
    h.fake.fail_next("editMessageText", 429, "Too Many Requests", chat_id=group.id)
    await h.send(attacker.tap(hand, playable.callback_data or ""))
    edits = [c for c in h.fake.calls_for("editMessageText") if c.params["chat_id"] == group.id]
    assert [c.ok for c in edits] == [False, True]  # refused, then sent again
    assert f"\nTable: {playable.text}\n" in h.fake.message(group.id, table_id).text
