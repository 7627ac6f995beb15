"""The single-agent Gymnasium view (havok_env.wrappers.SingleAgentEnv)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings
from collections import Counter

import numpy as np
import pytest

from havok_env.engine import ConfigError, IllegalActionError
from havok_env.wrappers import ENV_VERSION, RandomOpponent, SingleAgentEnv, make_env


class Recorder:
    """A random opponent that records every decision it is asked to take."""

    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.seen = []

    def reset(self, seat, num_players, seed=None):
        self.seat = seat
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask, view):
        pending = view.pending
        assert pending is not None and pending["player"] == self.seat == view.seat
        assert np.array_equal(np.flatnonzero(action_mask), sorted(pending["choices"]))
        self.seen.append(pending["kind"])
        return int(self.rng.choice(np.flatnonzero(action_mask)))


def play_episode(env, rng, seed=None):
    obs, info = env.reset(seed=seed)
    trace = [obs.copy()]
    while True:
        game = env.game
        assert game.to_act == env.seat  # the learner is only asked its own decisions
        mask = env.action_masks()
        assert mask.dtype == bool and mask.shape == (76,)
        assert np.array_equal(np.flatnonzero(mask), sorted(game.pending["choices"]))
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        trace.append(obs.copy())
        assert not trunc
        if term:
            return reward, info, trace
        assert reward == 0.0


def test_passes_gymnasium_env_checker():
    from gymnasium.utils.env_checker import check_env
    for n in (2, 4):
        env = SingleAgentEnv("fire", n)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env, skip_render_check=True)
        # the one warning: cards used this turn has no bound (havok_env.observe.Observer.bounds)
        messages = [str(w.message) for w in caught]
        assert len(messages) == 1 and "maximum value is infinity" in messages[0], messages
        assert env.observation_space.shape == (env.observer.size,)
        assert env.observation_space.dtype == np.float32
        assert env.action_space.n == 76


@pytest.mark.parametrize("n", [2, 3, 4])
def test_learner_reward_seat_rotation_and_dragon(n):
    env = SingleAgentEnv("ruby", n, opponents=RandomOpponent)
    rng = np.random.default_rng(1)
    env.reset(seed=123)
    seats = Counter()
    for _ in range(60):
        reward, info, _ = play_episode(env, rng)
        seat = info["learner_seat"]
        seats[seat] += 1
        assert info["dragons"][seat] == "Ruby"
        assert len(set(info["dragons"])) == n
        winners = info["result"]["winners"]
        expected = (1.0 if winners == [seat] else 0.0) if seat in winners else -1.0
        assert reward == expected == info["reward"]  # the learner's own reward
        assert info["is_success"] == (winners == [seat])
        assert not env.action_masks()[1:].any()  # terminal: dummy mask, never all False
    assert set(seats) == set(range(n))  # the learner plays every seat position


def test_reset_seed_is_reproducible():
    env_a, env_b = SingleAgentEnv("fire", 3), SingleAgentEnv("fire", 3)
    for seed in (0, 7, 99):
        ra, ia, ta = play_episode(env_a, np.random.default_rng(5), seed=seed)
        rb, ib, tb = play_episode(env_b, np.random.default_rng(5), seed=seed)
        assert ra == rb and ia["result"] == ib["result"] and ia["learner_seat"] == ib["learner_seat"]
        assert len(ta) == len(tb) and all(np.array_equal(x, y) for x, y in zip(ta, tb))
    # the sequence after one seeded reset is reproducible too
    env_a.reset(seed=11)
    env_b.reset(seed=11)
    for _ in range(5):
        ra, ia, _ = play_episode(env_a, np.random.default_rng(2))
        rb, ib, _ = play_episode(env_b, np.random.default_rng(2))
        assert ia["result"] == ib["result"] and ia["dragons"] == ib["dragons"]


def test_opponents_play_every_other_decision_including_crash_windows():
    recorders = [Recorder(), Recorder()]
    env = SingleAgentEnv("fire", 3, opponents=recorders)
    rng = np.random.default_rng(3)
    env.reset(seed=4)
    for _ in range(150):
        play_episode(env, rng)
    kinds = Counter(k for r in recorders for k in r.seen)
    assert kinds["main"] > 0 and kinds["crash"] > 0  # opponents answer crash windows inside step


def test_opponent_factories_lists_and_dragons():
    built = []

    def factory():
        built.append(RandomOpponent())
        return built[-1]

    env = SingleAgentEnv("pearl", 4, opponents=factory, opponent_dragons=["fire", None, "amber"])
    assert len(built) == 3 and env.opponents == built  # one agent per seat from a factory
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    for _ in range(10):
        _, info, _ = play_episode(env, rng)
        s = info["learner_seat"]
        d = info["dragons"]
        assert d[s] == "Pearl" and d[(s + 1) % 4] == "Ruby" and d[(s + 3) % 4] == "Amber"
    with pytest.raises(ConfigError):
        SingleAgentEnv("fire", 2, opponents=[RandomOpponent(), RandomOpponent()])
    with pytest.raises(ConfigError):
        SingleAgentEnv("fire", 2, opponent_dragons=["fire"])
    with pytest.raises(ConfigError):
        SingleAgentEnv("unicorn", 2)
    with pytest.raises(ConfigError):
        SingleAgentEnv("fire", 5)
    with pytest.raises(TypeError):
        SingleAgentEnv("fire", 2, opponents=42)


def test_set_opponents_and_fixed_seat():
    env = SingleAgentEnv("fire", 2, seat=1)
    rec = Recorder()
    env.set_opponents(rec)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _ in range(5):
        _, info, _ = play_episode(env, rng)
        assert info["learner_seat"] == 1
    assert rec.seen and rec.seat == 0


def test_illegal_action_loses_or_raises():
    env = SingleAgentEnv("fire", 2)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    obs, reward, term, trunc, info = env.step(illegal)
    assert term and reward == -1.0 and info["illegal_action"]
    env = SingleAgentEnv("fire", 2, illegal="raise")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError):
        env.step(illegal)


def test_env_does_not_import_agents_and_pickles():
    code = ("import sys, havok_env.wrappers as w; e = w.SingleAgentEnv('fire', 2); e.reset(seed=0); "
            "assert not any(m == 'agents' or m.startswith('agents.') for m in sys.modules), 'agents imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
    env = pickle.loads(pickle.dumps(SingleAgentEnv("fire", 3)))
    env.reset(seed=0)
    assert ENV_VERSION == "havok_hijinks_v1"


def test_maskable_ppo_trains_in_subproc_vec_env():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import SubprocVecEnv
    venv = SubprocVecEnv([make_env("fire", 2, seed=i) for i in range(2)])
    try:
        assert venv.env_method("action_masks")[0].shape == (76,)
        model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=2, seed=0,
                            policy_kwargs={"net_arch": [32, 32]}, device="cpu")
        model.learn(total_timesteps=400)
        assert model.num_timesteps >= 400
        venv.env_method("set_opponents", RandomOpponent)  # swap opponents inside the workers
        obs = venv.reset()
        masks = np.stack(venv.env_method("action_masks"))
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert all(masks[i, a] for i, a in enumerate(actions))
    finally:
        venv.close()


def test_optional_shaping_adds_the_change_of_lead_and_keeps_the_game_reward_in_info():
    env = SingleAgentEnv("fire", 2, shaping=0.5)
    rng = np.random.default_rng(0)
    env.reset(seed=2)
    for _ in range(20):
        env.reset()
        lead0 = env._lead()
        total, done = 0.0, False
        while not done:
            _, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            total += r
        s = info["result"]["scores"]
        seat = info["learner_seat"]
        lead = (s[seat] - s[1 - seat]) / 15.0
        assert total == pytest.approx(info["reward"] + 0.5 * (lead - lead0))
        assert info["reward"] in (-1.0, 0.0, 1.0)


def test_play_known_plays_the_known_seats_and_stops_for_the_others():
    from agents.heuristic import HeuristicAgent
    from havok_env.engine import Game
    from havok_env.observe import Observer
    from havok_env.play import play_known
    from havok_env.view import SeatView

    for seed in range(20):
        g = Game(3, seed=seed)
        observer, views = Observer(g.cards), [SeatView(g, q) for q in range(3)]
        bots = {1: HeuristicAgent(), 2: HeuristicAgent()}
        for q, bot in bots.items():
            bot.reset(q, 3, seed=seed)
        actions = []
        while True:
            played = play_known(g, bots, observer, views)
            actions += played
            assert g.is_over or g.to_act == 0  # stopped for the seat nobody here plays
            if g.is_over:
                break
            a = g.legal_actions()[0]
            g.apply(a)
            actions.append(a)
        # the actions it returned are the game's: a replay of them ends where it ended
        assert g.record()["actions"] == actions
        assert Game.replay(g.record()).result == g.result
