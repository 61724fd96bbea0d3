"""The throw-in window (issue #31): once every attack card is covered, or the defender takes,
the players who could still throw in get a few seconds (`ChatSettings.throw_in_window`, 5 by
default), shown in their hands and on the table; a card thrown in starts it again, a Done
does not; when it runs out the bout ends as if all had tapped Done, and nobody gets a strike.
R9, R12 and R13 of docs/rules.md ("legt niemand mehr zu")."""

from __future__ import annotations

from engine import Attack, Card, Game
from storage import ChatSettings
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeGroup, FakeUser

# Alice (1) leads against Bob (2); after Bob covers the 6♠ with the 7♠, Alice (7♣) and Carol
# (6♥ 7♥ 6♣) could both throw in.
HANDS = {"1": "6♠ 7♣ 8♥ K♣", "2": "7♠ 8♠ 9♥ 10♥ A♣", "3": "6♥ 7♥ 6♣ Q♣"}
STOCK = "6♦ 7♦ 8♦ 9♦ 10♦ J♦ Q♦"


def position() -> Game:
    return Game.from_position(HANDS, trump="A♦", stock=STOCK, attacker="1")


async def three(
    h: BotHarness, chat_id: int, *, window: int | None = None
) -> tuple[FakeGroup, FakeUser, FakeUser, FakeUser]:
    """Alice, Bob and Carol play `position()`; Alice has led the 6♠."""
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(chat_id, "Club", admins={alice})
    if window is not None:
        async with h.rooms.kit.db.transaction() as tx:
            await tx.chats.save(settings=ChatSettings(chat_id=chat_id, throw_in_window=window))
    await h.open_game(group, [alice, bob, carol])
    await h.set_position(group, position())
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    return group, alice, bob, carol


def game_of(h: BotHarness, group: FakeGroup) -> Game:
    record = h.rooms.store.live(group.id)
    assert record is not None and record.game is not None
    return record.game


def strikes(h: BotHarness, group: FakeGroup) -> dict[str, int]:
    record = h.rooms.store.live(group.id)
    assert record is not None
    return record.timeouts


async def test_r12_the_window_ends_the_bout_without_a_strike(harness: BotHarness) -> None:
    h = harness
    group, alice, bob, carol = await three(h, -31001)
    await h.send(bob.tap(h.hand_message(bob), "7♠"))
    for user in (alice, carol):
        text = h.read(h.hand_message(user))
        assert "Beaten off in 5 s: tap a card to throw in, or Done." in text
    assert "Beaten off in" not in h.read(h.hand_message(bob))  # he cannot throw in
    table = h.read(await h.table_of(group))
    assert "⏳ Beaten off in 5 s unless someone throws in." in table
    assert "Waiting for" not in table  # who could throw in would tell of their cards
    sent = {user.id: len(h.fake.messages(user.id)) for user in (alice, carol)}
    h.clock.advance(4)
    assert await h.run_due() == 0  # no half-time warning either
    assert {user.id: len(h.fake.messages(user.id)) for user in (alice, carol)} == sent
    h.clock.advance(1.5)
    assert await h.run_due() == 1
    game = game_of(h, group)
    assert game.table == [] and game.discard_size == 2
    assert game.attacker == "2"  # beaten off (R12): Bob leads the next bout
    assert strikes(h, group) == {}
    table = h.read(await h.table_of(group))
    assert "runs out of time" not in table
    assert table.endswith("⏳ Waiting for Bob: time runs out in 60 s.")
    for user in (alice, carol):  # no "your time ran out" in their hands
        assert "time ran out" not in h.read(h.hand_message(user))


async def test_r9_a_card_thrown_in_starts_the_window_again_and_done_does_not(
    harness: BotHarness,
) -> None:
    h = harness
    group, alice, bob, carol = await three(h, -31002)
    await h.send(bob.tap(h.hand_message(bob), "7♠"))
    h.clock.advance(4)
    await h.send(carol.tap(h.hand_message(carol), "6♥"))  # thrown in: Bob must cover
    assert "Beaten off in" not in h.read(await h.table_of(group))
    h.clock.advance(10)
    assert await h.run_due() == 0  # Bob has his turn's time, not the window's
    await h.send(bob.tap(h.hand_message(bob), "9♥"))
    assert "Beaten off in 5 s" in h.read(h.hand_message(carol))  # the window anew
    h.clock.advance(3)
    await h.send(alice.tap(h.hand_message(alice), "Done"))  # keeps the window's end
    assert game_of(h, group).to_act == frozenset({"3"})
    h.clock.advance(1.5)
    assert await h.run_due() == 0
    h.clock.advance(1)
    assert await h.run_due() == 1
    game = game_of(h, group)
    assert game.table == [] and game.discard_size == 4
    assert strikes(h, group) == {}


async def test_r13_after_a_take_the_window_ends_with_the_defender_taking(
    harness: BotHarness,
) -> None:
    h = harness
    group, _, bob, carol = await three(h, -31003)
    await h.send(bob.tap(h.hand_message(bob), "Take"))
    game = game_of(h, group)
    assert game.to_act == frozenset({"3"})  # Alice holds no six: nobody waits for her
    assert "Bob takes it all in 5 s: tap a card to throw in, or Done." in (
        h.read(h.hand_message(carol))
    )
    assert "⏳ Bob takes it all in 5 s unless someone throws in." in h.read(await h.table_of(group))
    h.clock.advance(5.5)
    assert await h.run_due() == 1
    game = game_of(h, group)
    assert game.table == [] and Card.parse("6♠") in game.hand("2")
    assert game.attacker == "3"  # R13: the player after the taker leads
    assert strikes(h, group) == {}


async def test_the_window_ends_after_a_restart_with_a_short_grace(harness: BotHarness) -> None:
    """The window's end is stored: a restart (or a new leader) ends the bout when it runs
    out; one that came while the bot was down gets the window's length again, not a turn's
    30 s, and is no strike either."""
    h = harness
    group, _, bob, _ = await three(h, -31004)
    await h.send(bob.tap(h.hand_message(bob), "7♠"))
    await h.stop()
    h.clock.advance(120)
    await h.start()
    assert await h.run_due() == 0  # taps sent meanwhile still count
    h.clock.advance(5.5)
    assert await h.run_due() == 1
    assert game_of(h, group).table == []
    assert strikes(h, group) == {}


async def test_a_window_of_0_waits_for_done_as_before(harness: BotHarness) -> None:
    h = harness
    group, _, bob, carol = await three(h, -31005, window=0)
    await h.send(bob.tap(h.hand_message(bob), "7♠"))
    assert "Beaten off in" not in h.read(h.hand_message(carol))
    assert "⏳ Your time runs out in 60 s." in h.read(h.hand_message(carol))
    assert "⏳ Waiting for Alice, Carol: time runs out in 60 s." in h.read(await h.table_of(group))
    h.clock.advance(30)
    assert await h.run_due() == 0
    assert game_of(h, group).to_act == frozenset({"1", "3"})


async def test_the_window_is_a_house_rule_in_settings(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-31006, "Club", admins={alice})
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    assert "Throw-in time: 5 s —" in menu.text
    seen = []
    for _ in range(4):
        await h.send(alice.tap(menu, next(t for t in menu.button_texts if "Throw-in time" in t)))
        async with h.rooms.kit.db.transaction(readonly=True) as tx:
            seen.append((await tx.chats.get(chat_id=group.id)).throw_in_window)
        if seen[-1] == 0:  # off: no "then the bout ends by itself" beside it
            assert "Throw-in time: off\n" in menu.text
    assert seen == [10, 0, 3, 5]
    assert "Throw-in time: 5 s" in menu.button_texts


async def test_r13_a_window_after_a_take_calls_nobody(harness: BotHarness) -> None:
    """A throw-in window ends by itself: a player who has not tapped for a while is not
    called with a new, notifying hand (an edit shows the window)."""
    h = harness
    _, _, bob, carol = await three(h, -31007)
    heard = len(h.fake.notifications(carol.id))
    old = h.hand_message(carol)
    h.clock.advance(11)  # past TURN_ALERT_AFTER
    await h.send(bob.tap(h.hand_message(bob), "Take"))
    assert len(h.fake.notifications(carol.id)) == heard
    assert h.hand_message(carol).message_id == old.message_id
    assert "Bob takes it all in 5 s" in h.read(h.hand_message(carol))


async def test_r9_a_computer_decides_within_the_window(harness: BotHarness) -> None:
    """A computer that could throw in throws in or is done at once (COMPUTER_DELAY 0 here;
    otherwise within a share of the window): the window waits for the people alone."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-31008, "Club", admins={alice})
    for user in (alice, bob):
        await h.send(user.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    await h.send(bob.tap(lobby, "Join"))
    await h.send(alice.tap(lobby, "Add computer"))
    await h.send(alice.tap(lobby, "easy"))
    await h.send(alice.tap(lobby, "Start"))
    hands = {"1": HANDS["1"], "2": HANDS["2"], "cpu-easy-1": HANDS["3"]}
    await h.set_position(group, Game.from_position(hands, trump="A♦", stock=STOCK, attacker="1"))
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    await h.send(bob.tap(h.hand_message(bob), "7♠"))
    game = game_of(h, group)
    assert "cpu-easy-1" not in game.to_act  # decided at once: it threw in the 6♣
    assert game.history[-1] == ("cpu-easy-1", Attack(Card.parse("6♣")))
    assert game.to_act == frozenset({"2"}) and not game.closing  # Bob must cover it
