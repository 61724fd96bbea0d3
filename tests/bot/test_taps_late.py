"""Late taps: every tap on a hand is applied, or answered in words that say why; a quiet
answer only for the same press again (#34 item 2)."""

from __future__ import annotations

from engine import Game
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeMessage, FakeUser


async def two_players(h: BotHarness, hands: dict[str, str], stock: str = "6♣ 7♣"):
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-3400, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = Game.from_position(
        {"1": hands["1"], "2": hands["2"]}, trump="A♣", stock=stock, attacker="1"
    )
    await h.set_position(group, game)
    return alice, bob, group, game


def data_of(message: FakeMessage, label: str) -> str:
    """The callback data of a button as the keyboard shows it now (a later tap on it is a
    tap on that keyboard, whatever the message shows by then)."""
    for row in message.buttons:
        for button in row:
            if button.text.replace("\ufe0f", "") == label and button.callback_data:
                return button.callback_data
    raise AssertionError(f"no button {label!r} in {message.button_texts}")


def hand_edits(h: BotHarness, user: FakeUser) -> int:
    return sum(1 for c in h.fake.calls_for("editMessageText") if c.params["chat_id"] == user.id)


async def test_a_late_tap_one_move_back_is_told_it_came_too_late(harness: BotHarness) -> None:
    """Alice's 9♥ was tapped on the keyboard her 6♠ just replaced: not applied, and she is
    told so (her hand shows the game already: no edit), not answered as if it were taken."""
    h = harness
    alice, _bob, _group, game = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    old = h.hand_message(alice)
    nine = data_of(old, "9♥")
    await h.send(alice.tap(old, "6♠"))
    assert game.move_number == 1
    h.fake.clear_calls()
    late = alice.tap_raw(old, nine)
    await h.send(late)
    answer = h.fake.answer_for(late)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-stale-shown")
    assert game.move_number == 1 and [str(a) for a, _ in game.table] == ["6♠"]
    assert hand_edits(h, alice) == 0  # it shows the game as it is


async def test_a_late_tap_two_moves_back_is_told_it_came_too_late(harness: BotHarness) -> None:
    h = harness
    alice, bob, _group, game = await two_players(h, {"1": "6♠ 9♥ 10♦", "2": "8♠ 7♥ J♦"})
    old = h.hand_message(alice)
    ten = data_of(old, "10♦")
    await h.send(alice.tap(old, "6♠"))
    await h.send(bob.tap(h.hand_message(bob), "8♠"))
    assert game.move_number == 2
    late = alice.tap_raw(old, ten)  # from the keyboard before her 6♠
    await h.send(late)
    answer = h.fake.answer_for(late)
    assert (
        answer is not None
        and answer.text == "Too late: Bob moved first. Your hand shows where it is now."
    )
    assert game.move_number == 2
    assert h.fake.unanswered_callbacks() == []


async def test_a_double_tap_is_quiet_and_applied_once(harness: BotHarness) -> None:
    h = harness
    alice, _bob, _group, game = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    old = h.hand_message(alice)
    six = data_of(old, "6♠")
    first = alice.tap_raw(old, six)
    await h.send(first)
    h.fake.clear_calls()
    again = alice.tap_raw(old, six)  # the same press, delivered again
    await h.send(again)
    assert h.fake.answer_for(again).text is None  # quiet: it was taken
    assert game.move_number == 1 and [str(a) for a, _ in game.table] == ["6♠"]
    assert hand_edits(h, alice) == 0
    # Long after, the same old button is not the same press: told it is too late.
    h.clock.advance(10)
    later = alice.tap_raw(old, six)
    await h.send(later)
    assert h.fake.answer_for(later).text == h.rooms.kit.t("en", "error-stale-shown")
    assert game.move_number == 1


async def test_a_late_tap_on_a_hand_not_yet_edited_brings_the_current_one(
    harness: BotHarness,
) -> None:
    """Bob's hand edit after Alice's attack failed for good: his tap on the old keyboard is
    out of date, and his current hand is sent; a second such tap sends nothing more."""
    h = harness
    alice, bob, _group, game = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    old = h.hand_message(bob)
    eight = data_of(old, "·8♠·")
    h.fake.fail_next("editMessageText", 400, "Bad Request: something odd", chat_id=bob.id)
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    assert "Take" not in h.hand_message(bob).button_texts
    tap = bob.tap_raw(old, eight)
    await h.send(tap)
    assert h.fake.answer_for(tap).text == h.rooms.kit.t("en", "error-stale")
    assert "Take" in h.hand_message(bob).button_texts  # the current hand, sent again
    assert game.table[0][1] is None


async def test_taps_across_a_restart(harness: BotHarness) -> None:
    """After a restart the current keyboard works; the same press as a move made before the
    restart is told it came too late and changes nothing."""
    h = harness
    alice, bob, _group, game = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    old = h.hand_message(alice)
    six = data_of(old, "6♠")
    await h.send(alice.tap(old, "6♠"))
    await h.restart()
    await h.settle()
    late = alice.tap_raw(old, six)
    await h.send(late)
    assert h.fake.answer_for(late).text in (
        h.rooms.kit.t("en", "error-stale-shown"),
        h.rooms.kit.t("en", "error-stale"),
    )
    record = h.rooms.store.live(_group.id)
    assert record is not None and record.game is not None
    game = record.game
    assert game.move_number == 1
    tap = bob.tap(h.hand_message(bob), "8♠")  # the keyboard shown before the restart
    await h.send(tap)
    assert h.fake.answer_for(tap).text is None
    assert game.move_number == 2


async def test_a_player_out_of_the_game_is_told_so(harness: BotHarness) -> None:
    """Alice played her last card with the stock empty: she is out (R17). A tap on her old
    keyboard says so, not "here is your current hand"."""
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-3401, "Club", admins={alice})
    await h.open_game(group, [alice, bob, carol])
    game = Game.from_position(
        {"1": "6♠", "2": "8♠ 7♥ 9♦", "3": "10♦ J♥ Q♦"}, trump="♣", attacker="1"
    )
    await h.set_position(group, game)
    old = h.hand_message(alice)
    six = data_of(old, "6♠")
    await h.send(alice.tap(old, "6♠"))
    await h.send(bob.tap(h.hand_message(bob), "8♠"))
    assert "1" not in game.active_players and not game.is_over
    again = alice.tap_raw(old, six)  # her last card's press, delivered again: quiet
    await h.send(again)
    assert h.fake.answer_for(again).text is None
    h.clock.advance(10)  # not the same press again
    tap = alice.tap_raw(old, six)
    await h.send(tap)
    assert h.fake.answer_for(tap).text == h.rooms.kit.t("en", "error-player-out")


async def test_stale_taps_show_the_hand_anew_at_most_every_few_seconds(
    harness: BotHarness,
) -> None:
    """Bob's hand edits are refused: each of his taps on the old keyboard is answered, but
    they do not bring an edit each (a storm of them would use his chat's budget up)."""
    h = harness
    alice, bob, _group, game = await two_players(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    old = h.hand_message(bob)
    eight = data_of(old, "·8♠·")
    h.fake.fail_next("editMessageText", 400, "Bad Request: something odd", chat_id=bob.id, times=9)
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    h.fake.clear_calls()
    taps = [bob.tap_raw(old, eight) for _ in range(5)]
    for tap in taps:
        await h.send(tap)
        h.clock.advance(0.2)
    assert all(h.fake.answer_for(t).text == h.rooms.kit.t("en", "error-stale") for t in taps)
    assert hand_edits(h, bob) == 1
    h.clock.advance(3)  # later, the next one tries again
    await h.send(bob.tap_raw(old, eight))
    assert hand_edits(h, bob) == 2
    assert game.table[0][1] is None


async def test_a_late_tap_whose_card_still_fits_is_not_played_in_another_sense(
    harness: BotHarness,
) -> None:
    """Alice's 6♥ on the keyboard from before her lead meant another lead; after 6♠ and
    Bob's cover it would be a throw-in: not played, and she is told why."""
    h = harness
    alice, bob, _group, game = await two_players(h, {"1": "6♠ 6♥ 9♦", "2": "8♠ 7♥ J♦"})
    old = h.hand_message(alice)
    six = data_of(old, "6♥")
    await h.send(alice.tap(old, "6♠"))
    await h.send(bob.tap(h.hand_message(bob), "8♠"))
    data_of(h.hand_message(alice), "6♥")  # she may throw it in now
    late = alice.tap_raw(old, six)
    await h.send(late)
    assert h.fake.answer_for(late).text == (
        "Too late: Bob moved first. Your hand shows where it is now."
    )
    assert [str(a) for a, _ in game.table] == ["6♠"]
