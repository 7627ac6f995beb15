"""train_rllib.py: RLlib multi-agent PPO with action masking, self-play, checkpoints as agent specs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
pytest.importorskip("ray.rllib", reason="Ray RLlib is not installed (pip install -e '.[rllib]')")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import train_rllib  # noqa: E402

from agents import AgentSpecError, make_agent, play_game  # noqa: E402
from agents.random_agent import RandomAgent  # noqa: E402
from havok_env import Game  # noqa: E402
from havok_env.observe import Observer  # noqa: E402
from training.rllib_env import HavokMultiAgentEnv  # noqa: E402

TINY = ["--num-cpus", "2", "--num-env-runners", "1", "--train-batch-size", "200", "--minibatch-size", "100",
        "--num-epochs", "1", "--hidden", "32", "32", "--snapshot-every", "1", "--checkpoint-every", "5"]


def test_multi_agent_env_routes_every_decision_to_its_seat():
    env = HavokMultiAgentEnv({"players": 3, "dragon": "moonlight", "opponents": ["heuristic", "self"]})
    rng = np.random.default_rng(0)
    seen = set()
    for episode in range(6):
        obs, _ = env.reset(seed=episode)
        assert env.game.dragon(env.learner_seat).name == "Pearl"
        while True:
            (agent, o), = obs.items()
            seat = env.game.to_act
            assert env._player[seat] == agent  # only RLlib-played seats are asked; bots play inside
            legal = np.flatnonzero(o["action_mask"])
            assert list(legal) == sorted(env.game.pending["choices"])
            seen.add(env.game.pending["kind"])
            obs, rewards, term, trunc, _ = env.step({agent: int(rng.choice(legal))})
            if term["__all__"]:
                break
        assert set(rewards) == set(obs) and rewards["learner"] == env.game.rewards()[env.learner_seat]
    assert "crash" in seen  # crash windows reach RLlib's seats


def test_tiny_training_checkpoint_resume_and_agent_spec(tmp_path):
    import ray
    out = tmp_path / "ckpt"
    try:
        assert train_rllib.main(["--iterations", "2", "--out", str(out), "--opponents", "heuristic", "self",
                                 "--dragon", "darkness", *TINY]) == 0
        rec = json.loads((out / "policy.json").read_text())
        assert rec["iterations"] == 2 and rec["dragon"] == "Obsidian" and rec["network"]["pi"] == [32, 32]
        assert (out / "rllib_checkpoint.json").exists()
        # the checkpoint reloads and trains on
        assert train_rllib.main(["--resume", str(out), "--iterations", "1", "--out", str(out), *TINY]) == 0
        assert json.loads((out / "policy.json").read_text())["iterations"] == 3
    finally:
        ray.shutdown()
    # the exported policy is RLlib's network: the same logits as the checkpoint's module
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModule
    module = RLModule.from_checkpoint(str(out / "learner_group" / "learner" / "rl_module" / "learner"))
    agent = make_agent(f"rllib:{out}")
    game = Game(2, seed=1)
    obs, mask = Observer(game.cards).observe(game, game.to_act)
    with torch.no_grad():
        logits = module.forward_inference({"obs": {"observations": torch.tensor(obs[None]),
                                                   "action_mask": torch.ones((1, 76))}})["action_dist_inputs"]
    assert np.allclose(agent.logits(obs), logits[0].numpy(), atol=1e-4)
    result = play_game([agent, RandomAgent()], seed=3)
    assert result is not None
    with pytest.raises(AgentSpecError, match="no checkpoint of train_rllib.py"):
        make_agent(f"rllib:{tmp_path}")


def test_bad_arguments_get_one_line(capsys):
    with pytest.raises(SystemExit):
        train_rllib.parse_args(["--iterations", "0"])
    assert "--iterations must be at least 1" in capsys.readouterr().err
