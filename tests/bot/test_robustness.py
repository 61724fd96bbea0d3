"""What a real deployment does to the bot, end to end: the order in which run_polling stops
an application, Telegram's 429 and lost answers, a database that fails a save, a group that
is not the tapper's, and memory over many games."""

from __future__ import annotations

from engine import Game
from tests.bot.conftest import BotHarness
from tests.fakes.telegram import Button, FakeGroup, FakeMessage, FakeUser


def live(h: BotHarness, group: FakeGroup) -> Game:
    record = h.service._live[group.id]
    assert record.status == "running" and record.game is not None
    return record.game


def playable(h: BotHarness, user: FakeUser) -> tuple[FakeMessage, Button]:
    """The user's hand message and its first card that can be played now."""
    hand = h.hand_message(user)
    return hand, next(b for row in hand.buttons for b in row if "·" not in b.text)


async def test_pending_table_edits_are_published_when_run_polling_stops(
    harness: BotHarness,
) -> None:
    """run_polling calls stop(), post_stop, shutdown() (which closes the HTTP client), then
    post_shutdown: a table edit still pending must go out before the client closes."""
    h = harness
    alice, bob = h.user(1, "Alice"), h.user(2, "Bob")
    group = h.fake.group(-8001, "Club", admins={alice})
    await h.open_game(group, [alice, bob])
    h.service.tables.interval = 3600  # the next table edit waits (coalesced)
    await h.service.tables.request(group.id)
    attacker = h.users[int(live(h, group).attacker)]
    hand, card = playable(h, attacker)
    await h.send(attacker.tap(hand, card.callback_data or ""))
    assert group.id in h.service.tables.pending()
    table_id = h.service._live[group.id].table_message_id or 0
    attacked = h.service.t("en", "log-attack", player=attacker.first_name)
    app, h.app = h.app, None  # stopped here, not by the harness
    assert app is not None and app.post_stop is not None and app.post_shutdown is not None
    await app.post_stop(app)
    await app.shutdown()
    await app.post_shutdown(app)
    assert attacked in h.fake.message(group.id, table_id).text
