"""The bot's count of its calls (`bot.delivery.budget.Budgets`, #18): a call counts in its
chat's window from when its answer came, since Telegram may have counted it as late as
that (a call started by a busy process reaches Telegram late)."""

from __future__ import annotations

import pytest

from bot.delivery.budget import SLACK, Budgets, Limits, Window

LIMITS = Limits(private=Window(3, 3.0))


def test_a_call_counts_in_its_chats_window_from_its_answer() -> None:
    budgets = Budgets(LIMITS)
    for at in (0.0, 0.1, 0.2):
        budgets.note(7, at)
    assert budgets.chat_ready_at(7, 0.3) == pytest.approx(3.0 + SLACK)
    budgets.answered(7, 0.0, 0.9)  # the first one's answer came late: it arrived by then
    assert budgets.chat_ready_at(7, 0.3) == pytest.approx(0.1 + 3.0 + SLACK)  # now the second
    budgets.note(7, 3.2)
    budgets.note(7, 3.3)  # (the second and third have left the window by then)
    assert budgets.chat_ready_at(7, 3.3) == pytest.approx(0.9 + 3.0 + SLACK)  # the first's answer


def test_an_answer_at_once_changes_nothing_and_other_chats_are_apart() -> None:
    budgets = Budgets(LIMITS)
    for at in (0.0, 0.1, 0.2):
        budgets.note(7, at)
    budgets.answered(7, 0.1, 0.1)
    budgets.answered(8, 0.0, 5.0)  # no such call: nothing
    assert budgets.chat_ready_at(7, 0.3) == pytest.approx(3.0 + SLACK)
    assert budgets.chat_ready_at(8, 0.3) == 0.3


def test_calls_another_process_made_are_counted_as_its_own() -> None:
    """A leader that takes over (or a restart) counts what the one before sent in the
    windows still open: as ages, the bot's own window under chat 0, a 429 pause as what is
    left of it."""
    before = Budgets(LIMITS)
    for at in (10.0, 10.5, 11.0):
        before.note(7, at)
    before.note(-5, 11.0)
    before.pause(8, 11.0, 4.0)
    recent = before.recent(11.5)
    assert recent[7] == [1.5, 1.0, 0.5]
    assert recent[-5] == [0.5] and recent[0][-1] == 0.5
    assert recent[8] == [-3.5]  # paused for 3.5 s more
    after = Budgets(LIMITS)
    after.carry(recent, 100.0)  # its own clock: the same moment is 100.0 there
    assert after.chat_ready_at(7, 100.0) == pytest.approx(98.5 + 3.0 + SLACK)
    assert after.chat_ready_at(8, 100.0) == pytest.approx(103.5)
    assert after.chat_ready_at(9, 100.0) == 100.0  # a chat it never sent to: free
    assert before.recent(80.0) == {}  # every window closed: nothing to carry
