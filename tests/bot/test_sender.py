"""The one mechanism that decides what goes out (#18): slots whose latest content wins,
sent most urgent first within each chat's budget and the bot's, a 429 pausing one chat for
exactly its retry_after, and messages that matter once never dropped.

Through the bot's own `Sender` (`Rooms.sender`) against the fake Bot API, which enforces
Telegram's limits on the same virtual clock (tests/fakes/timing.py).
"""

from __future__ import annotations

from typing import Any

from bot.delivery import Priority
from bot.render import Rendered
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeMessage, FakeUser


async def started(h: BotHarness, *users: FakeUser) -> None:
    for user in users:
        await h.send(user.start_private())
    h.fake.clear_calls()


def arrivals(h: BotHarness) -> list[tuple[float, int, str]]:
    """(virtual time, chat, text) of every message sent or edited from now on."""
    seen: list[tuple[float, int, str]] = []

    def watch(message: FakeMessage, _: Any) -> None:
        seen.append((h.timing.now(), message.chat_id, message.text))

    h.fake.watch(watch)
    return seen


async def test_a_slot_that_changes_before_it_could_go_is_sent_once_with_the_latest(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    await started(h, alice)
    sender = h.rooms.sender
    for n in range(5):  # five states before the sender could send one
        sender.put("slot", alice.id, Rendered(f"state {n}"), priority=Priority.TABLE)
    await h.settle()
    sent = h.fake.calls_for("sendMessage")
    assert [c.params["text"] for c in sent] == ["state 4"]  # once, the latest
    for n in range(5, 8):
        sender.put("slot", alice.id, Rendered(f"state {n}"), priority=Priority.TABLE)
    await h.settle()
    assert [c.params["text"] for c in h.fake.calls_for("editMessageText")] == ["state 7"]
    sender.put("slot", alice.id, Rendered("state 7"), priority=Priority.TABLE)
    await h.settle()
    assert len(h.fake.calls_for("editMessageText")) == 1  # it shows that: no call at all


async def test_the_most_urgent_goes_first_within_a_chats_budget(harness: BotHarness) -> None:
    """Practice puts table and hand into one private chat: at about one a second, the hand
    the game waits for goes before the table, and hands of players who cannot act last."""
    h = harness
    alice = h.user(1, "Alice")
    await started(h, alice)
    seen = arrivals(h)
    sender = h.rooms.sender
    order = [Priority.PASSIVE, Priority.TABLE, Priority.ONCE, Priority.OWN, Priority.AWAITED]
    for n, priority in enumerate(order * 2):
        sender.put(("slot", n), alice.id, Rendered(priority.name), priority=priority)
    await h.settle()
    texts = [text for _, _, text in seen]
    assert texts == sorted(texts, key=lambda name: Priority[name])
    times = [at for at, _, _ in seen]
    assert all(b - a >= 3.0 for a, b in zip(times, times[3:], strict=False))  # 3 in any 3 s
    assert h.fake.flooded == []


async def test_a_429_pauses_that_chat_alone_for_exactly_its_retry_after(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    await started(h, alice, bob)
    seen = arrivals(h)
    start = h.timing.now()
    h.fake.fail_next("sendMessage", 429, retry_after=5, chat_id=alice.id)
    h.rooms.sender.put("a", alice.id, Rendered("to Alice"), priority=Priority.AWAITED)
    h.rooms.sender.put("b", bob.id, Rendered("to Bob"), priority=Priority.PASSIVE)
    await h.settle()
    at = {chat: when for when, chat, _ in seen}
    assert at[bob.id] == start  # not held up by Alice's 429
    assert at[alice.id] == start + 5  # exactly retry_after, not a fixed 3 s


async def test_a_message_that_matters_once_waits_out_any_number_of_429s(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-9901, "Club", admins={alice})
    await started(h, alice)
    start = h.timing.now()
    h.fake.fail_next("sendMessage", 429, retry_after=10, chat_id=group.id, times=6)
    h.rooms.sender.once(group.id, Rendered("Game over"))
    await h.settle()
    assert h.fake.last_message(group.id).text == "Game over"
    assert h.timing.now() >= start + 60


async def test_a_groups_reserve_keeps_room_for_messages_that_matter_once(
    harness: BotHarness,
) -> None:
    """Tables and hands use at most 17 of a group's 20 a minute; the result goes out at once
    even when the table has used its share."""
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-9902, "Club", admins={alice})
    await started(h, alice)
    sender = h.rooms.sender
    seen = arrivals(h)
    for n in range(17):
        sender.put(("table", n), group.id, Rendered(f"table {n}"), priority=Priority.TABLE)
    await h.settle()
    start = h.timing.now()
    sender.put(("table", 99), group.id, Rendered("table later"), priority=Priority.TABLE)
    sender.once(group.id, Rendered("the result"))
    await h.settle()
    at = {text: when for when, _, text in seen}
    assert at["the result"] < start + 0.5  # at once (the bot's pace aside), from the reserve
    assert at["table later"] >= at["table 0"] + 60  # the table waits for its window
    assert h.fake.flooded == []


async def test_the_bots_ceiling_holds_over_all_chats(harness: BotHarness) -> None:
    h = harness
    users = [h.user(100 + n, f"P{n}") for n in range(45)]
    await started(h, *users)
    seen = arrivals(h)
    start = h.timing.now()
    for user in users:
        h.rooms.sender.put(("hand", user.id), user.id, Rendered("hand"), priority=Priority.PASSIVE)
    await h.settle()
    assert len(seen) == 45 and h.fake.flooded == []
    times = sorted(at for at, _, _ in seen)
    assert all(sum(1 for t in times if a <= t < a + 1) <= 30 for a in times)  # any second
    assert times[-1] < start + 3  # and no slower than that


async def test_at_the_bots_ceiling_awaited_hands_go_in_the_order_the_game_came_to_wait(
    harness: BotHarness,
) -> None:
    """A watcher's hand that waited long (the ceiling was used up by awaited hands) and then
    becomes awaited takes its turn from then on: it does not go before the hands that were
    awaited earlier. Otherwise, at the ceiling, players whose hand was up to date would wait
    behind every promoted one, seconds at 60 games (bench/human.py)."""
    h = harness
    watchers = [h.user(100 + n, f"W{n}") for n in range(30)]
    awaited = [h.user(200 + n, f"A{n}") for n in range(30)]
    await started(h, *watchers, *awaited)
    seen = arrivals(h)
    sender = h.rooms.sender
    for user in watchers:  # a card shorter, say: not urgent
        sender.put(("hand", user.id), user.id, Rendered("watching"), priority=Priority.PASSIVE)
    for user in awaited:  # the game waits for these now
        sender.put(("hand", user.id), user.id, Rendered("your turn"), priority=Priority.AWAITED)
    for user in watchers:  # and then for these too
        sender.put(("hand", user.id), user.id, Rendered("your turn"), priority=Priority.AWAITED)
    await h.settle()
    order = [chat for _, chat, _ in seen]
    assert len(order) == 60 and h.fake.flooded == []
    assert set(order[:30]) == {u.id for u in awaited}, order


async def test_the_bots_ceiling_holds_when_each_new_message_retires_an_old_one(
    harness: BotHarness,
) -> None:
    """Turn alerts at the bot's ceiling: each hand becomes a new message (it notifies), the
    old one deleted first. Two calls per hand, each counted where it lands: no second holds
    more than the ceiling (a retirement that waited for room must not push its send into a
    second that is full already), and every old message is gone."""
    h = harness
    users = [h.user(100 + n, f"P{n}") for n in range(45)]
    await started(h, *users)
    sender = h.rooms.sender
    for user in users:
        sender.put(("hand", user.id), user.id, Rendered("hand"), priority=Priority.PASSIVE)
    await h.settle()
    old = {user.id: h.fake.messages(user.id)[-1].message_id for user in users}
    await h.rooms.kit.out.sleep(5)  # every window empty again
    h.fake.clear_calls()
    for user in users:
        sender.put(
            ("hand", user.id), user.id, Rendered("your turn"), priority=Priority.AWAITED, fresh=True
        )
    await h.settle()
    assert h.fake.flooded == []
    assert len(h.fake.calls_for("deleteMessage")) == len(h.fake.calls_for("sendMessage")) == 45
    for user in users:
        messages = h.fake.messages(user.id)
        assert messages[-1].text == "your turn"
        assert old[user.id] not in {m.message_id for m in messages}  # deleted
