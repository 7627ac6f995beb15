"""Scripted bots: legal play, determinism under a seed, no peeking, the search budget."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from agents import make_agent, play_game
from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent
from agents.search import DEFAULT_BUDGET, SearchAgent
from havok_env.engine import Game
from havok_env.observe import Observer
from havok_env.view import SeatView

FAST_SEARCH = 12  # simulations per decision for the search bot in tests


PRETRAINED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "agents", "pretrained")


def bots():
    return {"random": lambda: RandomAgent(), "heuristic": lambda: HeuristicAgent(),
            "search": lambda: SearchAgent(simulations=FAST_SEARCH),
            "search:value": lambda: SearchAgent(simulations=FAST_SEARCH, value=_value_model())}


def _value_model():
    from agents.value import ValueModel

    return ValueModel.load()


class Checked:
    """Wraps an agent; asserts every action it returns is legal and the view agrees with the mask."""

    def __init__(self, agent):
        self.agent = agent
        self.calls = 0

    def reset(self, seat, num_players, seed=None):
        self.seat = seat
        self.agent.reset(seat, num_players, seed)

    def act(self, obs, mask, view):
        legal = set(np.flatnonzero(mask).tolist())
        assert legal == set(view.legal_actions())
        a = self.agent.act(obs, mask, view)
        assert isinstance(a, int) and a in legal, (a, legal)
        self.calls += 1
        return a


@pytest.mark.parametrize("name", ["random", "heuristic", "search"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_bots_play_only_legal_actions(name, n):
    games = {"random": 6, "heuristic": 6, "search": 1}[name]
    for seed in range(games):
        agents = [Checked(bots()[name]()) for _ in range(n)]
        rec = play_game(agents, seed=seed + 31 * n)
        assert rec["result"] is not None
        assert sum(a.calls for a in agents) == rec["decisions"]


def test_mixed_table_plays_to_the_end():
    for seed in range(4):
        agents = [Checked(make_agent(s)) for s in ("random", "heuristic", "search:8", "heuristic")]
        assert play_game(agents, seed=seed)["result"] is not None


@pytest.mark.parametrize("name", ["random", "heuristic", "search"])
def test_same_seed_same_game(name):
    seeds = [3, 4] if name == "search" else [3, 4, 5, 6]
    for seed in seeds:
        runs = [play_game([bots()[name]() for _ in range(2)], seed=seed)["actions"] for _ in range(2)]
        assert runs[0] == runs[1]


def test_random_agent_depends_on_its_seed():
    a = [play_game([RandomAgent(), RandomAgent()], seed=s)["actions"] for s in range(6)]
    assert len({tuple(x) for x in a}) > 1
    mask = np.zeros(40, dtype=np.int8)
    mask[[0, 5, 9, 17]] = 1
    picks = set()
    for seed in range(40):
        r = RandomAgent()
        r.reset(0, 2, seed)
        picks.add(r.act(None, mask, None))
    assert picks == {0, 5, 9, 17}


def test_view_values_table_matches_value():
    """The fast value table the heuristic reads is exactly SeatView.value, and read-only."""
    for n in (2, 3, 4):
        g = Game(n, seed=n)
        for seat in range(n):
            v = SeatView(g, seat)
            vals = v.values
            assert len(vals) == n
            for q in range(n):
                assert list(vals[q]) == [v.value(q, k) for k in range(g.cards.n_kinds)]
            with pytest.raises(TypeError):
                vals[0][0] = 99


# -- no peeking ---------------------------------------------------------------------------------


def positions(n, games, per_game, seed0=0):
    """Positions (games paused at a decision with several choices) reached by heuristic play."""
    out = []
    for gi in range(games):
        g = Game(n, seed=seed0 + gi)
        bots_ = [HeuristicAgent() for _ in range(n)]
        views = [SeatView(g, i) for i in range(n)]
        rng = random.Random(gi)
        stops = set(rng.sample(range(60), per_game))
        i = 0
        while not g.is_over:
            p = g.to_act
            if i in stops and len(g.legal_actions()) > 1:
                out.append(g.clone())
            g.apply(bots_[p].choose(views[p]))
            i += 1
    return out


def perturb(game, seat, rng):
    """A copy of ``game`` with everything ``seat`` cannot see changed: the other hands and the
    Hijinks deck reshuffled together, the unseen part of the Havok deck reshuffled, a new seed.

    The copy is edited in place, not through a snapshot: inside a crash window the seats that may
    crash follow from the hands, so the reshuffled position is not one from_snapshot accepts,
    though the deciding seat cannot tell it from the real one."""
    h = game.clone()
    s = h.s
    others = [q for q in range(h.num_players) if q != seat]
    pool = list(s.hijinks)
    for q in others:
        pool += s.hands[q]
    rng.shuffle(pool)
    for q in others:
        size = len(s.hands[q])
        s.hands[q], pool = pool[:size], pool[size:]
    s.hijinks = pool
    k = len(s.known[seat])
    rest = s.havok[k:]
    rng.shuffle(rest)
    s.havok = s.havok[:k] + rest
    for q in others:
        s.known[q] = s.havok[: len(s.known[q])]
    s.rng = rng.getrandbits(64)
    return h


def choice(agent, game, seat, seed):
    agent.reset(seat, game.num_players, seed)
    obs, mask = Observer(game.cards).observe(game, seat)
    return agent.act(obs, mask, SeatView(game, seat)), obs


@pytest.mark.parametrize("name", ["random", "heuristic", "search", "search:value"])
def test_no_peeking(name):
    """Changing what the deciding seat cannot see does not change what a bot chooses."""
    rng = random.Random(7)
    games, per_game = (6, 2) if name.startswith("search") else (16, 5)
    tried = changed = 0
    for n in (2, 4):
        for g in positions(n, games, per_game, seed0=100 * n):
            seat = g.to_act
            h = perturb(g, seat, rng)
            assert h.pending["purpose"] == g.pending["purpose"]
            assert h.legal_actions() == g.legal_actions()
            a, obs_a = choice(bots()[name](), g, seat, seed=11)
            b, obs_b = choice(bots()[name](), h, seat, seed=11)
            assert np.array_equal(obs_a, obs_b)  # the perturbation is invisible to the seat
            assert a == b, (g.pending["purpose"], g.action_label(a), h.action_label(b))
            tried += 1
            changed += h.s.hands != g.s.hands or h.s.havok != g.s.havok
    assert tried >= 10 and changed >= tried // 2


# -- the search budget ---------------------------------------------------------------------------


def test_search_budget_is_simulated_decisions(monkeypatch):
    from agents import search
    from agents.search import MAX_ROLLOUTS, ROLLOUT_COST, WORLD_COST

    for sims in (1, 10, 30):
        for g in positions(2, 2, 3, seed0=5):
            seat = g.to_act
            k = len(g.legal_actions())
            bot = SearchAgent(simulations=sims, race_after=10**9)
            bot.reset(seat, 2, 1)
            spent = []

            def counted(world, actions, *args, rollouts=search.rollouts, spent=spent):
                values, steps = rollouts(world, actions, *args)
                spent.extend(WORLD_COST + s for s in steps)
                return values, steps

            monkeypatch.setattr(search, "rollouts", counted)
            bot.choose(SeatView(g, seat))
            work = sims * ROLLOUT_COST
            # whole worlds (every action in each), until the work is spent or the rollout cap
            assert len(spent) % k == 0 and bot.stats["rollouts"] == len(spent)
            assert len(spent) == k or sum(spent[:-k]) < work
            assert sum(spent) >= work or len(spent) + k > MAX_ROLLOUTS * sims
    assert make_agent("search:7").simulations == 7
    assert make_agent("search").simulations is None  # the per-player-count default
    auto = SearchAgent()
    auto.reset(0, 4, 0)
    assert auto.budget == DEFAULT_BUDGET[4]
    with pytest.raises(ValueError):
        SearchAgent(simulations=0)


def test_search_does_not_change_the_real_game():
    g = positions(3, 3, 6, seed0=9)[0]
    before = g.snapshot()
    bot = SearchAgent(simulations=20)
    bot.reset(g.to_act, 3, 0)
    bot.choose(SeatView(g, g.to_act))
    assert g.snapshot() == before


def test_search_races_clearly_worse_actions_out():
    # Paired differences: the mean and its size in standard errors.
    mean, z = SearchAgent._paired([1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0])
    assert mean == 0.75 and z == pytest.approx(0.75 / (0.25 ** 0.5 / 2))
    assert SearchAgent._paired([1.0, 1.0], [0.0, 0.0]) == (1.0, float("inf"))
    assert SearchAgent._paired([0.0, 0.0], [1.0, 1.0]) == (-1.0, float("-inf"))
    # Over many decisions, racing spends fewer rollouts than trying every action in every world
    # (it stops once only the heuristic's choice is left) and never more than the budget.
    spent = {}
    for race_after in (4, 10**9):
        bot = SearchAgent(simulations=60, race_after=race_after)
        for g in positions(2, 3, 6, seed0=11)[:6]:
            bot.reset(g.to_act, 2, 3)
            before = bot.stats["rollouts"]
            bot.choose(SeatView(g, g.to_act))
            assert bot.stats["rollouts"] - before <= 4 * 60  # MAX_ROLLOUTS per unit of budget
        spent[race_after] = bot.stats["rollouts"]
    assert spent[4] < spent[10**9]


def test_search_reports_its_value_estimates():
    # Each action's estimate is its mean paired difference from the heuristic's choice, over the
    # worlds both were tried in (an action raced out early has fewer).
    bot = SearchAgent()
    assert bot.action_values() == {}
    bot._last = ({1: [1.0, 0.0, 1.0], 2: [0.0, 0.0, 0.5], 3: [0.5]}, 2)
    assert bot.action_values() == {1: pytest.approx(0.5), 2: 0.0, 3: 0.5}
    deviated = 0
    for g in positions(2, 3, 6, seed0=31):
        seat = g.to_act
        view = SeatView(g, seat)
        bot = SearchAgent(simulations=30)
        bot.reset(seat, 2, 4)
        base = HeuristicAgent().choose(view)
        chosen = bot.choose(view)
        values = bot.action_values()
        assert set(values) == set(g.legal_actions()) and values[base] == 0.0
        if chosen != base:  # it deviates only for an action estimated better than the baseline
            assert values[chosen] > bot.prior
            deviated += 1
    assert deviated >= 1


def test_a_guided_search_deviates_from_its_policy_not_from_the_heuristic():
    # search:N:guide=MODEL keeps its policy's choice as the baseline: with a bar for deviating that
    # nothing reaches it plays exactly the policy, and with the usual bar it still departs from it
    from agents import AgentSpecError

    guide = make_agent("pretrained:fire")
    bot = make_agent("search:20:guide=pretrained:fire")
    assert bot.name == "search+pretrained:fire" and bot.budget == 20
    seen = {"same_as_guide": 0, "heuristic_differs": 0, "decisions": 0}

    class Watched:
        def reset(self, seat, num_players, seed=None):
            bot.reset(seat, num_players, seed)

        def act(self, obs, mask, view):
            a = bot.act(obs, mask, view)
            seen["decisions"] += 1
            seen["same_as_guide"] += a == guide.act(obs, mask)
            seen["heuristic_differs"] += guide.act(obs, mask) != HeuristicAgent().choose(view)
            return a

    bot.prior = float("inf")
    for seed in range(3):
        play_game([Watched(), make_agent("heuristic")], seed=seed)
    assert seen["same_as_guide"] == seen["decisions"] > 30 and seen["heuristic_differs"] >= 3
    bot.prior = SearchAgent().prior
    seen.update(same_as_guide=0, decisions=0)
    for seed in range(3):
        play_game([Watched(), make_agent("heuristic")], seed=seed)
    assert 0 < seen["same_as_guide"] < seen["decisions"]
    both = make_agent("search:20:heuristic-picks:guide=pretrained:fire")
    assert both.heuristic_picks and both.guide is not None
    for spec, msg in [("search:20:guide=heuristic", "the guide must be a trained model"),
                      ("search:20:guide=pretrained:fire:heuristic-picks", "no such model"),
                      ("search:20:guide=pretrained:nobody", "nobody"),
                      ("search:20:guide=", "the guide must be a trained model")]:
        with pytest.raises(AgentSpecError, match=msg):
            make_agent(spec)


def test_search_leaves_picks_to_the_heuristic_when_asked():
    # search:N:heuristic-picks takes the heuristic's choice on HEURISTIC_PICKS without rollouts,
    # reporting it as the only estimate (a one-hot distillation target), and searches the rest.
    from agents import AgentSpecError
    from agents.search import HEURISTIC_PICKS

    bot = make_agent("search:30:heuristic-picks")
    assert bot.heuristic_picks and bot.budget == 30 and not make_agent("search:30").heuristic_picks
    with pytest.raises(AgentSpecError, match="unknown search option 'fast'"):
        make_agent("search:30:fast")
    picks = searched = 0
    for g in positions(2, 30, 8, seed0=500):
        seat = g.to_act
        view = SeatView(g, seat)
        bot.reset(seat, 2, 4)
        before = bot.stats["rollouts"]
        chosen = bot.choose(view)
        if g.pending["purpose"] in HEURISTIC_PICKS:
            picks += 1
            assert chosen == HeuristicAgent().choose(view)
            assert bot.stats["rollouts"] == before and bot.action_values() == {chosen: 0.0}
        else:
            searched += 1
            assert bot.stats["rollouts"] > before and len(bot.action_values()) == len(g.legal_actions())
    assert picks >= 3 and searched >= 10


def test_search_carries_nothing_from_one_game_into_another():
    # The rollout game and bots are kept between decisions; a decision in another game (other
    # dragons) must come out exactly as from a fresh bot.
    first = positions(2, 3, 6, seed0=21)[0]
    other = next(g for g in positions(2, 6, 3, seed0=40) if g.s.dragons != first.s.dragons)
    used = SearchAgent(simulations=20)
    used.reset(first.to_act, 2, 1)
    used.choose(SeatView(first, first.to_act))
    fresh = SearchAgent(simulations=20)
    fresh.reset(other.to_act, 2, 1)
    for bot in (used, fresh):
        bot.seat = other.to_act
        bot.rng = random.Random(7)
        bot.stats["rollouts"] = 0
    assert used.choose(SeatView(other, other.to_act)) == fresh.choose(SeatView(other, other.to_act))
    assert used.stats["rollouts"] == fresh.stats["rollouts"]


def test_search_can_model_its_opponents_as_random_players():
    # The rollouts run in the core (tests/test_heuristic.py holds them to the Python loop): with
    # random opponents they draw from the search bot's generator, with heuristic ones they do not.
    g = positions(2, 3, 6, seed0=5)[0]
    me = g.to_act
    drawn = {}
    for opponents in ("heuristic", "random"):
        bot = SearchAgent(simulations=4, rollout_opponents=opponents, max_turns=None)
        bot.reset(me, 2, 0)
        before = bot.rng.getstate()
        sim = g.clone()
        bot.rollout(sim)
        assert sim.is_over
        drawn[opponents] = bot.rng.getstate() != before
    assert drawn == {"heuristic": False, "random": True}
    with pytest.raises(ValueError, match="rollout_opponents"):
        SearchAgent(rollout_opponents="greedy")


def test_search_rollouts_stop_after_max_turns_and_score_the_margin():
    checked = 0
    for g in positions(2, 3, 6, seed0=5):
        me = g.to_act
        bot = SearchAgent(simulations=8, max_turns=1)
        bot.reset(me, 2, 0)
        start = g.s.turn
        sim = g.clone()
        value = bot.rollout(sim)
        if sim.is_over:
            continue
        assert sim.s.turn == start + 1  # stopped as the next turn began
        scores = sim.scores()
        margin = scores[me] - scores[1 - me]
        assert value == pytest.approx(max(-1.0, min(1.0, margin / 8)) + 0.02 * margin)
        checked += 1
    assert checked >= 3
    assert SearchAgent().max_turns == 4


def test_a_value_search_scores_unfinished_rollouts_with_the_value_network():
    # search:N:value: a rollout that stops unfinished is worth the value network's estimate for the
    # seat at its last state (its features row, nothing of the seen top counted), plus the margin
    # term; a finished one its result, as without the option
    from agents import AgentSpecError
    from agents.value import ValueModel, features

    model = _value_model()
    checked = finished = 0
    for g in positions(2, 4, 6, seed0=5):
        me = g.to_act
        plain, valued = SearchAgent(simulations=8, max_turns=1), SearchAgent(simulations=8, max_turns=1, value=model)
        for bot in (plain, valued):
            bot.reset(me, 2, 0)
        sim, again = g.clone(), g.clone()
        v0, v1 = plain.rollout(sim), valued.rollout(again)
        assert sim.s.turn == again.s.turn and sim.scores() == again.scores()  # the same play
        scores = sim.scores()
        margin = scores[me] - scores[1 - me]
        if sim.is_over:
            assert v1 == v0
            finished += 1
            continue
        want = model.predict(features([(sim.s, 0)], seats=[me]))[0]
        assert v1 == pytest.approx(float(want) + 0.02 * margin, abs=1e-6)
        assert v1 != pytest.approx(v0)
        checked += 1
    assert checked >= 5
    bot = make_agent("search:20:heuristic-picks:value:guide=pretrained:fire")
    assert bot.value is not None and bot.guide is not None and bot.heuristic_picks
    assert make_agent("search::value").value is not None and make_agent("search").value is None
    for spec, msg in [("search:20:value:value", "repeated search option 'value'"),
                      ("search:20:values", "unknown search option 'values'"),
                      ("search:20:value=", "unknown search option 'value='"),
                      ("search:20:heuristic-picks=x", "unknown search option 'heuristic-picks=x'"),
                      ("search:20:value=/no/such/value.safetensors", "no value model at /no/such/value.safetensors"),
                      (f"search:20:value={PRETRAINED}/fire.safetensors", "is not a value model")]:
        with pytest.raises(AgentSpecError, match=msg):
            make_agent(spec)
    other = ValueModel([(np.ones((3, 1), np.float32), np.zeros(1, np.float32))], {})
    with pytest.raises(Exception, match="does not read this layout's rows"):
        SearchAgent(simulations=8, value=other).rollout(g.clone())


def test_guided_spec_puts_the_guide_last():
    from agents.search import guided_spec

    assert guided_spec("search:80:heuristic-picks", "M") == "search:80:heuristic-picks:guide=M"
    assert guided_spec("search:80:value:heuristic-picks", "M") == "search:80:heuristic-picks:value:guide=M"
    assert guided_spec("search", "M") == "search::guide=M"
    assert guided_spec("search::guide=X", "M") is None and guided_spec("heuristic", "M") is None
    assert guided_spec("search::bogus", "M") is None
    assert guided_spec("search::value=V.safetensors", "M") == "search::value=V.safetensors:guide=M"


def test_the_decision_hook_sees_every_decision_as_the_agent_saw_it():
    seen = []
    agents = [Checked(make_agent("heuristic")), Checked(make_agent("random"))]
    rec = play_game(agents, seed=9, on_decision=lambda *d: seen.append(d))
    assert [a for _, _, _, a in seen] == rec["actions"]
    game = Game(2, seed=9)
    assert rec["first_player"] == game.current_player
    observer = Observer(game.cards)
    for seat, obs, mask, action in seen:  # replayed: the same seat, observation and mask
        assert seat == game.to_act
        want_obs, want_mask = observer.observe(game, seat)
        assert np.array_equal(obs, want_obs) and np.array_equal(mask, want_mask) and mask[action]
        game.apply(action)
    assert game.is_over and rec == play_game([make_agent("heuristic"), make_agent("random")], seed=9)


def test_a_registered_bot_is_a_spec(monkeypatch):
    # adding a bot is a module with an Agent subclass and one line in agents.AGENTS
    import sys
    import types

    import agents
    from agents import AgentSpecError
    from agents.base import Agent

    class FirstLegal(Agent):
        SPEC_FORMS = ("first", "first:NOTE")

        @classmethod
        def from_spec(cls, spec, arg, **kwargs):
            bot = cls()
            bot.note = arg
            return bot

        def act(self, observation, action_mask, view):
            return int(np.flatnonzero(action_mask)[0])

    module = types.ModuleType("first_bot")
    module.FirstLegal = FirstLegal
    monkeypatch.setitem(sys.modules, "first_bot", module)
    monkeypatch.setitem(agents.AGENTS, "first", "first_bot:FirstLegal")
    bot = make_agent("first:hello")
    assert isinstance(bot, FirstLegal) and bot.note == "hello"
    assert play_game([bot, make_agent("random")], seed=2)["result"] is not None
    with pytest.raises(AgentSpecError) as e:
        make_agent("nobody")
    assert str(e.value) == ("unknown agent 'nobody'; use random, heuristic, search, search:BUDGET, "
                            "search:BUDGET:heuristic-picks, search:BUDGET:value, search:BUDGET:value=PATH, "
                            "search:BUDGET:guide=MODEL, human, rllib:CHECKPOINT, first, first:NOTE, "
                            "pretrained:NAME or the path of a saved model (.safetensors)")
