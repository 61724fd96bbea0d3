"""Computer players at the table and /practice, through the fake Bot API."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bot.play import computers as computers_module
from engine import Game
from storage import Database
from tests.bot.conftest import BotHarness, make_settings
from tests.fakes.telegram import FakeGroup, FakeUser


def running(h: BotHarness, chat_id: int) -> Game | None:
    record = h.rooms.store.live(chat_id)
    return record.game if record is not None and record.status == "running" else None


async def play_humans(h: BotHarness, chat_id: int, rng: random.Random, limit: int = 3000) -> None:
    """The people tap random buttons; computers move by themselves."""
    for _ in range(limit):
        game = running(h, chat_id)
        if game is None:
            return
        humans = sorted(p for p in game.to_act if not p.startswith("cpu-"))
        assert humans, "the game waits for a computer that does not move"
        await h.tap_random(h.users[int(rng.choice(humans))], rng)
    raise AssertionError("the game does not end")


async def start_practice(h: BotHarness, user: FakeUser, choice: str = "P1e") -> None:
    """The user starts the bot, sends /practice and picks opponents (default: one easy)."""
    await h.send(user.start_private())
    await h.send(user.send_private("/practice"))
    await h.send(user.tap(h.fake.last_message(user.id), choice))


async def lobby_with_computers(
    h: BotHarness, group: FakeGroup, humans: list[FakeUser], levels: list[str]
) -> None:
    for p in humans:
        await h.send(p.start_private())
    await h.send(humans[0].send(group, "/newgame"))
    lobby = h.lobby_message(group)
    for p in humans[1:]:
        await h.send(p.tap(lobby, "Join"))
    for level in levels:
        await h.send(humans[0].tap(lobby, "Add computer"))
        assert level in lobby.button_texts  # the level picker
        await h.send(humans[0].tap(lobby, level))


async def test_group_game_with_two_people_and_two_computers(harness: BotHarness) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-5001, "Club", admins={alice})
    await lobby_with_computers(h, group, [alice, bob], ["easy", "medium"])
    lobby = h.lobby_message(group)
    assert "Computer 1 (easy) 🤖" in lobby.text and "Computer 2 (medium) 🤖" in lobby.text
    await h.send(alice.tap(lobby, "Start"))
    game = running(h, group.id)
    assert game is not None and len(game.players) == 4
    table = h.fake.message(group.id, h.rooms.store.live(group.id).table_message_id or 0)
    assert "🤖" in table.text
    await play_humans(h, group.id, random.Random(4))
    assert "Game over" in h.fake.last_message(group.id).text
    async with Database.connect(f"sqlite:///{h.db_path}") as db, db.transaction() as tx:
        record = await tx.games.latest_for_chat(chat_id=group.id)
        result = await tx.results.for_game(game_id=record.id or 0)
    computers = [p for p in result.participants if p.is_computer]
    assert [p.player_id for p in computers] == ["cpu-easy-1", "cpu-medium-2"]


async def test_adding_computers_is_for_the_opener_and_a_person_must_play(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-5002, "Club")
    await h.send(alice.start_private())
    await h.send(bob.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    tap = bob.tap(lobby, "Add computer")
    await h.send(tap)
    assert "Only Alice (who opened this game)" in (h.fake.answer_for(tap).text or "")
    await h.send(alice.tap(lobby, "Leave"))
    for _ in range(2):
        await h.send(alice.tap(lobby, "Add computer"))
        picking = h.fake.message(group.id, lobby.message_id)
        assert "How strong should the computer player be?" in picking.text
        await h.send(alice.tap(lobby, "easy"))
    assert "How strong" not in h.fake.message(group.id, lobby.message_id).text
    tap = alice.tap(lobby, "Start")
    await h.send(tap)
    assert "At least one person" in (h.fake.answer_for(tap).text or "")
    assert running(h, group.id) is None


async def test_practice_game_to_the_end_is_kept_out_of_leaderboards(harness: BotHarness) -> None:
    h = harness
    solo = h.user(7, "Solo")
    await h.send(solo.start_private())
    await h.send(solo.send_private("/practice"))
    menu = h.fake.last_message(solo.id)
    await h.send(solo.tap(menu, "easy: 1"))
    game = running(h, solo.id)
    assert game is not None and len(game.players) == 2
    await play_humans(h, solo.id, random.Random(2))
    assert "Game over" in h.fake.last_message(solo.id).text
    async with Database.connect(f"sqlite:///{h.db_path}") as db, db.transaction() as tx:
        assert await tx.results.count(chat_id=solo.id) == 1
        assert await tx.results.leaderboard(chat_id=None, min_games=0) == []


async def test_practice_during_a_practice_game_says_so_at_once(harness: BotHarness) -> None:
    h = harness
    solo = h.user(7, "Solo")
    await start_practice(h, solo)
    await h.send(solo.send_private("/practice"))
    reply = h.fake.last_message(solo.id)
    assert "already playing a practice game" in reply.text and reply.buttons == []
    await h.send(solo.send(h.fake.group(-4100, "Club"), "/practice"))  # elsewhere: unchanged
    assert "private chat" in h.fake.last_message(-4100).text


async def test_restart_while_a_computer_is_thinking(harness: BotHarness) -> None:
    h = harness
    h.settings = make_settings(h.db_path, computer_delay=30)
    await h.restart()
    solo = h.user(8, "Solo")
    await h.send(solo.start_private())
    await h.send(solo.send_private("/practice"))
    await h.send(solo.tap(h.fake.last_message(solo.id), "P3e"))  # 3 easy opponents
    rng = random.Random(9)
    for _ in range(200):  # play until a computer must move, then it "thinks" for 30 s
        game = running(h, solo.id)
        assert game is not None
        if any(p.startswith("cpu-") for p in game.to_act):
            break
        await h.tap_random(solo, rng)
    assert h.rooms.computers.planned()  # a computer's move is pending
    snapshot = game.to_dict()
    h.settings = make_settings(h.db_path, computer_delay=0)
    await h.restart()  # the pending move is not lost: it is planned again after the restart
    resumed = running(h, solo.id)
    assert resumed is not None
    assert resumed.move_number > snapshot["history"].__len__()
    await play_humans(h, solo.id, rng)


async def test_play_again_after_practice_is_practice_again(harness: BotHarness) -> None:
    h = harness
    solo = h.user(9, "Solo")
    await h.send(solo.start_private())
    await h.send(solo.send_private("/practice"))
    await h.send(solo.tap(h.fake.last_message(solo.id), "P2m"))
    await h.send(solo.send_private("/cancel"))
    assert running(h, solo.id) is None
    await h.send(solo.send_private("/practice"))
    await h.send(solo.tap(h.fake.last_message(solo.id), "P1e"))
    game = running(h, solo.id)
    assert game is not None
    record = h.rooms.store.live(solo.id)
    while running(h, solo.id) is not None:  # give up at once: a finished practice game
        await h.rooms.moderation.remove_player(chat_id=solo.id, player_id="9", why="resigned")
    await h.settle()
    result = h.fake.last_message(solo.id)
    await h.send(solo.tap(result, "Ready for another"))
    again = h.rooms.store.live(solo.id)
    assert again.id != record.id and again.meta.practice is True
    assert [s.level for s in again.lobby.seats if s.is_computer] == ["easy"]


async def test_a_computer_player_that_fails_plays_easy_and_the_game_goes_on(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-5010, "Club", admins={alice})
    real = computers_module.make_player

    class Broken:
        def choose(self, game: Game, player: str) -> Any:
            raise RecursionError("a bug in the search")

    def make_player(level: str, seed: int | None = None) -> Any:
        return Broken() if level == "hard" else real(level, seed)

    monkeypatch.setattr(computers_module, "make_player", make_player)
    await lobby_with_computers(h, group, [alice], ["hard"])
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    await play_humans(h, group.id, random.Random(5))
    assert "Game over" in h.fake.last_message(group.id).text


async def test_hand_in_private_sends_every_running_hand(harness: BotHarness) -> None:
    """A player in a practice game and a group game: /hand in private re-sends both."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-5011, "Club", admins={alice})
    await start_practice(h, alice)
    await h.open_game(group, [alice, bob])
    before = len(h.fake.messages(alice.id))
    await h.send(alice.send_private("/hand"))
    titles = [m.text.splitlines()[0] for m in h.fake.messages(alice.id)[before:]]
    assert "Durak in Club" in titles
    assert "Durak: practice" in titles
    # /rules in private: both games' rules, each under a title naming it; /leave names
    # practice.
    await h.send(alice.send_private("/rules"))
    rules = h.fake.last_message(alice.id).text
    assert rules.startswith("Rules of your practice game\nPreset: classic")
    assert "\n\nRules of the game in Club\nPreset: classic" in rules
    await h.send(alice.send_private("/leave"))
    assert "give up this practice game" in h.fake.last_message(alice.id).text


async def test_practice_can_be_left_with_leave_and_its_table_has_no_link_to_itself(
    harness: BotHarness,
) -> None:
    h = harness
    alice = h.user(1, "Alice", "ru")
    await start_practice(h, alice)
    record = h.rooms.store.live(alice.id)
    assert h.fake.message(alice.id, record.table_message_id or 0).buttons == []
    assert "Дурак: тренировка" in h.hand_message(alice).text
    await h.send(alice.send_private("/leave"))
    confirm = h.fake.last_message(alice.id)
    await h.send(alice.tap(confirm, confirm.buttons[0][0].text))
    assert h.rooms.store.live(alice.id) is None or h.rooms.store.live(alice.id).status != "running"


async def test_a_computer_added_by_mistake_can_be_removed_by_the_opener(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-5012, "Club", admins={alice})
    await lobby_with_computers(h, group, [alice, bob], ["easy", "hard"])
    lobby = h.lobby_message(group)
    tap = bob.tap(lobby, "Remove computer")  # not the opener, not an admin
    await h.send(tap)
    assert "Computer 2 (hard)" in h.lobby_message(group).text
    await h.send(alice.tap(lobby, "Remove computer"))
    text = h.lobby_message(group).text
    assert "Computer 1 (easy)" in text and "Computer 2 (hard)" not in text
    await h.send(alice.tap(lobby, "Remove computer"))
    assert "🤖" not in h.lobby_message(group).text
    assert "Remove computer" not in h.lobby_message(group).button_texts


async def test_computers_are_named_in_the_chats_language_after_it_changes(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-5013, "Club", admins={alice})
    await lobby_with_computers(h, group, [alice, bob], ["hard"])
    assert "Computer 1 (hard)" in h.lobby_message(group).text
    await h.send(alice.send(group, "/settings"))
    menu = h.fake.last_message(group.id)
    await h.send(alice.tap(menu, "Deutsch"))
    text = h.lobby_message(group).text
    assert "Computer 1 (schwer)" in text and "(hard)" not in text


async def test_a_computer_on_turn_moves_on_after_the_group_became_a_supergroup(
    harness: BotHarness,
) -> None:
    """Its planned move looked for the game in the old chat and found nothing: the computer
    then waited for the deadline (for ever without one)."""
    h = harness
    h.settings = make_settings(h.db_path, computer_delay=30)
    await h.restart()
    alice = h.user(1, "Alice")
    group = h.fake.group(-5020, "Club", admins={alice})
    await lobby_with_computers(h, group, [alice], ["easy"])
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    rng = random.Random(3)
    for _ in range(50):  # play until the computer must move ("thinking" for 30 s)
        game = running(h, group.id)
        assert game is not None
        if any(p.startswith("cpu-") for p in game.to_act):
            break
        await h.tap_random(alice, rng)
    assert h.rooms.computers.planned() == {group.id}
    await h.send(group.migrate_to_supergroup(-1005020))
    supergroup = group.migrated_to
    assert supergroup is not None
    assert h.rooms.computers.planned() == {supergroup.id}  # planned again, in the new chat


async def test_a_players_hand_names_computers_in_the_players_language(
    harness: BotHarness,
) -> None:
    """An English group, a Russian player: the group reads "Computer 1 (easy)", Boris's
    private hand «Компьютер 1 (лёгкий)», not a mix of both languages."""
    h = harness
    alice, boris = h.user(1, "Alice"), h.user(2, "Boris", "ru")
    group = h.fake.group(-5021, "Club", admins={alice})
    await lobby_with_computers(h, group, [alice, boris], ["easy"])
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    position = Game.from_position(  # Boris opens against the computer
        {"1": "6♣ 9♥ 7♠", "2": "8♠ 7♥ 10♦", "cpu-easy-1": "Q♣ J♥ 10♠"},
        trump="A♦",
        stock="10♣ J♣ K♣",
        attacker="2",
    )
    await h.set_position(group, position)
    table = h.fake.message(group.id, h.rooms.store.live(group.id).table_message_id or 0)
    assert "Computer 1 (easy)" in table.text
    hand = h.hand_message(boris).text
    assert "Компьютер 1 (лёгкий)" in hand and "Computer" not in hand
