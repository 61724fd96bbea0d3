"""Turn alerts: Telegram notifies on a new message, never on an edit. A player whose turn
comes after a pause gets their hand as a new message at the bottom of the chat (the old
one deleted); a player who is tapping gets silent edits; each player and each group can
switch alerts off."""

from __future__ import annotations

from engine import Game
from storage import ChatSettings
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeGroup, FakeUser

PAUSE = 11  # seconds: more than TURN_ALERT_AFTER (10)


async def two_at(h: BotHarness, chat_id: int) -> tuple[FakeGroup, FakeUser, FakeUser]:
    """Alice (attacker, 6♠ 9♥) and Bob (9♠ 10♣ J♣) in a new group."""
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(chat_id, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    position = Game.from_position(
        {"1": "6♠ 9♥", "2": "9♠ 10♣ J♣"}, trump="K♦", stock="Q♥ J♥ 7♣ 8♣", attacker="1"
    )
    await h.set_position(group, position)
    return group, alice, bob


async def play(h: BotHarness, user: FakeUser, label: str) -> None:
    await h.send(user.tap(h.hand_message(user), label))


async def test_a_turn_after_a_pause_comes_as_a_new_notifying_message(harness: BotHarness) -> None:
    h = harness
    _, alice, bob = await two_at(h, -7401)
    old = h.hand_message(bob)
    heard, alice_heard = len(h.fake.notifications(bob.id)), len(h.fake.notifications(alice.id))
    h.clock.advance(PAUSE)
    await play(h, alice, "6♠")  # Bob must defend now
    new = h.hand_message(bob)
    assert new.message_id != old.message_id
    assert new.notified and "9♠" in new.button_texts  # at the bottom, announced
    assert h.fake.messages(bob.id)[-1].message_id == new.message_id
    assert old.deleted  # one live hand per game
    assert len(h.fake.notifications(bob.id)) == heard + 1  # and no other for this turn
    assert len(h.fake.notifications(alice.id)) == alice_heard  # she tapped just now: edits


async def test_the_old_hand_is_gone_before_the_new_one_comes(harness: BotHarness) -> None:
    """Never two live keyboards, not even for a moment: a worker that died between the two
    calls would leave the old one live for good (nobody would know its id any more)."""
    h = harness
    _, alice, bob = await two_at(h, -7410)
    old = h.hand_message(bob)
    calls = len(h.fake.calls)
    h.clock.advance(PAUSE)
    await play(h, alice, "6♠")
    into_bob = [
        (c.method, c.params.get("message_id"))
        for c in h.fake.calls[calls:]
        if c.chat_id == bob.id and c.method in ("sendMessage", "deleteMessage")
    ]
    assert into_bob == [("deleteMessage", old.message_id), ("sendMessage", None)]


async def test_a_player_who_is_tapping_gets_silent_edits(harness: BotHarness) -> None:
    h = harness
    _, alice, bob = await two_at(h, -7402)
    old = h.hand_message(bob)
    heard = len(h.fake.notifications(bob.id))
    await play(h, alice, "6♠")  # Bob got his hand a moment ago
    assert h.hand_message(bob).message_id == old.message_id and not old.deleted
    assert len(h.fake.notifications(bob.id)) == heard


async def test_r9_a_throw_in_that_may_wait_is_no_alert(harness: BotHarness) -> None:
    """After a cover the attacker may throw in, but the bout can go on without him: no
    alert (only a lead, a defence, or a throw-in after a take, R11, calls a player)."""
    h = harness
    _, alice, bob = await two_at(h, -7403)
    await play(h, alice, "6♠")
    heard = len(h.fake.notifications(alice.id))
    h.clock.advance(PAUSE)
    await play(h, bob, "9♠")  # covers; Alice may throw in 9♥
    assert "9♥️" in h.hand_message(alice).button_texts
    assert len(h.fake.notifications(alice.id)) == heard


async def test_r11_a_throw_in_after_a_take_is_an_alert(harness: BotHarness) -> None:
    """Without a throw-in window (0) the bout waits for her Done: she is called. (With one
    it ends by itself: tests/bot/test_throwin_window.py.)"""
    h = harness
    async with h.rooms.kit.db.transaction() as tx:
        await tx.chats.save(settings=ChatSettings(chat_id=-7404, throw_in_window=0))
    _, alice, bob = await two_at(h, -7404)
    await play(h, alice, "6♠")
    heard = len(h.fake.notifications(alice.id))
    h.clock.advance(PAUSE)
    await play(h, bob, h.rooms.kit.t("en", "button-take"))  # the game waits for Alice
    assert len(h.fake.notifications(alice.id)) == heard + 1
    assert h.hand_message(alice).notified


async def test_a_player_switches_alerts_off_in_private_settings(harness: BotHarness) -> None:
    h = harness
    _, alice, bob = await two_at(h, -7405)
    await h.send(bob.send(bob, "/settings"))
    menu = h.fake.last_message(bob.id)
    assert "✓ As each group sets it" in menu.button_texts
    await h.send(bob.tap(menu, "Alerts off"))  # at once also for the running game
    menu = h.fake.message(bob.id, menu.message_id)
    assert "Turn alerts: off —" in menu.text and "✓ Alerts off" in menu.button_texts
    heard = len(h.fake.notifications(bob.id))
    h.clock.advance(PAUSE)
    await play(h, alice, "6♠")
    assert len(h.fake.notifications(bob.id)) == heard  # edited, silently
    await h.send(bob.tap(menu, "Alerts on"))
    menu = h.fake.message(bob.id, menu.message_id)
    assert "Turn alerts: on —" in menu.text and "✓ Alerts on" in menu.button_texts


async def test_a_group_switches_the_default_off(harness: BotHarness) -> None:
    h = harness
    async with h.rooms.kit.db.transaction() as tx:
        await tx.chats.save(settings=ChatSettings(chat_id=-7406, turn_alerts=False))
    _, alice, bob = await two_at(h, -7406)
    heard = len(h.fake.notifications(bob.id))
    h.clock.advance(PAUSE)
    await play(h, alice, "6♠")
    assert len(h.fake.notifications(bob.id)) == heard


async def test_an_old_hand_telegram_will_not_delete_points_below(harness: BotHarness) -> None:
    h = harness
    _, alice, bob = await two_at(h, -7407)
    old = h.hand_message(bob)
    h.fake.fail_next("deleteMessage", 400, "Bad Request: message can't be deleted")
    h.clock.advance(PAUSE)
    await play(h, alice, "6♠")
    old = h.fake.message(bob.id, old.message_id)
    assert not old.deleted and not old.buttons  # no second live keyboard
    assert old.text == h.rooms.kit.t("en", "hand-replaced")
    assert h.hand_message(bob).message_id != old.message_id
