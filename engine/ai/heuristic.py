"""The easy player's rules of thumb, on bitmasks: shared by `EasyPlayer` and by search rollouts.

Every function reads only what its player may know: its own hand, the table, the trump
and the stock size. Cards are `card.bit` integers and sets of cards are bitmasks (see
`engine.cards.cards_of`); `Context.cost` ranks cards by how much they are worth keeping
(every trump above every plain card). The functions take plain values, not objects,
because rollouts call them for every move.
"""

from __future__ import annotations

from engine.ai.sim import (
    ATTACK,
    DEFEND,
    PASS_MOVE,
    RANK_OF_BIT,
    SHOW,
    TAKE_MOVE,
    TRANSFER,
    TRUMP_BONUS,
    Context,
    Move,
    Sim,
    bits,
)

EARLY_STOCK = 12
"""More cards than this in the stock: the early game, when trumps are worth saving."""
LATE_STOCK = 4
"""This many cards or fewer in the stock: the late game, when shedding cards matters most."""


def cheapest(cards: int, ctx: Context) -> int:
    """The card of `cards` worth least (0 when empty): the lowest plain card, else the
    lowest trump. (Within a suit the lowest bit is the lowest rank.)"""
    plain = cards & ~ctx.trump_bits
    if not plain:
        return cards & -cards
    best, best_rank = 0, 99
    for suit in ctx.plain_suits:
        mine = plain & suit
        if mine:
            low = mine & -mine
            rank = ctx.cost[low]
            if rank < best_rank:
                best, best_rank = low, rank
    return best


def open_card(hand: int, ctx: Context) -> int:
    """R8 opening: the lowest plain card, preferring ranks held more than once."""
    plain = hand & ~ctx.trump_bits
    if not plain:
        return hand & -hand
    cost = ctx.cost
    best, best_key = 0, 999
    for card in bits(plain):
        key = cost[card] - 2 * ((plain & RANK_OF_BIT[card]).bit_count() - 1)
        if key < best_key:
            best, best_key = card, key
    return best


def throw_card(hand: int, rank_bits: int, stock: int, took: bool, ctx: Context) -> int:
    """A card to throw in (R8), or 0 to pass: low plain cards; trumps only when the stock
    is empty and nothing else is left."""
    cands = hand & rank_bits
    plain = cands & ~ctx.trump_bits
    if stock == 0:
        return cheapest(plain or (cands if not hand & ~ctx.trump_bits else 0), ctx)
    card = cheapest(plain, ctx)
    if stock <= LATE_STOCK:
        return card
    top = 11 if took else 10  # a taker gets junk; a defender is pressed with low cards
    return card if card and ctx.cost[card] <= top else 0


def cover_plan(hand: int, unbeaten: list[int], ctx: Context) -> list[tuple[int, int]] | None:
    """(attack, cover) for every unbeaten card; `None` when some cannot be covered.

    The hardest attack cards are matched first, each with the cheapest card left that beats it.
    """
    plan = []
    left = hand
    beaters = ctx.beaters
    for attack in sorted(unbeaten, key=ctx.cost.__getitem__, reverse=True):
        cover = cheapest(left & beaters[attack], ctx)
        if not cover:
            return None
        plan.append((attack, cover))
        left ^= cover
    return plan


def too_costly(plan: list[tuple[int, int]], stock: int, ctx: Context) -> bool:
    """Whether taking beats covering: spending high or several trumps while the stock is full."""
    if stock <= LATE_STOCK:
        return False
    trumps = [ctx.cost[c] - TRUMP_BONUS for _, c in plan if c & ctx.trump_bits]
    if not trumps:
        return False
    if stock > EARLY_STOCK:
        return max(trumps) >= 12 or len(trumps) >= 2
    return max(trumps) >= 14 or len(trumps) >= 3


def defend(
    hand: int,
    attacks: list[int],
    defences: list[int],
    stock: int,
    transfers: int,
    shows: int,
    ctx: Context,
) -> Move:
    """R11/R13/R14: show a trump, transfer with a plain card, cover cheaply, or take.

    `defences` holds 0 for each unbeaten attack card; `transfers`/`shows` are the cards that
    may transfer by playing or showing them."""
    if shows:
        return (SHOW, shows & -shows, 0)
    plain = transfers & ~ctx.trump_bits
    if plain:
        return (TRANSFER, cheapest(plain, ctx), 0)
    unbeaten = [a for a, d in zip(attacks, defences, strict=True) if not d]
    plan = cover_plan(hand, unbeaten, ctx)
    if plan is None or too_costly(plan, stock, ctx):
        return TAKE_MOVE
    first = unbeaten[0]
    for a, cover in plan:
        if a == first:
            return (DEFEND, cover, first)
    raise AssertionError("the plan covers every unbeaten card")


def attack(hand: int, opening: bool, rank_bits: int, stock: int, took: bool, ctx: Context) -> Move:
    """Open a bout (`opening`), or throw in / pass."""
    if opening:
        return (ATTACK, open_card(hand, ctx), 0)
    card = throw_card(hand, rank_bits, stock, took, ctx)
    return (ATTACK, card, 0) if card else PASS_MOVE


def sim_move(sim: Sim, seat: int) -> Move:
    """The heuristic move for `seat` in a `Sim` (reading only that seat's hand)."""
    hand = sim.hands[seat]
    if seat == sim.defender and not sim.took and 0 in sim.defences:
        return defend(
            hand,
            sim.attacks,
            sim.defences,
            len(sim.stock),
            sim.transfer_cards(),
            sim.show_cards(),
            sim.ctx,
        )
    return attack(hand, not sim.attacks, sim.rank_bits, len(sim.stock), sim.took, sim.ctx)
