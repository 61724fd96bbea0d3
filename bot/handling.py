"""The Telegram update being handled, for webhook mode (`bot.telegram.inbox`).

In webhook mode every update Telegram posts is stored in the inbox first, and the leader
handles it from there and marks it handled with its changes, so that a change and its update
are committed together and nothing is handled twice (a leader that died after its commit
leaves the update marked). The inbox's reader sets `Handling` for the task that handles the
update (`handling`), the store marks it in the transaction of the update's first save
(`pending`, `recorded`), and the handlers say when the database could not store (`failed`:
the update stays in the inbox and is handled again later, so the handler tells the person
so rather than "nothing happened").

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

from bot.telegram.request import NotLeading
from storage import DatabaseBusy, DatabaseUnavailable, DatabaseUnreachable, Fenced

OUTAGES = (DatabaseUnavailable, DatabaseUnreachable, DatabaseBusy, Fenced, NotLeading)
"""Errors of a database that cannot store now (or of a worker that does not lead now): the
update is worth handling again later, by this leader or the next."""


@dataclass(slots=True)
class Handling:
    """One update being handled: its id, whether the id is stored yet, and the outage that
    kept its changes from being stored (None: none)."""

    update_id: int
    task: asyncio.Task[object] | None = field(default_factory=asyncio.current_task)
    recorded: bool = False
    outage: Exception | None = None


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


def failed(error: BaseException) -> bool:
    """A handler could not store the update's changes. True if the update is kept to be
    handled again later (webhook mode, and the database cannot store now): then nothing is
    lost, and the person should hear that, not "nothing happened"."""
    state = _current.get()
    if state is not None and state.task is asyncio.current_task() and isinstance(error, OUTAGES):
        state.outage = error
        return True
    return False
