"""Webhook mode (#20): Telegram's posts are answered 200 only once the update's changes are
committed; a post without the secret is refused, a redelivered update is not applied twice,
and an outage answers 503 so that Telegram delivers the update again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
import pytest

from bot.__main__ import ALLOWED_UPDATES
from bot.ops.http import Request
from bot.telegram.webhook import KEEP_HANDLED, SECRET_HEADER, Webhook
from tests.bot.conftest import BotHarness
from tests.bot.test_database_outage import attacker_tap, game_of_two, unavailable_writes

SECRET = "s3cret_-token"


def webhook(h: BotHarness) -> Webhook:
    return Webhook(
        h.app,
        url="https://bot.example/hook",
        secret=SECRET,
        database=lambda: h.rooms.kit.db,
        allowed_updates=ALLOWED_UPDATES,
        max_connections=40,
        clock=h.clock,
    )


def post(update: Any, *, secret: str | None = SECRET) -> Request:
    body = update if isinstance(update, bytes) else orjson.dumps(update)
    headers = {"content-type": "application/json", "content-length": str(len(body))}
    if secret is not None:
        headers[SECRET_HEADER] = secret
    return Request("POST", "/hook", headers, body)


async def answer(h: BotHarness, hook: Webhook, request: Request) -> int:
    """Post as Telegram does and wait until what the update caused went out; the status."""
    with h.timing.update():
        response = await hook.post(request)
    await h.settle()
    return response.status


def move_number(h: BotHarness, chat_id: int) -> int:
    record = h.rooms.store.live(chat_id)
    assert record is not None and record.game is not None
    return record.game.move_number


@pytest.mark.parametrize("secret", [None, "", "wrong", SECRET + "x", SECRET[:-1]])
async def test_a_post_without_the_secret_token_is_refused_and_changes_nothing(
    harness: BotHarness, secret: str | None
) -> None:
    h = harness
    alice = h.user(1, "Alice")
    group = h.fake.group(-9001, "Club", admins={alice})
    assert await answer(h, webhook(h), post(alice.send(group, "/newgame"), secret=secret)) == 403
    assert h.fake.messages(group.id) == []
    assert h.rooms.store.live(group.id) is None


@pytest.mark.parametrize(
    "body", [b"", b"not json", b"[]", b'{"update_id": "7"}', b'{"message": {}}', b"\xff\xfe"]
)
async def test_a_post_that_is_no_update_is_refused(harness: BotHarness, body: bytes) -> None:
    assert await answer(harness, webhook(harness), post(body)) == 400


async def test_a_move_delivered_again_is_answered_but_applied_once(harness: BotHarness) -> None:
    h = harness
    hook = webhook(h)
    group, _, _ = await game_of_two(h, -9002)
    tap = attacker_tap(h, group)
    assert await answer(h, hook, post(tap)) == 200
    assert move_number(h, group.id) == 1
    table = (await h.table_of(group)).text
    calls = h.fake.call_counts.copy()
    for _ in range(2):  # Telegram had no 200 (a worker died after its commit): again
        assert await answer(h, hook, post(tap)) == 200
    assert move_number(h, group.id) == 1
    assert (await h.table_of(group)).text == table
    assert h.fake.call_counts == calls  # not even answered again ("out of date")


async def test_an_update_that_stores_nothing_is_not_answered_twice(harness: BotHarness) -> None:
    h = harness
    hook = webhook(h)
    alice = h.user(1, "Alice")
    update = alice.send_private("/help")
    assert await answer(h, hook, post(update)) == 200
    helps = len(h.fake.messages(alice.id))
    assert helps >= 1
    assert await answer(h, hook, post(update)) == 200
    assert len(h.fake.messages(alice.id)) == helps


async def test_a_new_lobby_delivered_again_is_posted_once(harness: BotHarness) -> None:
    h = harness
    hook = webhook(h)
    alice = h.user(1, "Alice")
    group = h.fake.group(-9003, "Club", admins={alice})
    await h.send(alice.start_private())
    update = alice.send(group, "/newgame")
    assert await answer(h, hook, post(update)) == 200
    posted = h.fake.messages(group.id)
    assert await answer(h, hook, post(update)) == 200
    assert h.fake.messages(group.id) == posted  # no "a game is open already" either
    assert [m for m in posted if "Join" in m.button_texts]


async def test_an_outage_answers_503_and_the_update_delivered_later_is_applied_once(
    harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    h.rooms.store.reload_delays = (0.0,)
    hook = webhook(h)
    group, _, _ = await game_of_two(h, -9004)
    tap = attacker_tap(h, group)
    undo = unavailable_writes(h, monkeypatch)
    assert await answer(h, hook, post(tap)) == 503  # Telegram keeps it and delivers it again
    assert move_number(h, group.id) == 0
    undo()
    assert await answer(h, hook, post(tap)) == 200
    assert move_number(h, group.id) == 1
    assert await answer(h, hook, post(tap)) == 200
    assert move_number(h, group.id) == 1


async def test_handled_update_ids_are_forgotten_once_telegram_cannot_send_them_again(
    harness: BotHarness,
) -> None:
    h = harness
    hook = webhook(h)
    alice = h.user(1, "Alice")
    old, new = alice.send_private("/help"), alice.send_private("/rules")
    assert await answer(h, hook, post(old)) == 200
    h.clock.advance(KEEP_HANDLED.total_seconds() - 60)
    assert await answer(h, hook, post(new)) == 200
    h.clock.advance(timedelta(minutes=2).total_seconds())
    assert await hook.prune() == 1
    async with h.rooms.kit.db.transaction(readonly=True) as tx:
        assert not await tx.updates.handled(update_id=old["update_id"])
        assert await tx.updates.handled(update_id=new["update_id"])
