"""`FakeTelegram.chaos`: seeded transient faults at random, up to a limit, never a 429."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from telegram import Bot
from telegram.error import NetworkError, TimedOut

from tests.fakes.telegram import FakeTelegram


@pytest.fixture
async def fake_bot() -> AsyncIterator[tuple[FakeTelegram, Bot]]:
    fake = FakeTelegram()
    bot = Bot(fake.token, request=fake.request(), get_updates_request=fake.updates_request())
    async with bot:
        yield fake, bot


async def sends(bot: Bot, chat_id: int, count: int) -> list[str]:
    """What became of `count` sends: ok, timeout or the error's text."""
    outcomes = []
    for n in range(count):
        try:
            await bot.send_message(chat_id, f"m{n}")
            outcomes.append("ok")
        except TimedOut:
            outcomes.append("timeout")
        except NetworkError as exc:
            outcomes.append(str(exc))
    return outcomes


async def test_every_call_fails_until_the_limit_then_none(
    fake_bot: tuple[FakeTelegram, Bot],
) -> None:
    fake, bot = fake_bot
    group = fake.group(-1001, "Club")
    fake.chaos(1.0, seed=1, methods=["sendMessage"], limit=8)
    outcomes = await sends(bot, group.id, 10)
    assert outcomes[8:] == ["ok", "ok"]
    assert fake.faults.total() == 8
    assert "ok" not in outcomes[:8]
    assert not any("429" in o or "Too Many" in o for o in outcomes)
    applied = fake.faults[("sendMessage", "timeout-applied")]
    # a timeout after the call was applied leaves its message; no other fault does
    assert len(fake.messages(group.id)) == 2 + applied
    assert all(call.injected for call in fake.calls_for("sendMessage")[:8])


async def test_the_same_seed_makes_the_same_faults_and_rate_zero_ends_them(
    fake_bot: tuple[FakeTelegram, Bot],
) -> None:
    fake, bot = fake_bot
    group = fake.group(-1001, "Club")
    fake.chaos(0.5, seed=7, methods=["sendMessage"])
    first = await sends(bot, group.id, 20)
    fake.chaos(0.5, seed=7, methods=["sendMessage"])
    assert await sends(bot, group.id, 20) == first
    assert "ok" in first and len(set(first)) > 2
    fake.chaos(0, seed=0)
    assert await sends(bot, group.id, 5) == ["ok"] * 5
