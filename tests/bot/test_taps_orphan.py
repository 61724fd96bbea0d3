"""A second hand message, left live by a send whose answer was lost (and not found by the
outbox's sweep: the bot restarted before it sent the hand again, and the process that dealt
knew no message of the private chat to search from): its buttons work as the hand's, and it
is retired at its first tap (#34 item 4, for hands)."""

from __future__ import annotations

from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeMessage


def is_hand(message: FakeMessage) -> bool:
    return any(
        b.callback_data and b.callback_data.startswith("m") for row in message.buttons for b in row
    )


async def test_a_tap_on_a_second_hand_message_plays_and_retires_it(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-3404, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    # The process that deals knows nothing of the private chats: started after the last
    # message there had left Telegram's windows (the next leader hears of the chats the
    # one before wrote to within them).
    h.timing.advance(10.0)
    await h.restart()
    await h.send(alice.send(group, "/newgame"))
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    # Each hand lands, but the answer is lost, and Telegram fails every try after it until
    # the bot restarts: the next start sends each hand again, not knowing the first.
    for p in (alice, bob):
        h.fake.timeout_next("sendMessage", chat_id=p.id, applied=True)
        h.fake.fail_next("sendMessage", 502, chat_id=p.id, times=100)
    await h.deliver(alice.tap(h.lobby_message(group), "Start"))
    await h.stop()
    h.fake.clear_faults()
    await h.start()
    await h.settle()
    record = h.rooms.store.live(group.id)
    assert record is not None and record.game is not None
    game = record.game
    attacker = h.users[int(game.attacker)]
    hands = [m for m in h.fake.messages(attacker.id) if is_hand(m)]
    assert len(hands) == 2  # two live keyboards
    current = h.hand_message(attacker)
    orphan = next(m for m in hands if m.message_id != current.message_id)
    card = next(b for row in orphan.buttons for b in row if b.callback_data and "·" not in b.text)
    tap = attacker.tap(orphan, card.callback_data or "")
    again = attacker.tap(orphan, card.callback_data or "")  # tapped twice before it goes
    h.fake.clear_calls()
    await h.deliver(tap, again)
    await h.settle()
    retired = [
        c
        for c in h.fake.calls
        if c.method in ("deleteMessage", "editMessageText")
        and c.params.get("chat_id") == attacker.id
        and c.params.get("message_id") == orphan.message_id
    ]
    assert len(retired) == 1  # retired once
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text is None
    assert game.move_number == 1  # it counted as a tap on the hand
    left = [m for m in h.fake.messages(attacker.id) if is_hand(m)]
    assert [m.message_id for m in left] == [current.message_id]  # the second one is retired
    assert h.fake.flooded == []
