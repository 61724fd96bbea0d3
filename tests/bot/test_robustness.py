"""What a real deployment does to the bot, end to end: the order in which run_polling stops
an application, Telegram's 429 and lost answers, a database that fails a save, a group that
is not the tapper's, and memory over many games."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from bot.delivery.sender import MAX_FAILURES
from engine import Game, Rules
from storage import ChatSettings, DatabaseBusy
from tests.bot.conftest import BotHarness, make_settings
from tests.fakes.telegram import Button, FakeGroup, FakeMessage, FakeUser


def live(h: BotHarness, group: FakeGroup) -> Game:
    record = h.rooms.store.live(group.id)
    assert record.status == "running" and record.game is not None
    return record.game


def playable(h: BotHarness, user: FakeUser) -> tuple[FakeMessage, Button]:
    """The user's hand message and its first card that can be played now."""
    hand = h.hand_message(user)
    return hand, next(b for row in hand.buttons for b in row if "·" not in b.text)


async def game_of_two(h: BotHarness, chat_id: int) -> FakeGroup:
    """Alice (1, the group's admin) and Bob (2) have started a game in group `chat_id`."""
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(chat_id, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    return group


async def attack(h: BotHarness, group: FakeGroup) -> FakeUser:
    """The attacker taps the first card of his hand that can be played; returns him."""
    attacker = h.users[int(live(h, group).attacker)]
    hand, card = playable(h, attacker)
    await h.send(attacker.tap(hand, card.callback_data or ""))
    return attacker


def waits_recorded(h: BotHarness) -> list[float]:
    """From now on, each wait of the bot for Telegram (a 429's retry_after, a budget), in
    seconds of the virtual clock (nothing is slept)."""
    h.timing.jumps.clear()
    return h.timing.jumps


def edits_to(h: BotHarness, chat_id: int) -> list[Any]:
    """The editMessageText calls to one chat, in order."""
    return [c for c in h.fake.calls_for("editMessageText") if c.params["chat_id"] == chat_id]


async def tap_only(h: BotHarness, user: FakeUser) -> None:
    """The user taps a playable card; the update is handled, not waiting for what it sends."""
    hand, card = playable(h, user)
    await h.deliver(user.tap(hand, card.callback_data or ""))


async def test_pending_table_edits_are_published_when_run_polling_stops(
    harness: BotHarness,
) -> None:
    """run_polling calls stop(), post_stop, shutdown() (which closes the HTTP client), then
    post_shutdown: a table edit still waiting for its interval goes out before the client
    closes."""
    h = harness
    await h.stop()
    h.settings = make_settings(h.db_path, table_edit_interval=3600)
    await h.start()
    group = await game_of_two(h, -8001)
    attacker = h.users[int(live(h, group).attacker)]
    await tap_only(h, attacker)  # its table edit waits an hour
    table_id = h.rooms.store.live(group.id).table_message_id or 0
    attacked = "\n" + h.rooms.kit.t("en", "hand-table")  # the card on the table
    assert attacked not in h.fake.message(group.id, table_id).text
    app, h.app = h.app, None  # stopped here, not by the harness
    assert app is not None and app.post_stop is not None and app.post_shutdown is not None
    await app.post_stop(app)
    await app.shutdown()
    await app.post_shutdown(app)
    assert attacked in h.fake.message(group.id, table_id).text


@pytest.mark.parametrize("failure", ["429", "timeout"])
async def test_a_table_edit_that_failed_is_made_again_without_another_move(
    harness: BotHarness, failure: str
) -> None:
    """The move before a long think may be the last for minutes: a table edit refused with
    429 (after exactly its retry_after) or lost to a timeout is made again on its own."""
    h = harness
    group = await game_of_two(h, -8002)
    waited = waits_recorded(h)
    if failure == "429":
        h.fake.fail_next("editMessageText", 429, retry_after=7, chat_id=group.id)
    else:
        h.fake.timeout_next("editMessageText", chat_id=group.id)
    h.fake.clear_calls()
    await attack(h, group)
    table_id = h.rooms.store.live(group.id).table_message_id or 0
    attacked = "\n" + h.rooms.kit.t("en", "hand-table")  # the card on the table
    assert [bool(c.ok) for c in edits_to(h, group.id)] == [False, True]
    assert attacked in h.fake.message(group.id, table_id).text
    if failure == "429":
        assert 7.0 in waited


async def test_a_hand_that_telegram_refused_is_shown_again_on_its_own(
    harness: BotHarness,
) -> None:
    """The defender's hand edit gets a 429 right after the attack: without a retry the
    defender would see no way to defend until the deadline."""
    h = harness
    group = await game_of_two(h, -8003)
    game = live(h, group)
    attacker, defender = h.users[int(game.attacker)], h.users[int(game.defender)]
    waited = waits_recorded(h)
    h.fake.fail_next("editMessageText", 429, retry_after=2, chat_id=defender.id)
    hand, card = playable(h, attacker)
    await h.send(attacker.tap(hand, card.callback_data or ""))
    assert waited and max(waited) >= 2.0  # (or longer, for the chat's own budget)
    assert h.rooms.kit.t("en", "button-take") in h.hand_message(defender).button_texts


async def test_a_429_in_one_group_holds_up_nobody_else(harness: BotHarness) -> None:
    """Group A's table edit is refused for 30 s. Group A's move is answered at once (its
    table follows later) and group B plays and sees its table meanwhile."""
    h = harness
    a1, a2, b1, b2 = h.user(1, "A1"), h.user(2, "A2"), h.user(3, "B1"), h.user(4, "B2")
    group_a = h.fake.group(-8004, "A", admins={a1})
    group_b = h.fake.group(-8005, "B", admins={b1})
    await h.open_game(group_a, [a1, a2])
    await h.open_game(group_b, [b1, b2])
    tables = {(g.id, h.rooms.store.live(g.id).table_message_id) for g in (group_a, group_b)}
    shown_at: dict[int, float] = {}

    def table_edited(message: FakeMessage, _: Any) -> None:
        if (message.chat_id, message.message_id) in tables:
            shown_at.setdefault(message.chat_id, h.timing.now())  # the first edit

    h.fake.watch(table_edited)
    start = h.timing.now()
    h.fake.fail_next("editMessageText", 429, retry_after=30, chat_id=group_a.id)
    for group in (group_a, group_b):
        attacker = h.users[int(live(h, group).attacker)]
        hand, card = playable(h, attacker)
        tap = attacker.tap(hand, card.callback_data or "")
        await h.deliver(tap)
        assert h.fake.answer_for(tap) is not None  # answered at once
        assert live(h, group).move_number == 1
    await h.settle()
    assert shown_at[group_b.id] < start + 5  # B: within its table's interval
    assert shown_at[group_a.id] >= start + 30  # A: after exactly its retry_after


async def test_lobby_buttons_work_only_on_the_lobby_message_in_its_group(
    harness: BotHarness,
) -> None:
    """Callback data can be forged: Eve, not in the group, sends the lobby's Join data from
    a message of her own private chat. She gets no seat, and the group hears nothing."""
    h = harness
    alice, eve = h.user(1, "Alice"), h.user(66, "Eve")
    group = h.fake.group(-8006, "Club", admins={alice})
    await h.send(alice.start_private(), alice.send(group, "/newgame"))
    join = h.lobby_message(group).button("Join").callback_data or ""
    await h.send(eve.start_private())
    posts = len(h.fake.messages(group.id))
    tap = eve.tap_raw(h.fake.last_message(eve.id), join)
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-unknown-button")
    assert [s.name for s in h.rooms.store.live(group.id).lobby.seats] == ["Alice"]
    assert len(h.fake.messages(group.id)) == posts


@pytest.mark.parametrize(
    ("status", "seated"),
    [
        ("creator", True),
        ("administrator", True),
        ("member", True),
        ("restricted", True),  # muted, still in the group
        ("restricted-left", False),
        ("left", False),
        ("kicked", False),
    ],
)
async def test_a_join_link_passed_on_seats_only_members_of_the_group(
    harness: BotHarness, status: str, seated: bool
) -> None:
    """The deep link /start j<game> can be passed on or guessed (game ids count up):
    someone who never tapped Join gets a seat only as a member of the group."""
    h = harness
    alice, eve = h.user(1, "Alice"), h.user(66, "Eve")
    group = h.fake.group(-8007, "Club", admins={alice})
    group.members[eve.id] = status
    await h.send(alice.start_private(), alice.send(group, "/newgame"))
    game_id = h.rooms.store.live(group.id).id
    await h.send(eve.send(eve, f"/start j{game_id}"))
    seats = [s.name for s in h.rooms.store.live(group.id).lobby.seats]
    assert seats == (["Alice", "Eve"] if seated else ["Alice"])
    if not seated:
        assert "Only members of" in h.fake.last_message(eve.id).text


async def test_a_reader_of_a_public_group_who_taps_join_is_seated_through_the_link(
    harness: BotHarness,
) -> None:
    """In a public group non-members can read and tap: Join gives them the link (they never
    started the bot), and the link seats them."""
    h = harness
    alice, reader = h.user(1, "Alice"), h.user(7, "Reader")
    group = h.fake.group(-8021, "Club", admins={alice}, username="publicclub")
    await h.send(alice.start_private(), alice.send(group, "/newgame"))
    game_id = h.rooms.store.live(group.id).id
    tap = reader.tap(h.lobby_message(group), "Join")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.url and answer.url.endswith(f"start=j{game_id}")
    await h.send(reader.send(reader, f"/start j{game_id}"))
    assert [s.name for s in h.rooms.store.live(group.id).lobby.seats] == ["Alice", "Reader"]


def failing_writes(
    h: BotHarness, monkeypatch: pytest.MonkeyPatch, times: int | None = None
) -> Callable[[], None]:
    """Make writes (write transactions and `save_game`) fail as a database locked for too
    long would (every one, or the next `times`); returns the undo."""
    db = h.rooms.kit.db
    real, real_save = db.transaction, db.save_game
    left = [times]

    def fail() -> None:
        if left[0] != 0:
            if left[0] is not None:
                left[0] -= 1
            raise DatabaseBusy("database is locked")

    def busy(*, readonly: bool = False) -> Any:
        if not readonly:
            fail()
        return real(readonly=readonly)

    async def busy_save(record: Any) -> int:
        fail()
        return await real_save(record)

    monkeypatch.setattr(db, "transaction", busy)
    monkeypatch.setattr(db, "save_game", busy_save)

    def undo() -> None:
        monkeypatch.setattr(db, "transaction", real)
        monkeypatch.setattr(db, "save_game", real_save)

    return undo


async def test_a_move_the_database_did_not_store_is_answered_and_changes_nothing(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    h.rooms.store.reload_delays = (0.0,)
    group = await game_of_two(h, -8008)
    attacker = h.users[int(live(h, group).attacker)]
    hand, card = playable(h, attacker)
    undo = failing_writes(h, monkeypatch)
    tap = attacker.tap(hand, card.callback_data or "")
    await h.send(tap)
    undo()
    await h.settle()  # the stored game is loaded and shown
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-storage")
    assert live(h, group).move_number == 0
    assert card.text in h.hand_message(attacker).button_texts  # still in the hand


async def test_start_is_announced_only_once_the_game_is_stored(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    h.rooms.store.reload_delays = (0.0,)
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-8009, "Club", admins={alice})
    await h.send(alice.start_private(), bob.start_private(), alice.send(group, "/newgame"))
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    undo = failing_writes(h, monkeypatch)
    tap = alice.tap(h.lobby_message(group), "Start")
    await h.send(tap)
    undo()
    await h.settle()
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-storage")
    assert h.rooms.store.live(group.id).status == "lobby"
    assert "Start" in h.lobby_message(group).button_texts  # the lobby is still open


async def test_hands_are_dealt_even_if_the_new_tables_id_is_not_stored(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    h.rooms.store.reload_delays = ()  # no reload: the deal itself must go on
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-8010, "Club", admins={alice})
    await h.send(alice.start_private(), bob.start_private(), alice.send(group, "/newgame"))
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    real_save = h.rooms.store.save
    saves = 0

    async def second_save_fails(record: Any, result: Any = None) -> None:
        nonlocal saves
        saves += 1
        if saves == 2:  # 1: the start itself; 2: the new table message's id
            try:
                raise DatabaseBusy("database is locked")
            finally:
                h.rooms.store.forget(record)
                h.rooms.store.reload_soon(record.chat_id)
        await real_save(record, result)

    monkeypatch.setattr(h.rooms.store, "save", second_save_fails)
    await h.send(alice.tap(h.lobby_message(group), "Start"))
    await h.settle()
    for user in (alice, bob):  # each got a hand with card buttons
        hands = [m for m in h.fake.messages(user.id) if m.buttons and "Trump" in m.text]
        assert len(hands) == 1 and len(hands[0].button_texts) >= 6


async def test_one_busy_chat_does_not_hold_up_the_deadlines_of_others(
    harness: BotHarness,
) -> None:
    """Chat A's lock is held (a handler in a slow Telegram call, say) when its turn runs
    out; chat B's turn runs out later, while A's is still waiting. B's timeout move is made
    all the same."""
    h = harness
    a1, a2, b1, b2 = h.user(1, "A1"), h.user(2, "A2"), h.user(3, "B1"), h.user(4, "B2")
    group_a = h.fake.group(-8011, "A", admins={a1})
    group_b = h.fake.group(-8012, "B", admins={b1})
    await h.open_game(group_a, [a1, a2])
    h.clock.advance(20)
    await h.open_game(group_b, [b1, b2])  # B's deadline: 20 s after A's
    async with h.rooms.store.locks[group_a.id]:  # chat A is busy
        h.clock.advance(41)  # A's turn is over, B's not yet
        h.rooms.deadlines.start_due(h.clock())  # the scheduler wakes: A's deadline, in a task
        a_task = h.rooms.deadlines.handling(group_a.id)  # (it waits for A's lock)
        # B's half-time warning was due with A's deadline; now B's turn is over too. The
        # scheduler wakes when each task is done, and starts what is due.
        h.clock.advance(20)
        for _ in range(2):  # B's warning (if not yet done), then B's deadline
            h.rooms.deadlines.start_due(h.clock())
            b_task = h.rooms.deadlines.handling(group_b.id)
            if b_task is not None:
                await b_task
        assert live(h, group_b).move_number == 1 and live(h, group_a).move_number == 0
    await a_task
    assert live(h, group_a).move_number == 1


async def test_finished_and_cancelled_games_leave_nothing_behind_in_memory(
    harness: BotHarness,
) -> None:
    """A bot runs for months in many chats: what it keeps per chat must go with the game."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    for i in range(5):
        group = h.fake.group(-8100 - i, f"G{i}", admins={alice})
        await h.open_game(group, [alice, bob])
        hand = h.hand_message(alice)
        data = next(b.callback_data for row in hand.buttons for b in row if b.callback_data)
        await h.send(alice.send(group, "/cancel"))
    rooms = h.rooms
    assert rooms.store.held() == (0, 0, 0)
    # ... and a button of a forgotten game still gets its answer
    tap = alice.tap_raw(hand, data or "")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-game-gone")


async def test_a_blocked_player_in_a_game_without_time_limit_is_not_promised_a_timeout(
    harness: BotHarness,
) -> None:
    """With no time limit nothing times out: the group is told the game waits, and how an
    admin can go on without the player."""
    h = harness
    h.settings = make_settings(h.db_path, turn_timeout=0)
    await h.restart()
    group = await game_of_two(h, -8013)
    game = live(h, group)
    blocker, attacker = h.users[int(game.defender)], h.users[int(game.attacker)]
    await h.send(blocker.block_bot())
    hand, card = playable(h, attacker)
    await h.send(attacker.tap(hand, card.callback_data or ""))
    notices = [m.text for m in h.fake.messages(group.id) if "blocked me" in m.text]
    assert len(notices) == 1
    assert "/kick" in notices[0] and "time out" not in notices[0]


async def test_an_opener_who_leaves_the_lobby_hands_it_to_the_next_player(
    harness: BotHarness,
) -> None:
    """Before, the seated players could not start without an admin, and the opener, no
    longer playing, could still start or cancel their game."""
    h = harness
    alice, bob, carol = h.user(1, "Alice"), h.user(2, "Bob"), h.user(3, "Carol")
    group = h.fake.group(-8014, "Club", admins=set())
    await h.send(*(u.start_private() for u in (alice, bob, carol)))
    await h.send(alice.send(group, "/newgame"))
    for user in (bob, carol):
        await h.send(user.tap(h.lobby_message(group), "Join"))
    await h.send(alice.tap(h.lobby_message(group), "Leave"))
    lobby = h.lobby_message(group)
    assert "Bob wants to play" in lobby.text and "Alice" not in lobby.text
    tap = alice.tap(lobby, "Start")
    await h.send(tap)
    assert h.rooms.store.live(group.id).status == "lobby"  # Alice no longer decides
    await h.send(bob.tap(h.lobby_message(group), "Start"))
    assert live(h, group).players == ("2", "3")


async def test_rules_leave_and_cancel_in_private_speak_of_the_players_group_game(
    harness: BotHarness,
) -> None:
    """Boris plays a transfer game in a group and asks in his private chat: /rules shows
    that game's rules (not the private chat's defaults); /cancel says where it works, not
    that there is no game (/leave asks there: tests/bot/test_leave_private.py)."""
    h = harness
    alice, boris = h.user(1, "Alice"), h.user(2, "Boris", "ru")
    group = h.fake.group(-8015, "Club", admins={alice})
    async with h.rooms.kit.db.transaction() as tx:
        await tx.chats.save(
            settings=ChatSettings(chat_id=group.id, rules=Rules.preset("perevodnoy"))
        )
    await h.open_game(group, [alice, boris])
    await h.send(boris.send_private("/rules"))
    rules = h.fake.last_message(boris.id).text
    assert "Club" in rules and "Переводы (переводной дурак): вкл." in rules
    await h.send(boris.send_private("/cancel"))
    answer = h.fake.last_message(boris.id).text
    assert "/cancel" in answer and "Club" in answer, answer
    assert live(h, group).move_number == 0  # and nothing happened to the game


async def test_rules_in_private_of_many_games_come_in_messages_telegram_takes(
    harness: BotHarness,
) -> None:
    """One message per game's rules would be noise; all in one went over 4096 characters
    (and Telegram refused it: no answer at all) at about ten games."""
    h = harness
    alice, boris = h.user(1, "Alice"), h.user(2, "Boris", "de")
    titles = [f"Stammtisch Nummer {i} der Freunde des gepflegten Kartenspiels" for i in range(14)]
    for i, title in enumerate(titles):
        await h.open_game(h.fake.group(-8100 - i, title, admins={alice}), [alice, boris])
    before = len(h.fake.messages(boris.id))
    await h.send(boris.send_private("/rules"))
    answers = h.fake.messages(boris.id)[before:]
    assert 1 < len(answers) < len(titles)
    text = "\n".join(m.text for m in answers)
    assert all(title in text for title in titles)


async def test_an_edit_telegram_refuses_for_good_is_not_retried(harness: BotHarness) -> None:
    """A 400 (no right to write, a chat that is gone) would only repeat: no retry loop for
    the table or a hand. (python-telegram-bot makes BadRequest a kind of NetworkError.)"""
    h = harness
    group = await game_of_two(h, -8016)
    game = live(h, group)
    attacker, defender = h.users[int(game.attacker)], h.users[int(game.defender)]
    h.fake.fail_next("editMessageText", 400, "Bad Request: not enough rights", chat_id=group.id)
    h.fake.fail_next("editMessageText", 400, "Bad Request: chat not found", chat_id=defender.id)
    h.fake.clear_calls()
    hand, card = playable(h, attacker)
    await h.send(attacker.tap(hand, card.callback_data or ""))
    assert live(h, group).move_number == 1
    assert [c.ok for c in edits_to(h, group.id)] == [False]
    assert [c.ok for c in edits_to(h, defender.id)] == [False]


async def test_a_table_edit_that_keeps_timing_out_is_given_up_after_a_few_tries(
    harness: BotHarness,
) -> None:
    h = harness
    group = await game_of_two(h, -8017)
    h.fake.timeout_next("editMessageText", chat_id=group.id, times=100)
    h.fake.clear_calls()
    await attack(h, group)  # (the harness waits until nothing is left to send)
    failed = [c for c in edits_to(h, group.id) if c.timed_out]
    assert len(failed) == 1 + MAX_FAILURES  # the first try and the retries, then no more


async def test_a_table_edit_refused_at_shutdown_leaves_nothing_running(
    harness: BotHarness,
) -> None:
    h = harness
    group = await game_of_two(h, -8018)
    h.fake.fail_next("editMessageText", 429, retry_after=3600, chat_id=group.id)
    attacker = h.users[int(live(h, group).attacker)]
    await tap_only(h, attacker)
    await h.stop()  # the table waits an hour: shutdown does not
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not [t for t in others if not t.done()]


async def test_a_database_that_keeps_failing_does_not_make_the_bot_flood_a_chat(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table message was deleted and every write fails: the reload after the failed move
    shows the table anew, whose id cannot be stored either. That must not reload again and
    post yet another table, for ever."""
    h = harness
    h.rooms.store.reload_delays = (0.0,)
    group = await game_of_two(h, -8019)
    h.fake.delete_by_user(group.id, h.rooms.store.live(group.id).table_message_id or 0)
    posts = len(h.fake.messages(group.id))
    failing_writes(h, monkeypatch)
    await attack(h, group)
    for _ in range(20):  # let every reload run to its end
        if not h.rooms.store.background.busy():
            break
        await h.settle()
    assert not h.rooms.store.background.busy(), "reloads start reloads"
    assert len(h.fake.messages(group.id)) - posts <= 1  # at most the one new table


async def test_a_tap_is_not_told_nothing_happened_when_only_a_later_save_failed(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's join is stored and answered; then the lobby message (deleted by an admin) is
    sent anew and storing its id fails. Bob keeps his one true answer."""
    h = harness
    h.rooms.store.reload_delays = ()
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-8020, "Club", admins={alice})
    await h.send(alice.start_private(), bob.start_private(), alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    real_save = h.rooms.store.save
    saves = 0

    async def second_save_fails(record: Any, result: Any = None) -> None:
        nonlocal saves
        saves += 1
        if saves == 2:  # 1: the seat; 2: the new lobby message's id
            raise DatabaseBusy("database is locked")
        await real_save(record, result)

    monkeypatch.setattr(h.rooms.store, "save", second_save_fails)
    tap = bob.tap(lobby, "Join")
    h.fake.delete_by_user(group.id, lobby.message_id)
    await h.send(tap)
    query_id = tap["callback_query"]["id"]
    answers = [
        c.params.get("text")
        for c in h.fake.calls_for("answerCallbackQuery")
        if str(c.params.get("callback_query_id")) == query_id
    ]
    assert answers == [h.rooms.kit.t("en", "lobby-joined")]


async def test_a_lobby_edit_refused_with_429_is_made_after_waiting_for_that_call_alone(
    harness: BotHarness,
) -> None:
    """The lobby waits out a 429 for exactly its retry_after, however long: it is never lost
    (python-telegram-bot's rate limiter held back every chat meanwhile; the bot does not)."""
    h = harness
    waited = waits_recorded(h)
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-8022, "Club", admins={alice})
    await h.send(alice.start_private(), bob.start_private(), alice.send(group, "/newgame"))
    h.fake.fail_next("editMessageText", 429, retry_after=3, chat_id=group.id)
    await h.send(bob.tap(h.lobby_message(group), "Join"))
    assert 3.0 in waited
    assert "Bob" in h.lobby_message(group).text
    h.fake.fail_next("editMessageText", 429, retry_after=300, chat_id=group.id)
    await h.send(bob.tap(h.lobby_message(group), "Leave"))
    assert 300.0 in waited
    assert "Bob" not in h.lobby_message(group).text.split("Players")[-1]


async def test_an_opener_who_never_started_the_bot_is_asked_to_join_too(
    harness: BotHarness,
) -> None:
    """The opener cannot be seated before the bot may write to them: the lobby says so
    instead of reading as if they sat at the table; their Join gives them the link."""
    h = harness
    alice = h.user(1, "Alice")  # never started the bot
    group = h.fake.group(-8023, "Club", admins={alice})
    await h.send(alice.send(group, "/newgame"))
    lobby = h.lobby_message(group)
    assert h.rooms.kit.t("en", "lobby-opener-join", name="Alice") in lobby.text
    tap = alice.tap(lobby, "Join")
    await h.send(tap)
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.url is not None  # the deep link
    payload = answer.url.split("start=")[1]
    await h.send(alice.send(alice, f"/start {payload}"))
    lobby = h.lobby_message(group)
    assert "Alice" in lobby.text.split("Players")[1]
    assert h.rooms.kit.t("en", "lobby-opener-join", name="Alice") not in lobby.text


async def test_a_hand_that_keeps_failing_is_given_up_after_a_few_tries(
    harness: BotHarness,
) -> None:
    h = harness
    group = await game_of_two(h, -8024)
    game = live(h, group)
    attacker, defender = h.users[int(game.attacker)], h.users[int(game.defender)]
    h.fake.timeout_next("editMessageText", chat_id=defender.id, times=100)
    h.fake.clear_calls()
    hand, card = playable(h, attacker)
    await h.send(attacker.tap(hand, card.callback_data or ""))
    failed = [c for c in edits_to(h, defender.id) if c.timed_out]
    assert len(failed) == 1 + MAX_FAILURES  # the first try and the retries, then no more


async def test_a_game_dropped_again_while_reloading_is_loaded_once_more(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The move's save fails, and so does the save within the first reload (the deleted
    table is posted anew): the next attempt loads the game, so its deadline still runs."""
    h = harness
    h.rooms.store.reload_delays = (0.0, 0.0)
    group = await game_of_two(h, -8025)
    h.fake.delete_by_user(group.id, h.rooms.store.live(group.id).table_message_id or 0)
    failing_writes(h, monkeypatch, times=2)
    await attack(h, group)
    while h.rooms.store.background.busy():
        await h.settle()
    assert h.rooms.store.live(group.id) is not None
    h.clock.advance(61)
    assert await h.run_due() == 1


async def test_the_last_table_and_hands_wait_out_a_short_429(harness: BotHarness) -> None:
    """A finished game is not live any more, but its last table and hands are still sent:
    they wait out a 429 like any message that matters once."""
    h = harness
    waited = waits_recorded(h)
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-8026, "Club", admins={alice}, members={bob})
    await h.open_game(group, [alice, bob])
    h.hand_message(alice)  # (remembered for after the end)
    h.fake.fail_next("editMessageText", 429, retry_after=2, chat_id=group.id)
    h.fake.fail_next("editMessageText", 429, retry_after=2, chat_id=alice.id)
    await h.send(bob.leave(group))  # the game ends: Bob is the durak
    assert 2.0 in waited
    assert "durak" in (await h.table_of(group)).text
    assert "Game over" in h.hand_message(alice).text and not h.hand_message(alice).buttons
