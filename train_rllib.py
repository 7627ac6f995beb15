#!/usr/bin/env python
"""Train Havok & Hijinks with Ray RLlib's multi-agent PPO (the new API stack), locally or on a cluster.

    python train_rllib.py --iterations 200                       # local Ray, all cores
    python train_rllib.py --address auto --num-env-runners 32    # a running Ray cluster
    python train_rllib.py --resume models/rllib --iterations 50  # continue a checkpoint

The policy (RLlib module ``learner``) plays ``--dragon`` on a random seat of each game (a policy
per dragon, as ``train.py`` trains; ``--dragon any``: a random dragon each game, one policy shared
by all); the other seats are drawn from ``--opponents``: bot specs and saved models, played inside
the environment, and ``self``, frozen earlier copies of the learner (the modules
``frozen_0..``, untrained, which get the learner's weights every ``--snapshot-every`` iterations
in turn). Saved models are loaded here, in the driver, and reach every env runner through Ray, so
a cluster's other nodes need only the installed package (``training/rllib_env.py``,
``training/rllib_train.py``). Decisions go to the seat that must take them, crash windows
included. Actions come from RLlib's ``ActionMaskingTorchRLModule``, which puts the logits of
illegal actions at the lowest float, so a masked action is never sampled (the env raises on one).

Each env runner steps ``--envs-per-runner`` games with one batched forward pass; each runner and
each CPU learner (the driver's own, with ``--num-learners 0``) uses ``--torch-threads`` threads
and reserves as many CPUs. Writes an RLlib checkpoint to ``--out`` (default ``models/rllib``)
after every ``--checkpoint-every`` iterations and at the end, and in it the policy as a model of
``agents/policy.py`` (``policy.safetensors`` and ``policy.json``: the same network, read without
unpickling anything, numpy alone): ``rllib:PATH`` is then an agent spec (``python evaluate.py
--agents rllib:models/rllib heuristic``). ``--resume`` reads RLlib's own checkpoint files, which
are pickles: it says so first, and is for checkpoints you trust. ``--measure-sampling STEPS``
times the env runners' sampling instead of training. Needs the ``rllib`` extra; see
docs/integrations.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from agents.extras import missing

NEEDS = {"ray": "Ray RLlib", "torch": "RLlib's torch modules"}
ENVS_PER_RUNNER = 64  # the most sampling per runner on the 2-core machine (docs/integrations.md)
RESUME_WARNING = ("train_rllib.py: resuming unpickles {path}'s RLlib files, which can run any code they "
                  "hold: resume only checkpoints you trust")
# settings a resumed run takes from its checkpoint's record: the network and what it trains against
RECORD_SETTINGS = {"lr": (int, float), "train_batch_size": int, "minibatch_size": int, "num_epochs": int,
                   "snapshots": int, "snapshot_every": int}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--dragon", default="fire", help="the learner's dragon, or 'any' (one policy for all)")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--opponents", nargs="+", default=["heuristic", "random", "self"], metavar="SPEC",
                   help="agent specs for the other seats, and 'self' for frozen copies of the learner")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--num-env-runners", type=int, default=1, help="sampling processes (0: in the driver)")
    p.add_argument("--envs-per-runner", type=int, default=ENVS_PER_RUNNER,
                   help="envs each runner steps together, one batched forward pass for all "
                        "(docs/integrations.md measures 1-128)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch threads (and CPUs reserved) per env runner and per CPU learner")
    p.add_argument("--num-learners", type=int, default=0,
                   help="learner processes (0: the learner runs in the driver)")
    p.add_argument("--learner-gpus", type=float, default=0,
                   help="GPUs per learner (with --num-learners 0, the driver's learner)")
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
    for name in ("iterations", "num_env_runners", "envs_per_runner", "torch_threads", "num_learners",
                 "snapshot_every", "checkpoint_every", "train_batch_size", "minibatch_size", "num_epochs"):
        lowest = 0 if name in ("num_env_runners", "num_learners") else 1
        if getattr(args, name) < lowest:
            p.error(f"--{name.replace('_', '-')} must be at least {lowest}")
    if not args.learner_gpus >= 0:
        p.error("--learner-gpus must be at least 0")
    if args.snapshots < 1:
        p.error("--snapshots must be at least 1")
    return args


def fail(message: str) -> int:
    print(f"train_rllib.py: error: {message}", file=sys.stderr)
    return 2


def resume_settings(args, path: str) -> int:
    """Sets the run's settings from the record of the checkpoint at ``path`` (read as JSON, nothing
    unpickled); the iterations done. Raises AgentSpecError or ValueError for a record that is not
    one of this script's checkpoints."""
    from agents.policy import read_record

    if not os.path.isfile(os.path.join(path, "rllib_checkpoint.json")):
        raise ValueError(f"{path} is no checkpoint of train_rllib.py (it has no rllib_checkpoint.json)")
    rec = read_record(os.path.join(path, "policy.json"))
    opponents, hyper, done = rec.get("opponents"), rec.get("hyperparameters"), rec.get("iterations")
    if not (isinstance(opponents, list) and opponents and all(isinstance(o, str) for o in opponents)):
        raise ValueError(f"{path}/policy.json: opponents must be a list of agent specs")
    if not (isinstance(done, int) and not isinstance(done, bool) and done >= 0):
        raise ValueError(f"{path}/policy.json: iterations must be a whole number")
    if not isinstance(hyper, dict):
        raise ValueError(f"{path}/policy.json: hyperparameters must be an object")
    for key, kind in RECORD_SETTINGS.items():
        value = hyper.get(key)
        if not isinstance(value, kind) or isinstance(value, bool) or not value > 0:
            raise ValueError(f"{path}/policy.json: hyperparameters.{key} must be a positive number")
        setattr(args, key, value)
    args.dragon = "any" if rec.get("any_dragon") else rec["dragon"]
    args.players, args.hidden, args.opponents = rec["players"], rec["network"]["pi"], opponents
    return done


def main(argv=None) -> int:
    args = parse_args(argv)
    gone = missing(NEEDS, "rllib")
    if gone:
        print(gone, file=sys.stderr)
        return 2
    from agents import AgentSpecError
    from havok_env.engine import ConfigError

    done = 0
    if args.resume:
        print(RESUME_WARNING.format(path=args.resume), file=sys.stderr, flush=True)
        try:
            done = resume_settings(args, args.resume)
        except (AgentSpecError, ValueError) as e:
            return fail(f"cannot resume: {e}")
    try:  # saved models load here, once; the env runners get them through Ray
        from training.rllib_env import load_opponents
        agents = load_opponents(args.opponents)
    except (AgentSpecError, ConfigError) as e:
        return fail(str(e))

    if args.learner_gpus and not args.num_learners:
        import torch
        if not torch.cuda.is_available():
            return fail("--learner-gpus with --num-learners 0 trains on this machine's GPU, and torch sees none")
    import ray

    from training.rllib_env import frozen_modules
    from training.rllib_train import (build, build_config, export_policy, measure_sampling, refresh_snapshot,
                                      runner_nodes, shortfall)

    if not ray.is_initialized():  # without --address a Ray of its own, never one found running on the machine
        ray.init(address=args.address or "local", num_cpus=None if args.address else args.num_cpus,
                 include_dashboard=False, configure_logging=False)
    for line in shortfall(args, ray.cluster_resources()):
        if not args.address:  # nothing will join a Ray of its own: the run would wait for ever
            return fail(f"{line}; lower them, or raise --num-cpus")
        print(f"train_rllib.py: warning: {line} now; the run waits until the cluster has them", file=sys.stderr)
    algo = build(args, build_config(args, agents))
    try:
        if args.resume:
            try:
                algo.restore_from_path(str(Path(args.resume).resolve()))
            except Exception as e:  # noqa: BLE001 - whatever a foreign or damaged pickle raises
                return fail(f"cannot resume from {args.resume}: {type(e).__name__}: {e}".splitlines()[0])
        for (ip, node), count in sorted(runner_nodes(algo).items()):
            print(f"env runners: {count} on {ip} (node {node})", flush=True)
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
