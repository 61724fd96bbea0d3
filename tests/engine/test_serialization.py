"""to_dict / from_dict: JSON-safe, equal after a round trip, continues identically."""

from __future__ import annotations

import copy
import json
import pickle
import random

import pytest

from engine import Game, Resign, Rules, Take
from tests.engine.conftest import att, play, position, raises_value_error


def _step(game: Game, rng: random.Random) -> bool:
    """One random legal move (no Resign); False when the game is over."""
    if game.is_over:
        return False
    player = rng.choice(sorted(game.to_act))
    legal = [a for a in game.legal_actions(player) if not isinstance(a, Resign)]
    assert legal, f"{player} is to act but has no move"
    game.apply(player, rng.choice(legal))
    return True


def test_serialization_new_game_round_trip() -> None:
    """Serialization: from_dict(to_dict()) equals the game; the dict is JSON and format 1."""
    game = Game.new(["A", "B", "C"], seed=3)
    data = game.to_dict()
    assert data["format"] == 1
    text = json.dumps(data)
    again = Game.from_dict(json.loads(text))
    assert again == game
    assert again.to_dict() == data


@pytest.mark.parametrize("preset", ["classic", "perevodnoy", "online", "short"])
def test_serialization_round_trip_at_every_step(preset: str) -> None:
    """Serialization: the round trip holds after every move of a random game."""
    rng = random.Random(preset)
    game = Game.new(["A", "B", "C", "D"], rules=Rules.preset(preset), seed=17)
    steps = 0
    while True:
        data = game.to_dict()
        again = Game.from_dict(json.loads(json.dumps(data)))
        assert again == game
        assert again.to_dict() == data
        for p in game.players:
            assert again.legal_actions(p) == game.legal_actions(p)
        if not _step(game, rng):
            break
        steps += 1
        assert steps < 2000
    assert game.is_over


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_serialization_restored_game_continues_identically(seed: int) -> None:
    """Serialization: a restored game, given the same moves, stays equal to the original."""
    rules = Rules(transfer=True, trump_exchange=True)
    game = Game.new(["A", "B", "C"], rules=rules, seed=seed)
    rng = random.Random(seed)
    for _ in range(15):
        _step(game, rng)
    copy = Game.from_dict(game.to_dict())
    rng_a = random.Random(seed * 100)
    rng_b = random.Random(seed * 100)
    while True:
        more_a = _step(game, rng_a)
        more_b = _step(copy, rng_b)
        assert more_a == more_b
        assert copy == game
        assert copy.to_dict() == game.to_dict()
        if not more_a:
            break
    assert copy.outcome == game.outcome


def test_serialization_position_with_options_round_trips() -> None:
    """Serialization: a hand-built position in the middle of a bout round-trips."""
    game = position(
        {"A": "6♠ 6♥ K♣", "B": "7♠ 8♥ 9♦", "C": "6♦ Q♠"},
        trump="A♦",
        stock="10♦ J♦",
        attacker="A",
        rules=Rules(transfer=True, throw_in="neighbours", first_bout_limit=6),
        first_bout=True,
    )
    play(game, ("A", att("6♠")))
    again = Game.from_dict(json.loads(json.dumps(game.to_dict())))
    assert again == game
    assert again.table == game.table
    assert again.to_act == game.to_act
    assert again.legal_actions("B") == game.legal_actions("B")


def test_serialization_game_over_round_trips() -> None:
    """Serialization: a finished game keeps its outcome."""
    game = position({"A": "7♠", "B": "6♠ 6♥"}, trump="♦", attacker="A")
    game.apply("A", att("7♠"))
    game.apply("B", Take())
    again = Game.from_dict(game.to_dict())
    assert again.is_over
    assert again.outcome == game.outcome
    assert again.durak == "B"


@pytest.mark.parametrize("version", [0, 2, 99])
def test_serialization_unknown_format_is_value_error(version: object) -> None:
    """Serialization: an unknown format version is a ValueError naming it."""
    data = Game.new(["A", "B"], seed=1).to_dict()
    data["format"] = version
    with pytest.raises(ValueError, match=str(version)):
        Game.from_dict(data)


def test_serialization_missing_format_is_value_error() -> None:
    """Serialization: a dict without a format is refused."""
    data = Game.new(["A", "B"], seed=1).to_dict()
    del data["format"]
    with raises_value_error():
        Game.from_dict(data)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("took", 0),
        ("first_bout", 1),
        ("limit", 6.0),
        ("limit", None),
        ("deal_number", "0"),
        ("bouts", 1.5),
        ("seed", "x"),
        ("previous_durak", 5),
        ("attacker", None),
        ("defender", 1),
    ],
)
def test_serialization_a_field_of_the_wrong_type_is_malformed(key: str, value: object) -> None:
    """Serialization: a saved game with a wrongly typed field (a hand-edited one, say) is
    refused, by the pure and the compiled engine alike, naming the field."""
    data = _played(12).to_dict()
    data[key] = value
    with pytest.raises(ValueError, match=rf"malformed game data.*{key}"):
        Game.from_dict(data)


def test_serialization_an_outcome_of_the_wrong_type_is_malformed() -> None:
    """Serialization: the same for the stored outcome of a finished game."""
    data = _finished().to_dict()
    data["outcome"]["draw"] = 0
    with pytest.raises(ValueError, match=r"malformed game data.*draw"):
        Game.from_dict(data)


def _played(moves: int, seed: int = 5) -> Game:
    rng = random.Random(seed)
    game = Game.new(["A", "B", "C"], seed=seed)
    for _ in range(moves):
        _step(game, rng)
    return game


def _finished() -> Game:
    game = position({"A": "6♠", "B": "7♦"}, trump="♣", first_bout=False)
    return play(game, ("A", att("6♠")), ("B", Take()))


@pytest.mark.parametrize("game", [_played(12), _finished()], ids=["running", "over"])
def test_serialization_games_and_views_survive_pickle_and_copy(game: Game) -> None:
    """Serialization: a game, its public view and each player's view pickle and copy to
    equal ones, running or over (in the compiled engine too, whose frozen classes take no
    state once made)."""
    for thing in (game, game.view(None), *(game.view(p) for p in game.players)):
        for again in (pickle.loads(pickle.dumps(thing)), copy.copy(thing), copy.deepcopy(thing)):
            assert again == thing
    assert copy.deepcopy(game.outcome) == game.outcome


@pytest.mark.parametrize(
    "entry",
    [
        ["A", "attack 6♠", "extra"],  # not a pair
        ["A"],
        ["Z", "take"],  # nobody of that name plays
        ["A", "fly away"],  # not an action
        ["A", ["take"]],  # not text
        "A take",
    ],
)
def test_serialization_damaged_history_is_refused_at_load(entry: object) -> None:
    """Serialization: the history is decoded lazily, but checked when the game loads."""
    data = _played(12).to_dict()
    data["history"].append(entry)
    with raises_value_error():
        Game.from_dict(data)


def test_serialization_loaded_history_reads_and_grows_like_the_original() -> None:
    """Serialization: a loaded game's history, move counter and later saves match a game
    that was never saved, however often it is saved and loaded on the way."""
    rng_a, rng_b = random.Random(9), random.Random(9)
    straight = Game.new(["A", "B", "C"], seed=9)
    reloaded = Game.from_dict(straight.to_dict())
    while _step(straight, rng_a):
        assert _step(reloaded, rng_b)
        assert reloaded.move_number == straight.move_number
        if straight.move_number % 3 == 0:
            assert reloaded.history == straight.history
        data = reloaded.to_dict()
        assert data == straight.to_dict()
        reloaded = Game.from_dict(json.loads(json.dumps(data)))
    assert reloaded.is_over and reloaded.history == straight.history


def test_serialization_to_dict_shares_nothing_with_the_game() -> None:
    """Serialization: changing a dict from `to_dict` (or the one loaded) leaves the game alone."""
    game = _played(10)
    before = game.to_dict()
    data = game.to_dict()
    data["history"][0][1] = "take"
    data["history"].clear()
    loaded = Game.from_dict(before)
    before["history"].clear()
    assert game.to_dict() == loaded.to_dict() != data


def test_serialization_history_in_another_spelling_is_saved_in_the_standard_one() -> None:
    """Serialization: `parse_action` accepts other spellings; a loaded game writes them back
    as `str(action)`, so two loads of the same game compare equal."""
    game = _played(6)
    data = game.to_dict()
    player, text = data["history"][0]
    data["history"][0] = [player, "  " + text.upper().replace(" ", "   ") + " "]
    loaded = Game.from_dict(data)
    assert loaded.to_dict()["history"][0] == [player, text]
    assert loaded == game
