"""The bot's own state of a game (`GameRecord.meta`): typed, versioned, and stored as JSON.

Storage keeps it with the game and knows its shape, so that every reader gets the same
typed value and a stored game of an older release still loads:

- **version 1** (before `v` was written): a plain JSON object with the same keys, each
  optional, written by the bot as it pleased. Values of the wrong type (a damaged row, a
  hand-edited database) read as the field's default rather than stopping the game.
- **version 2** (`"v": 2`): the same keys, written only when they differ from the default.

Keys this release does not know (written by a newer one) are kept in `extra` and written
back as they were, so that a rollback loses nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

META_VERSION: Final = 2

Departure = Literal["resigned", "timed_out", "kicked", "left"]
"""How a player left a running game before its end (R18)."""
DEPARTURES: Final[tuple[Departure, ...]] = get_args(Departure)

LogKind = Literal[
    "attack",  # the bout's first card (R8)
    "add",  # a card thrown in (R9)
    "defend",
    "transfer",
    "show",  # a transfer by showing the trump (R14)
    "take",
    "pass",
    "beaten",
    "picked",
    "out",
    "exchange",
    "resign",
    "redeal",
    "timeout",  # the bot moved for a player whose time ran out
    "removed",  # removed after three timeouts in a row
    "kicked",
    "left",  # left the group
]
LOG_KINDS: Final[frozenset[str]] = frozenset(get_args(LogKind))


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One event of the table's log of recent events, stored with the game so that the
    table reads the same after a restart. ``cards`` names the cards the event made public:
    played, covered, transferred with, shown (R14), beaten off, picked up, exchanged (R19);
    never a card only a hand holds. Entries stored before cards were named have none."""

    kind: LogKind
    player: str | None = None
    target: str | None = None  # a transfer's new defender
    count: int | None = None  # cards beaten off or picked up
    cards: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"e": self.kind}
        if self.player is not None:
            out["p"] = self.player
        if self.target is not None:
            out["to"] = self.target
        if self.count is not None:
            out["n"] = self.count
        if self.cards:
            out["c"] = list(self.cards)
        return out

    @classmethod
    def from_json(cls, value: Any) -> LogEntry | None:
        """The entry stored as `value`; None for one this release cannot read."""
        if not isinstance(value, Mapping) or value.get("e") not in LOG_KINDS:
            return None
        count = value.get("n")
        return cls(
            kind=value["e"],
            player=_text_or_none(value.get("p")),
            target=_text_or_none(value.get("to")),
            count=count if isinstance(count, int) and not isinstance(count, bool) else None,
            cards=tuple(_list_of(value.get("c"), str)),
        )


@dataclass(kw_only=True, slots=True)
class GameMeta:
    """What the bot keeps about a game besides the engine's state.

    ``title``: the group's title when the lobby opened (practice: the practice title).
    ``opener``: the name of who has the lobby's say (Start, Cancel, computers).
    ``turn_timeout``: seconds per move for this game (0: none); None: the bot's default.
    ``throw_in_window``: seconds the players who could still throw in get once all is
    covered or taken (0: none, they are waited for); None: the default, 5.
    ``langs``: each player's language, for their hand. ``log``: the table's recent events.
    ``left``: how players left before the end (R18). ``blocked``: players who blocked the bot
    (their hand is not sent). ``quiet``: players who switched turn alerts off (a
    turn after a pause then comes as an edit, not as a new message). ``invited``: users
    given the Join link (may join without being members). ``asked``: the people of the game
    this lobby was opened again from (Play again), by player id and name: invited to Join,
    seated only once they do. ``practice``: a game against computers in a private chat,
    unranked.
    ``previous_durak``: the durak of the game this one was played again from (R7).
    ``again_of``: the game whose players' "Ready" taps (Play again) fill this lobby, while
    it waits to start by itself (its deadline: the minute after the first tap).
    ``warned``: the current turn's half-time warning went out. ``warnings``: the message id
    of each player's half-time warning in their private chat, deleted once the game moves
    on (kept here so that a leader after a restart deletes it too). ``questions``: the
    /leave and /kick questions in the group not yet answered, deleted when the game ends;
    ``private_questions``: each player's /leave question asked in their private chat (its
    message id), likewise.
    ``grace_move``: the move that
    was given extra time after a restart, a change of leader or a database outage,
    ``graces`` times. ``result_floor``: the latest message the bot knew in the game's chat
    when the game ended, after which its result lands (a start that posts a result whose id
    was never stored deletes the copies found after it).
    """

    title: str = ""
    opener: str = ""
    turn_timeout: int | None = None
    throw_in_window: int | None = None
    langs: dict[str, str] = field(default_factory=dict)
    log: list[LogEntry] = field(default_factory=list)
    left: dict[str, Departure] = field(default_factory=dict)
    blocked: list[str] = field(default_factory=list)
    quiet: list[str] = field(default_factory=list)
    invited: list[int] = field(default_factory=list)
    asked: dict[str, str] = field(default_factory=dict)
    practice: bool = False
    previous_durak: str | None = None
    again_of: int | None = None
    warned: bool = False
    warnings: dict[str, int] = field(default_factory=dict)
    questions: list[int] = field(default_factory=list)
    private_questions: dict[str, int] = field(default_factory=dict)
    grace_move: int | None = None
    graces: int = 0
    result_floor: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of a newer release, kept as they were."""

    def to_json(self) -> dict[str, Any]:
        """The stored form (version 2): only what differs from the default."""
        out: dict[str, Any] = {**self.extra, "v": META_VERSION}
        if self.title:
            out["title"] = self.title
        if self.opener:
            out["opener"] = self.opener
        if self.turn_timeout is not None:
            out["turn_timeout"] = self.turn_timeout
        if self.throw_in_window is not None:
            out["throw_in_window"] = self.throw_in_window
        if self.langs:
            out["langs"] = self.langs
        if self.log:
            out["log"] = [entry.to_json() for entry in self.log]
        if self.left:
            out["left"] = self.left
        if self.blocked:
            out["blocked"] = self.blocked
        if self.quiet:
            out["quiet"] = self.quiet
        if self.invited:
            out["invited"] = self.invited
        if self.asked:
            out["asked"] = self.asked
        if self.practice:
            out["practice"] = True
        if self.previous_durak is not None:
            out["previous_durak"] = self.previous_durak
        if self.again_of is not None:
            out["again_of"] = self.again_of
        if self.warned:
            out["warned"] = True
        if self.warnings:
            out["warnings"] = self.warnings
        if self.questions:
            out["questions"] = self.questions
        if self.private_questions:
            out["private_questions"] = self.private_questions
        if self.grace_move is not None:
            out["grace_move"] = self.grace_move
            out["graces"] = self.graces  # (an older release wrote grace_move alone: one)
        if self.result_floor is not None:
            out["result_floor"] = self.result_floor
        return out

    @classmethod
    def from_json(cls, value: Any) -> GameMeta:
        """Read a stored meta object of version 1 or 2 (see the module's docstring)."""
        if not isinstance(value, Mapping):
            return cls()
        langs = value.get("langs")
        asked = value.get("asked")
        left = value.get("left")
        log = value.get("log")
        warnings = value.get("warnings")
        questions = value.get("questions")
        private_questions = value.get("private_questions")
        return cls(
            title=_text(value.get("title")),
            opener=_text(value.get("opener")),
            turn_timeout=_int_or_none(value.get("turn_timeout")),
            throw_in_window=_int_or_none(value.get("throw_in_window")),
            langs={str(k): v for k, v in langs.items() if isinstance(v, str)}
            if isinstance(langs, Mapping)
            else {},
            log=[e for item in log if (e := LogEntry.from_json(item)) is not None]
            if isinstance(log, list)
            else [],
            left={str(k): v for k, v in left.items() if v in DEPARTURES}
            if isinstance(left, Mapping)
            else {},
            blocked=_list_of(value.get("blocked"), str),
            quiet=_list_of(value.get("quiet"), str),
            invited=_list_of(value.get("invited"), int),
            asked={str(k): v for k, v in asked.items() if isinstance(v, str)}
            if isinstance(asked, Mapping)
            else {},
            practice=value.get("practice") is True,
            previous_durak=_text_or_none(value.get("previous_durak")),
            again_of=_int_or_none(value.get("again_of")),
            warned=value.get("warned") is True,
            warnings=_message_ids(warnings),
            questions=[v for v in questions if isinstance(v, int) and not isinstance(v, bool)]
            if isinstance(questions, list)
            else [],
            private_questions=_message_ids(private_questions),
            grace_move=_int_or_none(value.get("grace_move")),
            graces=_graces(value),
            result_floor=_int_or_none(value.get("result_floor")),
            extra={k: v for k, v in value.items() if k not in _KNOWN},
        )


def _message_ids(value: Any) -> dict[str, int]:
    """A stored {player id: message id} (warnings, private questions), what is valid of it."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


_DROPPED: Final = frozenset({"heard"})
"""Keys an earlier release wrote and this one no longer keeps (``heard``: when each player
last tapped, for workers that did not see the tap): read and left out."""

_KNOWN: Final = (
    frozenset({"v", *(name for name in GameMeta.__dataclass_fields__ if name != "extra")})
    | _DROPPED
)


def _graces(value: Mapping[str, Any]) -> int:
    """How many graces ``grace_move`` had: stored with it, or one where an older release
    kept no count; none without a grace_move."""
    if _int_or_none(value.get("grace_move")) is None:
        return 0
    count = _int_or_none(value.get("graces"))
    return 1 if count is None else count


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.strip().lstrip("-").isdigit():
        return int(value)  # version 1 took whatever a setting held
    return None


def _list_of(value: Any, kind: type) -> list[Any]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, kind) and not isinstance(item, bool)]
