"""Play again that starts itself: "Ready for another" on the result, a lobby that starts
when all are in (or after a minute with two or more), older results that open nothing, and
the evening's tally on the result; through the fake Bot API, on the manual clock."""

from __future__ import annotations

from bot.callbacks import encode_again
from engine import Game
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import FakeGroup, FakeMessage, FakeUser

READY = "Ready for another"


def running(h: BotHarness, group: FakeGroup) -> Game | None:
    record = h.rooms.store.live(group.id)
    return record.game if record is not None and record.status == "running" else None


def players(h: BotHarness, n: int) -> list[FakeUser]:
    names = ["Alice", "Bob", "Carol", "Dave"]
    return [h.user(i + 1, names[i]) for i in range(n)]


async def resign(h: BotHarness, group: FakeGroup, loser: FakeUser) -> FakeMessage:
    """`loser` gives up the running game (R18): the durak. Returns the result message."""
    await h.send(loser.send(group, "/leave"))
    confirm = h.fake.last_message(group.id)
    await h.send(loser.tap(confirm, confirm.buttons[0][0].text))
    assert running(h, group) is None
    result = h.fake.last_message(group.id)
    assert result.text.startswith("Game over")
    return result


async def one_game(
    h: BotHarness, group: FakeGroup, people: list[FakeUser], loser: FakeUser
) -> FakeMessage:
    await h.open_game(group, people)
    return await resign(h, group, loser)


def answer(h: BotHarness, tap: dict[str, object]) -> str | None:
    found = h.fake.answer_for(tap)
    assert found is not None, "the tap was not answered"
    return found.text


async def test_the_next_game_starts_once_all_players_of_the_last_are_ready(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob, carol = players(h, 3)
    group = h.fake.group(-7001, "Club", admins={alice})
    result = await one_game(h, group, [alice, bob, carol], bob)
    text, data = result.text, result.buttons[0][0].callback_data or ""
    tap = alice.tap(result, READY)
    await h.send(tap)
    assert answer(h, tap) == h.rooms.kit.t("en", "lobby-again")
    lobby = h.lobby_message(group)
    assert "Players (1/6): Alice" in lobby.text
    assert "Waiting for: Bob, Carol — tap “Ready for another” under the result" in lobby.text
    assert "starts by itself once they are all in" in lobby.text
    # (which says "with two or more": no "At least 2 players are needed" beside it)
    assert h.rooms.kit.t("en", "lobby-need-players", min=2) not in lobby.text
    assert running(h, group) is None
    again = alice.tap(result, READY)  # a doubled tap: already in, nothing opens
    await h.send(again)
    assert answer(h, again) == h.rooms.kit.t("en", "lobby-already-joined")
    await h.send(bob.tap(result, READY))  # on the result
    assert "Players (2/6): Alice, Bob" in h.lobby_message(group).text
    assert running(h, group) is None
    await h.send(carol.tap(lobby, "Join"))  # or on the lobby: the last one starts it
    game = running(h, group)
    assert game is not None and sorted(game.players) == ["1", "2", "3"]
    # The result's button is gone; a tap from a copy of it is answered, opens nothing.
    assert h.fake.message(group.id, result.message_id).buttons == []
    assert h.fake.message(group.id, result.message_id).text == text
    assert data == encode_again(int(data[1:]))
    late = carol.tap_raw(result, data)
    await h.send(late)
    assert answer(h, late) == h.rooms.kit.t("en", "again-started")


async def test_after_a_minute_two_ready_players_start_without_the_third(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob, carol = players(h, 3)
    group = h.fake.group(-7002, "Club", admins={alice})
    result = await one_game(h, group, [alice, bob, carol], carol)
    await h.send(alice.tap(result, READY))
    h.clock.advance(30)
    await h.send(bob.tap(result, READY))  # the minute runs from the first tap, not this one
    h.clock.advance(29)
    await h.run_due()
    assert running(h, group) is None
    h.clock.advance(2)
    await h.run_due()
    game = running(h, group)
    assert game is not None and sorted(game.players) == ["1", "2"]
    assert h.fake.message(group.id, result.message_id).buttons == []
    await h.settle()
    told = h.rooms.kit.t("en", "again-left-out", chat="Club")
    assert h.fake.last_message(carol.id).text == told  # Carol hears she was not waited for
    assert told not in [m.text for m in h.fake.messages(alice.id)]


async def test_the_minute_and_the_ready_taps_survive_a_restart(harness: BotHarness) -> None:
    h = harness
    alice, bob, carol = players(h, 3)
    group = h.fake.group(-7003, "Club", admins={alice})
    result = await one_game(h, group, [alice, bob, carol], carol)
    await h.send(alice.tap(result, READY))
    await h.send(bob.tap(result, READY))
    await h.restart()
    await h.settle()
    lobby = h.lobby_message(group)
    assert "Players (2/6): Alice, Bob" in lobby.text and "Waiting for: Carol" in lobby.text
    h.clock.advance(61)
    await h.run_due()
    game = running(h, group)
    assert game is not None and sorted(game.players) == ["1", "2"]


async def test_alone_at_the_minute_the_lobby_stays_open_as_any_other(
    harness: BotHarness,
) -> None:
    h = harness
    alice, bob = players(h, 2)
    group = h.fake.group(-7004, "Club", admins={alice})
    result = await one_game(h, group, [alice, bob], bob)
    data = result.buttons[0][0].callback_data or ""
    await h.send(alice.tap(result, READY))
    h.clock.advance(61)
    await h.run_due()
    assert running(h, group) is None
    lobby = h.lobby_message(group)
    assert "Invited: Bob — tap “Join” to play." in lobby.text
    assert "starts by itself" not in lobby.text
    assert h.rooms.kit.t("en", "lobby-need-players", min=2) in lobby.text  # an ordinary lobby
    assert h.fake.message(group.id, result.message_id).buttons == []
    late = bob.tap_raw(result, data)  # no longer waited for: pointed to the lobby
    await h.send(late)
    assert answer(h, late) == h.rooms.kit.t("en", "again-lobby-open")
    await h.send(bob.tap(lobby, "Join"))
    assert running(h, group) is None  # an ordinary lobby: Start starts it
    await h.send(alice.tap(lobby, "Start"))
    assert running(h, group) is not None


async def test_an_older_result_opens_no_third_lobby(harness: BotHarness) -> None:
    h = harness
    alice, bob = players(h, 2)
    group = h.fake.group(-7005, "Club", admins={alice})
    first = await one_game(h, group, [alice, bob], bob)
    first_data = first.buttons[0][0].callback_data or ""
    await h.send(alice.tap(first, READY))
    await h.send(bob.tap(first, READY))  # both in: the second game starts
    assert running(h, group) is not None
    second = await resign(h, group, alice)
    old = bob.tap_raw(first, first_data)  # a copy of the first result's button
    await h.send(old)
    assert answer(h, old) == h.rooms.kit.t("en", "again-stale")
    assert h.rooms.store.live(group.id) is None  # nothing opened
    await h.send(bob.tap(second, READY))  # the latest result works
    assert "Players (1/6): Bob" in h.lobby_message(group).text


async def test_someone_who_did_not_play_is_told_to_join(harness: BotHarness) -> None:
    h = harness
    alice, bob, _carol, dave = players(h, 4)
    group = h.fake.group(-7006, "Club", admins={alice})
    result = await one_game(h, group, [alice, bob], bob)
    await h.send(dave.start_private())
    tap = dave.tap(result, READY)
    await h.send(tap)
    assert answer(h, tap) == h.rooms.kit.t("en", "again-not-player")
    assert h.rooms.store.live(group.id) is None  # nothing opened
    await h.send(alice.tap(result, READY))
    tap = dave.tap(result, READY)  # now there is a lobby to join
    await h.send(tap)
    assert answer(h, tap) == h.rooms.kit.t("en", "again-lobby-open")
    await h.send(dave.tap(h.lobby_message(group), "Join"))  # Join is for anyone
    assert "Players (2/6): Alice, Dave" in h.lobby_message(group).text
    assert running(h, group) is None  # still waiting for Bob


async def test_computers_of_the_last_game_are_ready_by_themselves(harness: BotHarness) -> None:
    h = harness
    (alice,) = players(h, 1)
    group = h.fake.group(-7007, "Club", admins={alice})
    await h.send(alice.start_private())
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    await h.send(alice.tap(lobby, "Add computer"))
    await h.send(alice.tap(lobby, "easy"))
    await h.send(alice.tap(lobby, "Start"))
    result = await resign(h, group, alice)
    await h.send(alice.tap(result, READY))  # the only person: the game starts at once
    game = running(h, group)
    assert game is not None and len(game.players) == 2
    assert any(p.startswith("cpu-") for p in game.players)


async def test_the_result_tallies_the_evening_of_the_same_players(harness: BotHarness) -> None:
    h = harness
    alice, bob, carol = players(h, 3)
    group = h.fake.group(-7008, "Club", admins={alice})
    first = await one_game(h, group, [alice, bob], bob)
    assert "Tonight" not in first.text  # one game is no evening yet
    await h.send(alice.tap(first, READY))
    await h.send(bob.tap(first, READY))
    h.clock.advance(600)
    second = await resign(h, group, bob)
    assert "Tonight, 2 games together — times the durak: Bob 2, Alice 0" in second.text
    await h.send(alice.tap(second, READY))
    await h.send(bob.tap(second, READY))
    third = await resign(h, group, alice)
    assert "Tonight, 3 games together — times the durak: Bob 2, Alice 1" in third.text
    # Other players: another evening.
    await one_game(h, group, [alice, bob, carol], carol)
    assert "Tonight" not in h.fake.last_message(group.id).text
    # The same players again after a long break: a new evening too.
    await one_game(h, group, [alice, bob, carol], carol)
    assert "Tonight, 2 games" in h.fake.last_message(group.id).text
    h.clock.advance(3 * 3600)
    await one_game(h, group, [alice, bob, carol], alice)
    assert "Tonight" not in h.fake.last_message(group.id).text


async def test_the_tally_reads_well_in_german_and_russian(harness: BotHarness) -> None:
    h = harness
    anna, boris = h.user(1, "Anna", "de"), h.user(2, "Boris", "de")
    group = h.fake.group(-7009, "Runde", admins={anna})
    for _ in range(2):
        for p in (anna, boris):
            await h.send(p.start_private())
        await h.send(anna.send(group, "/newgame"))
        lobby = h.lobby_message(group)
        await h.send(boris.tap(lobby, "Mitspielen"))
        await h.send(anna.tap(lobby, "Starten"))
        await h.send(boris.send(group, "/leave"))
        confirm = h.fake.last_message(group.id)
        await h.send(boris.tap(confirm, confirm.buttons[0][0].text))
    result = h.fake.last_message(group.id)
    assert "Heute schon 2 Spiele zusammen — so oft Durak: Boris 2, Anna 0" in result.text
    assert "Noch ein Spiel!" in result.button_texts
    kit = h.rooms.kit
    text = kit.t("ru", "result-evening", games=5, tally="Анна 3, Борис 2")
    assert text == "Сегодня вместе сыграли 5 игр — сколько раз в дураках: Анна 3, Борис 2"


async def test_a_newer_lobby_closes_the_older_result(harness: BotHarness) -> None:
    """/newgame after a result: that result's button closes (a copy of it is answered and
    opens nothing); so does Start in a lobby that was still waiting for someone."""
    h = harness
    alice, bob, carol = players(h, 3)
    group = h.fake.group(-7010, "Club", admins={alice})
    first = await one_game(h, group, [alice, bob], bob)
    data = first.buttons[0][0].callback_data or ""
    await h.send(carol.start_private())
    await h.send(carol.send(group, "/newgame"))
    assert h.fake.message(group.id, first.message_id).buttons == []
    old = alice.tap_raw(first, data)
    await h.send(old)
    assert answer(h, old) == h.rooms.kit.t("en", "again-lobby-open")
    lobby = h.lobby_message(group)
    await h.send(alice.tap(lobby, "Join"))
    await h.send(carol.tap(lobby, "Start"))
    second = await resign(h, group, carol)
    await h.send(alice.tap(second, READY))  # waiting for Carol; Alice adds a computer
    lobby = h.lobby_message(group)
    await h.send(alice.tap(lobby, "Add computer"))
    await h.send(alice.tap(lobby, "easy"))
    assert running(h, group) is None
    await h.send(alice.tap(lobby, "Start"))
    assert running(h, group) is not None
    assert h.fake.message(group.id, second.message_id).buttons == []


async def test_the_join_link_counts_as_ready_too(harness: BotHarness) -> None:
    """The lobby's deep link (/start j<game>, as people who never started the bot get it)
    seats a player it waits for like Join, and the game starts once all are in."""
    h = harness
    alice, bob = players(h, 2)
    group = h.fake.group(-7011, "Club", admins={alice})
    result = await one_game(h, group, [alice, bob], bob)
    await h.send(alice.tap(result, READY))
    lobby = h.rooms.store.live(group.id)
    assert lobby is not None and lobby.status == "lobby"
    await h.send(bob.start_private(f"j{lobby.id}"))
    game = running(h, group)
    assert game is not None and sorted(game.players) == ["1", "2"]
