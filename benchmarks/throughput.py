"""Throughput: random legal play through ``havok_env.env()`` against PettingZoo's texas_holdem_v4.

Both environments are driven the same way in the same process: ``env()`` with its standard
wrappers, observation and action mask read at every step (as a learner needs them), a uniformly
random legal action. They take turns in short time slices, so a busy machine slows both alike and
the ratio stays fair. Reports steps/s and games/s for each and the ratio, plus the bare engine's
decisions/s (no observations).

    python benchmarks/throughput.py [--seconds 20] [--players 2 4]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np


def play_one(env, rng: random.Random) -> int:
    """One game of random legal play; returns the number of steps."""
    env.reset(seed=rng.getrandbits(31))
    steps = 0
    for _agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
        env.step(action)
        steps += 1
    return steps


def interleaved(makers: dict, seconds: float, slice_s: float = 0.2) -> dict:
    """{name: (steps/s, games/s)}, each env run in alternating slices for ``seconds`` in all."""
    runs = {name: {"env": make(), "rng": random.Random(0), "steps": 0, "games": 0, "time": 0.0}
            for name, make in makers.items()}
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for run in runs.values():
            start = time.perf_counter()
            while time.perf_counter() - start < slice_s:
                run["steps"] += play_one(run["env"], run["rng"])
                run["games"] += 1
            run["time"] += time.perf_counter() - start
    return {name: (r["steps"] / r["time"], r["games"] / r["time"]) for name, r in runs.items()}


def engine_rate(num_players: int, seconds: float) -> float:
    from havok_env.engine import Game

    rng = random.Random(0)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        g = Game(num_players, seed=rng.getrandbits(31))
        while not g.is_over:
            choices = g.s.pending["choices"]
            g.apply(choices[rng.randrange(len(choices))])
            decisions += 1
    return decisions / (time.perf_counter() - start)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="wall time per player count")
    ap.add_argument("--players", type=int, nargs="+", default=[2, 4])
    args = ap.parse_args(argv)

    import havok_env
    from havok_env.version import ENV_VERSION
    from pettingzoo.classic import texas_holdem_v4

    print(f"{'env':<26}{'players':>8}{'steps/s':>12}{'games/s':>10}")
    ratios = {}
    for n in args.players:
        res = interleaved({ENV_VERSION: lambda n=n: havok_env.env(num_players=n),
                           "texas_holdem_v4": lambda n=n: texas_holdem_v4.env(num_players=n)},
                          args.seconds)
        for name, (steps, games) in res.items():
            print(f"{name:<26}{n:>8}{steps:>12,.0f}{games:>10,.1f}")
        ratios[n] = res[ENV_VERSION][0] / res["texas_holdem_v4"][0]
    for n in args.players:
        print(f"{'havok engine (no obs)':<26}{n:>8}{engine_rate(n, args.seconds / 4):>12,.0f} "
              "decisions/s")
    for n, r in ratios.items():
        print(f"ratio {ENV_VERSION} / texas_holdem_v4 steps/s, {n} players: {r:.2f}x")


if __name__ == "__main__":
    main()
