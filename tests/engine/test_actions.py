"""Actions: printing and parsing (the text form used in logs and commands)."""

from __future__ import annotations

import copy
import pickle

import pytest

from engine import (
    Action,
    Attack,
    Defend,
    ExchangeTrump,
    Pass,
    Redeal,
    Resign,
    ShowTrump,
    Take,
    Transfer,
    parse_action,
)
from tests.engine.conftest import c, deck, raises_value_error

EXAMPLES: list[tuple[Action, str]] = [
    (Attack(c("7♠")), "attack 7♠"),
    (Attack(c("10♥")), "attack 10♥"),
    (Defend(c("7♠"), c("9♠")), "defend 7♠ 9♠"),
    (Defend(c("Q♦"), c("6♥")), "defend Q♦ 6♥"),
    (Transfer(c("7♥")), "transfer 7♥"),
    (ShowTrump(c("7♦")), "show 7♦"),
    (Take(), "take"),
    (Pass(), "pass"),
    (Resign(), "resign"),
    (ExchangeTrump(), "exchange"),
    (Redeal(), "redeal"),
]


@pytest.mark.parametrize(("action", "text"), EXAMPLES, ids=[t for _, t in EXAMPLES])
def test_actions_print(action: Action, text: str) -> None:
    """Actions: str(action) is the documented text."""
    assert str(action) == text


@pytest.mark.parametrize(("action", "text"), EXAMPLES, ids=[t for _, t in EXAMPLES])
def test_actions_parse(action: Action, text: str) -> None:
    """Actions: parse_action and Action.parse invert str."""
    assert parse_action(text) == action
    assert Action.parse(text) == action
    assert type(parse_action(text)) is type(action)


@pytest.mark.parametrize(("action", "text"), EXAMPLES, ids=[t for _, t in EXAMPLES])
def test_actions_survive_pickle_and_copy(action: Action, text: str) -> None:
    """Actions: values that pickle and copy to an equal action (in the compiled engine too,
    whose frozen classes take no state once made)."""
    for again in (pickle.loads(pickle.dumps(action)), copy.copy(action), copy.deepcopy(action)):
        assert again == action
        assert type(again) is type(action)


@pytest.mark.parametrize("thing", [None, 5, b"take", ["take"], 7.0])
def test_actions_parse_refuses_what_is_not_text_with_value_error(thing: object) -> None:
    """Actions: not text at all is a ValueError too, as it is for malformed text."""
    with raises_value_error():
        parse_action(thing)


def test_actions_round_trip_every_card() -> None:
    """Actions: print/parse round trip for every card in every card action."""
    cards = deck(52)
    for i, card in enumerate(cards):
        other = cards[(i * 7 + 3) % len(cards)]
        for action in (Attack(card), Transfer(card), ShowTrump(card), Defend(card, other)):
            assert parse_action(str(action)) == action


def test_actions_parse_accepts_other_card_spellings() -> None:
    """Actions: the cards inside an action may use any accepted spelling."""
    assert parse_action("attack 7S") == Attack(c("7♠"))
    assert parse_action("defend 10h qh") == Defend(c("10♥"), c("Q♥"))
    assert parse_action("transfer TH") == Transfer(c("10♥"))


def test_actions_are_frozen_and_hashable() -> None:
    """Actions: frozen dataclasses, equal by value."""
    assert Attack(c("7♠")) == Attack(c("7♠"))
    assert Attack(c("7♠")) != Transfer(c("7♠"))
    assert len({Take(), Take(), Pass()}) == 2
    action = Attack(c("7♠"))
    with pytest.raises((AttributeError, TypeError)):
        action.card = c("8♠")  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "attack",
        "attack 7X",
        "defend 7♠",
        "defend 7♠ 9♠ 10♠",
        "jump",
        "take 7♠",
        "show",
        "pass x",
    ],
)
def test_actions_malformed_text_is_value_error(text: str) -> None:
    """Actions: malformed text raises ValueError."""
    with raises_value_error():
        parse_action(text)
