"""The Durak state machine.

`Game` holds one game. `legal_actions(player)` is the single source of truth for
what a player may do; `apply(player, action)` verifies an action by the same
rules (each rule lives in one `_check_*`/`_can_*` method, citing its rule id),
changes the state and returns the public events. An illegal action raises
`IllegalMove` before anything changes.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Final, final

from engine.actions import (
    EXCHANGE_TRUMP,
    PASS,
    REDEAL,
    RESIGN,
    TAKE,
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
    check_actions,
    parse_action,
)
from engine.cards import (
    ALL_CARDS,
    RANK_BITS,
    SUIT_BITS,
    SUITS,
    Card,
    Suit,
    bits_of,
    cards_of,
    parse_cards,
    parse_suit,
    shuffled_deck,
)
from engine.errors import ErrorCode, IllegalMove
from engine.events import (
    Attacked,
    BeatenOff,
    BoutStarted,
    Defended,
    Drew,
    Event,
    GameOver,
    Outcome,
    Passed,
    PickedUp,
    PlayerOut,
    Redealt,
    Resigned,
    TakeDeclared,
    Transferred,
    TrumpExchanged,
)
from engine.rules import MAX_BOUT_CARDS, Rules
from engine.view import GameView

FORMAT_VERSION: Final = 1


class _Actions(dict[int, tuple[Action, ...]]):
    """`table[bits]`: the actions for the cards of `bits` (all of one suit), in index order.

    Actions are values, built once and shared; a table fills itself on first use and
    holds at most 2**13 entries per suit.
    """

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[Card], Action]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, bits: int) -> tuple[Action, ...]:
        actions = self[bits] = tuple(map(self._make, cards_of(bits)))
        return actions


# Module constants are Final so that compiled code (mypyc) reads them without a lookup.
_CLUBS: Final = SUIT_BITS[Suit.CLUBS]
_DIAMONDS: Final = SUIT_BITS[Suit.DIAMONDS]
_HEARTS: Final = SUIT_BITS[Suit.HEARTS]
_SPADES: Final = SUIT_BITS[Suit.SPADES]
_TAKE: Final = TAKE
_PASS: Final = PASS
_RESIGN: Final = RESIGN
_EXCHANGE_TRUMP: Final = EXCHANGE_TRUMP
_REDEAL: Final = REDEAL


def _add_actions(out: list[Action], table: _Actions, bits: int) -> None:
    """Append the table's actions for the cards of `bits`, in index order (suit by suit)."""
    if bits & _CLUBS:
        out += table[bits & _CLUBS]
    if bits & _DIAMONDS:
        out += table[bits & _DIAMONDS]
    if bits & _HEARTS:
        out += table[bits & _HEARTS]
    if bits & _SPADES:
        out += table[bits & _SPADES]


_ATTACKS: Final = _Actions(Attack)
_TRANSFERS: Final = _Actions(Transfer)
_SHOWS: Final = _Actions(ShowTrump)
_DEFENDS: Final = tuple(_Actions(partial(Defend, a)) for a in ALL_CARDS)
"""`_DEFENDS[attack.index]`: the actions covering `attack`."""

# R2 as sets: `_BEATERS[trump][attack.index]` holds every card that beats `attack`.
_BEATERS: Final = {
    trump: tuple(bits_of(d for d in ALL_CARDS if d.beats(a, trump)) for a in ALL_CARDS)
    for trump in SUITS
}


def _illegal(code: ErrorCode, message: str) -> IllegalMove:
    return IllegalMove(code, message)


@final
class Game:
    """One game of Durak. Build with `Game.new`, `Game.from_position` or `Game.from_dict`."""

    __slots__ = (
        "_active",
        "_attacker",
        "_attacks",
        "_beaters",
        "_bout_opener",
        "_bouts",
        "_deal_number",
        "_defences",
        "_defender",
        "_discard",
        "_draw_orders",
        "_elig",
        "_elig_by",
        "_extras",
        "_first_bout",
        "_hands",
        "_history",
        "_history_json",
        "_history_saved",
        "_limit",
        "_next",
        "_out",
        "_outcome",
        "_passed",
        "_players",
        "_previous_durak",
        "_rank_bits",
        "_rules",
        "_seed",
        "_shown",
        "_solo",
        "_stock",
        "_table_bits",
        "_to_act",
        "_took",
        "_trump_bits",
        "_trump_card",
        "_trump_suit",
        "_unbeaten",
    )

    _rules: Rules
    _players: tuple[str, ...]
    _seed: int | None
    _deal_number: int
    _trump_card: Card | None
    _trump_suit: Suit
    _attacker: str
    _defender: str
    _bout_opener: str
    _first_bout: bool
    _hands: dict[str, int]  # bitmask over card.index (see engine.cards.cards_of)
    _stock: list[Card]  # face down, top at the end; the face-up trump at index 0
    _discard: list[Card]
    _out: list[tuple[str, ...]]
    _active: list[str]
    _attacks: list[Card]
    _defences: list[Card | None]
    _table_bits: int  # the cards on the table, as a bitmask
    _unbeaten: int  # the attack cards not yet beaten, as a bitmask
    _rank_bits: int  # every card of a rank that lies on the table (R8), as a bitmask
    _limit: int
    _took: bool
    _passed: set[str]
    _shown: set[Card]
    # The history is _history_saved (as loaded by from_dict, decoded only when asked for)
    # followed by _history; _history_json caches to_dict's form of _history's first entries.
    _history: list[tuple[str, Action]]
    _history_json: list[tuple[str, str]]
    _history_saved: list[tuple[str, str]]
    _bouts: int
    _outcome: Outcome | None
    _to_act: frozenset[str] | None
    _elig: tuple[str, ...]
    # Derived from _active (see _set_active): seat-order lookups, computed once.
    _next: dict[str, str]  # the next active player clockwise (R7)
    _elig_by: dict[str, tuple[str, ...]]  # defender -> _compute_eligible() (R9)
    _draw_orders: dict[tuple[str, str], tuple[str, ...]]  # (opener, defender) -> R15 order
    _previous_durak: str | None
    _trump_bits: int  # the trump suit's cards
    _beaters: tuple[int, ...]  # _BEATERS[trump_suit]
    _solo: dict[str, frozenset[str]]  # frozenset((p,)) per player, for to_act
    _extras: bool  # the rules allow trump exchange (R19) or flush redeal (R6)

    def __new__(cls) -> Game:
        return object.__new__(cls)  # an empty game, for _blank (mypyc refuses object.__new__)

    def __init__(self) -> None:
        raise TypeError("use Game.new, Game.from_position or Game.from_dict")

    # ------------------------------------------------------------------ building

    @classmethod
    def _blank(cls, players: Sequence[str], rules: Rules) -> Game:
        game = cls.__new__(cls)
        players = tuple(players)
        if len(set(players)) != len(players):
            raise ValueError(f"player ids must be unique: {list(players)}")
        if not all(isinstance(p, str) and p for p in players):
            raise ValueError(f"player ids must be non-empty strings: {list(players)}")
        rules.check_players(len(players))
        game._rules = rules
        game._extras = rules.trump_exchange or rules.redeal_on_flush
        game._players = players
        game._seed = None
        game._deal_number = 0
        game._previous_durak = None
        game._hands = dict.fromkeys(players, 0)
        game._stock = []
        game._discard = []
        game._out = []
        game._set_active(list(players))
        game._attacks = []
        game._defences = []
        game._table_bits = 0
        game._unbeaten = 0
        game._rank_bits = 0
        game._limit = 0
        game._took = False
        game._passed = set()
        game._shown = set()
        game._history = []
        game._history_json = []
        game._history_saved = []
        game._bouts = 0
        game._outcome = None
        game._to_act = None
        game._elig = ()
        game._solo = {p: frozenset((p,)) for p in players}
        game._first_bout = True
        return game

    def _set_trump(self, suit: Suit, card: Card | None) -> None:
        self._trump_suit = suit
        self._trump_card = card
        self._trump_bits = SUIT_BITS[suit]
        self._beaters = _BEATERS[suit]

    @classmethod
    def new(
        cls,
        players: Sequence[str],
        rules: Rules | None = None,
        seed: int | None = None,
        previous_durak: str | None = None,
    ) -> Game:
        """Deal a new game (R3-R5). Same players, rules and seed give the same game.

        `previous_durak` is the durak of the chat's previous game, for `series_start` (R5).
        """
        game = cls._blank(players, rules or Rules())
        game._seed = secrets.randbits(63) if seed is None else seed
        game._previous_durak = previous_durak if previous_durak in game._players else None
        game._deal()
        return game

    def _deal_rng(self) -> random.Random:
        return random.Random(f"durak:{self._seed}:{self._deal_number}")

    def _deal(self) -> None:
        """R4 deal and trump, R5 first attacker; redeal while nobody holds a trump (R5)."""
        rules = self._rules
        while True:
            rng = self._deal_rng()
            cards = shuffled_deck(rules.deck_size, rng)  # top first
            n, size = len(self._players), rules.hand_size
            for i, p in enumerate(self._players):
                self._hands[p] = bits_of(cards[i * size : (i + 1) * size])
            rest = cards[n * size :]
            if rest:
                trump = rest[0]  # turned face up, laid under the stock: drawn last
                self._stock = [trump, *reversed(rest[1:])]  # internal: top at the end
            else:  # R4: six players with 36 cards, the last card dealt shows trump
                trump = cards[-1]
                self._stock = []
            self._set_trump(trump.suit, trump)
            first = self._first_attacker(rng)
            if first is not None:
                break
            self._deal_number += 1
        self._start_bout(first)

    def _first_attacker(self, rng: random.Random) -> str | None:
        """R5: series start, else the holder of the lowest trump, else redeal or random."""
        prev = self._previous_durak
        if prev is not None and self._rules.series_start != "lowest_trump":
            seat = self._players.index(prev)
            n = len(self._players)
            if self._rules.series_start == "attack_durak":
                return self._players[(seat - 1) % n]
            return self._players[(seat + 1) % n]
        best: tuple[int, str] | None = None
        for p in self._players:
            trumps = self._hands[p] & self._trump_bits
            low = trumps & -trumps  # within one suit, the lowest bit is the lowest rank
            if trumps and (best is None or low < best[0]):
                best = (low, p)
        if best is not None:
            return best[1]
        if self._rules.no_trump_start == "random":
            return rng.choice(self._players)
        return None

    @classmethod
    def from_position(
        cls,
        hands: Mapping[str, Sequence[Card | str] | str],
        trump: Card | str,
        stock: Sequence[Card | str] | str = (),
        attacker: str | None = None,
        rules: Rules | None = None,
        first_bout: bool = True,
        discard: Sequence[Card | str] | str = (),
    ) -> Game:
        """A position for tests and puzzles, at the start of a bout.

        `hands` maps player id to cards in seat order; `trump` is the face-up card under
        the stock (drawn last) or a bare suit once it has been drawn; `stock` lists the
        face-down cards, top first. Players with no cards while the stock is empty are out.
        """
        rules = rules or Rules()
        game = cls._blank(list(hands), rules)
        parsed = {p: parse_cards(h) for p, h in hands.items()}
        stock_cards = parse_cards(stock)
        discard_cards = parse_cards(discard)
        trump_card: Card | None
        if isinstance(trump, Card):
            trump_card = trump
        else:
            try:
                trump_card = Card.parse(trump)
            except ValueError:
                trump_card = None
        if trump_card is not None:
            game._set_trump(trump_card.suit, trump_card)
            in_stock = [*stock_cards, trump_card]
        else:
            game._set_trump(parse_suit(str(trump)), None)
            if stock_cards:
                raise ValueError("a stock needs the face-up trump card under it, not a bare suit")
            in_stock = []
        every = [c for h in parsed.values() for c in h] + in_stock + discard_cards
        if len(set(every)) != len(every):
            raise ValueError("a card appears twice in the position")
        low = rules.lowest_rank
        if any(c.rank < low for c in every):
            raise ValueError(f"a card is not in the {rules.deck_size}-card deck")
        for p, h in parsed.items():
            game._hands[p] = bits_of(h)
        game._stock = list(reversed(in_stock))
        game._discard = discard_cards
        game._first_bout = first_bout
        if not game._stock:
            empty = tuple(p for p in game._players if not game._hands[p])
            if empty:
                game._out.append(empty)
                game._set_active([p for p in game._players if p not in empty])
        if len(game._active) < 2:
            raise ValueError("a position needs at least two players holding cards")
        if attacker is None:
            attacker = game._active[0]
        if attacker not in game._active:
            raise ValueError(f"attacker {attacker!r} is not an active player")
        game._start_bout(attacker)
        return game

    # ------------------------------------------------------------------ reading

    @property
    def active_players(self) -> tuple[str, ...]:
        """Players still holding cards (or able to draw), in seat order."""
        return tuple(self._active)

    def hand(self, player: str) -> tuple[Card, ...]:
        """The player's cards: by suit and rank, trumps last.

        (Internally a hand is a bitmask over `card.index`; its canonical order, by index,
        is the order of the legal actions, so a restored game offers them in the same order.)
        """
        try:
            bits = self._hands[player]
        except KeyError:
            raise _illegal(ErrorCode.UNKNOWN_PLAYER, f"no player {player!r}") from None
        trumps = self._trump_bits
        return (*cards_of(bits & ~trumps), *cards_of(bits & trumps))

    @property
    def table(self) -> list[tuple[Card, Card | None]]:
        """The bout's cards as (attack, defence or None), in play order."""
        return list(zip(self._attacks, self._defences, strict=True))

    @property
    def stock_size(self) -> int:
        """Face-down cards plus the face-up trump while it is there."""
        return len(self._stock)

    @property
    def discard_size(self) -> int:
        return len(self._discard)

    # ------------------------------------------------------------------ read-only state

    @property
    def rules(self) -> Rules:
        return self._rules

    @property
    def players(self) -> tuple[str, ...]:
        """Every player id in seat order (clockwise), out players included."""
        return self._players

    @property
    def seed(self) -> int | None:
        return self._seed

    @property
    def deal_number(self) -> int:
        """How many times the cards were dealt anew (R5 no trump, R6 flush) before this deal."""
        return self._deal_number

    @property
    def trump_suit(self) -> Suit:
        return self._trump_suit

    @property
    def trump_card(self) -> Card | None:
        """The face-up trump under the stock; None once it has been drawn."""
        return self._trump_card

    @property
    def attacker(self) -> str:
        return self._attacker

    @property
    def defender(self) -> str:
        return self._defender

    @property
    def bout_opener(self) -> str:
        """Who opened the bout (the attacker before any transfer)."""
        return self._bout_opener

    @property
    def first_bout(self) -> bool:
        """True until the first discard: the bout limit is `rules.first_bout_limit` (R10)."""
        return self._first_bout

    @property
    def discard(self) -> tuple[Card, ...]:
        """The beaten-off cards: public, since they lay on the table."""
        return tuple(self._discard)

    @property
    def limit(self) -> int:
        """The most attack cards this bout may hold (R10, R14)."""
        return self._limit

    @property
    def defender_took(self) -> bool:
        return self._took

    @property
    def passed(self) -> frozenset[str]:
        return frozenset(self._passed)

    @property
    def is_over(self) -> bool:
        return self._outcome is not None

    @property
    def outcome(self) -> Outcome | None:
        return self._outcome

    @property
    def durak(self) -> str | None:
        return self._outcome.durak if self._outcome else None

    @property
    def history(self) -> tuple[tuple[str, Action], ...]:
        if self._history_saved:
            self._history[:0] = [(p, parse_action(a)) for p, a in self._history_saved]
            self._history_json[:0] = self._history_saved
            self._history_saved = []
        return tuple(self._history)

    @property
    def move_number(self) -> int:
        """How many actions were applied: a counter that changes with every move."""
        return len(self._history_saved) + len(self._history)

    @property
    def bouts(self) -> int:
        """Bouts finished so far."""
        return self._bouts

    @property
    def out_order(self) -> tuple[tuple[str, ...], ...]:
        return tuple(self._out)

    @property
    def closing(self) -> bool:
        """Whether the bout waits only for throw-ins: every attack card is covered or the
        defender takes, and some attacker of R9 who has not passed could still add a card
        (R9, R12, R13). Then `to_act` holds exactly those attackers, and the bout ends as
        soon as each of them has passed."""
        return (
            self._outcome is None
            and bool(self._attacks)
            and (self._took or not self._unbeaten)
            and bool(self.to_act)
        )

    @property
    def to_act(self) -> frozenset[str]:
        """The players the game waits for (see "How the engine reads these rules")."""
        cached = self._to_act
        if cached is None:
            if self._outcome is not None:
                cached = frozenset()
            elif not self._attacks:
                cached = self._solo[self._attacker]
            elif not self._took and self._unbeaten:
                cached = self._solo[self._defender]
            else:
                cached = frozenset(self._waiting_attackers())
            self._to_act = cached
        return cached

    # ------------------------------------------------------------------ rules

    def _set_active(self, active: list[str]) -> None:
        """Who still plays, in seat order (R16), and the lookups derived from it."""
        self._active = active
        n = len(active)
        self._next = {p: active[(i + 1) % n] for i, p in enumerate(active)}
        self._elig_by = {}
        self._draw_orders = {}

    def _compute_eligible(self) -> tuple[str, ...]:
        """R9: who may throw in to this bout (fixed until the bout ends or is transferred)."""
        active, defender = self._active, self._defender
        mode = self._rules.throw_in
        if mode == "all" or (mode == "neighbours_at_5" and len(active) <= 4):
            return tuple([p for p in active if p != defender])
        i, n = active.index(defender), len(active)
        before, after = active[(i - 1) % n], active[(i + 1) % n]
        return (before,) if before == after else (before, after)

    def _eligible(self) -> tuple[str, ...]:
        return self._elig

    def _set_defender(self, defender: str) -> None:
        """Make `defender` defend: R10's limit and R9's throw-in list follow."""
        self._defender = defender
        self._limit = min(self._cap(), self._hands[defender].bit_count())
        elig = self._elig_by.get(defender)
        if elig is None:
            elig = self._elig_by[defender] = self._compute_eligible()
        self._elig = elig

    def _can_add(self, player: str) -> bool:
        """R8, R10: the player holds a card of a rank on the table and the limit allows one."""
        return len(self._attacks) < self._limit and bool(self._hands[player] & self._rank_bits)

    def _waiting_attackers(self) -> list[str]:
        """Eligible attackers who have not passed and could add a card (R9, R12, R13)."""
        if len(self._attacks) >= self._limit:
            return []
        passed, hands, ranks = self._passed, self._hands, self._rank_bits
        waiting = []
        for p in self._elig:  # a plain loop: cheaper than a comprehension for a few players
            if hands[p] & ranks and p not in passed:
                waiting.append(p)
        return waiting

    def _next_active(self, player: str) -> str:
        """The next active player clockwise after `player`'s seat (R7); `player` may be out."""
        nxt = self._next.get(player)
        if nxt is not None:
            return nxt
        active = self._active
        seat, n = self._players.index(player), len(self._players)
        for step in range(1, n + 1):
            p = self._players[(seat + step) % n]
            if p in active:
                return p
        raise AssertionError("no active player")

    def _can_exchange(self, player: str) -> bool:
        """R19: the holder of the deck's lowest trump swaps it for the face-up trump."""
        if not self._rules.trump_exchange or not self._stock or self._trump_card is None:
            return False
        low = Card(self._rules.lowest_rank, self._trump_suit)
        return self._stock[0] is self._trump_card and bool(self._hands[player] & low.bit)

    def _can_redeal(self, player: str) -> bool:
        """R6: before the first attack, five or more of one suit and no trump."""
        if not self._rules.redeal_on_flush or self._bouts or self._attacks:
            return False
        hand = self._hands[player]
        if hand & self._trump_bits:
            return False
        return any((hand & SUIT_BITS[suit]).bit_count() >= 5 for suit in SUITS)

    def _transfer_target_ok(self, adds: int) -> bool:
        """R14: the next player must hold as many cards as the attack cards would number."""
        target = self._next_active(self._defender)
        count = len(self._attacks) + adds
        return self._hands[target].bit_count() >= count and count <= self._cap()

    def _cap(self) -> int:
        """R10: five (or six) until the first discard, six after."""
        return self._rules.first_bout_limit if self._first_bout else MAX_BOUT_CARDS

    def _transfer_open(self) -> bool:
        """R14: a transfer is possible only while no attack card of the bout is beaten."""
        return (
            bool(self._attacks)
            and not self._took
            and len(self._attacks) == self._unbeaten.bit_count()
        )

    # ------------------------------------------------------------------ legal actions

    def legal_actions(self, player: str) -> list[Action]:
        """Every action `player` may take now; empty when none.

        Card actions come in canonical (card index) order, then Take or Pass, the rare
        extras, and Resign last. Not cached: computing costs about what a cache would,
        and the list is the caller's.
        """
        if self._outcome is not None or player not in self._active:
            return []
        hand = self._hands[player]
        out: list[Action] = []
        attacks = self._attacks
        if player == self._defender:
            unbeaten = self._unbeaten
            if unbeaten and not self._took:
                beaters = self._beaters
                for a in attacks:
                    if a.bit & unbeaten:  # R11: any card that beats it (R2)
                        _add_actions(out, _DEFENDS[a.index], hand & beaters[a.index])
                if self._rules.transfer and self._transfer_open():  # R14
                    same = hand & RANK_BITS[attacks[0].rank]
                    if self._transfer_target_ok(1):
                        _add_actions(out, _TRANSFERS, same)
                    if self._rules.transfer_by_showing_trump and self._transfer_target_ok(0):
                        shown = bits_of(self._shown)
                        _add_actions(out, _SHOWS, same & self._trump_bits & ~shown)
                out.append(_TAKE)
        elif not attacks:
            if player == self._attacker:  # R8: any card opens the bout (_add_actions, inlined)
                if hand & _CLUBS:
                    out += _ATTACKS[hand & _CLUBS]
                if hand & _DIAMONDS:
                    out += _ATTACKS[hand & _DIAMONDS]
                if hand & _HEARTS:
                    out += _ATTACKS[hand & _HEARTS]
                if hand & _SPADES:
                    out += _ATTACKS[hand & _SPADES]
        elif player not in self._passed and player in self._elig and len(attacks) < self._limit:
            bits = hand & self._rank_bits  # R8, R10: ranks on the table, within the limit
            if bits:
                _add_actions(out, _ATTACKS, bits)
                if self._took or not self._unbeaten:
                    out.append(_PASS)
        if self._extras:
            if self._can_exchange(player):
                out.append(_EXCHANGE_TRUMP)
            if self._can_redeal(player):
                out.append(_REDEAL)
        out.append(_RESIGN)
        return out

    def is_legal(self, player: str, action: Action) -> bool:
        return action in self.legal_actions(player)

    # ------------------------------------------------------------------ applying

    def apply(self, player: str, action: Action) -> list[Event]:
        """Apply `player`'s `action` and return what happened.

        Raises `IllegalMove` (state unchanged) when the rules do not allow it.
        """
        if self._outcome is not None or player not in self._active:
            self._check_player(player)  # raises
        events: list[Event] = []
        # The commonest first. Direct calls: compiled code makes them without a lookup.
        if isinstance(action, Attack):
            self._play_attack(player, action, events)
        elif isinstance(action, Defend):
            self._play_defend(player, action, events)
        elif isinstance(action, Take):
            self._play_take(player, action, events)
        elif isinstance(action, Pass):
            self._play_pass(player, action, events)
        elif isinstance(action, Transfer):
            self._play_transfer(player, action, events)
        elif isinstance(action, ShowTrump):
            self._play_show(player, action, events)
        elif isinstance(action, Resign):
            self._play_resign(player, action, events)
        elif isinstance(action, ExchangeTrump):
            self._play_exchange(player, action, events)
        elif isinstance(action, Redeal):
            self._play_redeal(player, action, events)
        else:
            raise TypeError(f"not an action: {action!r}")
        self._history.append((player, action))
        self._to_act = None
        if self._outcome is None:
            self._settle(events)
        return events

    def _check_player(self, player: str) -> None:
        if self._outcome is not None:
            raise _illegal(ErrorCode.GAME_OVER, "the game is over")
        if player not in self._hands:
            raise _illegal(ErrorCode.UNKNOWN_PLAYER, f"{player!r} does not play in this game")
        if player not in self._active:
            raise _illegal(ErrorCode.PLAYER_OUT, f"{player!r} is out of the game")

    def _require_card(self, player: str, card: Card) -> None:
        if not self._hands[player] & card.bit:
            raise _illegal(ErrorCode.CARD_NOT_IN_HAND, f"{card} is not in {player}'s hand")

    def _play_attack(self, player: str, action: Attack, events: list[Event]) -> None:
        card = action.card
        if player == self._defender:
            raise _illegal(ErrorCode.NOT_YOUR_TURN, "the defender cannot attack")
        if not self._attacks:
            if player != self._attacker:
                raise _illegal(ErrorCode.NOT_YOUR_TURN, f"{self._attacker} opens this bout")
        elif player in self._passed or player not in self._elig:
            raise _illegal(ErrorCode.NOT_YOUR_TURN, f"{player} may not throw in now")
        bit = card.bit
        hands, attacks = self._hands, self._attacks
        if not hands[player] & bit:
            self._require_card(player, card)  # raises
        if attacks and not self._rank_bits & bit:
            raise _illegal(ErrorCode.RANK_NOT_ON_TABLE, f"no {card.rank_name} on the table")
        if len(attacks) >= self._limit:
            raise _illegal(ErrorCode.LIMIT_REACHED, f"the bout holds {self._limit} cards at most")
        hands[player] ^= bit
        self._table_bits |= bit  # as _put_on_table, inlined: attacks are the commonest move
        self._rank_bits |= RANK_BITS[card.rank]
        lead = not attacks
        attacks.append(card)
        self._defences.append(None)
        self._unbeaten |= bit
        if self._passed:
            self._passed.clear()
        events.append(Attacked(player, card, lead))

    def _put_on_table(self, card: Card) -> None:
        """R8: from now on the card's rank may be thrown in."""
        self._table_bits |= card.bit
        self._rank_bits |= RANK_BITS[card.rank]

    def _play_defend(self, player: str, action: Defend, events: list[Event]) -> None:
        attack, card = action.attack, action.card
        if player != self._defender or self._took:
            raise _illegal(ErrorCode.NOT_YOUR_TURN, f"{player} is not defending now")
        bit = card.bit
        if not self._hands[player] & bit:
            self._require_card(player, card)  # raises
        if not self._unbeaten & attack.bit:
            raise _illegal(ErrorCode.NO_SUCH_ATTACK, f"{attack} is not an open attack")
        if not self._beaters[attack.index] & bit:  # R2
            raise _illegal(ErrorCode.DOES_NOT_BEAT, f"{card} does not beat {attack}")
        self._hands[player] ^= bit
        self._defences[self._attacks.index(attack)] = card
        self._unbeaten ^= attack.bit
        self._put_on_table(card)
        self._passed.clear()
        events.append(Defended(player, attack, card))

    def _check_transfer(self, player: str, card: Card, adds: int) -> None:
        if player != self._defender or self._took:
            raise _illegal(ErrorCode.NOT_YOUR_TURN, f"{player} is not defending now")
        if not self._rules.transfer or (adds == 0 and not self._rules.transfer_by_showing_trump):
            raise _illegal(ErrorCode.TRANSFER_NOT_ALLOWED, "transfers are off in these rules")
        self._require_card(player, card)
        if not self._transfer_open():
            raise _illegal(ErrorCode.TRANSFER_NOT_ALLOWED, "a card is already beaten")
        if card.rank != self._attacks[0].rank:
            raise _illegal(ErrorCode.RANK_NOT_ON_TABLE, f"{card} is not of the attacked rank")
        if adds == 0 and (card.suit is not self._trump_suit or card in self._shown):
            raise _illegal(
                ErrorCode.TRANSFER_NOT_ALLOWED, f"{card} cannot be shown to transfer now"
            )
        if not self._transfer_target_ok(adds):
            raise _illegal(
                ErrorCode.TRANSFER_NOT_ALLOWED,
                f"{self._next_active(self._defender)} holds too few cards to take a transfer",
            )

    def _do_transfer(self, player: str, card: Card, shown: bool, events: list[Event]) -> None:
        """R14: the bout passes to the next active player; the transferrer attacks."""
        target = self._next_active(player)
        self._attacker = player
        self._set_defender(target)
        self._passed.clear()
        events.append(Transferred(player, card, target, shown))

    def _play_transfer(self, player: str, action: Transfer, events: list[Event]) -> None:
        card = action.card
        self._check_transfer(player, card, 1)
        self._hands[player] ^= card.bit
        self._put_on_table(card)
        self._attacks.append(card)
        self._defences.append(None)
        self._unbeaten |= card.bit
        self._do_transfer(player, card, False, events)

    def _play_show(self, player: str, action: ShowTrump, events: list[Event]) -> None:
        card = action.card
        self._check_transfer(player, card, 0)
        self._shown.add(card)
        self._do_transfer(player, card, True, events)

    def _play_take(self, player: str, action: Take, events: list[Event]) -> None:
        if player != self._defender:
            raise _illegal(ErrorCode.NOT_YOUR_TURN, f"{player} is not defending")
        if self._took or not self._unbeaten:
            raise _illegal(ErrorCode.CANNOT_TAKE, "there is no open attack to take")
        self._took = True
        self._passed.clear()
        events.append(TakeDeclared(player))

    def _play_pass(self, player: str, action: Pass, events: list[Event]) -> None:
        if player == self._defender or player not in self._eligible():
            raise _illegal(ErrorCode.NOT_YOUR_TURN, f"{player} is not attacking")
        if not self._attacks:
            raise _illegal(ErrorCode.CANNOT_PASS, "the bout must be opened with a card")
        if not self._took and self._unbeaten:
            raise _illegal(ErrorCode.CANNOT_PASS, "the defender is still to move")
        if player in self._passed or not self._can_add(player):
            raise _illegal(ErrorCode.CANNOT_PASS, f"{player} has nothing to pass on")
        self._passed.add(player)
        events.append(Passed(player))

    def _play_resign(self, player: str, action: Resign, events: list[Event]) -> None:
        """R18: the resigning player is the durak; the game ends."""
        events.append(Resigned(player))
        self._finish(events, durak=player, resigned=player)

    def _play_exchange(self, player: str, action: ExchangeTrump, events: list[Event]) -> None:
        if not self._can_exchange(player):
            raise _illegal(ErrorCode.EXCHANGE_NOT_ALLOWED, f"{player} cannot exchange the trump")
        low = Card(self._rules.lowest_rank, self._trump_suit)
        face_up = self._stock[0]
        self._hands[player] ^= low.bit | face_up.bit
        self._stock[0] = low
        self._trump_card = low
        events.append(TrumpExchanged(player, low, face_up))

    def _play_redeal(self, player: str, action: Redeal, events: list[Event]) -> None:
        if not self._can_redeal(player):
            raise _illegal(ErrorCode.REDEAL_NOT_ALLOWED, f"{player} cannot ask for a new deal")
        if self._seed is None:  # a hand-built position: deal afresh from a new seed
            self._seed = secrets.randbits(63)
        self._deal_number += 1
        events.append(Redealt(player))
        self._deal()
        events.append(BoutStarted(self._attacker, self._defender))

    # ------------------------------------------------------------------ bout flow

    def _settle(self, events: list[Event]) -> None:
        """Close the bout when nobody can or will add (R9, R12, R13)."""
        if not self._attacks:
            return
        if self._took:
            waiting = self._waiting_attackers()
            if not waiting:
                self._end_bout(events, False)
                return
        elif self._unbeaten:
            self._to_act = self._solo[self._defender]
            return
        elif not self._hands[self._defender]:
            self._end_bout(events, True)
            return
        else:
            waiting = self._waiting_attackers()
            if not waiting:
                self._end_bout(events, True)
                return
        self._to_act = frozenset(waiting)  # what `to_act` would compute

    def _end_bout(self, events: list[Event], beaten: bool) -> None:
        """R12 (`beaten`) or R13; then draw (R15), go out (R16), end (R17) or go on (R7)."""
        defender = self._defender
        cards = (*self._attacks, *filter(None, self._defences))
        if beaten:  # R12
            self._discard.extend(cards)
            self._first_bout = False
            events.append(BeatenOff(cards))
        else:  # R13
            self._hands[defender] |= self._table_bits
            events.append(PickedUp(defender, cards))
        self._attacks.clear()
        self._defences.clear()
        self._table_bits = self._rank_bits = self._unbeaten = 0
        self._bouts += 1
        self._draw(events)
        self._check_out(events)
        active = self._active
        if len(active) <= 1:
            durak = active[0] if active else None
            self._finish(events, durak=durak, resigned=None)
            return
        # R12: the defender attacks next (if still active); R13: the player after him.
        nxt = defender if beaten and defender in active else self._next_active(defender)
        self._start_bout(nxt)
        events.append(BoutStarted(self._attacker, self._defender))

    def _draw(self, events: list[Event]) -> None:
        """R15: from the bout's opener clockwise, the defender last; each draws fully."""
        stock = self._stock
        if not stock:
            return
        size = self._rules.hand_size
        hands = self._hands
        key = (self._bout_opener, self._defender)
        order = self._draw_orders.get(key)
        if order is None:
            order = self._draw_orders[key] = self._draw_order()
        for p in order:
            hand = hands[p]
            want = size - hand.bit_count()
            if want <= 0:
                continue
            got = min(want, len(stock))
            for card in stock[-got:]:  # from the top of the stock
                hand |= card.bit
            hands[p] = hand
            del stock[-got:]
            events.append(Drew(p, got))
            if not stock:
                break

    def _draw_order(self) -> tuple[str, ...]:
        """R15: from the bout's opener clockwise, the defender last."""
        active, defender = self._active, self._defender
        start = active.index(self._bout_opener) if self._bout_opener in active else 0
        order = [p for p in active[start:] + active[:start] if p != defender]
        return (*order, defender)

    def _check_out(self, events: list[Event]) -> None:
        """R16: once the stock is empty, a player with no cards is out."""
        if self._stock:
            return
        hands = self._hands
        gone: tuple[str, ...] = ()
        for p in self._active:
            if not hands[p]:
                gone += (p,)
        if gone:
            self._out.append(gone)
            self._set_active([p for p in self._active if p not in gone])
            events.extend(PlayerOut(p) for p in gone)

    def _start_bout(self, attacker: str) -> None:
        """R7: the attacker attacks the next active player."""
        self._attacker = self._bout_opener = attacker
        self._set_defender(self._next[attacker])
        self._took = False
        if self._passed:
            self._passed.clear()
        if self._shown:
            self._shown.clear()
        self._to_act = self._solo[attacker]

    def _finish(self, events: list[Event], *, durak: str | None, resigned: str | None) -> None:
        """R17, R18."""
        self._outcome = Outcome(
            durak=durak,
            draw=durak is None,
            resigned=resigned,
            out_order=tuple(self._out),
            bouts=self._bouts,
        )
        self._to_act = None
        events.append(GameOver(self._outcome))

    # ------------------------------------------------------------------ views

    def view(self, player: str | None = None) -> GameView:
        """What `player` may see (own hand, counts, table, trump, stock); `None`: the public."""
        if player is not None and player not in self._hands:
            raise _illegal(ErrorCode.UNKNOWN_PLAYER, f"no player {player!r}")
        return GameView(
            viewer=player,
            hand=self.hand(player) if player is not None else None,
            hand_counts={p: self._hands[p].bit_count() for p in self._players},
            table=tuple(self.table),
            trump_card=self._trump_card,
            trump_suit=self._trump_suit,
            stock_size=len(self._stock),
            discard_size=len(self._discard),
            attacker=self._attacker,
            defender=self._defender,
            bout_opener=self._bout_opener,
            defender_took=self._took,
            passed=frozenset(self._passed),
            limit=self._limit,
            to_act=self.to_act,
            players=self._players,
            active_players=tuple(self._active),
            out_order=tuple(self._out),
            is_over=self.is_over,
            outcome=self._outcome,
            move_number=self.move_number,
            first_bout=self._first_bout,
            legal=tuple(self.legal_actions(player)) if player is not None else (),
            throw_ins=self._elig if self._outcome is None else (),
        )

    # ------------------------------------------------------------------ serialisation

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe, versioned snapshot; `Game.from_dict` restores an equal game."""
        out = self._outcome
        # The history only grows: encode just the actions applied since the last call.
        encoded = self._history_json
        if len(encoded) < len(self._history):
            encoded.extend((p, str(a)) for p, a in self._history[len(encoded) :])
        return {
            "format": FORMAT_VERSION,
            "rules": _rules_to_dict(self._rules),
            "players": list(self._players),
            "seed": self._seed,
            "deal_number": self._deal_number,
            "previous_durak": self._previous_durak,
            "hands": {p: [str(c) for c in self.hand(p)] for p in self._players},
            "stock": [str(c) for c in reversed(self._stock)],  # top first
            "trump_suit": self._trump_suit.value,
            "trump_card": str(self._trump_card) if self._trump_card else None,
            "discard": [str(c) for c in self._discard],
            "active": list(self._active),
            "out": [list(g) for g in self._out],
            "attacker": self._attacker,
            "defender": self._defender,
            "bout_opener": self._bout_opener,
            "table": [[str(a), str(d) if d else None] for a, d in self.table],
            "limit": self._limit,
            "took": self._took,
            "passed": sorted(self._passed, key=self._players.index),
            "shown": [str(c) for c in sorted(self._shown)],
            "first_bout": self._first_bout,
            "bouts": self._bouts,
            "history": [[p, a] for p, a in self._history_saved] + [[p, a] for p, a in encoded],
            "outcome": None
            if out is None
            else {
                "durak": out.durak,
                "draw": out.draw,
                "resigned": out.resigned,
                "out_order": [list(g) for g in out.out_order],
                "bouts": out.bouts,
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Game:
        """Restore a game saved by `to_dict`. Raises `ValueError` for an unknown format."""
        version = data.get("format") if isinstance(data, Mapping) else None
        if version != FORMAT_VERSION:
            raise ValueError(
                f"unsupported game format version {version!r} (this engine reads {FORMAT_VERSION})"
            )
        try:
            return cls._from_dict_v1(data)
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"malformed game data: {exc!r}") from exc

    @classmethod
    def _from_dict_v1(cls, data: Mapping[str, Any]) -> Game:
        game = cls._blank(data["players"], _rules_from_dict(data["rules"]))
        # Scalars are checked by type: the compiled engine would refuse a wrong one anyway
        # (took=0, limit=6.0), and so both builds read the same data the same way.
        game._seed = _typed(data, "seed", (int, type(None)))
        game._deal_number = _typed(data, "deal_number", int)
        game._previous_durak = _typed(data, "previous_durak", (str, type(None)))
        trump_card = Card.parse(data["trump_card"]) if data["trump_card"] else None
        game._set_trump(parse_suit(data["trump_suit"]), trump_card)
        game._hands = {p: bits_of(parse_cards(data["hands"][p])) for p in game._players}
        game._stock = list(reversed(parse_cards(data["stock"])))
        game._discard = parse_cards(data["discard"])
        game._set_active([p for p in game._players if p in set(data["active"])])
        game._out = [tuple(g) for g in data["out"]]
        game._attacker = _typed(data, "attacker", str)
        game._defender = _typed(data, "defender", str)
        game._bout_opener = _typed(data, "bout_opener", str)
        game._attacks = [Card.parse(a) for a, _ in data["table"]]
        game._defences = [Card.parse(d) if d else None for _, d in data["table"]]
        for c in (*game._attacks, *game._defences):
            if c is not None:
                game._put_on_table(c)
        for a, d in zip(game._attacks, game._defences, strict=True):
            if d is None:
                game._unbeaten |= a.bit
        # A finished game may name a defender who went out: nobody throws in any more.
        game._elig = game._compute_eligible() if game._defender in game._active else ()
        game._limit = _typed(data, "limit", int)
        game._took = _typed(data, "took", bool)
        game._passed = set(data["passed"])
        game._shown = set(parse_cards(data["shown"]))
        game._first_bout = _typed(data, "first_bout", bool)
        game._bouts = _typed(data, "bouts", int)
        # Kept as text until someone reads `history`; checked now, so bad data fails here.
        if data["history"]:
            movers, texts = zip(*data["history"], strict=True)  # [player, action] pairs
            if not check_actions(set(texts)):  # written by hand or by an older engine
                texts = tuple(str(parse_action(text)) for text in texts)
            if not game._hands.keys() >= set(movers):
                raise ValueError("malformed game data: the history names an unknown player")
            game._history_saved = list(zip(movers, texts, strict=True))
        out = data["outcome"]
        if out is not None:
            game._outcome = Outcome(
                durak=_typed(out, "durak", (str, type(None))),
                draw=_typed(out, "draw", bool),
                resigned=_typed(out, "resigned", (str, type(None))),
                out_order=tuple(tuple(g) for g in out["out_order"]),
                bouts=_typed(out, "bouts", int),
            )
        return game

    def copy(self) -> Game:
        return Game.from_dict(self.to_dict())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Game):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        state = "over" if self.is_over else f"{self._attacker} attacks {self._defender}"
        return f"<Game {list(self._players)} move {self.move_number}: {state}>"


def _typed(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    """`data[key]`, which must be an instance of `kind` (a TypeError: malformed data)."""
    value = data[key]
    if not isinstance(value, kind):
        raise TypeError(f"{key}: {value!r}")
    return value


_RULES_DICTS: dict[Rules, dict[str, Any]] = {}
_RULES_BY_ITEMS: dict[tuple[tuple[str, Any], ...], Rules] = {}
_RULES_CACHE_MAX = 256


def _rules_to_dict(rules: Rules) -> dict[str, Any]:
    """`rules.model_dump(mode="json")`, computed once per distinct `Rules`."""
    dumped = _RULES_DICTS.get(rules)
    if dumped is None:
        dumped = rules.model_dump(mode="json")
        if len(_RULES_DICTS) < _RULES_CACHE_MAX:
            _RULES_DICTS[rules] = dumped
    return dict(dumped)  # a copy: the caller may change it


def _rules_from_dict(data: Any) -> Rules:
    """`Rules.model_validate(data)`, validated once per distinct set of options."""
    try:
        key = tuple(sorted(data.items())) if isinstance(data, dict) else None
        rules = _RULES_BY_ITEMS.get(key) if key is not None else None
    except TypeError:  # unhashable or unorderable values: let pydantic explain
        key = rules = None
    if rules is None:
        rules = Rules.model_validate(data)
        if key is not None and len(_RULES_BY_ITEMS) < _RULES_CACHE_MAX:
            _RULES_BY_ITEMS[key] = rules
    return rules
