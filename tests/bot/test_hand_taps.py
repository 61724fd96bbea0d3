"""Tapping cards in the private hand: one tap where the meaning is clear, two at most."""

from __future__ import annotations

import asyncio

from engine import Game, Rules
from tests.bot.conftest import BotHarness


async def two_player_position(h: BotHarness, hands: dict[str, str], rules: Rules | None = None):
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-3000, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    game = Game.from_position(
        {"1": hands["1"], "2": hands["2"]},
        trump="A♣",
        stock="6♣ 7♣",
        attacker="1",
        rules=rules or Rules(),
    )
    await h.set_position(group, game)
    return alice, bob, group, game


async def test_defend_with_one_fitting_card_takes_one_tap(harness: BotHarness) -> None:
    h = harness
    alice, bob, _group, game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    assert game.table == [(game.table[0][0], None)]
    await h.send(bob.tap(h.hand_message(bob), "8♠"))
    assert game.discard == (game.discard[0], game.discard[1])  # 6♠ and 8♠ beaten off
    assert {str(c) for c in game.discard} == {"6♠", "8♠"}


async def test_a_card_that_covers_two_attacks_asks_which(harness: BotHarness) -> None:
    h = harness
    alice, bob, _group, game = await two_player_position(h, {"1": "6♠ 6♥ 9♦", "2": "10♣ 7♦ 8♦"})
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    await h.send(alice.tap(h.hand_message(alice), "6♥"))
    assert len(game.table) == 2
    hand = h.hand_message(bob)
    await h.send(bob.tap(hand, "10♣"))  # a trump: covers either
    assert all(d is None for _, d in game.table)  # nothing played yet
    choice = h.hand_message(bob)
    assert "Which one?" in choice.text
    assert choice.button_texts[:2] == ["Cover 6♠ with 10♣", "Cover 6♥️ with 10♣"]
    await h.send(bob.tap(choice, "Cover 6♥ with 10♣"))
    assert [(str(a), str(d) if d else None) for a, d in game.table] == [
        ("6♠", None),
        ("6♥", "10♣"),
    ]


async def test_an_unplayable_card_answers_why(harness: BotHarness) -> None:
    h = harness
    alice, bob, _group, game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    tap = bob.tap(h.hand_message(bob), "·7♥·")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == "That card does not beat any open card."
    assert game.move_number == 1


async def test_transfer_button_appears_when_legal(harness: BotHarness) -> None:
    h = harness
    alice, bob, _group, game = await two_player_position(
        h, {"1": "6♠ 9♥ 10♥", "2": "6♥ 7♥ 8♠"}, Rules.preset("perevodnoy")
    )
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    hand = h.hand_message(bob)
    assert "Transfer 6♥️" in hand.button_texts
    await h.send(bob.tap(hand, "Transfer 6♥"))
    assert game.defender == "1"
    assert [str(a) for a, _ in game.table] == ["6♠", "6♥"]


async def test_a_moves_answer_and_hands_go_out_at_once_not_one_after_another(
    harness: BotHarness,
) -> None:
    """Each hand is a private chat of its own: once a move is stored, the tap's answer goes
    first and every hand it changed is sent at once, so the next player's hand does not wait
    for Telegram to answer the other calls first."""
    h = harness
    alice, bob, _group, _game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    on_the_way: set[str] = set()
    together: set[str] = set()
    started: list[str] = []

    async def latency(method: str, params: dict[str, object]) -> None:
        if method == "answerCallbackQuery":
            call = "answer"
        elif method == "editMessageText" and params["chat_id"] in (alice.id, bob.id):
            call = f"hand of {params['chat_id']}"
        else:
            return
        on_the_way.add(call)
        started.append(call)
        together.update(on_the_way if len(on_the_way) > 1 else ())
        await asyncio.sleep(0)  # one step of the loop on the way: another call may start
        on_the_way.discard(call)

    h.fake.latency = latency
    tap = alice.tap(h.hand_message(alice), "6♠")
    await h.send(tap)
    # The answer first (it waits behind nothing), then both hands on their way at once.
    assert started[0] == "answer"
    assert {f"hand of {alice.id}", f"hand of {bob.id}"} <= together
    assert h.fake.answer_for(tap) is not None
    assert "6♠" not in h.hand_message(alice).button_texts
    assert "8♠" in h.hand_message(bob).button_texts  # Bob may now cover it


async def test_a_keyboard_that_missed_an_edit_is_not_obeyed_against_the_new_state(
    harness: BotHarness,
) -> None:
    """#22: Bob's hand edit after Alice's attack is refused for good (a 400), so his
    keyboard still shows "wait for the first card". A tap on it is judged against what it
    showed: refused as out of date, nothing played, and his current hand sent again."""
    h = harness
    alice, bob, _group, game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    old = h.hand_message(bob)
    stale_button = next(b for row in old.buttons for b in row if "8♠" in b.text)
    h.fake.fail_next("editMessageText", 400, "Bad Request: something odd", chat_id=bob.id)
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    assert "Take" not in h.hand_message(bob).button_texts  # the edit was refused
    tap = bob.tap(old, stale_button.callback_data or "")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-stale")
    assert [str(a) for a, _ in game.table] == ["6♠"] and game.table[0][1] is None  # not played
    assert "Take" in h.hand_message(bob).button_texts  # the current hand, sent again
