"""Throughput: random legal play through ``havok_env.env()`` against PettingZoo's texas_holdem_v4.

Both environments are driven the same way in the same process: ``env()`` with its standard
wrappers, observation and action mask read at every step (as a learner needs them), a uniformly
random legal action. Reports steps/s and games/s for each and the ratio, plus the bare engine's
decisions/s (no observations).

    python benchmarks/throughput.py [--seconds 10] [--players 2 4]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np


def run_aec(make_env, seconds: float, seed: int = 0) -> tuple[float, float]:
    """Steps/s and games/s of random legal play for ``seconds`` of wall time."""
    env = make_env()
    rng = random.Random(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=rng.getrandbits(31))
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.randrange(len(legal))])
            env.step(action)
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def run_engine(num_players: int, seconds: float, seed: int = 0) -> float:
    from havok_env.engine import Game

    rng = random.Random(seed)
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
    ap.add_argument("--seconds", type=float, default=10.0, help="wall time per measurement")
    ap.add_argument("--players", type=int, nargs="+", default=[2, 4])
    args = ap.parse_args(argv)

    import havok_env
    from pettingzoo.classic import texas_holdem_v4

    print(f"{'env':<26}{'players':>8}{'steps/s':>12}{'games/s':>10}")
    ratios = {}
    for n in args.players:
        ours = run_aec(lambda: havok_env.env(num_players=n), args.seconds)
        peer = run_aec(lambda: texas_holdem_v4.env(num_players=n), args.seconds)
        ratios[n] = ours[0] / peer[0]
        print(f"{'havok_hijinks_v0':<26}{n:>8}{ours[0]:>12,.0f}{ours[1]:>10,.1f}")
        print(f"{'texas_holdem_v4':<26}{n:>8}{peer[0]:>12,.0f}{peer[1]:>10,.1f}")
    for n in args.players:
        eng = run_engine(n, args.seconds)
        print(f"{'havok engine (no obs)':<26}{n:>8}{eng:>12,.0f} decisions/s")
    for n, r in ratios.items():
        print(f"ratio havok_hijinks_v0 / texas_holdem_v4 steps/s, {n} players: {r:.2f}x")


if __name__ == "__main__":
    main()
