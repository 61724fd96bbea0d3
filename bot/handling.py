"""The Telegram update being handled, for webhook mode (`bot.telegram.webhook`).

A webhook answers Telegram 200 only once the update's changes are committed, and Telegram
delivers an update again when it got no 200 (a worker that died after its commit, say). So
the update's id is stored with its changes: the webhook sets `Handling` for the task that
handles the update (`handling`), the store writes the id in the transaction of the update's
first save (`pending`, `recorded`), and the handlers say when the database could not store
(`failed`: the webhook then answers 503 and Telegram delivers the update again later).

Only the task that handles the update sees it: work it starts beside (a computer's move, a
reload) inherits the context but not the update. In polling mode nothing is set, and
everything here does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from storage import DatabaseBusy, DatabaseUnavailable, DatabaseUnreachable, StorageError

OUTAGES = (DatabaseUnavailable, DatabaseUnreachable, DatabaseBusy)
"""Errors of a database that cannot store now: the update is worth delivering again later."""


@dataclass(slots=True)
class Handling:
    """One update being handled: its id, whether the id is stored yet, and the outage that
    kept its changes from being stored (None: none)."""

    update_id: int
    task: asyncio.Task[object] | None = field(default_factory=asyncio.current_task)
    recorded: bool = False
    outage: StorageError | None = None


_current: ContextVar[Handling | None] = ContextVar("handling", default=None)


@contextlib.contextmanager
def handling(update_id: int) -> Iterator[Handling]:
    """Handle update `update_id` in the current task."""
    state = Handling(update_id)
    token = _current.set(state)
    try:
        yield state
    finally:
        _current.reset(token)


def pending() -> Handling | None:
    """The update this task handles, if its id is still to be stored with a save."""
    state = _current.get()
    if state is None or state.recorded or state.task is not asyncio.current_task():
        return None
    return state


def failed(error: BaseException) -> None:
    """A handler could not store the update's changes: if the database cannot store now,
    the update is to be delivered again."""
    state = _current.get()
    if state is not None and state.task is asyncio.current_task() and isinstance(error, OUTAGES):
        state.outage = error
