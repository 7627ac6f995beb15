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
each CPU learner (the driver's own, with ``--num-learners 0``) uses ``--torch-threads`` threads and
reserves as many CPUs, and by default there is a runner for each such share of the CPUs Ray has,
after the CPU learners' (two on a 2-core machine). Writes an RLlib checkpoint to ``--out`` (default
``models/rllib``) after every ``--checkpoint-every`` iterations and at the end, and in it the
policy as a model of ``agents/policy.py`` (``policy.safetensors`` and ``policy.json``: the same
network, read without unpickling anything, numpy alone): ``rllib:PATH`` is then an agent spec
(``python evaluate.py --agents rllib:models/rllib heuristic``). ``--resume`` reads RLlib's own
checkpoint files, which are pickles: it says so first, and is for checkpoints you trust.
``--measure-sampling STEPS`` times the env runners' sampling instead of training. Needs the
``rllib`` extra; see docs/integrations.md.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from agents.extras import missing
from training import rllib_train

NEEDS = {"ray": "Ray RLlib", "torch": "RLlib's torch modules"}
RESUME_WARNING = ("train_rllib.py: resuming unpickles {path}'s RLlib files, which can run any code they "
                  "hold: resume only checkpoints you trust")


def parse_args(argv=None):
    return rllib_train.parse_args(argv, description=__doc__.splitlines()[1])


def fail(message: str) -> int:
    print(f"train_rllib.py: error: {message}", file=sys.stderr)
    return 2


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
            done = rllib_train.resume_settings(args, args.resume)
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
    from training.rllib_train import (build, build_config, measure_sampling, refresh_snapshot, runner_nodes,
                                      save_checkpoint, shortfall)

    # shortfall() also sets the runners not given: one per CPU of the Ray the run will have
    if not ray.is_initialized():  # without --address a Ray of its own, never one found running on the machine
        short = [] if args.address else shortfall(args, {"CPU": args.num_cpus or os.cpu_count(), "GPU": float("inf")})
        if short:  # refused before Ray starts; its GPUs are known once it has
            return fail(f"{short[0]}; lower them, or raise --num-cpus")
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
            print(f"iteration {i}: {int(steps)} env steps, {time.perf_counter() - start:.0f} s, "
                  f"learner's mean return {ret:+.3f}", flush=True)
            if i % args.snapshot_every == 0:
                refresh_snapshot(algo, frozen[(i // args.snapshot_every - 1) % len(frozen)])
            if i % args.checkpoint_every == 0 or i == done + args.iterations:
                save_checkpoint(algo, out, args, i)
        print(f"checkpoint: {out} (agent spec rllib:{args.out})")
    finally:
        algo.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
