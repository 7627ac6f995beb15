"""train_rllib.py: RLlib multi-agent PPO with action masking, self-play, checkpoints as agent specs, on a
Ray cluster of two nodes with an opponent model that only the driver has."""

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
from training.rllib_train import shortfall  # noqa: E402

from agents import AgentSpecError, make_agent, play_game  # noqa: E402
from agents.random_agent import RandomAgent  # noqa: E402
from havok_env import Game  # noqa: E402
from havok_env.observe import Observer  # noqa: E402
from training.rllib_env import HavokMultiAgentEnv, load_opponents  # noqa: E402

TINY = ["--num-env-runners", "1", "--envs-per-runner", "4", "--train-batch-size", "200", "--minibatch-size", "100",
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


def test_multi_agent_env_plays_the_agents_it_is_given():
    # a runner on another node cannot read the driver's files: the driver's agents come in the config
    spec, opponent = "nowhere/opponent.json", make_agent("pretrained:fire")
    with pytest.raises(AgentSpecError, match="no saved model"):
        HavokMultiAgentEnv({"opponents": [spec]})
    moves = []
    act = opponent.act
    opponent.act = lambda *a: moves.append(1) or act(*a)
    env = HavokMultiAgentEnv({"opponents": [spec], "agents": {spec: opponent}})
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=1)
    while True:
        (agent, o), = obs.items()
        obs, _, term, _, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        if term["__all__"]:
            break
    assert env._bots == {spec: opponent} and moves


def test_load_opponents_loads_each_saved_model_once_and_checks_every_spec(tmp_path):
    loaded = load_opponents(["heuristic", "self", "pretrained:fire", "random", "pretrained:fire"])
    assert list(loaded) == ["pretrained:fire"] and loaded["pretrained:fire"].meta["dragon"] == "Ruby"
    with pytest.raises(AgentSpecError, match="unknown agent"):
        load_opponents(["self", "heuristc"])
    with pytest.raises(AgentSpecError, match="no checkpoint of train_rllib.py"):
        load_opponents([f"rllib:{tmp_path}"])


def test_resume_warns_before_reading_anything_and_refuses_a_foreign_checkpoint(tmp_path, capsys):
    assert train_rllib.main(["--resume", str(tmp_path)]) == 2
    first, second = capsys.readouterr().err.splitlines()
    assert "resuming unpickles" in first and "resume only checkpoints you trust" in first
    assert second == f"train_rllib.py: error: cannot resume: {tmp_path} is no checkpoint of train_rllib.py " \
                     "(it has no rllib_checkpoint.json)"
    (tmp_path / "rllib_checkpoint.json").write_text("{}")
    (tmp_path / "policy.json").write_text('{"format": "havok-policy-v1"}')
    (tmp_path / "policy.safetensors").write_bytes(b"")
    assert train_rllib.main(["--resume", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "resume only checkpoints you trust" in err[0]
    assert err[1].startswith("train_rllib.py: error: cannot resume: ") and "is not a valid model record" in err[1]


RAY_START_TRIES = 3


def start_cluster(temp: str):
    """A head that runs nothing but the driver and a second node with 2 CPUs, on this machine.

    Ray gives a node's raylet a fixed 30 s to register (``ray/_private/node.py``; no setting
    changes it), which a machine loaded many times over its cores can exceed: a start that times
    out is tried again, ``RAY_START_TRIES`` times in all, and then the test is skipped, saying so
    with the load. Once started, the nodes get 5 minutes to join (Ray's default: 30 s)."""
    import os

    from ray._private.utils import get_ray_address_file
    from ray.cluster_utils import Cluster

    # the head writes its address into Ray's default temporary directory whatever ``temp_dir`` says,
    # and fails where no Ray has made that directory yet (a fresh machine, this test first)
    os.makedirs(os.path.dirname(get_ray_address_file(None)), exist_ok=True)
    for _ in range(RAY_START_TRIES):
        cluster = Cluster()
        try:
            cluster.add_node(num_cpus=0, temp_dir=temp, include_dashboard=False)  # the head
            worker = cluster.add_node(num_cpus=2, temp_dir=temp)
            cluster.wait_for_nodes(timeout=300)
            return cluster, worker
        except Exception as e:  # noqa: BLE001 - Ray raises a bare Exception for a raylet that did not register
            cluster.shutdown()  # (a node that never started is ended when this process exits)
            if not isinstance(e, TimeoutError) and "timed out during startup" not in str(e):
                raise
            why = f"{type(e).__name__}: {e}"
    pytest.skip(f"Ray could not start its nodes in {RAY_START_TRIES} tries on a machine at load "
                f"{os.getloadavg()[0]:.0f} on {os.cpu_count()} cores (a raylet has a fixed 30 s to register): {why}")


def test_a_cluster_run_with_an_opponent_only_the_driver_has_trains_resumes_and_exports(tmp_path, monkeypatch,
                                                                                         capsys):
    """A head that runs nothing but the driver and a second node with the env runner, on this
    machine; the opponent's model is in the driver's directory alone."""
    import shutil
    import tempfile

    import ray

    from agents.policy import PRETRAINED_DIR

    # a directory of its own (short: Ray's sockets live in it), so that no other Ray on the machine
    # finds this cluster as "the running one"
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    cluster, worker = start_cluster(temp)
    try:
        driver = tmp_path / "driver"
        driver.mkdir()
        for ext in (".json", ".safetensors"):
            shutil.copy(Path(PRETRAINED_DIR) / f"fire{ext}", driver / f"opponent{ext}")
        monkeypatch.chdir(driver)  # the nodes started elsewhere: "opponent.json" is not in their directory
        ray.init(address=cluster.address)

        @ray.remote(num_cpus=1)
        def sees_the_model():
            return ray.get_runtime_context().get_node_id(), Path("opponent.json").exists()

        assert ray.get(sees_the_model.remote()) == (worker.node_id, False)
        cluster_args = ["--address", cluster.address, *TINY]
        assert train_rllib.main(["--iterations", "2", "--out", "ckpt", "--opponents", "opponent.json", "self",
                                 "--dragon", "darkness", *cluster_args]) == 0
        out = capsys.readouterr().out
        assert f"env runners: 1 on {worker.node_ip_address} (node {worker.node_id})" in out
        rec = json.loads((driver / "ckpt" / "policy.json").read_text())
        assert rec["iterations"] == 2 and rec["dragon"] == "Obsidian" and rec["network"]["pi"] == [32, 32]
        assert rec["opponents"] == ["opponent.json", "self"]
        # the checkpoint reloads and trains on, its settings from its record
        assert train_rllib.main(["--resume", "ckpt", "--iterations", "1", "--out", "ckpt", *cluster_args]) == 0
        assert json.loads((driver / "ckpt" / "policy.json").read_text())["iterations"] == 3
        assert sorted(p.name for p in driver.iterdir()) == ["ckpt", "opponent.json", "opponent.safetensors"]
        assert "resume only checkpoints you trust" in capsys.readouterr().err
        # a checkpoint whose pickles are not RLlib's gets one line, not a traceback
        bad = tmp_path / "bad"
        shutil.copytree(driver / "ckpt", bad)
        (bad / "learner_group" / "learner" / "rl_module" / "learner" / "module_state.pkl").write_bytes(b"\x80junk")
        assert train_rllib.main(["--resume", str(bad), "--iterations", "1", "--out", str(bad), *cluster_args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(f"train_rllib.py: error: cannot resume from {bad}: ") and "Traceback" not in err
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
    # the exported policy is RLlib's network: the same logits as the checkpoint's module
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModule
    out = driver / "ckpt"
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


def test_a_run_that_reserves_more_than_ray_has_is_told_so(capsys):
    args = train_rllib.parse_args(["--num-env-runners", "3", "--num-learners", "1"])
    assert shortfall(args, {"CPU": 4.0}) == []
    assert shortfall(args, {"CPU": 3.0}) == [
        "the run reserves 4 CPUs (--num-env-runners, --num-learners x --torch-threads) and Ray has 3"]
    args = train_rllib.parse_args(["--num-learners", "2", "--learner-gpus", "0.5", "--torch-threads", "2"])
    assert shortfall(args, {"CPU": 2.0}) == [
        "the run reserves 1 GPUs (--num-learners x --learner-gpus) and Ray has 0"]
    import ray
    # a Ray of its own has no more to give: one line, before Ray starts
    assert train_rllib.main(["--num-cpus", "1", "--num-env-runners", "2", "--iterations", "1"]) == 2
    assert not ray.is_initialized()
    assert capsys.readouterr().err.splitlines()[-1] == (
        "train_rllib.py: error: the run reserves 2 CPUs (--num-env-runners, --num-learners x --torch-threads) "
        "and Ray has 1; lower them, or raise --num-cpus")


def test_bad_arguments_get_one_line(capsys):
    for args, message in ((["--iterations", "0"], "--iterations must be at least 1"),
                          (["--torch-threads", "0"], "--torch-threads must be at least 1"),
                          (["--num-learners", "-1"], "--num-learners must be at least 0"),
                          (["--learner-gpus", "nan"], "--learner-gpus must be at least 0")):
        with pytest.raises(SystemExit):
            train_rllib.parse_args(args)
        assert message in capsys.readouterr().err


def test_the_throughput_benchmark_measures_the_env_beside_its_peer(monkeypatch, capsys):
    import runpy
    bench = ROOT / "benchmarks" / "rllib_throughput.py"
    monkeypatch.setattr(sys, "argv", [str(bench), "--settings", "0x2", "--steps", "60", "--rounds", "1",
                                      "--num-cpus", "1"])
    with pytest.raises(SystemExit) as e:
        runpy.run_path(str(bench), run_name="__main__")
    assert e.value.code == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 0 x 2 |")]
    havok, peer, ratio = (float(v.replace(",", "")) for v in row[0].strip("| ").split(" | ")[1:])
    assert havok > 0 and peer > 0 and ratio == pytest.approx(havok / peer, rel=0.02, abs=0.01)


def test_the_default_env_runners_are_one_per_cpu_after_the_learners():
    from training.rllib_train import default_runners

    for argv, cpus, runners in (([], 2, 2), ([], 1, 1), ([], 16, 16), (["--torch-threads", "2"], 8, 4),
                                (["--num-learners", "1"], 4, 3),
                                (["--num-learners", "2", "--torch-threads", "2"], 4, 1),
                                (["--num-learners", "1", "--learner-gpus", "1"], 4, 4),  # a GPU learner: no CPU
                                (["--num-env-runners", "0"], 8, 0), (["--num-env-runners", "3"], 2, 3)):
        args = train_rllib.parse_args(argv)
        default_runners(args, {"CPU": float(cpus)})
        assert args.num_env_runners == runners, (argv, cpus)
    # the default never asks for more than a Ray of its own has
    args = train_rllib.parse_args([])
    default_runners(args, {"CPU": 2.0})
    assert shortfall(args, {"CPU": 2.0}) == []
