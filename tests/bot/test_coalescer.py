"""Table edits are coalesced: at most one per interval per group, always the latest state."""

from __future__ import annotations

import asyncio

from bot.delivery import Coalescer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_requests_within_the_interval_merge_into_one_later_edit() -> None:
    published: list[tuple[int, str]] = []
    state = {"text": "v1"}

    async def publish(chat: int) -> None:
        published.append((chat, state["text"]))

    clock = Clock()
    coalescer = Coalescer(publish, interval=3.0, clock=clock)
    await coalescer.request(1)  # the first edit goes out at once
    for version in ("v2", "v3", "v4"):
        state["text"] = version
        clock.now += 0.5
        await coalescer.request(1)  # merged
    assert published == [(1, "v1")]
    assert coalescer.pending() == {1}
    await coalescer.flush()
    assert published == [(1, "v1"), (1, "v4")]  # one edit, with the latest state
    clock.now += 3.0
    state["text"] = "v5"
    await coalescer.request(1)
    assert published[-1] == (1, "v5")


async def test_twenty_requests_a_minute_stay_under_the_group_limit() -> None:
    count = 0

    async def publish(chat: int) -> None:
        nonlocal count
        count += 1

    clock = Clock()
    coalescer = Coalescer(publish, interval=3.0, clock=clock)
    for _ in range(600):  # a request every 0.1 s for a minute
        await coalescer.request(5)
        clock.now += 0.1
        if coalescer.pending() and clock.now >= 100.0 + 3.0 * (count):
            await coalescer.flush()  # what the timer would do when it fires
    assert count <= 21


async def test_other_groups_are_not_delayed() -> None:
    published: list[int] = []

    async def publish(chat: int) -> None:
        published.append(chat)

    clock = Clock()
    coalescer = Coalescer(publish, interval=3.0, clock=clock)
    await coalescer.request(1)
    await coalescer.request(2)
    await coalescer.request(1)
    assert published == [1, 2]
    coalescer.forget(1)
    assert coalescer.pending() == frozenset()


async def test_a_429_is_retried_after_exactly_its_retry_after() -> None:
    """Not after the interval (a hand refused with "retry after 1" waited 3 s)."""
    from telegram.error import RetryAfter

    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def publish(chat: int) -> None:
        return None

    coalescer = Coalescer(publish, interval=3.0, clock=Clock(), sleep=sleep)
    coalescer.retry_later(7, RetryAfter(1))
    assert coalescer.pending() == {7}
    await asyncio.sleep(0)  # one step of the loop: the retry starts its wait
    assert waits == [1.0]
