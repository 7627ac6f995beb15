#!/usr/bin/env python
"""Train Havok & Hijinks with Ray RLlib's multi-agent PPO (the new API stack), locally or on a cluster.

    python train_rllib.py --iterations 200                       # local Ray, all cores
    python train_rllib.py --address auto --num-env-runners 32    # a running Ray cluster
    python train_rllib.py --resume models/rllib --iterations 50  # continue a checkpoint

The policy (RLlib module ``learner``) plays ``--dragon`` on a random seat of each game (a policy
per dragon, as ``train.py`` trains; ``--dragon any``: a random dragon each game, one policy shared
by all); the other seats are drawn from ``--opponents``: bot
specs, played inside the environment, and ``self``, frozen earlier copies of the learner (the
modules ``frozen_0..``, untrained, which get the learner's weights every ``--snapshot-every``
iterations in turn). Decisions go to the seat that must take them, crash windows included
(``training/rllib_env.py``). Actions come from RLlib's ``ActionMaskingTorchRLModule``, which puts
the logits of illegal actions at the lowest float, so a masked action is never sampled (the env
raises on one). Writes an RLlib checkpoint to ``--out`` (default ``models/rllib``) after every
``--checkpoint-every`` iterations and at the end, and in it the policy as a model of
``agents/policy.py`` (``policy.safetensors`` and ``policy.json``: the same network, read without
unpickling anything, numpy alone): ``rllib:PATH`` is then an agent spec
(``python evaluate.py --agents rllib:models/rllib heuristic``). ``--resume`` reads RLlib's own
checkpoint files, which are pickles: resume only checkpoints you trust. ``--measure-sampling STEPS``
times the env runners' sampling instead of training. Needs the ``rllib`` extra; see
docs/integrations.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial
from pathlib import Path

from agents.extras import missing

NEEDS = {"ray": "Ray RLlib", "torch": "RLlib's torch modules"}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--dragon", default="fire", help="the learner's dragon, or 'any' (one policy for all)")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--opponents", nargs="+", default=["heuristic", "random", "self"], metavar="SPEC",
                   help="agent specs for the other seats, and 'self' for frozen copies of the learner")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--num-env-runners", type=int, default=1, help="sampling processes (0: in the driver)")
    p.add_argument("--envs-per-runner", type=int, default=8,
                   help="envs each runner steps together (one batched forward pass for all: "
                        "4x the steps/s of 1, docs/integrations.md)")
    p.add_argument("--address", default=None, help="a Ray cluster's address ('auto' finds a running one)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance (default all)")
    p.add_argument("--out", default="models/rllib", help="checkpoint directory")
    p.add_argument("--resume", default=None, metavar="CHECKPOINT", help="continue from a checkpoint")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--snapshots", type=int, default=2, help="frozen copies of the learner")
    p.add_argument("--snapshot-every", type=int, default=5)
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--train-batch-size", type=int, default=4000)
    p.add_argument("--minibatch-size", type=int, default=500)
    p.add_argument("--num-epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256], metavar="N")
    p.add_argument("--measure-sampling", type=int, default=0, metavar="STEPS",
                   help="only time sampling STEPS env steps per runner, then exit")
    args = p.parse_args(argv)
    for name in ("iterations", "num_env_runners", "envs_per_runner", "snapshot_every", "checkpoint_every",
                 "train_batch_size", "minibatch_size", "num_epochs"):
        lowest = 0 if name == "num_env_runners" else 1
        if getattr(args, name) < lowest:
            p.error(f"--{name.replace('_', '-')} must be at least {lowest}")
    if args.snapshots < 1:
        p.error("--snapshots must be at least 1")
    return args


def build_config(args):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from training.rllib_env import LEARNER, HavokMultiAgentEnv, frozen_modules, map_agent

    frozen = frozen_modules(args.snapshots)
    module = RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                          model_config={"fcnet_hiddens": list(args.hidden), "fcnet_activation": "tanh",
                                        "head_fcnet_hiddens": []})
    return (
        PPOConfig()
        # RLlib's env check steps random actions, ignoring the mask, which the env refuses
        .environment(HavokMultiAgentEnv, env_config={"players": args.players, "opponents": args.opponents,
                                                         "dragon": None if args.dragon == "any" else args.dragon},
                     disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.envs_per_runner,
                     num_cpus_per_env_runner=1)
        .multi_agent(policies={LEARNER, *frozen}, policy_mapping_fn=partial(map_agent, frozen=frozen),
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: module for m in (LEARNER, *frozen)}))
        .training(train_batch_size_per_learner=args.train_batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.num_epochs, lr=args.lr, gamma=0.99, lambda_=0.95, entropy_coeff=0.01)
        .learners(num_learners=0)
        .debugging(seed=args.seed)
    )


def refresh_snapshot(algo, slot: str) -> None:
    """Copies the learner's weights into the frozen module ``slot``, in the learner and every runner."""
    from training.rllib_env import LEARNER

    weights = algo.get_module(LEARNER).get_state()

    def put(holder):
        holder.module[slot].set_state(weights)

    algo.learner_group.foreach_learner(put)
    algo.env_runner_group.foreach_env_runner(put, local_env_runner=True)


def export_policy(algo, out: Path, args, iterations: int) -> None:
    """Writes the learner's network as ``out/policy.safetensors`` + ``policy.json``, a model of
    ``agents/policy.py``: RLlib's actor encoder, pi head, critic encoder and vf head are the same
    layers as stable-baselines3's MlpPolicy, renamed."""
    import numpy as np
    import ray

    from agents.policy import FORMAT, save_model
    from havok_env.cards import default_cards
    from havok_env.version import ENV_VERSION
    from training.rllib_env import LEARNER

    state = algo.get_module(LEARNER).get_state()
    rename = {"pi.net.mlp.0": "action_net", "vf.net.mlp.0": "value_net"}
    for i in range(len(args.hidden)):
        rename[f"encoder.actor_encoder.net.mlp.{2 * i}"] = f"mlp_extractor.policy_net.{2 * i}"
        rename[f"encoder.critic_encoder.net.mlp.{2 * i}"] = f"mlp_extractor.value_net.{2 * i}"
    tensors = {}
    for old, new in rename.items():
        for part in ("weight", "bias"):
            t = state[f"{old}.{part}"]
            tensors[f"{new}.{part}"] = np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t,
                                                  dtype=np.float32)
    cards = default_cards()
    dragon = cards.dragons[cards.dragon_index("fire" if args.dragon == "any" else args.dragon)]
    obs_size, n_actions = tensors["mlp_extractor.policy_net.0.weight"].shape[1], tensors["action_net.bias"].shape[0]
    record = {
        "format": FORMAT, "env_version": ENV_VERSION, "dragon": dragon.name, "affinity": dragon.affinity,
        "any_dragon": args.dragon == "any", "players": args.players,
        "observation_size": int(obs_size), "action_size": int(n_actions),
        "network": {"pi": list(args.hidden), "vf": list(args.hidden), "activation": "tanh"},
        "trainer": "train_rllib.py (Ray RLlib PPO)", "ray": ray.__version__, "iterations": iterations,
        "opponents": list(args.opponents), "seed": args.seed,
        "hyperparameters": {"lr": args.lr, "train_batch_size": args.train_batch_size,
                            "minibatch_size": args.minibatch_size, "num_epochs": args.num_epochs,
                            "snapshots": args.snapshots, "snapshot_every": args.snapshot_every},
    }
    save_model(str(out / "policy"), tensors, record)


def measure_sampling(algo, steps: int) -> float:
    """Env steps per second over every env runner sampling ``steps`` steps at once."""
    group = algo.env_runner_group
    remote = group.num_remote_env_runners() > 0
    group.foreach_env_runner(lambda r: r.sample(num_timesteps=200, random_actions=False),
                             local_env_runner=not remote)  # warm up
    start = time.perf_counter()
    counts = group.foreach_env_runner(
        lambda r: sum(len(e) for e in r.sample(num_timesteps=steps, random_actions=False)),
        local_env_runner=not remote)
    return sum(counts) / (time.perf_counter() - start)


def main(argv=None) -> int:
    args = parse_args(argv)
    gone = missing(NEEDS, "rllib")
    if gone:
        print(gone, file=sys.stderr)
        return 2
    import ray
    from ray.rllib.algorithms.algorithm import Algorithm

    from training.rllib_env import frozen_modules

    # the env runners import this project: give them its root (a cluster's nodes need it installed)
    root = str(Path(__file__).resolve().parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    done = 0
    if args.resume:  # the run's settings come from its record, the network and state from RLlib's files
        from agents.policy import read_record
        rec = read_record(os.path.join(args.resume, "policy.json"))
        args.dragon = "any" if rec.get("any_dragon") else rec["dragon"]
        args.players, args.hidden = rec["players"], rec["network"]["pi"]
        args.opponents, done = rec.get("opponents", args.opponents), rec.get("iterations", 0)
    if not ray.is_initialized():
        ray.init(address=args.address, num_cpus=None if args.address else args.num_cpus,
                 include_dashboard=False, configure_logging=False, log_to_driver=False)
    if args.resume:
        algo = Algorithm.from_checkpoint(str(Path(args.resume).resolve()))
    else:
        algo = build_config(args).build_algo()
    try:
        if args.measure_sampling:
            rate = measure_sampling(algo, args.measure_sampling)
            print(f"sampling: {rate:.0f} env steps/s with {args.num_env_runners} env runner(s) of "
                  f"{args.envs_per_runner} env(s)")
            return 0
        frozen = frozen_modules(args.snapshots)
        out = Path(args.out).resolve()
        start = time.perf_counter()
        for i in range(done + 1, done + args.iterations + 1):
            result = algo.train()
            runners = result.get("env_runners", {})
            ret = runners.get("agent_episode_returns_mean", {}).get("learner", float("nan"))
            steps = result.get("num_env_steps_sampled_lifetime", runners.get("num_env_steps_sampled_lifetime", 0))
            print(f"iteration {i}: {steps} env steps, {time.perf_counter() - start:.0f} s, "
                  f"learner's mean return {ret:+.3f}", flush=True)
            if i % args.snapshot_every == 0:
                refresh_snapshot(algo, frozen[(i // args.snapshot_every - 1) % len(frozen)])
            if i % args.checkpoint_every == 0 or i == done + args.iterations:
                algo.save_to_path(str(out))
                export_policy(algo, out, args, i)
        print(f"checkpoint: {out} (agent spec rllib:{args.out})")
    finally:
        algo.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
