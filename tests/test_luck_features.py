"""The luck correction's value features, written by the native core: the same rows as the Python
feature loop they replaced (golden digests, tests/value_features_golden.py), from any state the
tracer makes or a live game, and a clear error for a state they cannot read."""

import json
import os
import sys

import numpy as np
import pytest

from evaluation.chance import _State
from agents.value import features, layout
from havok_env.engine import Game

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import value_features_golden as golden  # noqa: E402

with open(os.path.join(HERE, "data", "value_features.json")) as f:
    GOLDEN = json.load(f)


@pytest.mark.parametrize("game", GOLDEN["games"], ids=lambda g: f"{'-'.join(g['specs'])}-{g['seed']}"
                         f"-{'ahead' if g['ahead'] else 'standing'}")
def test_the_rows_of_every_traced_state_are_the_recorded_ones(game):
    x = golden.rows(tuple(game["specs"]), game["seed"], game["dragons"], game["ahead"])
    assert x.dtype == np.float32 and x.shape == (game["rows"], layout().size)
    assert golden.digest(x) == game["sha256"]


def test_a_few_rows_in_full():
    for full in GOLDEN["full_rows"]:
        g = GOLDEN["games"][full["game"]]
        x = golden.rows(tuple(g["specs"]), g["seed"], g["dragons"], g["ahead"])
        assert x[full["row"]].tolist() == full["features"]


def game_at(n, seed, moves):
    g = Game(n, seed=seed)
    for _ in range(moves):
        if g.is_over:
            break
        g.apply(g.legal_actions()[seed % len(g.legal_actions())])
    return g


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_live_game_state_reads_as_its_fields(n):
    for moves in (0, 7, 23):
        g = game_at(n, 40 + n, moves)
        for top in range(min(3, len(g.s.havok)) + 1):
            live = features([(g.s, top)], [n - 1])
            plain = features([(_State(g.fields()), top)], [n - 1])
            assert live.shape == (n, layout().size) and np.array_equal(live, plain)


def test_no_states_no_rows():
    assert features([]).shape == (0, layout().size)


def bad_state(**changed):
    return _State(Game(2, seed=3).fields()).view(**changed)


@pytest.mark.parametrize("states,seats,message", [
    ([(bad_state(), 0), (_State(Game(3, seed=1).fields()), 0)], (), "one player count at a time"),
    ([(bad_state(num_players=5), 0)], (), "2 to 4 players"),
    ([(bad_state(num_players=1), 0)], (), "2 to 4 players"),
    ([(bad_state(), 0)], (2,), "random seat 2 is not a seat"),
    ([(bad_state(), 0)], (-1,), "random seat -1 is not a seat"),
    ([(bad_state(), -1)], (), "top_seen"),
    ([(bad_state(havok=[0, 1]), 3)], (), "top_seen"),
    ([(bad_state(hands=[[0], [40]]), 0)], (), "a hand holds card kind 0"),
    ([(bad_state(hoards=[[40], []]), 0)], (), "a hoard holds card kind 40"),
    ([(bad_state(hoards=[[0]]), 0)], (), "one entry per seat"),
    ([(bad_state(havok=[0, 50]), 0)], (), "the Havok deck holds card kind 50"),
    ([(bad_state(dragons=[0, 99]), 0)], (), "no such dragon"),
    ([(bad_state(canceled=[[5, 40]]), 0)], (), "seat 5 is not a seat"),
    ([(bad_state(stack=[{"f": "havok", "card": 3, "you": 7}]), 0)], (), "seat 7 is not a seat"),
    ([(bad_state(stack=[{"f": "havok", "you": 0}]), 0)], (), "lacks 'card'"),
    ([(bad_state(stack=[{"f": "use", "user": 0, "you": 0, "ability": 3}]), 0)], (), "no such ability"),
    ([(bad_state(stack=["turn"]), 0)], (), "must be a dict"),
    ([(bad_state(turn="7"), 0)], (), "turn must be an integer"),
    ([(bad_state(ready=["yes", False]), 0)], (), "ready must be an integer"),
    ([(object(), 0)], (), "has no field 'num_players'"),
    ([(bad_state(),)], (), "(state, top_seen) pairs"),
])
def test_a_state_the_features_cannot_read_is_a_clear_error(states, seats, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        features(states, seats)


def test_a_state_that_empties_the_list_while_it_is_read_is_no_crash():
    # reading a state may run Python code (a live view's fields): the list is held as it was
    plain = bad_state()
    states = []

    class Emptying:
        def __getattr__(self, name):
            states.clear()
            return getattr(plain, name)

    states += [(plain, 0), (Emptying(), 0), (plain, 1)]
    x = features(states)
    assert np.array_equal(x, features([(plain, 0), (plain, 0), (plain, 1)]))
