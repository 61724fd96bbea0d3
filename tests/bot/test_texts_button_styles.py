"""Coloured buttons (#31): the hand's keyboard colours what a player most likely taps (a card
that can be played now: blue; Done: green; Take: red), through the Bot API's `style` field,
which the fake Telegram checks as Telegram does."""

from __future__ import annotations

from bot.keyboard import DANGER, Button, Keyboard
from engine import Game, Rules
from tests.bot.conftest import BotHarness
from tests.bot.test_hand_taps import two_player_position
from tests.fakes.telegram import FakeMessage


def style_of(message: FakeMessage, label: str) -> str | None:
    return message.button(label).style


async def test_playable_cards_are_blue_and_the_others_plain(harness: BotHarness) -> None:
    h = harness
    alice, bob, _group, _game = await two_player_position(h, {"1": "6♠ 9♥", "2": "8♠ 7♥"})
    attacker = h.hand_message(alice)
    assert style_of(attacker, "6♠") == style_of(attacker, "9♥") == "primary"  # any card leads
    await h.send(alice.tap(attacker, "6♠"))
    defender = h.hand_message(bob)
    assert style_of(defender, "8♠") == "primary"  # covers 6♠
    assert style_of(defender, "·7♥·") is None  # cannot be played: not coloured


async def test_take_is_red_and_done_is_green(harness: BotHarness) -> None:
    h = harness
    alice, bob, _group, _game = await two_player_position(h, {"1": "6♠ 6♥ 9♦", "2": "8♠ 7♦ 8♦"})
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    assert style_of(h.hand_message(bob), "Take") == "danger"
    await h.send(bob.tap(h.hand_message(bob), "8♠"))  # covered: the attacker may add or pass
    assert style_of(h.hand_message(alice), "Done") == "success"
    assert style_of(h.hand_message(alice), "6♥") == "primary"  # a rank on the table: 6


async def test_a_transfer_and_a_choice_of_covers_are_blue_and_back_plain(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob, group, _game = await two_player_position(
        h, {"1": "6♠ 9♥ 10♥", "2": "6♥ 7♥ 8♠"}, Rules.preset("perevodnoy")
    )
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    assert style_of(h.hand_message(bob), "Transfer 6♥") == "primary"
    game = Game.from_position(
        {"1": "6♠ 6♥ 9♦", "2": "10♣ 7♦ 8♦"}, trump="A♣", stock="6♣ 7♣", attacker="1"
    )
    await h.set_position(group, game)
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    await h.send(alice.tap(h.hand_message(alice), "6♥"))
    await h.send(bob.tap(h.hand_message(bob), "10♣"))  # a trump: covers either, so it asks
    choice = h.hand_message(bob)
    assert style_of(choice, "Cover 6♠ with 10♣") == "primary"
    assert style_of(choice, "Back") is None


def test_a_style_is_sent_only_when_set() -> None:
    keyboard = Keyboard([[Button("6♠", "m1"), Button("Take", "m2", style=DANGER)]])
    assert keyboard.json == (
        '{"inline_keyboard":[[{"text":"6♠","callback_data":"m1"},'
        '{"text":"Take","callback_data":"m2","style":"danger"}]]}'
    )
