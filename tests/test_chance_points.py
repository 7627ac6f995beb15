"""The core's chance points (Game.run_chance), the luck tracer's hook into the one implementation of
the rules: watching a move changes nothing, forcing an outcome does exactly what it says, and a
stopped game can be read but never played on."""

import json
import random

import pytest

from havok_env.engine import ChancePoint, Game, IllegalActionError, SnapshotError


def played(seed, players=2, moves=None):
    """(actions, snapshot after each) of a seeded random game, played with plain apply."""
    rng = random.Random(seed)
    g = Game(players, seed=seed)
    actions, snaps = [], []
    while not g.is_over and (moves is None or len(actions) < moves):
        a = rng.choice(g.legal_actions())
        g.apply(a)
        actions.append(a)
        snaps.append(json.dumps(g.snapshot()))
    return actions, snaps


@pytest.mark.parametrize("seed,players", [(1, 2), (2, 3), (3, 4)])
def test_watching_every_move_plays_the_game_as_apply_does(seed, players):
    actions, snaps = played(seed, players)
    g = Game(players, seed=seed, advance=False)
    points, stopped = g.run_chance(None, states=True)
    assert not stopped and points[0].kind == "flip" and points[0].seat == g.current_player
    first = json.dumps(Game(players, seed=seed).snapshot())
    assert json.dumps(g.snapshot()) == first
    kinds = set()
    for a, snap in zip(actions, snaps):
        before = g.fields()
        points, stopped = g.run_chance(a, states=True)
        assert not stopped and json.dumps(g.snapshot()) == snap
        for pt in points:
            assert isinstance(pt, ChancePoint) and pt.range > 0
            kinds.add(pt.kind)
            if pt.kind == "flip":  # the top card of the deck before it is the one that came
                assert pt.before["havok"][0] == pt.outcome and len(pt.before["havok"]) == pt.range
                assert pt.after["havok"] == pt.before["havok"][1:] and pt.outcome in pt.after["in_play"]
            elif pt.kind == "draw":
                assert pt.after["hands"][pt.seat][-1] == pt.outcome
                assert len(pt.after["hijinks"]) == pt.range - 1
            else:
                assert pt.after is None and 0 <= pt.outcome < pt.range
        assert before["pending"]["choices"]
    assert {"flip", "draw"} <= kinds


def test_a_forced_flip_brings_that_card_to_the_top_and_nothing_else_changes():
    g = Game(2, seed=5, advance=False)
    deck = g.fields()["havok"]
    j = next(i for i, k in enumerate(deck) if k != deck[0])
    h = g.clone()
    points, _ = h.run_chance(None, force=[(0, j)], stop=1, states=True)
    assert points[0].outcome == deck[j] and points[0].range == len(deck)
    swapped = deck[:]
    swapped[0], swapped[j] = swapped[j], swapped[0]
    assert points[0].before["havok"] == deck and points[0].after["havok"] == swapped[1:]
    assert points[0].after["in_play"] == [deck[j]]
    # the game the run started from is untouched
    assert g.fields()["havok"] == deck and not g.stopped


def test_a_forced_draw_and_coin_answer_as_told():
    actions, _ = played(11)
    g = Game(2, seed=11, advance=False)
    g.run_chance(None)
    for a in actions:
        before = g.clone()
        points, _ = g.run_chance(a, states=True)
        draws = [i for i, pt in enumerate(points) if pt.kind == "draw"]
        if draws and points[draws[0]].range > 2:
            i = draws[0]
            deck = points[i].before["hijinks"]
            forced, _ = before.run_chance(a, force=[(i, 2)], stop=i + 1)
            assert forced[i].outcome == deck[2]
            return
    pytest.fail("no draw in the game")


def test_a_coin_is_forced_within_its_range():
    # find a contest (two crashes declared in one window) in random games
    for seed in range(400):
        actions, _ = played(seed)
        g = Game(2, seed=seed, advance=False)
        g.run_chance(None)
        for a in actions:
            before = g.clone()
            points, _ = g.run_chance(a)
            coins = [i for i, pt in enumerate(points) if pt.kind == "coin"]
            if coins:
                i = coins[0]
                m = points[i].range
                for answer in range(m):
                    got, _ = before.clone().run_chance(a, force=[(i, answer)])
                    assert got[i].outcome == answer
                with pytest.raises(ValueError, match=f"out of its range 0..{m - 1}"):
                    before.clone().run_chance(a, force=[(i, m)])
                return
    pytest.fail("no contest in 400 games")


def test_a_stopped_game_is_read_never_played_on():
    g = Game(2, seed=7, advance=False)
    size = len(g.fields()["havok"])
    points, stopped = g.run_chance(None, stop=0)
    assert stopped and g.stopped and len(points) == 1 and points[0].outcome == -1
    assert points[0].kind == "flip" and points[0].range == size
    assert g.fields()["havok"] and g.clone().stopped  # the state just before the first flip
    with pytest.raises(SnapshotError, match="stopped at a chance point"):
        g.apply(0)
    with pytest.raises(ValueError, match="stopped at a chance point"):
        g.run_chance(None)
    with pytest.raises(ValueError, match="stopped at a chance point"):
        g.clone().run_chance(0)


@pytest.mark.parametrize("call,error,msg", [
    (lambda g: g.run_chance(None), ValueError, "waits for a decision"),
    (lambda g: g.run_chance(999), IllegalActionError, "not legal"),
    (lambda g: g.run_chance(True), IllegalActionError, "not an integer"),
    (lambda g: g.run_chance(g.legal_actions()[0], force=[(0, -1)]), ValueError, "out of its range"),
    (lambda g: g.run_chance(g.legal_actions()[0], force=[1]), ValueError, "pairs"),
    (lambda g: g.run_chance(g.legal_actions()[0], stop=-3), ValueError, "stop must be"),
])
def test_misuse_gets_a_one_line_error(call, error, msg):
    g = Game(2, seed=3)
    with pytest.raises(error, match=msg) as e:
        call(g)
    assert "\n" not in str(e.value)


def test_the_rules_use_the_generator_only_through_chance_points():
    """A draw of the game's generator the tracer cannot see would go uncorrected: in the rules'
    sources the generator is drawn directly only for the setup (the dragons, the first player, and
    the shuffles), every other draw goes through chance_below."""
    import os
    import re
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "havok_core")
    engine = open(os.path.join(src, "engine.cpp")).read()
    effects = open(os.path.join(src, "effects.cpp")).read()
    assert "rand_below" not in effects and "shuffle" not in effects
    assert len(re.findall(r"\brand_below\(", engine)) == 2  # Game::Game (dragons) and setup (first player)
    assert "chance_below(" in engine
