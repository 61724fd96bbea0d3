"""The engine runs as Python or compiled with mypyc (tools/compile_engine.py), and
`make test` runs this whole suite once on each. These tests make sure a run tests the build
it means to, and that both builds play exactly the same games."""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path

import pytest

import engine
from engine import Game, Resign, Rules
from engine.ai import Budget, make_player
from tools.compile_engine import is_current

EVERY_OPTION = Rules(
    transfer=True,
    transfer_by_showing_trump=True,
    trump_exchange=True,
    redeal_on_flush=True,
    throw_in="neighbours",
)

# The digest of the games below, as the engine plays them today. It changes only when the
# engine's play changes: then a saved game would go on differently after an upgrade, so a
# change here must be deliberate.
SEEDED_GAMES_DIGEST = "6ea4837ce833"


def test_the_build_under_test_is_the_one_asked_for() -> None:
    """`make test` says which build each run is for; a compiled run must not quietly import
    the sources (say, with the repository root first on sys.path)."""
    asked = os.environ.get("DURAK_ENGINE")
    if asked is None:
        pytest.skip("DURAK_ENGINE is not set: this run is for whichever build imports")
    assert asked in ("pure", "compiled"), f"DURAK_ENGINE={asked!r}: say pure or compiled"
    assert engine.COMPILED is (asked == "compiled"), engine.__file__


ROOT = Path(__file__).resolve().parents[2]


def test_a_compiled_engine_is_built_from_the_sources_of_today() -> None:
    """A compiled run imports build/engine, a copy made by tools/compile_engine.py. After an
    edit to engine/, that copy is stale until rebuilt (`make engine`; make run, test and
    bench rebuild by themselves): a run by hand must not test yesterday's engine."""
    if not engine.COMPILED:
        pytest.skip("the pure-Python engine is the sources themselves")
    build = Path(engine.__file__).resolve().parent.parent
    assert is_current(build), (
        f"{build} was built from other sources than {ROOT / 'engine'}: run `make engine`"
    )


def _play(players: list[str], rules: Rules, seed: int) -> str:
    """A seeded game to the end, every legal action but Resign equally likely."""
    game = Game.new(players, rules=rules, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        player = rng.choice(sorted(game.to_act))
        actions = [a for a in game.legal_actions(player) if not isinstance(a, Resign)]
        game.apply(player, rng.choice(actions))
    return json.dumps(game.to_dict(), sort_keys=True, ensure_ascii=False)


def test_seeded_games_are_the_same_in_every_build() -> None:
    """Same seed, same game: the pure and the compiled engine deal, play and end 144
    seeded games identically (every preset and every option on, 2 to 6 players)."""
    digest = hashlib.sha256()
    for rules in (*engine.PRESETS.values(), EVERY_OPTION):
        for n in range(2, min(6, rules.max_players) + 1):
            for seed in range(6):
                digest.update(_play([f"p{i}" for i in range(n)], rules, seed).encode())
    assert digest.hexdigest()[:12] == SEEDED_GAMES_DIGEST


# The same for games of computer players, with a search budget of iterations, not seconds.
COMPUTER_GAMES_DIGEST = "13dccb3a6ad0"


def test_computer_players_choose_the_same_in_every_build() -> None:
    """Seeded computer players (`engine.ai`, compiled too) make the same choices in the pure
    and the compiled engine: easy against medium and hard, two and three players."""
    budget = Budget(seconds=None, iterations=6, solver_nodes=400)
    digest = hashlib.sha256()
    for seed, levels in enumerate(
        (("medium", "easy"), ("hard", "easy"), ("easy", "hard", "medium"))
    ):
        players = [f"{level}{i}" for i, level in enumerate(levels)]
        game = Game.new(players, seed=seed)
        choosers = {
            p: make_player(level, seed + i, None if level == "easy" else budget)
            for i, (p, level) in enumerate(zip(players, levels, strict=True))
        }
        while not game.is_over:
            player = sorted(game.to_act)[0]
            game.apply(player, choosers[player].choose(game, player))
        digest.update(json.dumps(game.to_dict(), sort_keys=True, ensure_ascii=False).encode())
    assert digest.hexdigest()[:12] == COMPUTER_GAMES_DIGEST
