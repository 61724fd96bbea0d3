"""Questions about the rules that the bot asks on a player's behalf.

What a tapped card may do, why it may not, whether a player has anything to decide, who
would defend after a transfer, and what the game does for a player who ran out of time or
left. The answers come from `Game.legal_actions` and `Game.apply` (on a copy where the
question must not change the game), so the rules stay in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.actions import Action, Attack, Defend, Pass, Resign, Take, Transfer
from engine.cards import Card
from engine.errors import ErrorCode, IllegalMove
from engine.events import Event, Resigned
from engine.game import Game


def is_active(legal: Sequence[Action]) -> bool:
    """Whether a player with these legal actions has something to decide (anything but
    resigning, which is always open, R18)."""
    return any(not isinstance(a, Resign) for a in legal)


def playable_cards(legal: Sequence[Action]) -> frozenset[Card]:
    """Cards that some legal action plays: an attack or throw-in, a cover, a transfer."""
    out: set[Card] = set()
    for a in legal:
        if isinstance(a, (Attack, Transfer, Defend)):
            out.add(a.card)
    return frozenset(out)


def actions_for_card(legal: Sequence[Action], card: Card) -> list[Action]:
    """What playing `card` can mean now: one action (play it), several (a choice of covers,
    or cover and transfer), none (it cannot be played)."""
    return [a for a in legal if isinstance(a, (Attack, Transfer, Defend)) and a.card is card]


def must_decide(game: Game, player: str) -> bool:
    """Whether the game waits for `player` to decide, not merely lets them: their turn to
    lead (R8), an attack to defend (cover, transfer or take), or a throw-in after the
    defender took (R11). A player who may throw in after a cover is not waited for: the
    bout can go on without them."""
    if player not in game.to_act:
        return False
    if player == game.defender:
        return not game.defender_took
    if not game.table:
        return player == game.attacker
    return game.defender_took


def why_not(game: Game, player: str, card: Card) -> ErrorCode | None:
    """Why `card` cannot be played by `player` now, as the rule it breaks; None when the
    card is fine but it is not the player's turn to play one."""
    attempt: Action = Attack(card)
    if player == game.defender:
        open_attacks = [a for a, d in game.table if d is None]
        if open_attacks and not game.defender_took:
            attempt = Defend(open_attacks[0], card)
    try:
        game.copy().apply(player, attempt)
    except IllegalMove as exc:
        return exc.code
    return None


def transfer_target(game: Game, player: str, options: Sequence[Action]) -> str | None:
    """Who would defend after `player` transfers, when a transfer is the only option (R14)."""
    if len(options) != 1 or not isinstance(options[0], Transfer):
        return None
    probe = game.copy()
    probe.apply(player, options[0])
    return probe.defender


def forced_resign(game: Game, player: str) -> list[Event]:
    """R18 for a player who did not resign (removed, or left the group): the events of
    resigning, without the "gave up" that only a player's own choice shows."""
    return [e for e in game.apply(player, Resign()) if not isinstance(e, Resigned)]


def timeout_action(game: Game, player: str) -> Action:
    """What the game does for a player whose time ran out: a defender takes, a player who
    may pass passes, an opener plays their lowest card (non-trumps first)."""
    legal = game.legal_actions(player)
    if Take() in legal:
        return Take()
    if Pass() in legal:
        return Pass()
    attacks = [a for a in legal if isinstance(a, Attack)]
    if attacks:
        trump = game.trump_suit
        return min(attacks, key=lambda a: (a.card.suit is trump, a.card.rank, a.card.index))
    return Resign()
