"""RLlib's throughput on this project's env beside a PettingZoo peer, setting by setting.

Sampling: for each setting ``RxE`` (R env runners of E envs each; R 0: the driver samples), env
steps per second over all runners, the policy choosing every RLlib-played seat's action, for:

* ``havok``: ``train_rllib.py``'s env and module (2 players, opponents ``heuristic random self``,
  MLP 256-256, illegal actions masked);
* ``connect_four_v3``: PettingZoo's game through RLlib's own ``PettingZooEnv``, both seats played
  by the same module (its board flattened to 84 floats, its 7-action mask).

Both are built for a setting, then measured in turn, ``--rounds`` times, in the same process, so
that whatever else the machine runs weighs on both; the table gives the medians, and the median
of the rounds' ratios. Compare ratios rather than the absolute figures.

Training (``--iterations N``): env steps per second of ``algo.train()`` (sampling and learning)
over N iterations after a first one, with train_rllib.py's defaults (a runner per CPU of 64 envs
each, one torch thread), with one such runner, and with the first defaults (one runner of 8 envs;
the learner in the driver on torch's default threads), their iterations in turn.

    python benchmarks/rllib_throughput.py [--settings 1x1 1x8 1x32 1x64 1x128 2x64]
                                          [--steps 2000] [--rounds 3] [--iterations 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TORCH_DEFAULT_THREADS = None  # torch's own choice, read before anything changes it
PEER = "connect_four_v3"


def connect_four_env(config=None):
    """connect_four_v3 through RLlib's PettingZooEnv, its observations as the masking module reads them."""
    import gymnasium as gym
    import numpy as np
    from pettingzoo.classic import connect_four_v3
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    class ConnectFour(PettingZooEnv):
        def __init__(self):
            super().__init__(connect_four_v3.env())
            space = gym.spaces.Dict({"observations": gym.spaces.Box(0.0, 1.0, (84,), np.float32),
                                     "action_mask": gym.spaces.Box(0.0, 1.0, (7,), np.float32)})
            self.observation_spaces = {a: space for a in self.possible_agents}
            self.observation_space = gym.spaces.Dict(self.observation_spaces)

        @staticmethod
        def _obs(obs):
            return {a: {"observations": o["observation"].reshape(-1).astype(np.float32),
                        "action_mask": o["action_mask"].astype(np.float32)} for a, o in obs.items()}

        def reset(self, *, seed=None, options=None):
            obs, info = super().reset(seed=seed, options=options)
            return self._obs(obs), info

        def step(self, action):
            obs, rewards, term, trunc, info = super().step(action)
            return self._obs(obs), rewards, term, trunc, info

    return ConnectFour()


def one_module(agent_id, episode=None, **kwargs):
    return "learner"


def settings_args(runners: int, envs: int):
    from training.rllib_train import parse_args
    return parse_args(["--num-env-runners", str(runners), "--envs-per-runner", str(envs)])


def build_algo(game: str, args):
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.tune.registry import register_env

    from training.rllib_env import LEARNER, load_opponents
    from training.rllib_train import build, build_config, module_spec

    config = build_config(args, load_opponents(args.opponents))
    if game == PEER:
        register_env(PEER, connect_four_env)
        config = (config.environment(PEER, env_config={}, disable_env_checking=True)
                  .multi_agent(policies={LEARNER}, policy_mapping_fn=one_module, policies_to_train=[LEARNER])
                  .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={LEARNER: module_spec(args.hidden)})))
    return build(args, config)


def median(values):
    return statistics.median(values)


def sampling(runners: int, envs: int, steps: int, rounds: int) -> tuple[float, float, float]:
    """Median env steps/s of the env and of its peer, and the median of their ratio, over
    ``rounds`` rounds that each measure one after the other (both algorithms built first)."""
    from training.rllib_train import measure_sampling

    algos = [build_algo(game, settings_args(runners, envs)) for game in ("havok", PEER)]
    try:
        pairs = [[measure_sampling(algo, steps) for algo in algos] for _ in range(rounds)]
    finally:
        for algo in algos:
            algo.stop()
    return median([h for h, _ in pairs]), median([p for _, p in pairs]), median([h / p for h, p in pairs])


def sampled(result) -> int:
    return result["env_runners"]["num_env_steps_sampled_lifetime"]


def training(runs: dict, iterations: int) -> dict:
    """{name: (env steps/s of training, seconds per iteration)}: ``runs`` maps a name to (parsed
    settings, the driver's learner threads); their iterations alternate, after a first one each."""
    import torch

    algos = {name: build_algo("havok", args) for name, (args, _) in runs.items()}
    first, last, took = {}, {}, dict.fromkeys(runs, 0.0)

    def train(name):
        torch.set_num_threads(runs[name][1])  # the driver's learner
        start = time.perf_counter()
        last[name] = sampled(algos[name].train())
        return time.perf_counter() - start

    try:
        for name in runs:  # a first iteration each, not timed
            train(name)
            first[name] = last[name]
        for _ in range(iterations):
            for name in runs:
                took[name] += train(name)
    finally:
        for algo in algos.values():
            algo.stop()
    steps = {name: last[name] - first[name] for name in runs}
    out = {name: (steps[name] / took[name], took[name] / iterations) for name in runs}
    for name, (rate, secs) in out.items():
        print(f"{name}: {rate:,.0f} env steps/s, {secs:.1f} s an iteration", flush=True)
    return out


def main(argv=None) -> int:
    global TORCH_DEFAULT_THREADS
    import torch
    TORCH_DEFAULT_THREADS = torch.get_num_threads()

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--settings", nargs="+", default=["1x1", "1x8", "1x32", "1x64", "1x128", "2x64"],
                   metavar="RxE", help="env runners x envs per runner")
    p.add_argument("--steps", type=int, default=2000, help="env steps each runner samples per measurement")
    p.add_argument("--rounds", type=int, default=3, help="measurements of each setting, env and peer in turn")
    p.add_argument("--iterations", type=int, default=0, help="also time N training iterations, old and new defaults")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance (default all)")
    args = p.parse_args(argv)
    try:
        settings = [tuple(int(n) for n in s.lower().split("x")) for s in args.settings]
        if any(len(s) != 2 or s[0] < 0 or s[1] < 1 for s in settings):
            raise ValueError
    except ValueError:
        p.error("--settings are RxE: env runners (0 or more) x envs per runner (1 or more), e.g. 1x64")

    import ray

    from training.rllib_train import ENVS_PER_RUNNER, default_runners, parse_args
    defaults = parse_args([])
    default_runners(defaults, {"CPU": args.num_cpus or os.cpu_count()})  # as train_rllib.py on this machine
    # the env's and the peer's runners live at once (one samples at a time), and the three
    # training runs' (one trains at a time): room for all of them
    cpus = max([args.num_cpus or os.cpu_count(), 2] + [2 * r for r, _ in settings]
               + ([defaults.num_env_runners + 2] if args.iterations else []))
    ray.init(address="local", num_cpus=cpus, include_dashboard=False, configure_logging=False)
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs; ray {ray.__version__}; "
          f"torch's default threads {TORCH_DEFAULT_THREADS}", flush=True)
    rows = []
    for runners, envs in settings:
        rates = sampling(runners, envs, args.steps, args.rounds)
        rows.append((f"{runners} x {envs}", *rates))
        print(f"{runners} x {envs}: havok {rates[0]:,.0f} env steps/s, {PEER} {rates[1]:,.0f} "
              f"(medians of {args.rounds})", flush=True)
    trained = {}
    if args.iterations:
        trained = training({f"train_rllib.py's defaults ({defaults.num_env_runners} x {ENVS_PER_RUNNER} envs, "
                            "1 thread)": (defaults, 1),
                            f"one runner (1 x {ENVS_PER_RUNNER} envs, 1 thread)":
                                (settings_args(1, ENVS_PER_RUNNER), 1),
                            f"first defaults (1 x 8 envs, {TORCH_DEFAULT_THREADS} learner threads)":
                                (settings_args(1, 8), TORCH_DEFAULT_THREADS)}, args.iterations)
    ray.shutdown()
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    print(f"| env runners x envs per runner | havok env steps/s | {PEER} env steps/s | havok / {PEER} |")
    print("|---|---|---|---|")
    for name, havok, peer, ratio in rows:
        print(f"| {name} | {havok:,.0f} | {peer:,.0f} | {ratio:.2f} |")
    if trained:
        print("\n| training | env steps/s | s per iteration |")
        print("|---|---|---|")
        for name, (rate, secs) in trained.items():
            print(f"| {name} | {rate:,.0f} | {secs:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
