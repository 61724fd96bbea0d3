"""Compact callback data for inline buttons (Telegram allows 64 bytes).

Game buttons carry the game id and the move number they were drawn at, so a tap
on an old keyboard is recognised as stale and changes nothing:

    m<game>.<move>.<code>    code: c<i> tap card i, d<a>-<c> cover card a with c,
                             t<i> transfer, s<i> show trump, T take, P pass,
                             X exchange trump, D redeal, r refresh (no resign: that is
                             /leave's question, `q<game>.<user>`)
    l<game>.<op>             lobby: j join, q leave, s start, x cancel, a[<level>] add computer
                             (without a level: show the levels), r redraw, i post the rules,
                             h post how to play
    H                        /help's "How to play": the rules in force in the message's chat
    a<game>                  play again (a new lobby with the same players)
    S<option>[<value>]       /settings menu: step an option (the chat is the message's),
                             or choose a value: l<language> (Slru), in the private menu
                             n<y|n|g> turn alerts on, off, as each group sets it; z Done.
                             Menus sent before the choices were buttons carry Sl and, in
                             private, Sn alone: they decode, and the menu is drawn anew.
    k<game>.<user>[.n]       /kick confirmed by an admin (.n: No, the question withdrawn)
    q<game>.<user>[.n]       /leave confirmed by that user (.n: No, they play on)
    P<n><level>              /practice against n computer players (e, m or h)

Anything else is forged or from another bot version: `decode` raises `BadCallback`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from bot.house_rules import LANGUAGES, PERSONAL_ALERTS
from engine import (
    Action,
    Attack,
    Card,
    Defend,
    ExchangeTrump,
    Pass,
    Redeal,
    ShowTrump,
    Take,
    Transfer,
)

MAX_CALLBACK_BYTES: Final = 64

LobbyOp = Literal["join", "leave", "start", "cancel", "add", "remove", "refresh", "rules", "howto"]
_LOBBY_OPS: Final[dict[str, LobbyOp]] = {
    "j": "join",
    "q": "leave",
    "s": "start",
    "x": "cancel",
    "a": "add",
    "d": "remove",
    "r": "refresh",
    "i": "rules",
    "h": "howto",
}
_LOBBY_CODES: Final = {v: k for k, v in _LOBBY_OPS.items()}


class BadCallback(ValueError):
    """Callback data this bot did not make (forged, corrupted or from an old version)."""


@dataclass(frozen=True, slots=True)
class CardTap:
    """The player tapped a card; what it means is decided against the legal actions."""

    card: Card


@dataclass(frozen=True, slots=True)
class Refresh:
    """Re-send the current keyboard."""


@dataclass(frozen=True, slots=True)
class MoveData:
    game_id: int
    move: int
    intent: Action | CardTap | Refresh


@dataclass(frozen=True, slots=True)
class LobbyData:
    game_id: int
    op: LobbyOp
    arg: str = ""


@dataclass(frozen=True, slots=True)
class AgainData:
    game_id: int


@dataclass(frozen=True, slots=True)
class SettingsData:
    option: str
    value: str = ""
    """A choice (a language, a player's turn alerts); empty for a step or Done."""


@dataclass(frozen=True, slots=True)
class HowtoData:
    """/help's "How to play" button: which chat it answers for is the message's."""


_HOWTO: Final = "H"


@dataclass(frozen=True, slots=True)
class KickData:
    game_id: int
    user_id: int
    no: bool = False  # the question's No: nobody is removed


@dataclass(frozen=True, slots=True)
class LeaveData:
    game_id: int
    user_id: int
    no: bool = False  # the question's No: the player plays on


@dataclass(frozen=True, slots=True)
class PracticeData:
    opponents: int
    level: str


_LEVEL_CODES: Final = {"e": "easy", "m": "medium", "h": "hard"}


def encode_practice(opponents: int, level: str) -> str:
    return f"P{opponents}{level[0]}"


CallbackData = (
    MoveData
    | LobbyData
    | AgainData
    | SettingsData
    | KickData
    | LeaveData
    | PracticeData
    | HowtoData
)

_SIMPLE: Final[dict[str, Action]] = {
    "T": Take(),
    "P": Pass(),
    "X": ExchangeTrump(),
    "D": Redeal(),
}
_SIMPLE_CODES: Final = {type(v): k for k, v in _SIMPLE.items()}

_MOVE = re.compile(r"m(\d{1,12})\.(\d{1,6})\.([A-Za-z])(\d{0,2})(?:-(\d{1,2}))?")
_LOBBY = re.compile(r"l(\d{1,12})\.([jqsxadrih])([a-z]{0,8})")
_AGAIN = re.compile(r"a(\d{1,12})")
_SETTINGS = re.compile(r"S([pdtsifxowlcnz])([a-z]{0,2})")  # z: close the menu
_SETTINGS_CHOICES: Final = {"l": frozenset(LANGUAGES), "n": frozenset(PERSONAL_ALERTS)}
_PRACTICE = re.compile(r"P([1-5])([emh])")
_KICK = re.compile(r"k(\d{1,12})\.(\d{1,15})(\.n)?")
_LEAVE = re.compile(r"q(\d{1,12})\.(\d{1,15})(\.n)?")


def _code(intent: Action | CardTap | Refresh) -> str:
    match intent:
        case CardTap(card=card):
            return f"c{card.index}"
        case Refresh():
            return "r"
        case Defend(attack=attack, card=card):
            return f"d{attack.index}-{card.index}"
        case Transfer(card=card):
            return f"t{card.index}"
        case ShowTrump(card=card):
            return f"s{card.index}"
        case Attack(card=card):
            return f"c{card.index}"
    code = _SIMPLE_CODES.get(type(intent))
    if code is None:
        raise ValueError(f"no callback code for {intent!r}")
    return code


def encode_move(game_id: int, move: int, intent: Action | CardTap | Refresh) -> str:
    return f"m{game_id}.{move}.{_code(intent)}"


def encode_lobby(game_id: int, op: LobbyOp, arg: str = "") -> str:
    return f"l{game_id}.{_LOBBY_CODES[op]}{arg}"


def encode_again(game_id: int) -> str:
    return f"a{game_id}"


def encode_settings(option: str, value: str = "") -> str:
    return f"S{option}{value}"


def encode_howto() -> str:
    return _HOWTO


def encode_kick(game_id: int, user_id: int, *, no: bool = False) -> str:
    return f"k{game_id}.{user_id}" + (".n" if no else "")


def encode_leave(game_id: int, user_id: int, *, no: bool = False) -> str:
    return f"q{game_id}.{user_id}" + (".n" if no else "")


def _card(index: str) -> Card:
    if not index:
        raise BadCallback("card index missing")
    i = int(index)
    if i >= 52:
        raise BadCallback(f"no card {i}")
    return Card.from_index(i)


def decode(data: str | None) -> CallbackData:
    """Parse callback data made by this module; raise `BadCallback` for anything else."""
    if not data or len(data.encode()) > MAX_CALLBACK_BYTES:
        raise BadCallback("empty or oversized callback data")
    if m := _MOVE.fullmatch(data):
        game_id, move, letter, a, b = (
            int(m[1]),
            int(m[2]),
            m[3],
            m[4] or "",
            m[5],
        )
        intent: Action | CardTap | Refresh
        if letter == "c" and b is None:
            intent = CardTap(_card(a))
        elif letter == "d" and b is not None:
            intent = Defend(_card(a), _card(b))
        elif letter == "t" and b is None:
            intent = Transfer(_card(a))
        elif letter == "s" and b is None:
            intent = ShowTrump(_card(a))
        elif letter == "r" and not a and b is None:
            intent = Refresh()
        elif letter in _SIMPLE and not a and b is None:
            intent = _SIMPLE[letter]
        else:
            raise BadCallback(f"unknown move code {data!r}")
        return MoveData(game_id, move, intent)
    if m := _LOBBY.fullmatch(data):
        op = _LOBBY_OPS[m[2]]
        if m[3] and op != "add":  # only "add computer" carries an argument (its level)
            raise BadCallback(f"lobby {op} takes no argument: {data!r}")
        return LobbyData(int(m[1]), op, m[3])
    if m := _AGAIN.fullmatch(data):
        return AgainData(int(m[1]))
    if data == _HOWTO:
        return HowtoData()
    if m := _SETTINGS.fullmatch(data):
        option, value = m[1], m[2]
        if value and value not in _SETTINGS_CHOICES.get(option, ()):
            raise BadCallback(f"no choice {value!r} for option {option!r}")
        return SettingsData(option, value)
    if m := _PRACTICE.fullmatch(data):
        return PracticeData(int(m[1]), _LEVEL_CODES[m[2]])
    if m := _KICK.fullmatch(data):
        return KickData(int(m[1]), int(m[2]), no=bool(m[3]))
    if m := _LEAVE.fullmatch(data):
        return LeaveData(int(m[1]), int(m[2]), no=bool(m[3]))
    raise BadCallback(f"unknown callback data {data!r}")
