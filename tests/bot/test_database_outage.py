"""A database that cannot store while the bot runs (#22): its file system full, or the file
read-only. Every tap and command is answered "could not be saved" (not left spinning), the
operator is told once per outage and once when it is over, a message id that cannot be
stored never makes the bot send that message again, and the games go on afterwards."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from storage import DatabaseUnavailable
from storage.sqlite_files import unusable
from tests.bot.conftest import TOKEN, BotHarness, ManualClock, make_settings
from tests.fakes.telegram import FakeGroup, FakeTelegram, FakeUser
from tests.storage.conftest import fill, small_file_system

OPERATOR = 4242


@pytest.fixture
async def on_small_disk(tmp_path: Path) -> AsyncIterator[tuple[BotHarness, Path]]:
    """The bot with its database on a small file system of its own (to fill), and an
    operator chat; the harness and the folder."""
    with small_file_system(tmp_path / "data") as folder:
        db_path = folder / "durak.sqlite3"
        h = BotHarness(
            fake=FakeTelegram(token=TOKEN),
            db_path=db_path,
            clock=ManualClock(),
            settings=make_settings(db_path, operator_chat_id=OPERATOR),
        )
        await h.start()
        try:
            await h.send(h.user(OPERATOR, "Operator").start_private())
            yield h, folder
        finally:
            await h.stop()


def operator_texts(h: BotHarness) -> list[str]:
    """What the operator chat was told of the database (not the welcome of its /start)."""
    return [m.text for m in h.fake.messages(OPERATOR) if "database" in m.text]


async def game_of_two(h: BotHarness, chat_id: int) -> tuple[FakeGroup, FakeUser, FakeUser]:
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(chat_id, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    return group, alice, bob


def attacker_tap(h: BotHarness, group: FakeGroup) -> dict[str, Any]:
    """A tap of the attacker on the first card he can play."""
    game = h.rooms.store.live(group.id).game
    assert game is not None
    attacker = h.users[int(game.attacker)]
    hand = h.hand_message(attacker)
    card = next(b for row in hand.buttons for b in row if "·" not in b.text)
    return attacker.tap(hand, card.callback_data or "")


async def test_on_a_full_disk_every_tap_is_answered_the_operator_told_once_and_play_resumes(
    on_small_disk: tuple[BotHarness, Path],
) -> None:
    h, folder = on_small_disk
    h.rooms.store.reload_delays = (0.0,)
    group, alice, _ = await game_of_two(h, -9001)
    filler = fill(folder)
    unavailable = h.rooms.kit.t("en", "error-unavailable")
    for _ in range(4):  # the same move, tapped again and again
        tap = attacker_tap(h, group)
        await h.send(tap)
        await h.settle()
        answer = h.fake.answer_for(tap)
        assert answer is not None and answer.text == unavailable
        assert h.rooms.store.live(group.id).game.move_number == 0  # type: ignore[union-attr]
    await h.send(alice.send(group, "/cancel"))  # a command that must store: answered too
    assert h.fake.messages(group.id)[-1].text == unavailable
    await h.settle()
    [down] = operator_texts(h)
    assert "cannot store anything" in down and "its file system is full" in down
    assert str(h.db_path) in down

    filler.unlink()  # space is back
    tap = attacker_tap(h, group)
    await h.send(tap)
    await h.settle()
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text != unavailable
    assert h.rooms.store.live(group.id).game.move_number == 1  # type: ignore[union-attr]
    assert len(operator_texts(h)) == 2
    assert "stores again" in operator_texts(h)[1] and "5 failed saves" in operator_texts(h)[1]


async def test_on_a_full_disk_newgame_says_it_could_not_be_saved(
    on_small_disk: tuple[BotHarness, Path],
) -> None:
    h, folder = on_small_disk
    alice = h.user(1, "Alice")
    group = h.fake.group(-9002, "Club", admins={alice})
    await h.send(alice.start_private())
    filler = fill(folder)
    await h.send(alice.send(group, "/newgame"))
    [reply] = h.fake.messages(group.id)
    assert reply.text == h.rooms.kit.t("en", "error-unavailable")
    assert h.rooms.store.live(group.id) is None
    filler.unlink()
    await h.send(alice.send(group, "/newgame"))
    assert "Join" in h.lobby_message(group).button_texts


def unavailable_writes(
    h: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    *,
    transactions: bool = True,
    leaders_only: bool = False,
) -> Callable[[], None]:
    """Every write fails as on a file the bot may no longer write (the error SQLite gives
    for one, as the storage layer maps it); with ``transactions=False`` only the saves of a
    game's record (`Database.save_game`); with ``leaders_only`` all but the inbox's posts
    (the writes any worker makes, ``fenced=False``). Returns the undo. Runs on any
    machine."""
    db = h.rooms.kit.db
    real, real_save = db.transaction, db.save_game
    error = sqlite3.OperationalError("attempt to write a readonly database")
    error.sqlite_errorcode = sqlite3.SQLITE_READONLY

    def refuse() -> None:
        refused = unusable(error, str(h.db_path))
        assert isinstance(refused, DatabaseUnavailable)
        raise refused

    def transaction(*, readonly: bool = False, fenced: bool = True) -> Any:
        if not readonly and transactions and (fenced or not leaders_only):
            refuse()
        return real(readonly=readonly, fenced=fenced)

    async def save_game(record: Any) -> int:
        refuse()
        return await real_save(record)

    monkeypatch.setattr(db, "transaction", transaction)
    monkeypatch.setattr(db, "save_game", save_game)

    def undo() -> None:
        monkeypatch.setattr(db, "transaction", real)
        monkeypatch.setattr(db, "save_game", real_save)

    return undo


async def test_a_hand_whose_new_id_cannot_be_stored_is_not_sent_again(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both players deleted their hand messages; then the file became read-only and the game
    is shown again (as after a failed move). Each gets one new hand, whose id cannot be
    stored: that must not load the game again and send yet another hand, over and over."""
    h = harness
    group, alice, bob = await game_of_two(h, -9003)
    record = h.rooms.store.live(group.id)
    for user in (alice, bob):
        h.fake.delete_by_user(user.id, record.hand_messages[str(user.id)])
    before = {u.id: len(h.fake.messages(u.id)) for u in (alice, bob)}
    h.rooms.store.reload_delays = (0.0,) * 5  # as many attempts as a bot makes, unslept
    undo = unavailable_writes(h, monkeypatch)
    h.rooms.store.forget(record)
    h.rooms.store.reload_soon(group.id)
    for _ in range(10):  # every reload to its end
        await h.settle()
    for user in (alice, bob):
        assert len(h.fake.messages(user.id)) - before[user.id] == 1, "a hand sent again"
    live = h.rooms.store.live(group.id)
    assert live is not None  # kept, with the new ids: taps on the new hands work
    undo()
    hand = h.hand_message(alice)
    assert hand.buttons
    assert not h.rooms.store.background.busy()


async def test_a_lobby_whose_id_cannot_be_stored_is_posted_once(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/newgame stores the new lobby, posts it, and cannot store the message's id: the
    lobby is posted once, not again by every attempt to load the stored lobby."""
    h = harness
    h.rooms.store.reload_delays = (0.0,) * 5
    alice = h.user(1, "Alice")
    group = h.fake.group(-9004, "Club", admins={alice})
    await h.send(alice.start_private())
    unavailable_writes(h, monkeypatch, transactions=False)
    await h.send(alice.send(group, "/newgame"))
    for _ in range(10):
        await h.settle()
    lobbies = [m for m in h.fake.messages(group.id) if "Join" in m.button_texts]
    assert len(lobbies) == 1
    assert h.rooms.store.live(group.id).lobby.message_id == lobbies[0].message_id  # type: ignore[union-attr]


async def test_a_turn_that_ran_out_while_nothing_could_be_stored_gets_time_again(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn runs out while the database stores nothing: the timeout cannot be stored,
    and nobody could have moved. Once the game is loaded again it gets time, as after a
    restart, instead of timing the player out for the bot's outage."""
    h = harness
    h.rooms.store.reload_delays = (0.0,) * 5
    group, _, _ = await game_of_two(h, -9005)
    undo = unavailable_writes(h, monkeypatch)
    h.clock.advance(61)
    assert await h.run_due() == 1  # tried, and not stored
    for _ in range(5):  # loaded again (it can be read)
        await h.settle()
    undo()
    live = h.rooms.store.live(group.id)
    assert live is not None and live.deadline is not None and live.deadline > h.clock()
    assert await h.run_due() == 0
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        stored = await tx.games.latest_for_chat(chat_id=group.id)
    assert sum(stored.timeouts.values()) == 0


async def test_a_half_time_warning_that_cannot_be_stored_comes_once_it_can(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Half time comes while the database stores nothing: the warning is not sent (it is
    stored first, so that no later leader gives it again), the game stays as it is (not
    shown again), and the player gets the warning, once, soon after the database is back."""
    h = harness
    group, _, _ = await game_of_two(h, -9006)
    game = h.rooms.store.live(group.id).game  # type: ignore[union-attr]
    assert game is not None
    slow = h.users[int(game.attacker)]
    before = len(h.fake.messages(slow.id))
    calls = len(h.fake.calls)
    undo = unavailable_writes(h, monkeypatch)
    h.clock.advance(31)  # half of 60 s
    assert await h.run_due() == 0
    assert len(h.fake.messages(slow.id)) == before
    assert len(h.fake.calls) == calls  # nothing shown again
    h.clock.advance(1)
    assert await h.run_due() == 0
    assert len(h.fake.messages(slow.id)) == before  # still nothing stored: still waiting
    undo()
    h.clock.advance(1)
    await h.run_due()
    assert len(h.fake.messages(slow.id)) == before + 1
    assert "your move in Club, time runs out" in h.fake.last_message(slow.id).text
    h.clock.advance(1)
    await h.run_due()
    assert len(h.fake.messages(slow.id)) == before + 1  # once
