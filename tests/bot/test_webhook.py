"""Webhook mode (#30): Telegram's posts are stored in the inbox and answered 200 once that
is committed; the leader handles them from there, each once, and marks each handled with
its changes. A post without the secret is refused; a redelivered update is not handled
twice; while the database cannot store a post, 503 (Telegram posts it again); an update
whose changes could not be stored is kept and handled once the database can, and the
person is told so, never "nothing happened".

A whole bot (the harness) with the real web server on loopback, posted to over HTTP."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
import pytest

from bot import handling
from bot.leader import DATABASE_KEY
from bot.telegram.webhook import KEEP_HANDLED
from storage import DatabaseUnavailable
from tests.bot.conftest import WEBHOOK_SECRET, WEBHOOK_URL, BotHarness, Hooked
from tests.bot.test_database_outage import attacker_tap, game_of_two, unavailable_writes


def move_number(h: BotHarness, chat_id: int) -> int:
    record = h.rooms.store.live(chat_id)
    assert record is not None and record.game is not None
    return record.game.move_number


async def handled(h: BotHarness, update: dict[str, Any]) -> bool:
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        return await tx.inbox.handled(update_id=update["update_id"])


async def test_a_new_leader_registers_the_webhook_once(hooked: Hooked) -> None:
    """Registered when the worker took the lead; a restart with the same settings leaves
    Telegram alone (setWebhook and setMyCommands are not called again)."""
    h = hooked.h
    assert h.fake.webhook is not None and h.fake.webhook.url == WEBHOOK_URL
    calls = (h.fake.call_counts.get("setWebhook", 0), h.fake.call_counts.get("setMyCommands", 0))
    assert calls == (1, 8)
    await h.restart()
    assert h.fake.call_counts.get("setWebhook", 0) == 1
    assert h.fake.call_counts.get("setMyCommands", 0) == 8


@pytest.mark.parametrize("secret", [None, "", "wrong", WEBHOOK_SECRET + "x", WEBHOOK_SECRET[:-1]])
async def test_a_post_without_the_secret_token_is_refused_and_changes_nothing(
    hooked: Hooked, secret: str | None
) -> None:
    h = hooked.h
    alice = h.user(1, "Alice")
    group = h.fake.group(-9001, "Club", admins={alice})
    update = alice.send(group, "/newgame")
    assert await hooked.post(update, secret=secret) == 403
    assert h.fake.messages(group.id) == []
    assert h.rooms.store.live(group.id) is None
    assert not await handled(h, update)


@pytest.mark.parametrize(
    "body", [b"", b"not json", b"[]", b'{"update_id": "7"}', b'{"message": {}}', b"\xff\xfe"]
)
async def test_a_post_that_is_no_update_is_refused(hooked: Hooked, body: bytes) -> None:
    assert await hooked.post(body) == 400


async def test_a_move_posted_again_is_answered_but_applied_once(hooked: Hooked) -> None:
    h = hooked.h
    group, _, _ = await game_of_two(h, -9002)
    tap = attacker_tap(h, group)
    assert await hooked.post(tap) == 200
    assert move_number(h, group.id) == 1
    assert await handled(h, tap)
    table = (await h.table_of(group)).text
    calls = h.fake.call_counts.copy()
    for _ in range(2):  # Telegram had no 200 (a worker died before its answer): again
        assert await hooked.post(tap) == 200
    assert move_number(h, group.id) == 1
    assert (await h.table_of(group)).text == table
    assert h.fake.call_counts == calls  # not even answered again ("out of date")


async def test_an_update_that_stores_nothing_is_answered_once(hooked: Hooked) -> None:
    h = hooked.h
    alice = h.user(1, "Alice")
    update = alice.send_private("/help")
    assert await hooked.post(update) == 200
    helps = len(h.fake.messages(alice.id))
    assert helps >= 1 and await handled(h, update)
    assert await hooked.post(update) == 200
    assert len(h.fake.messages(alice.id)) == helps


async def test_a_new_lobby_is_marked_handled_with_its_save_and_posted_once(
    hooked: Hooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lobby and its update are committed together: the update is marked handled by
    the store, in the lobby's own transaction (not afterwards by the reader)."""
    h = hooked.h
    alice = h.user(1, "Alice")
    group = h.fake.group(-9003, "Club", admins={alice})
    await hooked.post(alice.start_private())
    recorded: list[bool] = []
    real = handling.handling

    def watched(update_id: int) -> Any:
        manager = real(update_id)

        class Watch:
            def __enter__(self) -> handling.Handling:
                self.state = manager.__enter__()
                return self.state

            def __exit__(self, *exc: object) -> None:
                recorded.append(self.state.recorded)
                manager.__exit__(*exc)  # type: ignore[arg-type]

        return Watch()

    monkeypatch.setattr(handling, "handling", watched)
    update = alice.send(group, "/newgame")
    assert await hooked.post(update) == 200
    assert recorded == [True]
    posted = h.fake.messages(group.id)
    assert await hooked.post(update) == 200
    assert h.fake.messages(group.id) == posted  # no "a game is open already" either
    assert [m for m in posted if "Join" in m.button_texts]


async def test_while_the_database_cannot_store_posts_are_answered_503_and_taken_later(
    hooked: Hooked, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    h = hooked.h
    group, _, _ = await game_of_two(h, -9004)
    tap = attacker_tap(h, group)
    undo = unavailable_writes(h, monkeypatch)
    with caplog.at_level("INFO", logger="bot.telegram.webhook"):
        for _ in range(3):  # Telegram keeps it and posts it again
            assert await hooked.post(tap) == 503
        assert move_number(h, group.id) == 0
        undo()
        assert await hooked.post(tap) == 200
    assert move_number(h, group.id) == 1
    assert await hooked.post(tap) == 200
    assert move_number(h, group.id) == 1
    said = [r.getMessage() for r in caplog.records if r.name == "bot.telegram.webhook"]
    assert sum("cannot store updates" in line for line in said) == 1  # once per outage
    assert sum("stores updates again" in line for line in said) == 1


async def test_a_database_that_flaps_as_it_goes_down_is_one_outage_in_the_log(
    hooked: Hooked, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A database going down cuts its connections one by one: a post may still be stored
    between refused ones. The operator is warned once for that outage; one that begins
    well after the database stored again is warned of again."""
    h = hooked.h
    group, _, _ = await game_of_two(h, -9006)
    tap = attacker_tap(h, group)
    with caplog.at_level("INFO", logger="bot.telegram.webhook"):
        undo = unavailable_writes(h, monkeypatch)
        assert await hooked.post(tap) == 503
        undo()
        assert await hooked.post(tap) == 200  # on a connection not cut yet
        undo = unavailable_writes(h, monkeypatch)
        assert await hooked.post(tap) == 503
        h.clock.advance(3)
        undo()
        assert await hooked.post(tap) == 200
        h.clock.advance(60)
        undo = unavailable_writes(h, monkeypatch)
        assert await hooked.post(tap) == 503  # another outage
        undo()
    said = [r.getMessage() for r in caplog.records if r.name == "bot.telegram.webhook"]
    assert sum("cannot store updates" in line for line in said) == 2
    back = [line for line in said if "stores updates again" in line]
    assert "after 3 s (2 posts answered 503)" in back[-1]


async def test_a_move_whose_save_failed_is_kept_and_made_once_the_database_stores_again(
    hooked: Hooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The post was stored, then the move's own save failed: the player hears that it is
    kept (not "nothing happened"), and the move is made once saves go through again."""
    h = hooked.h
    h.rooms.store.reload_delays = (0.0,)
    group, _, _ = await game_of_two(h, -9005)
    tap = attacker_tap(h, group)
    undo = unavailable_writes(h, monkeypatch, leaders_only=True)  # posts are still stored
    assert await hooked.post(tap) == 200
    answer = h.fake.answer_for(tap)
    assert answer is not None and answer.text == h.rooms.kit.t("en", "error-later")
    assert move_number(h, group.id) == 0
    assert not await handled(h, tap)
    undo()
    await hooked.reader.caught_up()  # (its retry would come by itself a moment later)
    await hooked.settle()
    assert await handled(h, tap)
    assert move_number(h, group.id) == 1


async def test_an_update_another_worker_stored_is_handled_by_the_leader(hooked: Hooked) -> None:
    """A post taken by a standby: the leader hears of it (a notification, or its look at
    the inbox) and handles it."""
    h = hooked.h
    alice = h.user(1, "Alice")
    group = h.fake.group(-9006, "Club", admins={alice})
    heard = alice.send(group, "/newgame")
    db = h.app.bot_data[DATABASE_KEY]
    assert await db.accept_update(
        update_id=heard["update_id"], body=orjson.dumps(heard).decode(), at=h.clock()
    )
    hooked.reader.notified(f"{heard['update_id']} durak-another-worker")
    await hooked.reader.caught_up()
    await hooked.settle()
    assert await handled(h, heard)
    assert any("Join" in m.button_texts for m in h.fake.messages(group.id))
    missed = alice.send_private("/help")
    assert await db.accept_update(
        update_id=missed["update_id"], body=orjson.dumps(missed).decode(), at=h.clock()
    )
    await hooked.reader.caught_up()
    await hooked.settle()
    assert await handled(h, missed)


async def test_handled_updates_are_forgotten_once_telegram_cannot_post_them_again(
    hooked: Hooked,
) -> None:
    h = hooked.h
    alice = h.user(1, "Alice")
    old, new = alice.send_private("/help"), alice.send_private("/rules")
    assert await hooked.post(old) == 200
    h.clock.advance(KEEP_HANDLED.total_seconds() - 60)
    assert await hooked.post(new) == 200
    h.clock.advance(timedelta(minutes=2).total_seconds())
    assert await hooked.hook.prune(h.app.bot_data[DATABASE_KEY]) == 1
    assert not await handled(h, old)
    assert await handled(h, new)


async def test_in_polling_mode_no_update_is_marked(harness: BotHarness) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-9007, "Club", admins={alice})
    update = alice.send(group, "/newgame")
    await h.send(update)
    assert not await handled(h, update)


async def test_an_outage_is_an_update_to_handle_later_only_while_one_is_handled() -> None:
    error = DatabaseUnavailable("full", where="x")
    assert not handling.failed(error)  # polling: nothing to keep it in
    with handling.handling(5) as state:
        assert handling.failed(error)
    assert state.outage is error
