"""Property tests: random legal play under every preset and a few option mixes.

Checked at every step: cards are conserved and never duplicated (R1), the game ends
(R17), every listed legal action is accepted, a random illegal action raises IllegalMove
and changes nothing, and to_dict/from_dict round-trips.
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    Action,
    Attack,
    Card,
    Defend,
    ExchangeTrump,
    Game,
    IllegalMove,
    Pass,
    RandomPlayer,
    Redeal,
    Resign,
    Rules,
    ShowTrump,
    Take,
    Transfer,
)
from tests.engine.conftest import deck

NAMES = ["A", "B", "C", "D", "E", "F", "G", "H"]
MAX_STEPS = 3000

RULE_SETS = {
    "classic": Rules.preset("classic"),
    "perevodnoy": Rules.preset("perevodnoy"),
    "online": Rules.preset("online"),
    "short": Rules.preset("short"),
    "all_options": Rules(
        transfer=True,
        transfer_by_showing_trump=True,
        trump_exchange=True,
        redeal_on_flush=True,
        throw_in="neighbours",
    ),
    "small_deck": Rules(deck_size=24, transfer=True, first_bout_limit=6),
    "big_deck": Rules(deck_size=52, throw_in="neighbours_at_5", trump_exchange=True),
}


def _settings(max_examples: int) -> settings:
    """Modest, reproducible settings: no deadline, no example database."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        derandomize=True,
        database=None,
    )


games = st.tuples(
    st.sampled_from(sorted(RULE_SETS)),
    st.integers(min_value=2, max_value=8),
    st.integers(min_value=0, max_value=2**32 - 1),
)


def _new(rules_name: str, n: int, seed: int) -> Game:
    rules = RULE_SETS[rules_name]
    n = min(n, rules.max_players)
    return Game.new(NAMES[:n], rules=rules, seed=seed)


def _copy(game: Game) -> Game:
    return Game.from_dict(game.to_dict())


def _check_invariants(game: Game, deck_size: int) -> None:
    # R1: every card is somewhere, exactly once
    visible: list[Card] = [card for p in game.players for card in game.hand(p)]
    for attack, defence in game.table:
        visible.append(attack)
        if defence is not None:
            visible.append(defence)
    duplicates = [card for card, k in Counter(visible).items() if k > 1]
    assert not duplicates, f"duplicated cards {duplicates}"
    assert len(visible) + game.stock_size + game.discard_size == deck_size
    assert set(visible) <= set(deck(deck_size))
    assert game.stock_size >= 0
    assert game.discard_size >= 0
    # who acts
    assert game.to_act <= set(game.active_players)
    assert set(game.active_players) <= set(game.players)
    assert bool(game.to_act) == (not game.is_over)
    for p in game.to_act:
        assert any(not isinstance(a, Resign) for a in game.legal_actions(p)), p
    for p in game.players:
        if p not in game.active_players or game.is_over:
            assert game.legal_actions(p) == []
        else:
            assert Resign() in game.legal_actions(p)
    assert game.move_number == len(game.history)
    # R10: the limit is never exceeded
    if game.table:
        assert len(game.table) <= game.limit <= 6
    # views hide nothing public and show the viewer's own moves
    public = game.view(None)
    assert public.hand is None
    assert public.legal == ()
    assert public.stock_size == game.stock_size
    for p in game.active_players:
        view = game.view(p)
        assert set(view.legal) == set(game.legal_actions(p))
        assert tuple(view.hand) == tuple(game.hand(p))


def _check_round_trip(game: Game) -> None:
    data = game.to_dict()
    again = Game.from_dict(data)
    assert again == game
    assert again.to_dict() == data


def _random_action(rng: random.Random, game: Game) -> Action:
    cards = deck(52)
    kind = rng.randrange(10)
    if kind == 0:
        return Attack(rng.choice(cards))
    if kind == 1:
        return Defend(rng.choice(cards), rng.choice(cards))
    if kind == 2 and game.table:
        return Defend(rng.choice(game.table)[0], rng.choice(cards))
    if kind == 3:
        return Transfer(rng.choice(cards))
    if kind == 4:
        return ShowTrump(rng.choice(cards))
    if kind == 5:
        own = [card for p in game.players for card in game.hand(p)]
        if own:
            return Attack(rng.choice(own))
    return rng.choice([Take(), Pass(), ExchangeTrump(), Redeal(), Resign()])


def _check_illegal(rng: random.Random, game: Game) -> None:
    """A random action that is not legal for a random player is refused; nothing changes."""
    player = rng.choice(game.players)
    legal = game.legal_actions(player)
    for _ in range(5):
        action = _random_action(rng, game)
        if action not in legal:
            break
    else:
        return
    before = game.to_dict()
    try:
        game.apply(player, action)
    except IllegalMove:
        pass
    else:
        raise AssertionError(f"{player}: {action} not in legal_actions but accepted")
    assert game.to_dict() == before


def _choose(rng: random.Random, game: Game, resign: bool) -> tuple[str, Action]:
    """A random player from to_act (sometimes another active player) and a random move."""
    candidates = sorted(game.to_act)
    if rng.random() < 0.2:
        others = [
            p
            for p in game.active_players
            if p not in game.to_act
            and any(not isinstance(a, Resign) for a in game.legal_actions(p))
        ]
        if others:
            candidates = others
    player = rng.choice(candidates)
    legal = game.legal_actions(player)
    if resign:
        return player, Resign()
    moves = [a for a in legal if not isinstance(a, Resign | Redeal)] or [
        a for a in legal if not isinstance(a, Resign)
    ]
    return player, rng.choice(moves)


def _play(
    rules_name: str,
    n: int,
    seed: int,
    *,
    check_all_legal: bool = False,
    check_illegal: bool = True,
) -> Game:
    game = _new(rules_name, n, seed)
    deck_size = RULE_SETS[rules_name].deck_size
    rng = random.Random(seed)
    resign_at = rng.randrange(300) if rng.random() < 0.1 else None
    for step in range(MAX_STEPS):
        _check_invariants(game, deck_size)
        _check_round_trip(game)
        if game.is_over:
            return game
        if check_illegal:
            _check_illegal(rng, game)
        player, action = _choose(rng, game, resign=step == resign_at)
        legal = game.legal_actions(player)
        assert action in legal
        to_try = legal if check_all_legal else rng.sample(legal, min(2, len(legal)))
        for other in to_try:
            copy = _copy(game)
            copy.apply(player, other)
            _check_invariants(copy, deck_size)
        events = game.apply(player, action)
        assert isinstance(events, list)
    raise AssertionError(f"game did not end within {MAX_STEPS} steps")


@_settings(40)
@given(games)
def test_r1_r17_random_play_conserves_cards_and_ends(spec: tuple[str, int, int]) -> None:
    """R1/R17: random play keeps every card exactly once and always ends with an outcome."""
    game = _play(*spec)
    outcome = game.outcome
    assert game.is_over
    assert outcome is not None
    if outcome.resigned is not None:
        assert outcome.durak == outcome.resigned
    elif outcome.draw:
        assert outcome.durak is None
        assert all(not game.hand(p) for p in game.players)
    else:
        assert outcome.durak is not None
        holders = [p for p in game.players if game.hand(p)]
        assert holders == [outcome.durak]
    assert game.durak == outcome.durak


@_settings(10)
@given(games)
def test_r7_r14_every_legal_action_is_accepted(spec: tuple[str, int, int]) -> None:
    """R7–R14: every action listed by legal_actions is accepted by apply (on a copy)."""
    _play(*spec, check_all_legal=True, check_illegal=False)


@_settings(20)
@given(games)
def test_serialization_restored_copy_continues_identically(spec: tuple[str, int, int]) -> None:
    """Serialization: a copy restored at a random step replays the same moves identically."""
    rules_name, n, seed = spec
    game = _new(rules_name, n, seed)
    rng = random.Random(seed)
    copy_at = rng.randrange(60)
    copy: Game | None = None
    for step in range(MAX_STEPS):
        if step == copy_at:
            copy = _copy(game)
        if game.is_over:
            break
        player, action = _choose(rng, game, resign=False)
        events = game.apply(player, action)
        if copy is not None:
            assert copy.apply(player, action) == events
            assert copy == game
    assert game.is_over
    if copy is not None:
        assert copy.outcome == game.outcome


@_settings(20)
@given(games)
def test_r17_random_player_finishes_games(spec: tuple[str, int, int]) -> None:
    """R17: RandomPlayer picks legal moves (no Resign while others exist) to the end."""
    rules_name, n, seed = spec
    game = _new(rules_name, n, seed)
    bots = {p: RandomPlayer(seed + i) for i, p in enumerate(game.players)}
    for _ in range(MAX_STEPS):
        if game.is_over:
            break
        player = sorted(game.to_act)[0]
        action = bots[player].choose(game, player)
        assert action in game.legal_actions(player)
        assert not isinstance(action, Resign)
        game.apply(player, action)
    assert game.is_over
    assert game.outcome is not None
    assert game.outcome.resigned is None
