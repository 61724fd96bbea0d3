"""What one player knows, and deals that agree with it.

`observe(game, me)` is the only place a computer player reads a `Game`: it takes
`game.view(me)`, the public history, the public discard pile, the rules and the seat
order, and nothing else (no other hand, no stock). Everything a computer player
decides follows from the `Knowledge` it returns.

`Knowledge.sample(rng)` deals the unseen cards at random, consistently with it (known
cards stay with their holders, ranks a player surely lacks are avoided, the face-up
trump stays under the stock), giving a full-information `Sim` to search.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.actions import Action
from engine.ai.sim import RANK_OF_BIT, Bout, Context, Sim, bits, context
from engine.ai.tracker import replay, silent
from engine.cards import Card, Suit, bits_of, deck
from engine.rules import Rules
from engine.view import GameView

if TYPE_CHECKING:
    from engine.game import Game


@dataclass(frozen=True, slots=True)
class Knowledge:
    """One player's information, with seats (indexes into `players`) and card bitmasks."""

    me: int
    players: tuple[str, ...]
    rules: Rules
    trump: Suit
    trump_card: Card | None
    """The face-up trump card (public even after it is drawn)."""
    hand: int
    counts: tuple[int, ...]
    known: tuple[int, ...]
    """Per seat, the cards known to be in that hand (the viewer's: the whole hand)."""
    lacks: tuple[int, ...]
    """Per seat, cards of ranks that hand surely holds no unknown card of."""
    unseen: int
    """The cards whose place is unknown: in other hands (outside `known`) or face down in
    the stock."""
    stock_size: int
    active: tuple[int, ...]
    bout: Bout
    legal: tuple[Action, ...]
    exact: bool
    """Whether the public history was read (False: a set-up position, known from the view)."""

    @property
    def me_name(self) -> str:
        return self.players[self.me]

    def hidden_stock(self) -> int:
        """Face-down stock cards (the face-up trump is known to lie under them)."""
        return max(0, self.stock_size - 1) if self.trump_card is not None else self.stock_size

    def needs(self) -> list[int]:
        """Per seat, how many of its cards are unknown."""
        return [
            0 if seat == self.me else max(0, count - known.bit_count())
            for seat, (count, known) in enumerate(zip(self.counts, self.known, strict=True))
        ]

    def perfect(self) -> bool:
        """Whether only one deal agrees with this knowledge (the stock is empty and the unseen
        cards all belong to one hand)."""
        needs = self.needs()
        holders = [n for n in needs if n]
        return self.stock_size == 0 and len(holders) <= 1 and sum(needs) == self.unseen.bit_count()

    def sample(self, rng: random.Random, ctx: Context) -> Sim:
        """A full deal that agrees with this knowledge, as a `Sim`, drawn with `rng`."""
        pool = bits(self.unseen)
        rng.shuffle(pool)
        hands = list(self.known)
        needs = self.needs()
        for seat in sorted(range(len(hands)), key=lambda s: -self.lacks[s].bit_count()):
            hands[seat] |= _take(pool, needs[seat], self.lacks[seat])
        stock = pool[: self.hidden_stock()]
        if self.stock_size and self.trump_card is not None:
            stock.insert(0, self.trump_card.bit)
        return Sim.restore(ctx, hands, stock, list(self.active), self.bout)

    def context(self) -> Context:
        """The constants for a `Sim` of this game."""
        return context(self.rules, self.trump)


def _take(pool: list[int], count: int, avoid: int) -> int:
    """Remove `count` cards from `pool`, those outside `avoid` first; return them as a mask."""
    if count <= 0:
        return 0
    chosen = [c for c in pool if not c & avoid][:count]
    if len(chosen) < count:
        chosen += [c for c in pool if c & avoid][: count - len(chosen)]
    taken = 0
    for c in chosen:
        taken |= c
    pool[:] = [c for c in pool if not c & taken]
    return taken


def _ranks(cards: int) -> int:
    """Every card of a rank among `cards`."""
    out = 0
    for card in bits(cards):
        out |= RANK_OF_BIT[card]
    return out


def observe(game: Game, me: str) -> Knowledge:
    """What `me` knows: the own view, the public history, the public discard pile."""
    view = game.view(me)
    players = game.players
    seat = {p: i for i, p in enumerate(players)}
    h = replay(game.history, players, game.rules, view)
    hand = bits_of(view.hand or ())
    known = [h.known[p] & ~hand if h else 0 for p in players]
    known[seat[me]] = hand
    table = bits_of(c for pair in view.table for c in pair if c is not None)
    lacks = [h.lacks[p] if h else 0 for p in players]
    for p in silent(game.rules, view):
        lacks[seat[p]] |= _ranks(table)
    face_up = view.trump_card.bit if view.trump_card and view.stock_size else 0
    seen = table | bits_of(game.discard) | face_up
    for k in known:
        seen |= k
    return Knowledge(
        me=seat[me],
        players=players,
        rules=game.rules,
        trump=view.trump_suit,
        trump_card=view.trump_card,
        hand=hand,
        counts=tuple(view.hand_counts[p] for p in players),
        known=tuple(known),
        lacks=tuple(lacks),
        unseen=bits_of(deck(game.rules.deck_size)) & ~seen,
        stock_size=view.stock_size,
        active=tuple(seat[p] for p in view.active_players),
        bout=_bout(view, seat, h.shown if h else 0),
        legal=view.legal,
        exact=h is not None,
    )


def _bout(view: GameView, seat: dict[str, int], shown: int) -> Bout:
    """The bout under way, with seats and card bits."""
    return Bout(
        attacker=seat[view.attacker],
        defender=seat[view.defender],
        opener=seat[view.bout_opener],
        attacks=tuple(a.bit for a, _ in view.table),
        defences=tuple(d.bit if d else 0 for _, d in view.table),
        limit=view.limit,
        took=view.defender_took,
        passed=sum(1 << seat[p] for p in view.passed),
        first_bout=view.first_bout,
        shown=shown,
    )
