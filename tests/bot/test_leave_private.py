"""/leave sent in the private chat: the player's one running group game is given up from
there, the question asked in the player's own language (what only they see)."""

from __future__ import annotations

import re

from engine import Game
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeGroup


def shown(html: str) -> str:
    """A text as the chat shows it (the tags are entities there)."""
    return re.sub(r"<[^>]+>", "", html)


def running(h: BotHarness, group: FakeGroup) -> Game | None:
    record = h.rooms.store.live(group.id)
    return record.game if record is not None and record.status == "running" else None


async def test_leave_in_private_asks_there_in_the_players_language_and_yes_resigns(
    harness: BotHarness,
) -> None:
    """Boris (Russian) plays in an English group and sends /leave to the bot: the question
    comes in his chat, in Russian, naming the group; Yes there makes him give up as Yes in
    the group does: the game ends, the group's table and result say so, in English."""
    h = harness
    t = h.rooms.kit.t
    alice, boris = h.user(1, "Alice"), h.user(2, "Boris", "ru")
    group = h.fake.group(-9101, "Club", admins={alice})
    await h.open_game(group, [alice, boris])
    group_before = len(h.fake.messages(group.id))
    await h.send(boris.send_private("/leave"))
    question = h.fake.last_message(boris.id)
    assert question.text == shown(t("ru", "leave-confirm-group", player="Boris", chat="Club"))
    assert question.button_texts == [t("ru", "button-resign"), t("ru", "button-play-on")]
    assert len(h.fake.messages(group.id)) == group_before  # nothing said in the group
    await h.send(boris.tap(question, t("ru", "button-resign")))
    assert running(h, group) is None  # over: Boris is the durak (R18)
    assert "Boris gives up" in (await h.table_of(group)).text
    result = h.fake.last_message(group.id).text
    assert t("en", "result-resigned", player="Boris") in result
    closed = h.fake.message(boris.id, question.message_id)
    assert closed.text == t("ru", "leave-done-private") and closed.buttons == []  # to him


async def test_no_in_private_keeps_the_player_in_the_game(harness: BotHarness) -> None:
    h = harness
    t = h.rooms.kit.t
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob", "de")
    group = h.fake.group(-9102, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(bob.send_private("/leave"))
    question = h.fake.last_message(bob.id)
    assert question.text == shown(t("de", "leave-confirm-group", player="Bob", chat="Club"))
    await h.send(bob.tap(question, t("de", "button-play-on")))
    game = running(h, group)
    assert game is not None and "2" in game.active_players
    assert question.message_id not in [m.message_id for m in h.fake.messages(bob.id)]


async def test_leave_in_private_without_a_game_says_so(harness: BotHarness) -> None:
    h = harness
    bob = h.user(2, "Bob", "de")
    await h.send(bob.start_private(), bob.send_private("/leave"))
    assert h.fake.last_message(bob.id).text == h.rooms.kit.t("de", "leave-no-game")


async def test_leave_in_private_with_two_games_points_to_each_group(harness: BotHarness) -> None:
    """Which game is meant is said where it is played: a mistaken Yes would cost a game."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    one = h.fake.group(-9103, "Club", admins={alice})
    two = h.fake.group(-9104, "Pub", admins={alice})
    await h.open_game(one, [alice, bob])
    await h.open_game(two, [alice, bob])
    before = len(h.fake.messages(bob.id))
    await h.send(bob.send_private("/leave"))
    answers = h.fake.messages(bob.id)[before:]
    expected = [
        shown(h.rooms.kit.t("en", "use-in-group", command="/leave", chat=c))
        for c in ("Club", "Pub")
    ]
    assert sorted(m.text for m in answers) == sorted(expected)
    assert not any(m.buttons for m in answers)
    assert running(h, one) is not None and running(h, two) is not None


async def test_leave_in_the_group_asks_in_the_groups_language(harness: BotHarness) -> None:
    """The group's question is public: in the group's language, whoever asks."""
    h = harness
    t = h.rooms.kit.t
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob", "de")
    group = h.fake.group(-9105, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(bob.send(group, "/leave"))
    question = h.fake.last_message(group.id)
    assert question.text == t("en", "leave-confirm", player="Bob")


async def test_leave_in_private_with_a_seat_in_a_lobby_points_to_its_leave_button(
    harness: BotHarness,
) -> None:
    """As in the group: a lobby's seat is given up with its Leave button; the answer names
    the group, in the player's language."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob", "de")
    group = h.fake.group(-9106, "Club", admins={alice})
    for p in (alice, bob):
        await h.send(p.start_private())
    await h.send(alice.send(group, "/newgame"))
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    await h.send(bob.send_private("/leave"))
    said = shown(h.rooms.kit.t("de", "leave-in-lobby-group", chat="Club"))
    assert h.fake.last_message(bob.id).text == said
    assert [s.name for s in h.rooms.store.live(group.id).lobby.seats] == ["Alice", "Bob"]


async def test_leave_in_private_with_a_game_and_a_lobby_points_to_both(harness: BotHarness) -> None:
    h = harness
    t = h.rooms.kit.t
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    one = h.fake.group(-9107, "Club", admins={alice})
    two = h.fake.group(-9108, "Pub", admins={alice})
    await h.open_game(one, [alice, bob])
    await h.send(alice.send(two, "/newgame"))
    await h.send(bob.tap(h.lobby_message(two), "Join"))
    before = len(h.fake.messages(bob.id))
    await h.send(bob.send_private("/leave"))
    texts = sorted(m.text for m in h.fake.messages(bob.id)[before:])
    assert texts == sorted(
        shown(t("en", "use-in-group", command="/leave", chat=c)) for c in ("Club", "Pub")
    )


async def test_a_private_question_left_open_goes_when_the_game_ends(harness: BotHarness) -> None:
    """Its buttons would look live after the game: deleted, as the group's questions are."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9109, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(bob.send_private("/leave"))
    question = h.fake.last_message(bob.id)
    assert question.buttons
    await h.send(alice.send(group, "/cancel"))
    await h.settle()
    assert running(h, group) is None
    assert h.fake.message(bob.id, question.message_id).deleted


async def test_a_private_question_outlives_a_restart(harness: BotHarness) -> None:
    """Kept with the game: a bot started anew deletes it when the game ends, too."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-9110, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    await h.send(bob.send_private("/leave"))
    question = h.fake.last_message(bob.id)
    await h.restart()
    await h.send(alice.send(group, "/cancel"))
    await h.settle()
    assert h.fake.message(bob.id, question.message_id).deleted
