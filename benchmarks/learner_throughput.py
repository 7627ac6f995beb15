"""End-to-end learner throughput: MaskablePPO on train.py's two ways of playing its games.

Each run trains a fresh MaskablePPO for ``--steps`` learner decisions against the heuristic bot
(Ruby, 2 players) and reports steps per second of ``learn()`` (collection and updates together)
and where the time went (collecting rollouts: the games, the opponents and the policy's forward
passes; updating: PPO's epochs). The runs, one after the other in the same process:

* ``subproc``: train.py's ``--vec-env subproc``: 8 single-agent envs in worker processes
  (``training.vec_env.env_workers``), the heuristic in Python in each, one torch thread, 512 steps per env
  and rollout;
* ``batched``: train.py's default: :class:`training.vec_env.HavokVecEnv`, 64 games in this
  process with the heuristic in the core, 64 steps per game and rollout (the same 4,096 per
  update), with 1 and with 2 torch threads;
* variants of the batched run's settings (``--variants``): smaller networks, fewer epochs,
  larger minibatches.

Every run has the same PPO settings unless its row says otherwise: MLP 256-256 (tanh) for the
policy and value networks, 4,096 steps per update, minibatch 1,024, 4 epochs. Nothing else should
run meanwhile; the script prints the load average before and after.

    python benchmarks/learner_throughput.py [--steps 40960] [--variants]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as train.py: the games' BLAS must not spin


def timed_learn(venv, steps, threads, net=(256, 256), n_steps=512, batch=1024, epochs=4):
    """(steps/s, seconds collecting, seconds updating, steps) of one MaskablePPO.learn()."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(threads)

    class Clock(BaseCallback):
        collect = 0.0

        def _on_step(self):
            return True

        def _on_rollout_start(self):
            self.t = time.perf_counter()

        def _on_rollout_end(self):
            Clock.collect += time.perf_counter() - self.t

    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=batch, n_epochs=epochs, seed=0,
                        device="cpu", policy_kwargs={"net_arch": {"pi": list(net), "vf": list(net)}})
    Clock.collect = 0.0
    start = time.perf_counter()
    model.learn(steps, callback=Clock())
    took = time.perf_counter() - start
    return model.num_timesteps / took, Clock.collect, took - Clock.collect, model.num_timesteps


def subproc_env(n=8):
    from functools import partial

    from stable_baselines3.common.vec_env import VecMonitor

    from agents import make_agent
    from havok_env.wrappers import make_env
    from training.vec_env import env_workers
    return VecMonitor(env_workers([make_env("fire", 2, opponents=partial(make_agent, "heuristic"),
                                                  seed=i) for i in range(n)]))


def batched_env(n=64):
    from stable_baselines3.common.vec_env import VecMonitor

    from training.vec_env import HavokVecEnv
    return VecMonitor(HavokVecEnv(n, "fire", 2, opponents=["heuristic"], seed=0))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=40_960, help="learner decisions per run (default 40,960)")
    p.add_argument("--variants", action="store_true", help="also the batched run's variants")
    args = p.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    rows = []

    def run(name, make, **kw):
        venv = make()
        try:
            sps, collect, update, steps = timed_learn(venv, args.steps, **kw)
        finally:
            venv.close()
        rows.append((name, sps, collect, update, steps))
        print(f"{name:<52} {sps:8,.0f} steps/s  collect {collect:6.1f} s  update {update:6.1f} s", flush=True)

    run("subproc: 8 envs x 512 steps, 1 thread", subproc_env, threads=1)
    run("batched: 64 games x 64 steps, 1 thread", batched_env, threads=1, n_steps=64)
    run("batched: 64 games x 64 steps, 2 threads", batched_env, threads=2, n_steps=64)
    if args.variants:
        run("batched, 2 threads, net 128-128", batched_env, threads=2, n_steps=64, net=(128, 128))
        run("batched, 2 threads, net 64-64", batched_env, threads=2, n_steps=64, net=(64, 64))
        run("batched, 2 threads, 2 epochs", batched_env, threads=2, n_steps=64, epochs=2)
        run("batched, 2 threads, minibatch 2048, 128 games (8,192 a rollout)",
            lambda: batched_env(128), threads=2, n_steps=64, batch=2048)
    base = rows[0][1]
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    print("| run | steps/s | x subproc | collecting | updating |")
    print("|---|---|---|---|---|")
    for name, sps, collect, update, _ in rows:
        share = 100 / (collect + update)
        print(f"| {name} | {sps:,.0f} | {sps / base:.1f}x | {collect * share:.0f}% | {update * share:.0f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
