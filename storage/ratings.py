"""Ratings: openskill's Plackett-Luce model over finished games.

A finished game ranks its players by when they went out (`Participant.place`: first out
first, the durak last); a draw ranks everyone equal. Ratings are kept per chat and over
all chats, updated when a game is recorded, and can be recomputed from the stored games:
both run the same function over the same games in the same order (by id), so they agree
exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from openskill.models import PlackettLuce

from storage.records import FinishedGame

MODEL: Final = PlackettLuce()
DEFAULT_MU: Final = MODEL.mu
DEFAULT_SIGMA: Final = MODEL.sigma


@dataclass(frozen=True, slots=True)
class Skill:
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    @property
    def rating(self) -> float:
        """The number shown: a conservative estimate (mu - 3 sigma), 0 for a newcomer."""
        return self.mu - 3 * self.sigma


def ranks(result: FinishedGame) -> list[int]:
    """Rank per participant in seat order: place (durak last); all equal in a draw."""
    if result.draw:
        return [1] * len(result.participants)
    return [p.place for p in result.participants]


def rate(skills: Sequence[Skill], game_ranks: Sequence[int]) -> list[Skill]:
    """New skills after one game (lower rank is better)."""
    teams = [[MODEL.rating(mu=s.mu, sigma=s.sigma)] for s in skills]
    rated = MODEL.rate(teams, ranks=list(game_ranks))
    return [Skill(team[0].mu, team[0].sigma) for team in rated]
