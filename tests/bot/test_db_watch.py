"""`DatabaseWatch`: an outage of the database is one warning and one operator message when
it begins and one of each when it ends, whatever the number of failed saves; a database
locked for a while by another process is no outage."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any, cast

import pytest

from bot.db_watch import DatabaseWatch
from bot.kit import Kit
from storage import Conflict, DatabaseBusy, DatabaseUnavailable


def watch_with(sent: list[tuple[int, str]], operator: int | None = 4242) -> DatabaseWatch:
    async def send(chat_id: int, rendered: Any) -> int:
        sent.append((chat_id, rendered.text))
        return 1

    kit = SimpleNamespace(
        settings=SimpleNamespace(operator_chat_id=operator, default_language="en"),
        t=lambda lang, key, **args: f"{key} {args}",
        out=SimpleNamespace(send=send),
    )
    now = iter(range(0, 1000, 10))
    return DatabaseWatch(
        cast(Kit, kit), lambda work: asyncio.ensure_future(work), clock=lambda: next(now)
    )


async def test_an_outage_is_told_once_when_it_begins_and_once_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="bot.db_watch")
    sent: list[tuple[int, str]] = []
    watch = watch_with(sent)
    watch.stored()  # nothing to tell
    for n in range(5):
        error = DatabaseUnavailable(f"database file /d cannot grow ({n})", where="/d")
        watch.failed(error)
        watch.failed(error)  # told by the store and again by the handler: one failure
    assert watch.down
    watch.stored()
    watch.stored()
    await asyncio.sleep(0)
    assert not watch.down
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cannot grow (0)" in warnings[0]
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert infos == ["the database stores again, after 10 s and 5 failed saves"]
    assert [text.split()[0] for _, text in sent] == [
        "operator-database-down",
        "operator-database-back",
    ]
    assert all(chat_id == 4242 for chat_id, _ in sent)


async def test_a_conflict_is_no_outage_and_no_operator_chat_means_the_log_only() -> None:
    sent: list[tuple[int, str]] = []
    watch = watch_with(sent, operator=None)
    watch.failed(Conflict("game 1 was saved by another writer"))
    assert not watch.down
    watch.failed(DatabaseBusy("another process held its write lock for more than 2000 ms"))
    assert watch.down  # a lock held past the busy timeout is an outage (until a save)
    watch.stored()
    assert not watch.down
    watch.failed(DatabaseUnavailable("database file /d cannot grow", where="/d"))
    assert watch.down
    watch.stored()
    await asyncio.sleep(0)
    assert sent == []
