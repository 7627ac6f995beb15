"""The Gymnasium id havok_env/HavokHijinks-v0 and the CleanRL-style PPO example (examples/)."""

from __future__ import annotations

import importlib.util
import pickle
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import havok_env
from agents import AgentSpecError
from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent

ROOT = Path(__file__).resolve().parent.parent


def test_make_with_agent_specs_as_opponents():
    env = gym.make("havok_env/HavokHijinks-v0", dragon="fire", opponents=["heuristic"])
    assert havok_env.GYM_ID == "havok_env/HavokHijinks-v0"
    inner = env.unwrapped
    assert inner.dragon == "Ruby" and [type(o) for o in inner.opponents] == [HeuristicAgent]
    obs, info = env.reset(seed=3)
    assert obs.shape == env.observation_space.shape
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        obs, reward, done, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
    assert "won" in info and not info.get("illegal_action")
    # one spec for every opponent seat, each seat its own agent; a list names them in order
    three = gym.make("havok_env/HavokHijinks-v0", num_players=3, opponents="heuristic").unwrapped
    assert len({id(o) for o in three.opponents}) == 2
    mixed = gym.make("havok_env/HavokHijinks-v0", num_players=3,
                     opponents=["random", "heuristic"]).unwrapped
    assert [type(o) for o in mixed.opponents] == [RandomAgent, HeuristicAgent]
    # the same game as SingleAgentEnv built by hand, for the same seed
    same = havok_env.wrappers.SingleAgentEnv("fire", 2, opponents=lambda: HeuristicAgent())
    a = gym.make("havok_env/HavokHijinks-v0", opponents="heuristic")
    assert np.array_equal(a.reset(seed=9)[0], same.reset(seed=9)[0])


def test_bad_spec_fails_at_make_and_env_pickles():
    with pytest.raises(AgentSpecError, match="unknown agent 'nobody'"):
        gym.make("havok_env/HavokHijinks-v0", opponents=["nobody"])
    env = pickle.loads(pickle.dumps(gym.make("havok_env/HavokHijinks-v0", opponents="heuristic").unwrapped))
    assert env.reset(seed=0)[0].shape == (643,)


def test_import_havok_env_registers_without_importing_agents():
    code = ("import sys, havok_env, gymnasium; assert 'havok_env/HavokHijinks-v0' in gymnasium.registry; "
            "assert not any(m.split('.')[0] in ('agents', 'torch', 'ray') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def _example():
    spec = importlib.util.spec_from_file_location("ppo_masked", ROOT / "examples" / "ppo_masked.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cleanrl_style_ppo_example_trains_with_masks(capsys):
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[train]')")
    ppo = _example()
    agent = ppo.Agent(643, 76)
    mask = torch.zeros((64, 76), dtype=torch.bool)
    mask[:, [5, 40]] = True
    action, *_ = agent.get_action_and_value(torch.randn(64, 643), mask)
    assert set(action.tolist()) <= {5, 40}  # a masked action is never sampled
    ppo.main(["--total-timesteps", "128", "--num-envs", "2", "--num-steps", "32",
              "--opponent", "random", "--eval-games", "3"])
    out = capsys.readouterr().out
    assert "update 2: 128 steps" in out and "masked argmax vs random: won" in out
    games = [int(line.split("games ")[1].split(",")[0]) for line in out.splitlines() if "games " in line]
    assert games[-1] > 0  # finished games are counted from the vector env's final infos
