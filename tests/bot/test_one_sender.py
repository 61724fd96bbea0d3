"""Every Bot API call goes through the outbox: command replies too, which once went out
through python-telegram-bot's `reply_text` and met a 429 with a traceback."""

from __future__ import annotations

from tests.bot.conftest import BotHarness
from tests.bot.test_robustness import waits_recorded


async def test_a_command_reply_that_meets_a_429_is_sent_once_telegram_allows(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-7001, "Club", admins={alice})
    waited = waits_recorded(h)
    h.fake.fail_next("sendMessage", 429, "Too Many Requests", retry_after=2, chat_id=group.id)
    command = alice.send(group, "/help")
    await h.send(command)
    reply = h.fake.last_message(group.id)
    assert waited == [2.0]  # waited out for this call alone, as every other send
    assert reply.html == h.rooms.kit.t("en", "help-text")
    assert reply.reply_to_message_id == command["message"]["message_id"]  # quotes the command


async def test_a_private_command_reply_does_not_quote(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    await h.send(alice.start_private())
    await h.send(alice.send(alice, "/newgame"))
    reply = h.fake.last_message(alice.id)
    assert reply.text == h.rooms.kit.t("en", "newgame-in-group")
    assert reply.reply_to_message_id is None
    # a way to a group, and to practice here (#19)
    add = next(b for row in reply.buttons for b in row)
    assert add.url is not None and "startgroup=" in add.url
    assert "/practice" in reply.text


async def test_the_command_menus_are_set_through_the_outbox_for_every_language(
    harness: BotHarness,
) -> None:
    h = harness
    for scope, first in (("all_group_chats", "newgame"), ("all_private_chats", "start")):
        for lang in ("", "en", "de", "ru"):
            menu = h.fake.commands({"type": scope}, lang)
            assert menu, f"no menu for {scope} in {lang or 'every other language'}"
            assert menu[0]["command"] == first
            words = h.rooms.kit.t(lang or "en", f"cmd-{first}")
            assert menu[0]["description"] == words


async def test_a_result_is_posted_however_many_429s_come(harness: BotHarness) -> None:
    """A message that matters once waits for Telegram, exactly as long as it asks each time,
    beside the chat's lock (the game is over; nothing holds it up)."""
    from engine import Game

    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-7011, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.set_position(group, Game.from_position({"1": "6♠", "2": "7♠"}, trump="K♦"))
    waited = waits_recorded(h)
    await h.send(alice.tap(h.hand_message(alice), "6♠"))
    h.fake.fail_next(
        "sendMessage", 429, "Too Many Requests", retry_after=4, chat_id=group.id, times=3
    )
    await h.send(bob.tap(h.hand_message(bob), "7♠"))  # the last move
    await h.settle()
    assert "Game over" in h.fake.last_message(group.id).text
    assert waited.count(4.0) == 3  # each 429 waited out exactly (other waits: budgets)


async def test_a_lobbys_last_words_survive_429s(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-7012, "Club", admins={alice})
    await h.send(alice.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    waits_recorded(h)
    h.fake.fail_next(
        "editMessageText", 429, "Too Many Requests", retry_after=2, chat_id=group.id, times=2
    )
    await h.send(alice.tap(lobby, "Cancel"))
    await h.settle()
    closed = h.fake.message(group.id, lobby.message_id)
    assert h.rooms.kit.t("en", "lobby-cancelled") in closed.text
    assert not closed.buttons  # no Join left on a closed lobby
