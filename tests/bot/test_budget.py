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
