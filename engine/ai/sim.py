"""A fast full-information model of a game, for search: the rules of `engine.game` on bitmasks.

`Sim` follows `Game` move for move (a differential test in tests/engine/test_ai.py
checks that they agree on every move, every `to_act` and every outcome), but it is
built for speed: players are seat numbers, cards are `card.bit` integers, a hand is a
bitmask, and `copy` is cheap. It leaves out what search never needs: resigning, the
trump exchange (R19), the flush redeal (R6) and the history.

Who moves: the defender while an attack card is unbeaten and he has not taken (the
engine waits for him alone); otherwise the first waiting attacker clockwise from the
bout's attacker. This sequences the chat's simultaneous throw-ins (R9).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

from engine.cards import ALL_CARDS, RANK_BITS, SUIT_BITS, Suit
from engine.rules import MAX_BOUT_CARDS, Rules

ATTACK: Final = 0
DEFEND: Final = 1
TRANSFER: Final = 2
SHOW: Final = 3
TAKE: Final = 4
PASS: Final = 5

Move = tuple[int, int, int]
"""(kind, card bit, attacked card bit): `(DEFEND, card, attack)`, `(ATTACK, card, 0)`, ..."""

TAKE_MOVE: Final[Move] = (TAKE, 0, 0)
PASS_MOVE: Final[Move] = (PASS, 0, 0)

RANK_OF_BIT: Final[dict[int, int]] = {c.bit: RANK_BITS[c.rank] for c in ALL_CARDS}
"""`card.bit` -> the bitmask of the four cards of its rank."""

TRUMP_BONUS: Final = 20
"""Added to a trump's rank in `Context.cost`."""

DRAW: Final = -1
"""`Sim.durak` after a draw (R17)."""


class Context:
    """Per-rules and per-trump constants shared by every `Sim` of one search."""

    __slots__ = (
        "beaters",
        "cost",
        "first_cap",
        "hand_size",
        "plain_suits",
        "show",
        "throw_in",
        "transfer",
        "trump",
        "trump_bits",
    )

    def __init__(self, rules: Rules, trump: Suit) -> None:
        """Precompute what the rules and the trump fix."""
        self.hand_size = rules.hand_size
        self.first_cap = rules.first_bout_limit
        self.throw_in = rules.throw_in
        self.transfer = rules.transfer
        self.show = rules.transfer_by_showing_trump
        self.trump = trump
        self.trump_bits = SUIT_BITS[trump]
        self.plain_suits = tuple(SUIT_BITS[s] for s in SUIT_BITS if s is not trump)
        self.beaters = {
            a.bit: sum(d.bit for d in ALL_CARDS if d.beats(a, trump)) for a in ALL_CARDS
        }
        """`beaters[attack.bit]`: every card that beats it (R2), as a bitmask."""
        self.cost = {c.bit: c.rank + (TRUMP_BONUS if c.suit is trump else 0) for c in ALL_CARDS}
        """`cost[card.bit]`: what a card is worth keeping; every trump above every plain card."""


@functools.lru_cache(maxsize=64)
def context(rules: Rules, trump: Suit) -> Context:
    """The shared `Context` of a game (built once per rules and trump: it takes a while)."""
    return Context(rules, trump)


@dataclass(frozen=True, slots=True)
class Bout:
    """The public state of the bout under way, with seats and card bits (see `Sim.restore`)."""

    attacker: int
    defender: int
    opener: int
    attacks: tuple[int, ...]
    defences: tuple[int, ...]
    limit: int
    took: bool
    passed: int
    first_bout: bool
    shown: int


class Sim:
    """One game position with every hand known. Seats are 0..n-1 in seat order."""

    __slots__ = (
        "active",
        "attacker",
        "attacks",
        "ctx",
        "defences",
        "defender",
        "durak",
        "elig",
        "first_bout",
        "hands",
        "limit",
        "n",
        "opener",
        "over",
        "passed",
        "rank_bits",
        "shown",
        "stock",
        "table_bits",
        "took",
    )

    ctx: Context
    n: int
    hands: list[int]
    stock: list[int]  # card bits, top at the end; the face-up trump (if any) at index 0
    active: list[int]
    attacker: int
    defender: int
    opener: int
    attacks: list[int]
    defences: list[int]  # 0 while unbeaten
    table_bits: int
    rank_bits: int
    limit: int
    took: bool
    passed: int  # bitmask over seats
    elig: tuple[int, ...]
    first_bout: bool
    shown: int
    over: bool
    durak: int  # the loser's seat, or DRAW

    def __new__(cls) -> Sim:
        return object.__new__(cls)  # an empty position (mypyc refuses object.__new__ elsewhere)

    @classmethod
    def start(
        cls,
        context: Context,
        hands: list[int],
        stock: list[int],
        attacker: int,
        first_bout: bool,
        active: list[int] | None = None,
    ) -> Sim:
        """A position at the start of a bout (`stock` top at the end)."""
        sim = cls.__new__(cls)
        sim.ctx = context
        sim.n = len(hands)
        sim.hands = list(hands)
        sim.stock = list(stock)
        sim.active = list(range(sim.n)) if active is None else list(active)
        sim.attacks, sim.defences = [], []
        sim.table_bits = sim.rank_bits = 0
        sim.shown = 0
        sim.first_bout = first_bout
        sim.over, sim.durak = False, DRAW
        sim.start_bout(attacker)
        return sim

    @classmethod
    def restore(
        cls,
        context: Context,
        hands: list[int],
        stock: list[int],
        active: list[int],
        bout: Bout,
    ) -> Sim:
        """A position in the middle of a bout, as `bout` describes it."""
        sim = cls.__new__(cls)
        sim.ctx, sim.n = context, len(hands)
        sim.hands, sim.stock, sim.active = list(hands), list(stock), list(active)
        sim.attacker, sim.defender, sim.opener = bout.attacker, bout.defender, bout.opener
        sim.attacks, sim.defences = list(bout.attacks), list(bout.defences)
        sim.table_bits = sim.rank_bits = 0
        for card in (*bout.attacks, *bout.defences):
            if card:
                sim._put(card)
        sim.limit, sim.took, sim.passed = bout.limit, bout.took, bout.passed
        sim.first_bout, sim.shown = bout.first_bout, bout.shown
        sim.over, sim.durak = False, DRAW
        sim.elig = sim._eligible()
        return sim

    def copy(self) -> Sim:
        """An independent copy (the `Context` is shared)."""
        s = Sim.__new__(Sim)
        s.ctx, s.n = self.ctx, self.n
        s.hands, s.stock, s.active = self.hands[:], self.stock[:], self.active[:]
        s.attacker, s.defender, s.opener = self.attacker, self.defender, self.opener
        s.attacks, s.defences = self.attacks[:], self.defences[:]
        s.table_bits, s.rank_bits = self.table_bits, self.rank_bits
        s.limit, s.took, s.passed, s.elig = self.limit, self.took, self.passed, self.elig
        s.first_bout, s.shown = self.first_bout, self.shown
        s.over, s.durak = self.over, self.durak
        return s

    # ------------------------------------------------------------------ reading

    def cap(self) -> int:
        """R10: five (or six) until the first discard, six after."""
        return self.ctx.first_cap if self.first_bout else MAX_BOUT_CARDS

    def unbeaten(self) -> bool:
        return 0 in self.defences

    def next_active(self, seat: int) -> int:
        """The next active seat clockwise after `seat`, which may be out (R7)."""
        active = self.active
        if seat in active:
            return active[(active.index(seat) + 1) % len(active)]
        for step in range(1, self.n + 1):
            s = (seat + step) % self.n
            if s in active:
                return s
        raise AssertionError("no active seat")

    def waiting(self) -> list[int]:
        """Eligible attackers who have not passed and could add a card (R9, R10)."""
        if len(self.attacks) >= self.limit:
            return []
        hands, ranks, passed = self.hands, self.rank_bits, self.passed
        return [p for p in self.elig if not passed >> p & 1 and hands[p] & ranks]

    def actor(self) -> int:
        """The seat that moves next (see the module docstring); -1 once the game is over."""
        if self.over:
            return -1
        if not self.attacks:
            return self.attacker
        if not self.took and 0 in self.defences:
            return self.defender
        waiting = self.waiting()
        if len(waiting) == 1:
            return waiting[0]
        start = self.attacker
        return min(waiting, key=lambda p: (p - start) % self.n)

    def transfer_ok(self, adds: int) -> bool:
        """R14: transfers are open and the next player holds enough cards."""
        if not self.attacks or self.took or any(self.defences):
            return False
        count = len(self.attacks) + adds
        target = self.next_active(self.defender)
        return self.hands[target].bit_count() >= count and count <= self.cap()

    def transfer_cards(self) -> int:
        """The defender's cards that may transfer by playing them (R14), as a bitmask."""
        if not self.ctx.transfer or not self.transfer_ok(1):
            return 0
        return self.hands[self.defender] & RANK_OF_BIT[self.attacks[0]]

    def show_cards(self) -> int:
        """The defender's trumps that may transfer by being shown (R14), as a bitmask."""
        if not self.ctx.show or not self.transfer_ok(0):
            return 0
        same = self.hands[self.defender] & RANK_OF_BIT[self.attacks[0]]
        return same & self.ctx.trump_bits & ~self.shown

    def moves(self, seat: int = -1, every_cover: bool = False) -> list[Move]:
        """The moves of `seat` (default: the actor). A defender covers only the first unbeaten
        card unless `every_cover`: the order of covering changes nothing else in this model,
        so one order is enough for search."""
        p = self.actor() if seat < 0 else seat
        hand = self.hands[p]
        if not self.attacks:
            return [(ATTACK, b, 0) for b in _bits(hand)] if p == self.attacker else []
        if p == self.defender:
            if self.took or 0 not in self.defences:
                return []
            out: list[Move] = []
            for attack, cover in zip(self.attacks, self.defences, strict=True):
                if not cover:
                    beaters = hand & self.ctx.beaters[attack]
                    out.extend((DEFEND, b, attack) for b in _bits(beaters))
                    if not every_cover:
                        break
            out.extend((TRANSFER, b, 0) for b in _bits(self.transfer_cards()))
            out.extend((SHOW, b, 0) for b in _bits(self.show_cards()))
            out.append(TAKE_MOVE)
            return out
        out = [(ATTACK, b, 0) for b in _bits(hand & self.rank_bits)]
        out.append(PASS_MOVE)
        return out

    # ------------------------------------------------------------------ moving

    def apply(self, seat: int, move: Move) -> None:
        """Play a move; the caller guarantees it is legal."""
        kind, card, attack = move
        if kind == ATTACK:
            self.hands[seat] ^= card
            self._put(card)
            self.attacks.append(card)
            self.defences.append(0)
            self.passed = 0
        elif kind == DEFEND:
            self.hands[seat] ^= card
            self.defences[self.attacks.index(attack)] = card
            self._put(card)
            self.passed = 0
        elif kind == TAKE:
            self.took = True
            self.passed = 0
        elif kind == PASS:
            self.passed |= 1 << seat
        elif kind == TRANSFER:
            self.hands[seat] ^= card
            self._put(card)
            self.attacks.append(card)
            self.defences.append(0)
            self._transfer(seat)
        else:  # SHOW
            self.shown |= card
            self._transfer(seat)
        self._settle()

    def _put(self, card: int) -> None:
        self.table_bits |= card
        self.rank_bits |= RANK_OF_BIT[card]

    def _transfer(self, seat: int) -> None:
        """R14: the bout passes on; the transferrer attacks."""
        target = self.next_active(seat)
        self.attacker, self.defender = seat, target
        self.limit = min(self.cap(), self.hands[target].bit_count())
        self.elig = self._eligible()
        self.passed = 0

    def _settle(self) -> None:
        """Close the bout when nobody can or will add (R9, R12, R13)."""
        if self.took:
            if not self.waiting():
                self._end_bout(beaten=False)
        elif 0 in self.defences:
            return
        elif not self.hands[self.defender] or not self.waiting():
            self._end_bout(beaten=True)

    def _end_bout(self, beaten: bool) -> None:
        """R12/R13, the draw (R15), going out (R16), the next bout or the end (R17)."""
        defender = self.defender
        if beaten:  # R12
            self.first_bout = False
        else:  # R13
            self.hands[defender] |= self.table_bits
        self.attacks, self.defences = [], []
        self.table_bits = self.rank_bits = 0
        self._draw()
        if not self.stock:
            self._check_out()
        if len(self.active) <= 1:
            self.over = True
            self.durak = self.active[0] if self.active else DRAW
            return
        if beaten:
            nxt = defender if defender in self.active else self.next_active(defender)
        else:
            nxt = self.next_active(defender)
        self.start_bout(nxt)

    def _draw(self) -> None:
        """R15: from the bout's opener clockwise, the defender last; each draws fully."""
        stock = self.stock
        if not stock:
            return
        size, hands, active, defender = self.ctx.hand_size, self.hands, self.active, self.defender
        start = active.index(self.opener) if self.opener in active else 0
        order = [p for p in active[start:] + active[:start] if p != defender]
        order.append(defender)
        for p in order:
            want = size - hands[p].bit_count()
            if want <= 0:
                continue
            got = min(want, len(stock))
            for card in stock[-got:]:
                hands[p] |= card
            del stock[-got:]
            if not stock:
                return

    def _check_out(self) -> None:
        """R16: once the stock is empty, a player with no cards is out."""
        self.active = [p for p in self.active if self.hands[p]]

    def start_bout(self, attacker: int) -> None:
        """Open a bout: the attacker's left neighbour defends (R7), limit per R10."""
        self.attacker = self.opener = attacker
        active = self.active
        self.defender = active[(active.index(attacker) + 1) % len(active)]
        self.limit = min(self.cap(), self.hands[self.defender].bit_count())
        self.elig = self._eligible()
        self.took = False
        self.passed = 0
        self.shown = 0

    def _eligible(self) -> tuple[int, ...]:
        """R9: who may throw in to this bout."""
        active, defender, mode = self.active, self.defender, self.ctx.throw_in
        if mode == "all" or (mode == "neighbours_at_5" and len(active) <= 4):
            return tuple(p for p in active if p != defender)
        i, n = active.index(defender), len(active)
        before, after = active[(i - 1) % n], active[(i + 1) % n]
        return (before,) if before == after else (before, after)


def _bits(mask: int) -> list[int]:
    """The one-bit parts of `mask`, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


def bits(mask: int) -> list[int]:
    """The one-bit parts of `mask`, lowest first (for other modules)."""
    return _bits(mask)
