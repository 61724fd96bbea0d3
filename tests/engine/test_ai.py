"""Computer players (engine.ai): legal play, determinism, no peeking, the easy heuristics,
the search model (`Sim` agrees with `Game`) and the public-history reader."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine import (
    Action,
    Attack,
    Defend,
    ExchangeTrump,
    Game,
    Pass,
    RandomPlayer,
    Redeal,
    Resign,
    Rules,
    ShowTrump,
    Take,
    Transfer,
)
from engine.ai import LEVELS, Budget, make_player, observe
from engine.ai.base import to_move
from engine.ai.search import search
from engine.ai.sim import DRAW, PASS_MOVE, Bout, Sim, context
from engine.cards import bits_of, parse_cards
from tests.engine.conftest import c, position

FAST = Budget(seconds=None, iterations=3, solver_nodes=300)
"""A tiny, time-free search budget: tests stay quick and decisions depend on the seed alone."""

RULES = {
    "classic": Rules.preset("classic"),
    "perevodnoy": Rules.preset("perevodnoy"),
    "online": Rules.preset("online"),
    "short": Rules.preset("short"),
    "extras": Rules(
        transfer=True, transfer_by_showing_trump=True, trump_exchange=True, redeal_on_flush=True
    ),
    "neighbours": Rules(throw_in="neighbours", deck_size=52),
}


def player(level: str, seed: int) -> Any:
    return make_player(level, seed, FAST if level != "easy" else None)


def first_to_act(game: Game) -> str:
    """Among several waiting players, the first clockwise from the attacker."""
    order = game.players
    start = order.index(game.attacker)
    return next(
        order[(start + i) % len(order)]
        for i in range(len(order))
        if order[(start + i) % len(order)] in game.to_act
    )


def play_out(game: Game, choosers: dict[str, Any], max_moves: int = 2000) -> list[Action]:
    """Play to the end, checking that every chosen action is legal."""
    chosen = []
    for _ in range(max_moves):
        if game.is_over:
            return chosen
        p = first_to_act(game)
        action = choosers[p].choose(game, p)
        assert action in game.legal_actions(p), f"{p} chose illegal {action}"
        assert not isinstance(action, Resign)
        game.apply(p, action)
        chosen.append(action)
    raise AssertionError("the game did not end")


def random_position(seed: int, rules: Rules, n: int, moves: int) -> Game:
    """A game after up to `moves` random actions (not over)."""
    game = Game.new([f"p{i}" for i in range(n)], rules=rules, seed=seed)
    rnd = RandomPlayer(seed)
    for _ in range(moves):
        p = first_to_act(game)
        action = rnd.choose(game, p)
        before = game.to_dict()
        game.apply(p, action)
        if game.is_over:
            return Game.from_dict(before)
    return game


# ---------------------------------------------------------------------------- legal play


def opponent(kind: str, seed: int) -> Any:
    return RandomPlayer(seed) if kind == "random" else player(kind, seed)


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_plays_only_legal_actions(level: str) -> None:
    """Many complete games, 2-4 players, every preset and the rare options: the level in
    seat 0, the other seats playing random, easy or the same level in turn."""
    games = 120 if level == "easy" else 24
    for i in range(games):
        rules = list(RULES.values())[i % len(RULES)]
        players = [f"p{j}" for j in range(2 + i % 3)]
        kinds = [level] + [("random", "easy", level)[(i + j) % 3] for j in range(1, len(players))]
        choosers = {p: opponent(kinds[j], 10 * i + j) for j, p in enumerate(players)}
        game = Game.new(players, rules=rules, seed=i)
        play_out(game, choosers)
        assert game.is_over


def test_all_computer_tables_finish() -> None:
    for i, level in enumerate(("easy", "medium", "hard", "easy")):
        players = ["a", "b", "c"]
        game = Game.new(players, rules=RULES["perevodnoy"], seed=100 + i)
        play_out(game, {p: player(level, j) for j, p in enumerate(players)})


def test_make_player_levels() -> None:
    assert LEVELS == ("easy", "medium", "hard")
    for level in LEVELS:
        assert make_player(level, 1).level == level
    with pytest.raises(ValueError, match="unknown level"):
        make_player("expert", 1)


# ---------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("level", LEVELS)
def test_same_seed_same_game(level: str) -> None:
    def run() -> list[Action]:
        game = Game.new(["a", "b"], seed=7)
        return play_out(game, {"a": player(level, 1), "b": player("easy", 2)})

    assert run() == run()


def test_a_decision_does_not_depend_on_earlier_calls() -> None:
    game = random_position(3, RULES["classic"], 2, 9)
    me = first_to_act(game)
    fresh = player("hard", 5).choose(game, me)
    used = player("hard", 5)
    for _ in range(3):
        used.choose(game, me)
    assert used.choose(game, me) == fresh


# ---------------------------------------------------------------------------- no peeking


def public_cards(game: Game) -> set[Any]:
    """Every card an action of the history showed."""
    seen = set()
    for _, action in game.history:
        for name in ("card", "attack"):
            card = getattr(action, name, None)
            if card is not None:
                seen.add(card)
    return seen


def twin(game: Game, me: str, rng: random.Random) -> Game:
    """The same game with the cards `me` cannot have seen dealt differently: the other
    players' never-shown cards and the face-down stock, shuffled among their places, so
    that `me` sees the same view (`to_act` shows who can still throw in: public)."""
    for _ in range(100):
        other = shuffled(game, me, rng)
        if other.view(me) == game.view(me):
            return other
    return game


def shuffled(game: Game, me: str, rng: random.Random) -> Game:
    """`game` with the cards `me` never saw shuffled among their places."""
    data = game.to_dict()
    shown = {str(x) for x in public_cards(game)} | {str(game.trump_card)}
    places = [data["hands"][p] for p in game.players if p != me]
    places.append(data["stock"])  # top first: the face-up trump, last, is in `shown`
    slots = [(cards, i) for cards in places for i, x in enumerate(cards) if x not in shown]
    hidden = [cards[i] for cards, i in slots]
    rng.shuffle(hidden)
    for (cards, i), card in zip(slots, hidden, strict=True):
        cards[i] = card
    return Game.from_dict(data)


@pytest.mark.parametrize("level", LEVELS)
def test_no_peeking(level: str) -> None:
    """Two games that differ only in cards the player cannot see: the same choice."""
    differed = 0
    rng = random.Random(level)
    for i in range(12):
        rules = (RULES["classic"], RULES["perevodnoy"], RULES["online"])[i % 3]
        game = random_position(i, rules, 2 + i % 3, 6 + 5 * i)
        me = first_to_act(game)
        other = twin(game, me, rng)
        assert other.view(me) == game.view(me)
        assert other.history == game.history
        assert other.discard == game.discard
        differed += other != game
        assert player(level, i).choose(game, me) == player(level, i).choose(other, me)
    assert differed >= 8


def test_observe_reads_nothing_hidden() -> None:
    for i in range(10):
        game = random_position(50 + i, RULES["perevodnoy"], 2 + i % 3, 20 + 3 * i)
        me = first_to_act(game)
        assert observe(game, me) == observe(twin(game, me, random.Random(i)), me)


# ---------------------------------------------------------------------------- easy


def easy_choice(game: Game, who: str) -> Action:
    return make_player("easy", 0).choose(game, who)


def test_easy_opens_with_the_lowest_plain_card() -> None:
    game = position({"A": "7♠ 9♥ 6♦ Q♣ 6♥", "B": "8♠ 8♥ 8♦ 8♣ K♠"}, "A♦", stock="10♠ 10♥")
    # 6♦ is trump: the lowest plain card is 6♥
    assert easy_choice(game, "A") == Attack(c("6♥"))


def test_easy_prefers_a_pair_to_open() -> None:
    game = position({"A": "7♠ 8♥ 8♣ A♣ K♦", "B": "6♠ 9♥ 10♦ J♣ Q♠"}, "A♦", stock="10♠")
    assert easy_choice(game, "A") == Attack(c("8♣"))


def test_easy_defends_with_the_cheapest_card() -> None:
    game = position({"A": "7♠ J♦", "B": "8♠ K♠ 6♦ 9♥"}, "A♦", stock="10♠ 10♥")
    game.apply("A", Attack(c("7♠")))
    assert easy_choice(game, "B") == Defend(c("7♠"), c("8♠"))


def test_easy_covers_with_a_plain_card_before_a_trump() -> None:
    game = position({"A": "7♠ J♦", "B": "A♠ 7♦ 9♥"}, "A♦", stock="10♠ 10♥")
    game.apply("A", Attack(c("7♠")))
    assert easy_choice(game, "B") == Defend(c("7♠"), c("A♠"))


def test_easy_takes_rather_than_spend_a_high_trump_early() -> None:
    stock = "6♣ 7♣ 8♣ 9♣ 10♣ J♣ Q♣ K♣ 6♥ 7♥ 8♥ 9♥ 10♥ J♥ 7♦ 8♦"
    game = position({"A": "A♠ 6♠", "B": "K♦ 9♠ 10♠"}, "9♦", stock=stock)
    game.apply("A", Attack(c("A♠")))
    assert easy_choice(game, "B") == Take()


def test_easy_trumps_when_the_stock_is_empty() -> None:
    game = position({"A": "A♠ 6♠", "B": "K♦ 9♠ 10♠"}, "♦")
    game.apply("A", Attack(c("A♠")))
    assert easy_choice(game, "B") == Defend(c("A♠"), c("K♦"))


def test_easy_takes_when_it_cannot_cover() -> None:
    game = position({"A": "A♠ 6♠", "B": "9♠ 10♣"}, "♦")
    game.apply("A", Attack(c("A♠")))
    assert easy_choice(game, "B") == Take()


def test_easy_throws_in_low_cards_and_keeps_trumps() -> None:
    game = position({"A": "7♠ 7♥ 7♦ K♣", "B": "8♠ 9♠ 10♠ J♠"}, "A♦", stock="6♣ 6♥ 6♠ 8♣ 9♣")
    game.apply("A", Attack(c("7♠")))
    game.apply("B", Defend(c("7♠"), c("8♠")))
    assert easy_choice(game, "A") == Attack(c("7♥"))
    game.apply("A", Attack(c("7♥")))
    game.apply("B", Take())
    assert easy_choice(game, "A") == Pass()  # 7♦ is a trump


def test_easy_transfers_with_a_plain_card() -> None:
    rules = Rules.preset("perevodnoy")
    game = position({"A": "7♠ K♣", "B": "7♥ 8♠ 9♠", "C": "6♣ 6♥ 8♥"}, "A♦", rules=rules)
    game.apply("A", Attack(c("7♠")))
    assert easy_choice(game, "B") == Transfer(c("7♥"))


def test_easy_shows_a_trump_to_transfer() -> None:
    rules = RULES["extras"]
    game = position({"A": "7♠ K♣", "B": "7♦ 8♠ 9♠", "C": "6♣ 6♥ 8♥"}, "A♦", rules=rules)
    game.apply("A", Attack(c("7♠")))
    assert easy_choice(game, "B") == ShowTrump(c("7♦"))


def test_obvious_actions() -> None:
    rules = Rules(trump_exchange=True)
    game = position({"A": "6♦ 7♠", "B": "8♠ 9♠"}, "A♦", stock="10♠", rules=rules)
    for level in LEVELS:
        assert player(level, 1).choose(game, "A") == ExchangeTrump()
    flush = Rules(redeal_on_flush=True)
    game = position(
        {"A": "6♠ 7♠ 8♠ 9♠ 10♠", "B": "6♦ 7♦ 8♦ 9♦ 10♦"},
        "A♦",
        stock="J♠",
        rules=flush,
        first_bout=True,
    )
    assert isinstance(player("easy", 1).choose(game, "A"), Redeal)


# ---------------------------------------------------------------------------- hard


def test_hard_finds_the_winning_endgame() -> None:
    """Stock empty, every card known. The lowest card (7♥) loses: B covers with A♥ and
    then attacks with clubs A cannot beat. J♦ and Q♦, which B cannot beat, win."""
    game = position({"A": "J♦ Q♦ 7♥", "B": "9♣ A♣ A♥"}, "♠", attacker="A")
    assert easy_choice(game, "A") == Attack(c("7♥"))
    for level in ("medium", "hard"):
        choice = make_player(level, 1, Budget(seconds=None, iterations=20)).choose(game, "A")
        assert choice == Attack(c("J♦"))


def test_search_without_candidates_returns_none() -> None:
    game = position({"A": "6♠ 7♥", "B": "6♦ A♦"}, "♦", attacker="A")
    know = observe(game, "B")  # B is not to move: nothing to compare
    assert search(know, set(), random.Random(1), FAST) is None


# ---------------------------------------------------------------------------- Sim = Game


def sim_of(game: Game) -> Sim:
    """A full-information `Sim` of `game` (test helper: it reads every hand)."""
    seat = {p: i for i, p in enumerate(game.players)}
    data = game.to_dict()
    bout = Bout(
        attacker=seat[game.attacker],
        defender=seat[game.defender],
        opener=seat[game.bout_opener],
        attacks=tuple(a.bit for a, _ in game.table),
        defences=tuple(d.bit if d else 0 for _, d in game.table),
        limit=game.limit,
        took=game.defender_took,
        passed=sum(1 << seat[p] for p in game.passed),
        first_bout=game.first_bout,
        shown=bits_of(parse_cards(data["shown"])),
    )
    return Sim.restore(
        context(game.rules, game.trump_suit),
        [bits_of(game.hand(p)) for p in game.players],
        [x.bit for x in reversed(parse_cards(data["stock"]))],
        [seat[p] for p in game.active_players],
        bout,
    )


def sim_state(s: Sim) -> tuple[Any, ...]:
    """Everything a `Sim` holds, for comparison."""
    return (
        s.hands,
        s.stock,
        s.active,
        s.attacker,
        s.defender,
        s.attacks,
        s.defences,
        s.took,
        s.passed,
        s.limit,
        s.first_bout,
        s.shown,
        s.over,
        s.durak,
    )


@pytest.mark.parametrize("name", list(RULES))
def test_sim_follows_the_engine(name: str) -> None:
    """Random games: at every step `Sim` waits for the same players, offers the same moves
    and, after the same move, reaches the same state and outcome as `Game`."""
    for i in range(12):
        rules = RULES[name]
        game = Game.new([f"p{j}" for j in range(min(2 + i % 4, rules.max_players))], rules, i)
        rnd = RandomPlayer(i)
        while not game.is_over:
            s = sim_of(game)
            assert {game.players.index(p) for p in game.to_act} == sim_to_act(s)
            p = game.players[s.actor()]
            legal = [a for a in game.legal_actions(p) if to_move(a) is not None]
            assert {to_move(a) for a in legal} == set(s.moves(every_cover=True))
            action = rnd.choose(game, p)
            if to_move(action) is None:  # resign, exchange, redeal: not modelled
                action = legal[0]
            game.apply(p, action)
            s.apply(game.players.index(p), to_move(action) or PASS_MOVE)
            if game.is_over:
                assert s.over
                assert s.durak == (game.players.index(game.durak) if game.durak else DRAW)
            else:
                assert sim_state(s) == sim_state(sim_of(game))


def sim_to_act(s: Sim) -> set[int]:
    """The seats the engine waits for, in `Sim` terms."""
    if not s.attacks:
        return {s.attacker}
    if not s.took and 0 in s.defences:
        return {s.defender}
    return set(s.waiting())


# ---------------------------------------------------------------------------- history


@pytest.mark.parametrize("name", ["classic", "perevodnoy", "extras", "neighbours"])
def test_history_reader_knows_only_true_things(name: str) -> None:
    """Every position of random games (with throw-ins out of turn too) is read exactly, and
    what it claims (picked-up cards still held, ranks a hand lacks) is true."""
    rules = RULES[name]
    for i in range(8):
        n = min(2 + i % 3, rules.max_players)
        game = Game.new([f"p{j}" for j in range(n)], rules=rules, seed=i)
        rnd, rng = RandomPlayer(i), random.Random(i)
        learned = 0
        while not game.is_over:
            me = rng.choice(game.active_players)
            know = observe(game, me)
            assert know.exact
            for j, p in enumerate(game.players):
                hand = bits_of(game.hand(p))
                assert not know.known[j] & ~hand
                assert not know.lacks[j] & hand & ~know.known[j]
                learned += bool(know.known[j]) and p != me
            p = first_to_act(game)
            action = rnd.choose(game, p)
            extra = [
                (q, a)
                for q in game.players
                if q not in game.to_act
                for a in game.legal_actions(q)
                if isinstance(a, Attack)
            ]
            if extra and rng.random() < 0.3:
                p, action = rng.choice(extra)
            elif isinstance(action, Resign):
                action = game.legal_actions(p)[0]
            game.apply(p, action)
        assert learned


def test_a_set_up_position_is_read_from_the_view() -> None:
    game = position({"A": "6♠ 7♥", "B": "6♦ A♦ 8♣"}, "♦", discard="9♠ 10♠")
    know = observe(game, "B")
    assert not know.exact
    assert know.unseen & bits_of(parse_cards("6♠ 7♥")) == bits_of(parse_cards("6♠ 7♥"))
    assert not know.unseen & bits_of(parse_cards("9♠ 10♠ 6♦"))


@pytest.mark.parametrize("level", ["medium", "hard"])
@pytest.mark.parametrize("fixture", ["ai_transfer_cycle_36.json", "ai_transfer_cycle_24.json"])
def test_r14_the_solver_ends_where_shown_trumps_go_round_in_a_circle(
    level: str, fixture: str
) -> None:
    """Two-player endgames with transfers by showing a trump: positions can repeat along a
    line of play. The exact solver used to recurse until Python's limit there."""
    saved = json.loads((Path(__file__).parent / "fixtures" / fixture).read_text(encoding="utf-8"))
    game = Game.from_dict(saved["game"])
    player = saved["player"]
    for seed in range(3):
        budget = Budget(seconds=None, iterations=50, solver_nodes=20_000)
        action = make_player(level, seed, budget).choose(game.copy(), player)
        assert action in game.legal_actions(player)
