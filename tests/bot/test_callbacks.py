"""Callback data: compact, round-trips, and refuses anything it did not make."""

from __future__ import annotations

import pytest

from bot.callbacks import (
    MAX_CALLBACK_BYTES,
    AgainData,
    BadCallback,
    CardTap,
    LobbyData,
    MoveData,
    Refresh,
    SettingsData,
    decode,
    encode_again,
    encode_lobby,
    encode_move,
    encode_settings,
)
from engine import (
    ALL_CARDS,
    Card,
    Defend,
    ExchangeTrump,
    Pass,
    Redeal,
    ShowTrump,
    Take,
    Transfer,
)

BIG_GAME = 10**12 - 1
BIG_MOVE = 999_999


def test_every_move_round_trips_and_fits_64_bytes() -> None:
    intents = [CardTap(c) for c in ALL_CARDS] + [
        Defend(Card.parse("A♠"), Card.parse("2♣")),
        Transfer(Card.parse("10♥")),
        ShowTrump(Card.parse("6♦")),
        Take(),
        Pass(),
        ExchangeTrump(),
        Redeal(),
        Refresh(),
    ]
    for intent in intents:
        data = encode_move(BIG_GAME, BIG_MOVE, intent)
        assert len(data.encode()) <= MAX_CALLBACK_BYTES
        assert decode(data) == MoveData(BIG_GAME, BIG_MOVE, intent)


def test_lobby_and_again_round_trip() -> None:
    for op in ("join", "leave", "start", "cancel"):
        assert decode(encode_lobby(7, op)) == LobbyData(7, op)  # type: ignore[arg-type]
    assert decode(encode_again(7)) == AgainData(7)


def test_settings_steps_and_choices_round_trip() -> None:
    assert decode(encode_settings("d")) == SettingsData("d")
    assert decode(encode_settings("l", "ru")) == SettingsData("l", "ru")  # the language
    assert decode(encode_settings("n", "g")) == SettingsData("n", "g")  # private alerts
    assert decode("Sl") == SettingsData("l")  # a menu's from before the choices: still read


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        "m1.2",
        "m1.2.c52",
        "m1.2.d1",
        "m1.2.T5",
        "m1.2.Z",
        "m1.2.R",  # no resign from a hand: only /leave's confirmed question resigns
        "l1.k",
        "a",
        "x" * 65,
        "m-1.2.T",
        "m1.2.c1-2",
        "\u0000",
        "m1.2.r3",
        "Slxx",  # no such language
        "Sdru",  # a step takes no value
        "Snq",
        "Sz1",
    ],
)
def test_forged_data_is_refused(data: str | None) -> None:
    with pytest.raises(BadCallback):
        decode(data)
