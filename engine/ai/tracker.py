"""Replaying the public history: what everyone at the table saw.

`game.history` lists every action, and every action is public (its cards lay on the
table), but it does not say when a bout ended: that depends on whether the attackers
could still add a card, which only their hands tell. `replay` therefore follows every
reading of the history that the public rules allow (a small set of `Hypothesis`
values, forked where a bout may or may not have ended), drops each one that an
action or the final view contradicts, and returns the first that fits.

What it learns: hand counts, the cards each player picked up (or showed, or drew as the
face-up trump) and still holds, and the ranks a player cannot hold (the bout closed
while he could have added a card). It reads nothing but the history, the rules, the
players and the viewer's own `GameView`.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.actions import (
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
)
from engine.ai.sim import RANK_OF_BIT
from engine.cards import Card, Suit, bits_of
from engine.rules import MAX_BOUT_CARDS, Rules
from engine.view import GameView

MAX_HYPOTHESES = 64
"""Readings kept at once; more are dropped (the first ones are kept, deterministically)."""


class Hypothesis:
    """One reading of the public history: the public state of the game after it."""

    __slots__ = (
        "active",
        "attacker",
        "attacks",
        "counts",
        "defences",
        "defender",
        "discard",
        "elig",
        "face_up",
        "first_bout",
        "gone",
        "known",
        "lacks",
        "limit",
        "opener",
        "over",
        "passed",
        "players",
        "rules",
        "shown",
        "started",
        "stock",
        "took",
        "trump",
    )

    players: tuple[str, ...]
    rules: Rules
    trump: Suit
    face_up: Card | None  # the face-up trump card under the stock, when known
    counts: dict[str, int]
    known: dict[str, int]  # cards known to be in each hand, as a bitmask
    lacks: dict[str, int]  # cards of ranks a hand surely lacks (outside `known`), as a bitmask
    stock: int
    discard: int
    gone: int  # the discarded cards, as a bitmask
    active: list[str]
    started: bool  # False until the deal's first attack names the first attacker
    attacker: str
    defender: str
    opener: str
    attacks: list[Card]
    defences: list[Card | None]
    limit: int
    took: bool
    passed: set[str]
    elig: tuple[str, ...]
    first_bout: bool
    shown: int
    over: bool

    def __new__(cls) -> Hypothesis:
        return object.__new__(cls)  # an empty reading (mypyc refuses object.__new__ elsewhere)

    @classmethod
    def deal(
        cls, players: Sequence[str], rules: Rules, trump: Suit, face_up: Card | None
    ) -> Hypothesis:
        """The public state right after a deal (R3, R4), before the first attack."""
        h = cls.__new__(cls)
        h.players, h.rules, h.trump, h.face_up = tuple(players), rules, trump, face_up
        h.counts = dict.fromkeys(players, rules.hand_size)
        h.known = dict.fromkeys(players, 0)
        h.lacks = dict.fromkeys(players, 0)
        h.stock = rules.deck_size - len(players) * rules.hand_size
        if h.stock == 0 and face_up is not None:  # R4: the last card dealt shows trump
            h.known[players[-1]] = face_up.bit
        h.discard = h.gone = 0
        h.active = list(players)
        h.started = False
        h.attacker = h.defender = h.opener = players[0]
        h.attacks, h.defences = [], []
        h.limit, h.took, h.passed, h.elig = 0, False, set(), ()
        h.first_bout, h.shown, h.over = True, 0, False
        return h

    def copy(self) -> Hypothesis:
        """An independent copy, to fork a reading."""
        h = Hypothesis.__new__(Hypothesis)
        h.players, h.rules, h.trump, h.face_up = self.players, self.rules, self.trump, self.face_up
        h.counts, h.known, h.lacks = dict(self.counts), dict(self.known), dict(self.lacks)
        h.stock, h.discard, h.gone = self.stock, self.discard, self.gone
        h.active, h.attacks, h.defences = list(self.active), list(self.attacks), list(self.defences)
        h.started, h.attacker, h.defender, h.opener = (
            self.started,
            self.attacker,
            self.defender,
            self.opener,
        )
        h.limit, h.took, h.passed, h.elig = self.limit, self.took, set(self.passed), self.elig
        h.first_bout, h.shown, h.over = self.first_bout, self.shown, self.over
        return h

    # ------------------------------------------------------------------ rules

    def cap(self) -> int:
        """R10."""
        return self.rules.first_bout_limit if self.first_bout else MAX_BOUT_CARDS

    def table_bits(self) -> int:
        return bits_of(self.attacks) | bits_of(d for d in self.defences if d is not None)

    def rank_bits(self) -> int:
        """Every card of a rank that lies on the table (R8)."""
        ranks = 0
        for c in self.attacks:
            ranks |= RANK_OF_BIT[c.bit]
        for d in self.defences:
            if d is not None:
                ranks |= RANK_OF_BIT[d.bit]
        return ranks

    def next_active(self, player: str) -> str:
        """R7, as the engine reads it (the player may be out)."""
        active = self.active
        if player in active:
            return active[(active.index(player) + 1) % len(active)]
        seat, n = self.players.index(player), len(self.players)
        for step in range(1, n + 1):
            p = self.players[(seat + step) % n]
            if p in active:
                return p
        raise AssertionError("no active player")

    def eligible(self) -> tuple[str, ...]:
        return eligible(self.rules, self.active, self.defender)

    def start_bout(self, attacker: str) -> None:
        """R7, R10: a new bout; its first card names the attacker when not yet known."""
        self.started = True
        self.attacker = self.opener = attacker
        i = self.active.index(attacker)
        self.defender = self.active[(i + 1) % len(self.active)]
        self.limit = min(self.cap(), self.counts[self.defender])
        self.elig = self.eligible()
        self.took, self.passed, self.shown = False, set(), 0

    # ------------------------------------------------------------------ actions

    def play(self, player: str, card: Card) -> bool:
        """`player` lays `card` on the table; False when the reading cannot be true."""
        bit = card.bit
        if self.counts[player] < 1 or (self.gone | self.table_bits()) & bit:
            return False
        if any(k & bit for p, k in self.known.items() if p != player):
            return False
        if not self.known[player] & bit and self.lacks[player] & bit:
            return False
        self.known[player] &= ~bit
        self.counts[player] -= 1
        return True

    def attack(self, player: str, card: Card) -> bool:
        """R8-R10: an opening card or a throw-in; False when the reading cannot be true."""
        if not self.started:
            self.start_bout(player)
        if not self.attacks:
            if player != self.attacker:
                return False
        elif (
            player == self.defender
            or player not in self.elig
            or player in self.passed
            or len(self.attacks) >= self.limit
            or not self.rank_bits() & card.bit
        ):
            return False
        if not self.play(player, card):
            return False
        self.attacks.append(card)
        self.defences.append(None)
        self.passed.clear()
        return True

    def defend(self, player: str, attack: Card, card: Card) -> bool:
        """R11, R2."""
        if player != self.defender or self.took or attack not in self.attacks:
            return False
        i = self.attacks.index(attack)
        if self.defences[i] is not None or not card.beats(attack, self.trump):
            return False
        if not self.play(player, card):
            return False
        self.defences[i] = card
        self.passed.clear()
        return True

    def transfer_ok(self, player: str, card: Card, adds: int) -> bool:
        """R14, as far as the public can check it."""
        if not self.rules.transfer or player != self.defender or self.took:
            return False
        if not self.attacks or any(d is not None for d in self.defences):
            return False
        count = len(self.attacks) + adds
        target = self.next_active(player)
        enough = self.counts[target] >= count and count <= self.cap()
        return enough and card.rank == self.attacks[0].rank

    def pass_on(self, player: str) -> None:
        """R14: the bout passes to the next player; the transferrer attacks."""
        target = self.next_active(player)
        self.attacker, self.defender = player, target
        self.limit = min(self.cap(), self.counts[target])
        self.elig = self.eligible()
        self.passed.clear()

    def transfer(self, player: str, card: Card) -> bool:
        """R14, by playing a card of the attacked rank."""
        if not self.transfer_ok(player, card, 1) or not self.play(player, card):
            return False
        self.attacks.append(card)
        self.defences.append(None)
        self.pass_on(player)
        return True

    def show(self, player: str, card: Card) -> bool:
        """R14, by showing a trump of the attacked rank: now known to be in the hand."""
        if not self.rules.transfer_by_showing_trump or not self.transfer_ok(player, card, 0):
            return False
        if card.suit is not self.trump or self.shown & card.bit or self.gone & card.bit:
            return False
        if any(k & card.bit for p, k in self.known.items() if p != player):
            return False
        self.known[player] |= card.bit
        self.shown |= card.bit
        self.pass_on(player)
        return True

    def take(self, player: str) -> bool:
        """R13."""
        if player != self.defender or self.took or None not in self.defences:
            return False
        self.took = True
        self.passed.clear()
        return True

    def pass_(self, player: str) -> bool:
        """R9: an attacker adds nothing more until a new card is played."""
        if player == self.defender or player not in self.elig or not self.attacks:
            return False
        if (not self.took and None in self.defences) or player in self.passed:
            return False
        if len(self.attacks) >= self.limit:
            return False
        self.passed.add(player)
        return True

    def exchange(self, player: str) -> bool:
        """R19: the player swaps the deck's lowest trump for the face-up trump."""
        if not self.rules.trump_exchange or self.stock < 1:
            return False
        low = Card(self.rules.lowest_rank, self.trump)
        if self.face_up is not None:
            self.known[player] |= self.face_up.bit
        self.known[player] &= ~low.bit
        self.face_up = low
        return True

    # ------------------------------------------------------------------ bout ends

    def candidates(self) -> list[str]:
        """Attackers who may still hold a card to add (R9, R10), as far as the public knows."""
        if len(self.attacks) >= self.limit:
            return []
        ranks = self.rank_bits()
        return [
            p
            for p in self.elig
            if p not in self.passed
            and self.counts[p] > 0
            and (self.known[p] & ranks or ranks & ~self.lacks[p])
        ]

    def settle(self) -> list[Hypothesis]:
        """After an action: the bout goes on, ends, or (unknown to the public) either."""
        if not self.attacks or (not self.took and None in self.defences):
            return [self]
        beaten = not self.took
        if beaten and self.counts[self.defender] == 0:
            self.end_bout(beaten)
            return [self]
        cands = self.candidates()
        if not cands:
            self.end_bout(beaten)
            return [self]
        ranks = self.rank_bits()
        if any(self.known[p] & ranks for p in cands):
            return [self]
        ended = self.copy()
        for p in cands:  # the bout closed: none of them could add (R12, R13)
            ended.lacks[p] |= ranks
        ended.end_bout(beaten)
        return [self, ended]

    def end_bout(self, beaten: bool) -> None:
        """R12/R13, the draw (R15), going out (R16), the next bout or the end (R17)."""
        defender = self.defender
        table = self.table_bits()
        count = len(self.attacks) + sum(d is not None for d in self.defences)
        if beaten:
            self.discard += count
            self.gone |= table
            self.first_bout = False
        else:
            self.counts[defender] += count
            self.known[defender] |= table
        self.attacks, self.defences = [], []
        self.draw()
        if self.stock == 0:
            self.active = [p for p in self.active if self.counts[p]]
        if len(self.active) <= 1:
            self.over = True
            return
        if beaten:
            nxt = defender if defender in self.active else self.next_active(defender)
        else:
            nxt = self.next_active(defender)
        self.start_bout(nxt)

    def draw(self) -> None:
        """R15; whoever draws the last card gets the face-up trump, in everyone's sight."""
        if not self.stock:
            return
        active = self.active
        start = active.index(self.opener) if self.opener in active else 0
        order = [p for p in active[start:] + active[:start] if p != self.defender]
        order.append(self.defender)
        for p in order:
            got = min(self.rules.hand_size - self.counts[p], self.stock)
            if got <= 0:
                continue
            self.counts[p] += got
            self.stock -= got
            self.lacks[p] = 0
            if not self.stock:
                if self.face_up is not None:
                    self.known[p] |= self.face_up.bit
                return

    # ------------------------------------------------------------------ the view

    def fits(self, view: GameView) -> bool:
        """Whether this reading ends in exactly the position the viewer sees."""
        h = self
        if not h.started:
            h = self.copy()
            h.start_bout(view.attacker)
        table = tuple(zip(h.attacks, h.defences, strict=True))
        mine = bits_of(view.hand or ())
        me = view.viewer or ""
        return (
            not h.over
            and table == view.table
            and (h.attacker, h.defender, h.opener)
            == (view.attacker, view.defender, view.bout_opener)
            and (h.took, h.limit, h.first_bout) == (view.defender_took, view.limit, view.first_bout)
            and h.passed == view.passed
            and (h.stock, h.discard) == (view.stock_size, view.discard_size)
            and h.counts == dict(view.hand_counts)
            and tuple(h.active) == view.active_players
            and not h.known.get(me, 0) & ~mine
            and not any(k & mine for p, k in h.known.items() if p != me)
        )


def eligible(rules: Rules, active: Sequence[str], defender: str) -> tuple[str, ...]:
    """R9: who may throw in against `defender`."""
    mode = rules.throw_in
    if mode == "all" or (mode == "neighbours_at_5" and len(active) <= 4):
        return tuple(p for p in active if p != defender)
    i, n = active.index(defender), len(active)
    before, after = active[(i - 1) % n], active[(i + 1) % n]
    return (before,) if before == after else (before, after)


def silent(rules: Rules, view: GameView) -> list[str]:
    """Attackers the game does not wait for although they have not passed: the engine waits
    for every attacker who could add a card (R9), so they hold none of the table's ranks."""
    waiting_for_attackers = view.defender_took or not view.open_attacks
    if not view.table or not waiting_for_attackers or len(view.table) >= view.limit:
        return []
    elig = eligible(rules, view.active_players, view.defender)
    return [p for p in elig if p not in view.passed and p not in view.to_act]


def step(h: Hypothesis, player: str, action: Action) -> list[Hypothesis]:
    """The readings that follow from `h` after `player` did `action` (none: contradiction)."""
    if h.over or player not in h.active:
        return []
    if isinstance(action, Attack):
        ok = h.attack(player, action.card)
    elif isinstance(action, Defend):
        ok = h.defend(player, action.attack, action.card)
    elif isinstance(action, Take):
        ok = h.take(player)
    elif isinstance(action, Pass):
        ok = h.pass_(player)
    elif isinstance(action, Transfer):
        ok = h.transfer(player, action.card)
    elif isinstance(action, ShowTrump):
        ok = h.show(player, action.card)
    elif isinstance(action, ExchangeTrump):
        return [h] if h.exchange(player) else []
    elif isinstance(action, Resign):
        h.over = True
        return [h]
    else:
        return []
    return h.settle() if ok else []


def replay(
    history: Sequence[tuple[str, Action]], players: Sequence[str], rules: Rules, view: GameView
) -> Hypothesis | None:
    """The first reading of `history` that ends in `view`; `None` when none does (a game
    set up by `Game.from_position`, whose start the history does not show)."""
    last_deal = max((i + 1 for i, (_, a) in enumerate(history) if isinstance(a, Redeal)), default=0)
    moves = history[last_deal:]
    exchanged = any(isinstance(a, ExchangeTrump) for _, a in moves)
    face_up = None if exchanged else view.trump_card
    live = [Hypothesis.deal(players, rules, view.trump_suit, face_up)]
    for player, action in moves:
        nxt: list[Hypothesis] = []
        for h in live:
            nxt.extend(step(h, player, action))
        live = nxt[:MAX_HYPOTHESES]
        if not live:
            return None
    return next((h for h in live if h.fits(view)), None)
