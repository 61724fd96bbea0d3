"""The rule options of docs/rules.md as one frozen value, with named presets.

Variants are data: every difference between the seeds is a field of `Rules`,
and the engine reads these fields; nothing else switches rules.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, model_validator

from engine.cards import DECK_LOWEST_RANK

ThrowIn = Literal["all", "neighbours", "neighbours_at_5"]
NoTrumpStart = Literal["redeal", "random"]
SeriesStart = Literal["lowest_trump", "attack_durak", "after_durak"]
DeckSize = Literal[24, 32, 36, 52]
PresetName = Literal["classic", "perevodnoy", "online", "short"]

MAX_BOUT_CARDS = 6  # R10: never more than six attack cards in a bout


class Rules(BaseModel):
    """Every option of docs/rules.md. The defaults are the `classic` preset."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    deck_size: DeckSize = 36  # R1
    hand_size: int = 6  # R3, R4, R15
    throw_in: ThrowIn = "all"  # R9
    first_bout_limit: Literal[5, 6] = 5  # R10
    transfer: bool = False  # R14
    transfer_by_showing_trump: bool = False  # R14
    trump_exchange: bool = False  # R19
    no_trump_start: NoTrumpStart = "redeal"  # R5
    series_start: SeriesStart = "lowest_trump"  # R5
    redeal_on_flush: bool = False  # R6

    @model_validator(mode="after")
    def _check(self) -> Self:
        if not 1 <= self.hand_size <= self.deck_size // 2:
            raise ValueError(
                f"hand_size {self.hand_size} does not fit a {self.deck_size}-card deck "
                f"(1 to {self.deck_size // 2})"
            )
        if self.transfer_by_showing_trump and not self.transfer:
            raise ValueError("transfer_by_showing_trump needs transfer to be on")
        return self

    @classmethod
    def preset(cls, name: str) -> Rules:
        """One of `classic`, `perevodnoy`, `online`, `short` (docs/rules.md, Presets)."""
        try:
            return PRESETS[name]  # type: ignore[index]
        except KeyError:
            raise ValueError(
                f"unknown preset {name!r}: choose one of {', '.join(PRESETS)}"
            ) from None

    @property
    def max_players(self) -> int:
        """R3: 2 to deck_size // hand_size players."""
        return self.deck_size // self.hand_size

    @property
    def lowest_rank(self) -> int:
        return DECK_LOWEST_RANK[self.deck_size]

    def check_players(self, count: int) -> None:
        """R3. Raises `ValueError` with a clear message when `count` players cannot play."""
        if count < 2:
            raise ValueError(f"Durak needs at least 2 players, not {count}")
        if count > self.max_players:
            raise ValueError(
                f"{count} players cannot play with {self.deck_size} cards and hands of "
                f"{self.hand_size}: at most {self.max_players}"
            )

    def preset_name(self) -> str | None:
        """The preset these rules equal, if any."""
        for name, rules in PRESETS.items():
            if rules == self:
                return name
        return None


PRESETS: dict[PresetName, Rules] = {
    "classic": Rules(),
    "perevodnoy": Rules(transfer=True),
    "online": Rules(throw_in="neighbours_at_5", first_bout_limit=6, no_trump_start="random"),
    "short": Rules(deck_size=32),
}
