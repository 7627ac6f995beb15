"""The search bot's decision loop in the core: a world's rollouts in one call
(``havok_env.view.rollouts``) and the generator copied into the core for a decision
(``core_random``) play and draw exactly as one rollout per action on a random.Random did."""

from __future__ import annotations

import math
import random

import pytest

from agents.search import SearchAgent
from havok_env import _core
from havok_env.engine import Game
from havok_env.view import PeekingView, SeatView, core_random, rollout, rollouts


def worlds(n, count, seed0):
    """Determinized worlds of positions with several choices, reached by random play."""
    out = []
    for gi in range(count):
        g, pick = Game(n, seed=seed0 + gi), random.Random(gi)
        while not g.is_over and len(out) < (gi + 1) * 3:
            if len(g.legal_actions()) > 1 and pick.random() < 0.5:
                me = g.to_act
                out.append((SeatView(g.clone(), me).determinize(random.Random(gi)), me))
            g.apply(pick.choice(g.legal_actions()))
    assert len(out) == count * 3
    return out


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("opponents", ["heuristic", "random"])
@pytest.mark.parametrize("max_turns", [None, 1, 4])
def test_one_call_per_world_plays_each_action_as_a_rollout_of_its_own(n, opponents, max_turns):
    for i, (world, me) in enumerate(worlds(n, 3, 40 + n)):
        actions = world.legal_actions()[::-1]  # any order, as the race leaves them
        before = world.snapshot()
        py_rng = random.Random(i)
        expected = []
        for a in actions:  # the loop SearchAgent.choose ran, one rollout per action
            g = world.clone()
            g.apply(a)
            expected.append(rollout(g, me, max_turns, 0.02, py_rng if opponents == "random" else None))
        rng = random.Random(i)
        with core_random(rng) as core:
            values, steps = rollouts(world, actions, me, max_turns, 0.02, core if opponents == "random" else None)
        assert list(zip(values, steps)) == expected
        assert all(type(v) is float for v in values) and all(type(s) is int for s in steps)
        assert rng.getstate() == py_rng.getstate()  # the same draws, one rollout after the other
        assert world.snapshot() == before  # each action on a copy


def test_rollouts_refuse_an_illegal_action_or_seat_in_one_line():
    world, me = worlds(2, 1, 7)[0]
    illegal = next(a for a in range(world.layout.size) if a not in world.legal_actions())
    for args, match in (((world, [illegal], me), "not a legal action"), ((world, [-1], me), "not a legal action"),
                        ((world, world.legal_actions(), 5), "no such seat")):
        with pytest.raises(ValueError, match=match) as e:
            rollouts(*args, 4, 0.02)
        assert "\n" not in str(e.value)


def test_the_core_generator_draws_as_random_random_does():
    py, rng = random.Random(11), random.Random(11)
    for k in (1, 700):  # (past 624 words the generator twists)
        items = [object() for _ in range(k)] + list(range(k))
        mine = list(items)
        py.shuffle(items)
        with core_random(rng) as core:
            core.shuffle(mine)
        assert mine == items and rng.getstate() == py.getstate()
    game = Game(3, seed=4)
    for view in (SeatView(game, 1), PeekingView(game, 1, "crash"), PeekingView(game, 1, "hands")):
        py, rng = random.Random(5), random.Random(5)
        expected = view.determinize(py)
        with core_random(rng) as core:
            got = view.determinize(core)
        assert got.snapshot() == expected.snapshot() and rng.getstate() == py.getstate()


def test_the_generator_goes_back_on_an_error_too():
    rng, py = random.Random(2), random.Random(2)
    py.shuffle(list(range(50)))
    with pytest.raises(KeyError):
        with core_random(rng) as core:
            core.shuffle(list(range(50)))
            raise KeyError("stop")
    assert rng.getstate() == py.getstate()
    with pytest.raises(ValueError, match="not a random.Random state"):
        _core.Random([0] * 10)


def test_a_search_decision_draws_what_the_per_action_loop_drew(monkeypatch):
    """A whole decision, the core's loop against the per-action one (on random.Random, a rollout
    at a time): the same choice, estimates and generator afterwards."""
    from agents import search

    def per_action(world, actions, me, max_turns, margin_weight, rng, leaf=None):
        out = []
        for a in actions:
            g = world.clone()
            g.apply(a)
            out.append(rollout(g, me, max_turns, margin_weight, py_rng if rng is not None else None, leaf))
        return [v for v, _ in out], [s for _, s in out]

    class PyRandom:  # what the search draws from in the per-action loop: random.Random itself
        def __init__(self, rng):
            self.rng = rng

        def __enter__(self):
            return self.rng

        def __exit__(self, *exc):
            return False

    for opponents in ("heuristic", "random"):
        for world, me in worlds(3, 2, 90):
            runs = []
            for loop in ("core", "per-action"):
                bot = SearchAgent(simulations=12, rollout_opponents=opponents)
                bot.reset(me, 3, 8)
                if loop == "per-action":
                    py_rng = bot.rng
                    monkeypatch.setattr(search, "rollouts", per_action)
                    monkeypatch.setattr(search, "core_random", PyRandom)
                runs.append((bot.choose(SeatView(world, me)), bot.action_values(), bot.stats, bot.rng.getstate()))
                monkeypatch.undo()
            assert runs[0] == runs[1]


def test_racing_from_running_sums_drops_exactly_what_the_full_spread_drops(monkeypatch):
    """_clearly_worse against _stats' z-score: outcomes like a search's (wins, losses, margins),
    and z bars set on a case's own z-score, a rounding away, where only the full pass can tell."""
    rng = random.Random(3)
    outcomes = [1.0, 0.0, -1.0] + [m / 8 + 0.02 * m for m in range(-7, 8)]
    fast = 0
    for case in range(3000):
        k = rng.choice([1, 2, 8, 9, 40, 300])
        d = [rng.choice(outcomes) - rng.choice(outcomes) for _ in range(k)]
        if case % 7 == 0:
            d = [d[0]] * k  # no spread: z is -inf
        total = squares = 0
        for x in d:  # summed as the search sums them
            total += x
            squares += x * x
        if total / k >= 0:
            continue
        z = -SearchAgent._stats(d, total)[1]
        bars = [0.5, 1.0, 2.0, 3.0] + ([z, math.nextafter(z, 0), math.nextafter(z, math.inf)] if z < math.inf else [])
        for bar in bars:
            bot = SearchAgent(z_drop=bar)
            calls = []
            monkeypatch.setattr(SearchAgent, "_stats", staticmethod(
                lambda d, total=None, full=SearchAgent._stats, calls=calls: calls.append(1) or full(d, total)))
            got = bot._clearly_worse(d, total, squares)
            monkeypatch.undo()
            assert got == (SearchAgent._stats(d, total)[1] < -bar), (d, bar)
            fast += not calls
    assert fast > 5000  # most decided from the running sums alone
